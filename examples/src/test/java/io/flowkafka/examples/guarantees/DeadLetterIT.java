package io.flowkafka.examples.guarantees;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowkafka.api.Message;
import io.flowkafka.api.OutputCollector;
import io.flowkafka.api.RowFunction;
import io.flowkafka.api.RuntimeContext;
import io.flowkafka.api.StateAccessor;
import io.flowkafka.runtime.FlowRuntime;
import io.flowkafka.spec.ColumnType;
import io.flowkafka.spec.ComputationKind;
import io.flowkafka.spec.PipelineSpec;
import io.flowkafka.testing.Await;
import io.flowkafka.testing.KafkaCluster;
import io.flowkafka.testing.TestNames;
import io.flowkafka.testing.WithKafka;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericDatumWriter;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.EncoderFactory;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

/**
 * Bad input on a real broker: poison records land in {@code <pipeline>.dlq} with the reason in
 * headers, none of a failing call's state writes or outputs become visible, and every good record
 * is processed.
 */
@WithKafka
class DeadLetterIT {
    /** State directories of this class's runtimes (and child JVMs); JUnit deletes it after the class if it passed. */
    @TempDir(cleanup = CleanupMode.ON_SUCCESS)
    static Path tempRoot;

    static final Schema EVENT = SchemaBuilder.record("Ev").namespace("dlq").fields()
            .optionalString("user").requiredString("action").endRecord();
    static final Schema COUNT = SchemaBuilder.record("Cnt").namespace("dlq").fields()
            .requiredString("user").requiredLong("count").endRecord();
    static final Schema TOTAL = SchemaBuilder.record("Tot").namespace("dlq").fields().requiredLong("count").endRecord();

    static final Schema NOTE = SchemaBuilder.record("Note").namespace("dlq").fields().requiredString("text").endRecord();

    /**
     * Counts per user and keeps a note per user: the action, or for action "scribble" 20,000 random letters (the
     * same ones on every call: a replay writes the same row), which lz4 cannot squeeze under 2000 bytes. Throws for
     * action "boom" after writing state and adding an output.
     */
    public static final class CountOrBoom implements RowFunction {
        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
            StateAccessor<GenericRecord> total = context.getState("total");
            long n = total.get().map(t -> (Long) t.get("count")).orElse(0L) + 1;
            GenericRecord t = new GenericData.Record(TOTAL);
            t.put("count", n);
            total.set(t);
            String action = message.getPayload().get("action").toString();
            GenericRecord note = new GenericData.Record(NOTE);
            note.put("text", "scribble".equals(action) ? randomLetters(20_000) : action);
            context.getState("note").set(note);
            output.addMessage(context.createMessageBuilder("counts")
                    .set("user", message.getPayload().get("user").toString()).set("count", n).build());
            if ("boom".equals(action)) {
                throw new IllegalArgumentException("user code rejects action boom");
            }
        }
    }

    /** {@code n} random letters, the same ones every time: lz4 (flow-kafka's producer default) cannot squeeze them. */
    private static String randomLetters(int n) {
        java.util.Random random = new java.util.Random(7);
        StringBuilder big = new StringBuilder();
        for (int i = 0; i < n; i++) {
            big.append((char) ('a' + random.nextInt(26)));
        }
        return big.toString();
    }

    @Test
    @Timeout(180)
    void shouldSendPoisonRecordsToTheDeadLetterTopicAndKeepTheirEffectsInvisible(KafkaCluster cluster, TestNames names)
            throws Exception {
        String input = names.topic("input");
        String output = names.topic("output");
        String pipeline = names.name("dlq");
        cluster.createTopic(input, 2);
        PipelineSpec spec = countPipeline(pipeline, input, output);

        try (KafkaProducer<byte[], byte[]> p = producer(cluster)) {
            // all for key "alice" so they share a partition and their order
            send(p, input, "alice", avro("view"));
            send(p, input, "alice", "not avro at all \u0000\u0001".getBytes(StandardCharsets.UTF_8)); // bad Avro
            send(p, input, null, avro("view"));                                                       // null key
            send(p, input, "alice", avro("boom"));                                                    // user code throws
            send(p, input, "alice", avro("click"));
            send(p, input, "bob", avro("view"));
        }

        Properties props = runtimeProperties(cluster);
        try (FlowRuntime runtime = FlowRuntime.create(spec, props)) {
            runtime.start();
            Map<String, List<ConsumerRecord<byte[], byte[]>>> read =
                    readCommitted(cluster, Map.of(runtime.deadLetterTopic(), 3, output, 3));
            List<ConsumerRecord<byte[], byte[]>> dead = read.get(runtime.deadLetterTopic());
            List<ConsumerRecord<byte[], byte[]>> outs = read.get(output);

            assertThat(outs).extracting(r -> new String(r.value(), StandardCharsets.UTF_8))
                    .containsExactlyInAnyOrder("{\"user\":\"alice\",\"count\":1}", "{\"user\":\"alice\",\"count\":2}",
                            "{\"user\":\"bob\",\"count\":1}");
            assertThat(dead).hasSize(3);
            assertThat(dead).extracting(r -> header(r, "flow.dlq.computation")).containsExactlyInAnyOrder("read", "read", "count");
            assertThat(dead).anySatisfy(r -> {
                assertThat(header(r, "flow.dlq.stage")).contains("decode");
                assertThat(header(r, "flow.dlq.error.message")).contains("not Avro");
                assertThat(header(r, "flow.dlq.topic")).isEqualTo(input);
                assertThat(new String(r.value(), StandardCharsets.UTF_8)).startsWith("not avro at all");
            });
            assertThat(dead).anySatisfy(r -> {
                assertThat(header(r, "flow.dlq.error.message")).contains("record key is null").contains("key_column");
                assertThat(r.key()).isNull();
            });
            assertThat(dead).anySatisfy(r -> {
                assertThat(header(r, "flow.dlq.computation")).isEqualTo("count");
                assertThat(header(r, "flow.dlq.error.class")).isEqualTo(IllegalArgumentException.class.getName());
                assertThat(header(r, "flow.dlq.error.message")).isEqualTo("user code rejects action boom");
                assertThat(header(r, "flow.dlq.offset")).isNotBlank();
            });
        }
    }

    /**
     * An output its sink topic rejects for good (larger than the topic's {@code max.message.bytes}): under
     * exactly-once the transaction aborts, and the input that produced the output goes to the dead-letter topic
     * when the task replays; the outputs of the inputs before and after it are written once each. The failed stream
     * thread is replaced, and its member leaves the group at once (its session is longer than the test's waits).
     */
    @Test
    @Timeout(180)
    void shouldDeadLetterAnOutputTheSinkTopicRejectsAndGoOn(KafkaCluster cluster, TestNames names) throws Exception {
        String input = names.topic("input");
        String output = names.topic("output");
        String pipeline = names.name("big");
        cluster.createTopic(input, 1);
        cluster.createTopic(output, 1, Map.of("max.message.bytes", "2000"));
        PipelineSpec spec = countPipeline(pipeline, input, output);
        String big = randomLetters(20_000); // incompressible: over 2000 bytes after lz4
        try (KafkaProducer<byte[], byte[]> p = producer(cluster)) {
            send(p, input, "alice", avro("view"));
            send(p, input, big, avro("view"));
            send(p, input, "bob", avro("view"));
        }
        Properties props = failingTaskProperties(cluster);
        try (FlowRuntime runtime = FlowRuntime.create(spec, props)) {
            runtime.start();
            Map<String, List<ConsumerRecord<byte[], byte[]>>> read =
                    readCommitted(cluster, Map.of(output, 2, runtime.deadLetterTopic(), 1));
            List<ConsumerRecord<byte[], byte[]>> outs = read.get(output);
            List<ConsumerRecord<byte[], byte[]>> dead = read.get(runtime.deadLetterTopic());
            assertThat(outs).extracting(r -> new String(r.value(), StandardCharsets.UTF_8))
                    .containsExactlyInAnyOrder("{\"user\":\"alice\",\"count\":1}", "{\"user\":\"bob\",\"count\":1}");
            assertThat(dead).singleElement().satisfies(r -> {
                assertThat(new String(r.value(), StandardCharsets.UTF_8)).as("the count computation's input")
                        .contains(big);
                assertThat(header(r, "flow.dlq.computation")).isEqualTo("count");
                assertThat(header(r, "flow.dlq.stage")).startsWith("write the outputs of message");
                assertThat(header(r, "flow.dlq.topic")).isEqualTo(runtime.streamTopics("events").get(0));
                assertThat(header(r, "flow.dlq.error.message")).contains("topic " + output
                        + " rejected this record for good").contains("RecordTooLargeException");
            });
        }
    }

    /**
     * A state row the state store's changelog topic rejects for good (larger than its {@code max.message.bytes},
     * which the producer's own limit lets through): under exactly-once the commit's transaction aborts; on the replay
     * the call that sets that row fails, so its input goes to the dead-letter topic, its state writes and output are
     * dropped, and the inputs before and after it are processed once each, from the state before it. Before, the task
     * failed on every replay and the pipeline never committed again.
     */
    @Test
    @Timeout(180)
    void shouldDeadLetterTheInputOfAStateRowItsChangelogRejectsAndGoOn(KafkaCluster cluster, TestNames names)
            throws Exception {
        String input = names.topic("input");
        String output = names.topic("output");
        String pipeline = names.name("note");
        cluster.createTopic(input, 1);
        PipelineSpec spec = countPipeline(pipeline, input, output);
        Properties props = failingTaskProperties(cluster);
        // the topics Kafka Streams creates (the stores' changelogs) take records of at most 2000 bytes
        props.put("topic.max.message.bytes", "2000");
        try (FlowRuntime runtime = FlowRuntime.create(spec, props);
                KafkaProducer<byte[], byte[]> p = producer(cluster)) {
            // carol's row is the last one of her key when the commit writes the rows to the changelog (an
            // overwrite before the commit would never reach it: the store's cache writes only a key's last value)
            send(p, input, "alice", avro("view"));
            send(p, input, "carol", avro("scribble"));
            send(p, input, "bob", avro("view"));
            runtime.start();
            List<ConsumerRecord<byte[], byte[]>> dead = readCommitted(cluster, runtime.deadLetterTopic(), 1);
            send(p, input, "carol", avro("click"));
            List<ConsumerRecord<byte[], byte[]>> outs = readCommitted(cluster, output, 3);
            assertThat(outs).extracting(r -> new String(r.value(), StandardCharsets.UTF_8))
                    .as("carol's second input counts from the state before the dead-lettered one")
                    .containsExactlyInAnyOrder("{\"user\":\"alice\",\"count\":1}",
                            "{\"user\":\"bob\",\"count\":1}", "{\"user\":\"carol\",\"count\":1}");
            assertThat(dead).singleElement().satisfies(r -> {
                assertThat(header(r, "flow.dlq.computation")).isEqualTo("count");
                assertThat(header(r, "flow.dlq.stage")).startsWith("write the state of message");
                assertThat(header(r, "flow.dlq.error.message")).contains("topic " + runtime.applicationId()
                        + "-count.state-changelog rejected this record for good")
                        .contains("RecordTooLargeException");
                assertThat(new String(r.value(), StandardCharsets.UTF_8)).contains("scribble");
            });
        }
    }

    /**
     * A dead letter its topic rejects (an undecodable input larger than the dead-letter topic's
     * {@code max.message.bytes}): the task's transaction aborts; on the replay the dead letter goes without the
     * input's value, with the reason in {@code flow.dlq.omitted}, and the inputs before and after it are processed
     * once each. Before, the same dead letter was rejected on every replay and nothing was committed again.
     */
    @Test
    @Timeout(180)
    void shouldDeadLetterAnInputTheDeadLetterTopicCannotTakeWithoutItsValue(KafkaCluster cluster, TestNames names)
            throws Exception {
        String input = names.topic("input");
        String output = names.topic("output");
        String pipeline = names.name("huge");
        cluster.createTopic(input, 1);
        cluster.createTopic(pipeline + ".dlq", 1, Map.of("max.message.bytes", "2000"));
        PipelineSpec spec = countPipeline(pipeline, input, output);
        byte[] garbage = randomLetters(20_000).getBytes(StandardCharsets.UTF_8); // not Avro, and incompressible
        try (KafkaProducer<byte[], byte[]> p = producer(cluster)) {
            send(p, input, "alice", avro("view"));
            send(p, input, "alice", garbage);
            send(p, input, "bob", avro("view"));
        }
        Properties props = failingTaskProperties(cluster);
        try (FlowRuntime runtime = FlowRuntime.create(spec, props)) {
            assertThat(runtime.deadLetterTopic()).isEqualTo(pipeline + ".dlq");
            runtime.start();
            Map<String, List<ConsumerRecord<byte[], byte[]>>> read =
                    readCommitted(cluster, Map.of(output, 2, runtime.deadLetterTopic(), 1));
            List<ConsumerRecord<byte[], byte[]>> outs = read.get(output);
            List<ConsumerRecord<byte[], byte[]>> dead = read.get(runtime.deadLetterTopic());
            assertThat(outs).extracting(r -> new String(r.value(), StandardCharsets.UTF_8))
                    .containsExactlyInAnyOrder("{\"user\":\"alice\",\"count\":1}", "{\"user\":\"bob\",\"count\":1}");
            assertThat(dead).singleElement().satisfies(r -> {
                assertThat(r.value()).as("left out").isNull();
                assertThat(new String(r.key(), StandardCharsets.UTF_8)).isEqualTo("alice");
                assertThat(header(r, "flow.dlq.computation")).isEqualTo("read");
                assertThat(header(r, "flow.dlq.error.message")).contains("not Avro");
                assertThat(header(r, "flow.dlq.topic")).isEqualTo(input);
                assertThat(header(r, "flow.dlq.offset")).isEqualTo("1");
                assertThat(header(r, "flow.dlq.omitted")).startsWith("the input's value (20000 bytes): topic "
                        + pipeline + ".dlq rejected this record for good").contains("RecordTooLargeException");
            });
        }
    }

    static final Schema VISIT = SchemaBuilder.record("Visit").namespace("dlq").fields()
            .requiredString("user").requiredLong("ts").endRecord();

    /** Adds a reminder a minute of event time after each visit, and nothing else; a reminder is written out. */
    public static final class Remind implements RowFunction {
        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
            output.addTimer(message.getEventTimestamp() + 60_000_000_000L, message.getEventTimestamp());
        }

        @Override
        public void onTimer(io.flowkafka.api.Timer timer, OutputCollector output, RuntimeContext context) {
            output.addMessage(context.createMessageBuilder("reminded").set("user", timer.getKey().get("user"))
                    .set("ts", timer.getTriggerTimestamp() / 1_000_000L).build());
        }
    }

    /**
     * A timer row its changelog topic rejects for good (a timer row holds the group-by key; this one is larger than
     * the topic's {@code max.message.bytes}): the commit's transaction aborts; on the replay the call adding that
     * timer fails, matched by the row's key (its value holds the wall-clock time it was added, which the replay does
     * not repeat), so its input goes to the dead-letter topic and the other keys' timers fire once each. Before, the
     * task failed on every replay and the pipeline never committed again.
     */
    @Test
    @Timeout(180)
    void shouldDeadLetterTheInputOfATimerRowItsChangelogRejectsAndGoOn(KafkaCluster cluster, TestNames names)
            throws Exception {
        String input = names.topic("input");
        String output = names.topic("output");
        String pipeline = names.name("remind");
        cluster.createTopic(input, 1);
        // a keyed source: no hop between the input and the timer, so the long key reaches the timers store
        PipelineSpec spec = PipelineSpec.builder(pipeline).stream("visits", VISIT).stream("reminded", VISIT)
                .computation("remind", c -> c
                        .source("visits", "KafkaSource", Map.of("topics", input, "key_partitioned", true))
                        .watermarkStrategy(io.flowkafka.spec.WatermarkStrategy.DEFAULT
                                .withOutOfOrdernessBound(Duration.ZERO).withTimestampColumn("ts"))
                        .groupBy("hash", ColumnType.UINT64, "farm_hash(user)").groupBy("user", ColumnType.STRING, null)
                        .timer("remind", Map.of()).processingFunction(Remind::new).outputStreamIds("reminded")
                        .sink("out", "KafkaSink", List.of("reminded"), Map.of("topic", output, "key_column", "user")))
                .build();
        String big = randomLetters(5_000); // incompressible: over 2000 bytes after lz4
        Properties props = failingTaskProperties(cluster);
        // the topics Kafka Streams creates (the timers store's changelog) take records of at most 2000 bytes
        props.put("topic.max.message.bytes", "2000");
        try (FlowRuntime runtime = FlowRuntime.create(spec, props);
                KafkaProducer<byte[], byte[]> p = producer(cluster)) {
            // the long key's timer is pending when the first commit writes the timers store's rows to the changelog
            send(p, input, "ann", visit("ann", 1_000));
            send(p, input, "big", visit(big, 2_000));
            send(p, input, "bob", visit("bob", 3_000));
            runtime.start();
            List<ConsumerRecord<byte[], byte[]>> dead = readCommitted(cluster, runtime.deadLetterTopic(), 1);
            send(p, input, "cat", visit("cat", 200_000)); // the watermark passes the reminders of ann and bob
            List<ConsumerRecord<byte[], byte[]>> outs = readCommitted(cluster, output, 2);
            assertThat(outs).extracting(r -> new String(r.value(), StandardCharsets.UTF_8))
                    .containsExactly("{\"user\":\"ann\",\"ts\":61000}", "{\"user\":\"bob\",\"ts\":63000}");
            assertThat(dead).singleElement().satisfies(r -> {
                assertThat(header(r, "flow.dlq.computation")).isEqualTo("remind");
                assertThat(header(r, "flow.dlq.stage")).startsWith("write the timers of message");
                assertThat(header(r, "flow.dlq.error.message")).contains("topic " + runtime.applicationId()
                        + "-remind.timers-changelog rejected this record for good")
                        .contains("RecordTooLargeException");
                assertThat(header(r, "flow.dlq.offset")).isEqualTo("1");
            });
        }
    }

    private static PipelineSpec remindPipeline(String pipeline, String input, String output, boolean byTime) {
        return PipelineSpec.builder(pipeline).stream("visits", VISIT).stream("reminded", VISIT)
                .computation("remind", c -> {
                    c.source("visits", "KafkaSource", Map.of("topics", input, "key_partitioned", true))
                            .watermarkStrategy(io.flowkafka.spec.WatermarkStrategy.DEFAULT
                                    .withOutOfOrdernessBound(Duration.ZERO).withTimestampColumn("ts"))
                            .groupBy("hash", ColumnType.UINT64, "farm_hash(user)")
                            .groupBy("user", ColumnType.STRING, null);
                    if (byTime) {
                        c.groupBy("ts", ColumnType.INT64, null);
                    }
                    c.timer("remind", Map.of()).processingFunction(Remind::new).outputStreamIds("reminded")
                            .sink("out", "KafkaSink", List.of("reminded"), Map.of("topic", output, "key_column", "user"));
                })
                .build();
    }

    /**
     * A pending timer whose stored key the computation's group-by no longer reads (the group_by columns changed
     * between two runs of the pipeline) goes to the dead-letter topic when it is due, and is deleted; before, its key
     * was decoded outside the call's failure handling, so the task failed on it at every restart.
     */
    @Test
    @Timeout(180)
    void shouldDeadLetterADueTimerWhoseKeyTheGroupByNoLongerReads(KafkaCluster cluster, TestNames names)
            throws Exception {
        String input = names.topic("input");
        String output = names.topic("output");
        String pipeline = names.name("regroup");
        cluster.createTopic(input, 1);
        Properties props = failingTaskProperties(cluster);
        try (KafkaProducer<byte[], byte[]> p = producer(cluster)) {
            try (FlowRuntime v1 = FlowRuntime.create(remindPipeline(pipeline, input, output, false), props);
                    Admin admin = Admin.create(cluster.clientProperties())) {
                send(p, input, "ann", visit("ann", 1_000)); // a reminder at 61 s, keyed (hash, user)
                v1.start();
                Await.until(Duration.ofSeconds(60), "the visit's offset committed, with its timer", () -> {
                    try {
                        var offsets = admin.listConsumerGroupOffsets(v1.applicationId())
                                .partitionsToOffsetAndMetadata().get();
                        return offsets.values().stream().anyMatch(o -> o != null && o.offset() >= 1);
                    } catch (InterruptedException | ExecutionException e) {
                        return false;
                    }
                });
            }
            try (FlowRuntime v2 = FlowRuntime.create(remindPipeline(pipeline, input, output, true), props)) {
                v2.start();
                send(p, input, "cat", visit("cat", 200_000)); // passes ann's reminder: its key is (hash, user) only
                send(p, input, "dan", visit("dan", 400_000)); // passes cat's
                Map<String, List<ConsumerRecord<byte[], byte[]>>> read =
                        readCommitted(cluster, Map.of(output, 1, v2.deadLetterTopic(), 1));
                List<ConsumerRecord<byte[], byte[]>> outs = read.get(output);
                List<ConsumerRecord<byte[], byte[]>> dead = read.get(v2.deadLetterTopic());
                assertThat(outs).extracting(r -> new String(r.value(), StandardCharsets.UTF_8))
                        .containsExactly("{\"user\":\"cat\",\"ts\":260000}");
                assertThat(dead).singleElement().satisfies(r -> {
                    assertThat(header(r, "flow.dlq.computation")).isEqualTo("remind");
                    assertThat(header(r, "flow.dlq.stage")).contains("decode the key of timer");
                    assertThat(header(r, "flow.dlq.timer.stream")).isEqualTo("remind");
                    assertThat(header(r, "flow.dlq.timer.trigger")).isEqualTo("61000000000");
                });
            }
        }
    }

    private static byte[] visit(String user, long tsMs) {
        return ("{\"user\":\"" + user + "\",\"ts\":" + tsMs + "}").getBytes(StandardCharsets.UTF_8);
    }

    /** Source {@code input} (Avro, user from the key) -> count per user ({@link CountOrBoom}) -> KafkaSink {@code output}. */
    private static PipelineSpec countPipeline(String pipeline, String input, String output) {
        return PipelineSpec.builder(pipeline)
                .stream("raw", EVENT).stream("events", EVENT).stream("counts", COUNT)
                .computation("read", c -> c.kind(ComputationKind.SOURCE)
                        .source("raw", "KafkaSource", Map.of("topics", input, "format", "avro", "key_column", "user"))
                        .outputStreamIds("events"))
                .computation("count", c -> c.inputStreamIds("events")
                        .groupBy("hash", ColumnType.UINT64, "farm_hash(user)").groupBy("user", ColumnType.STRING, null)
                        .state("total", TOTAL).state("note", NOTE).processingFunction(CountOrBoom::new)
                        .outputStreamIds("counts")
                        .sink("out", "KafkaSink", List.of("counts"), Map.of("topic", output)))
                .build();
    }

    private static KafkaProducer<byte[], byte[]> producer(KafkaCluster cluster) {
        Properties pp = cluster.clientProperties();
        pp.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        pp.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        return new KafkaProducer<>(pp);
    }

    /** A runtime's properties: its own state directory, commits every 100 ms. */
    private static Properties runtimeProperties(KafkaCluster cluster) throws java.io.IOException {
        Properties props = cluster.clientProperties();
        props.put("state.dir", Files.createTempDirectory(tempRoot, "flow-dlq").toString());
        props.put("commit.interval.ms", "100");
        return props;
    }

    /**
     * {@link #runtimeProperties} for a test whose task fails once: a session longer than the test's waits, so the
     * replaced stream thread's member must leave the group rather than time out.
     */
    private static Properties failingTaskProperties(KafkaCluster cluster) throws java.io.IOException {
        Properties props = runtimeProperties(cluster);
        props.put("session.timeout.ms", "300000");
        return props;
    }

    private static String header(ConsumerRecord<byte[], byte[]> r, String name) {
        var h = r.headers().lastHeader(name);
        return h == null ? null : new String(h.value(), StandardCharsets.UTF_8);
    }

    private static void send(KafkaProducer<byte[], byte[]> p, String topic, String key, byte[] value) throws Exception {
        p.send(new ProducerRecord<>(topic, key == null ? 0 : null, key == null ? null : key.getBytes(StandardCharsets.UTF_8),
                value)).get();
    }

    private static byte[] avro(String action) throws Exception {
        GenericRecord r = new GenericData.Record(EVENT);
        r.put("user", null);
        r.put("action", action);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        BinaryEncoder enc = EncoderFactory.get().directBinaryEncoder(out, null);
        new GenericDatumWriter<GenericRecord>(EVENT).write(r, enc);
        return out.toByteArray();
    }

    /**
     * The topics read read_committed until each holds its expected count, then one quiet window in which nothing more
     * may arrive in any of them (a duplicate or a leaked partial effect would).
     */
    private static Map<String, List<ConsumerRecord<byte[], byte[]>>> readCommitted(KafkaCluster cluster,
            Map<String, Integer> expected) {
        Properties p = cluster.clientProperties();
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.GROUP_ID_CONFIG, String.join("+", new TreeSet<>(expected.keySet())) + "-reader");
        p.put(ConsumerConfig.METADATA_MAX_AGE_CONFIG, "500"); // finds a topic created after the subscription
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        Map<String, List<ConsumerRecord<byte[], byte[]>>> out = new HashMap<>();
        expected.keySet().forEach(t -> out.put(t, new ArrayList<>()));
        try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(p)) {
            c.subscribe(List.copyOf(expected.keySet()));
            Await.until(Duration.ofMinutes(2), "committed records " + expected, () -> {
                c.poll(Duration.ofMillis(200)).forEach(r -> out.get(r.topic()).add(r));
                return expected.entrySet().stream().allMatch(e -> out.get(e.getKey()).size() >= e.getValue());
            });
            c.poll(Duration.ofSeconds(2)).forEach(r -> out.get(r.topic()).add(r));
        }
        return out;
    }

    private static List<ConsumerRecord<byte[], byte[]>> readCommitted(KafkaCluster cluster, String topic, int expected) {
        return readCommitted(cluster, Map.of(topic, expected)).get(topic);
    }
}
