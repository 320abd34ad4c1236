package io.flowkafka.connectors.registry;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowkafka.api.Message;
import io.flowkafka.api.OutputCollector;
import io.flowkafka.api.RowFunction;
import io.flowkafka.api.RuntimeContext;
import io.flowkafka.runtime.FlowRuntime;
import io.flowkafka.spec.ColumnType;
import io.flowkafka.spec.ComputationKind;
import io.flowkafka.spec.PipelineSpec;
import io.flowkafka.testing.Await;
import io.flowkafka.testing.KafkaCluster;
import io.flowkafka.testing.TestNames;
import io.flowkafka.testing.WithKafka;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.Future;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.generic.GenericRecordBuilder;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.Serde;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 28.3: fuzzed records. A seeded mix of good records and bad ones ({@link Kind}) goes into a pipeline with a
 * Confluent-Avro source (the in-JVM {@code mock://} registry) on the in-JVM broker; a few bad ones go straight into
 * the pipeline's internal topic, where the {@code flow.*} headers are read. Checks: the pipeline stays RUNNING,
 * every bad record is in the dead-letter topic with a reason (counted by kind, from its topic, partition and
 * offset), every good record's output is written exactly once, and nothing else is.
 *
 * <p>CI runs {@value #DEFAULT_BAD} bad records; {@code -Dflow.fuzz.records=10000} runs 10k, and
 * {@code -Dflow.fuzz.seed=<seed>} reruns the printed seed.
 */
@WithKafka
class FuzzedRecordsIT {
    static final int DEFAULT_BAD = 600;
    private static final String SERDE = ConfluentAvroSerde.class.getName();

    @TempDir(cleanup = CleanupMode.ON_SUCCESS)
    static Path tempRoot;

    static final Schema EVENT = SchemaBuilder.record("Event").namespace("fuzz").fields().requiredString("id")
            .requiredLong("seq").requiredLong("ts").requiredString("note").endRecord();
    static final Schema OTHER = SchemaBuilder.record("Other").namespace("elsewhere").fields().requiredInt("x")
            .endRecord();

    /** A kind of bad input; the rare ones (a failed transaction and a replay each) are capped. */
    enum Kind {
        TRUNCATED_AVRO, RANDOM_BYTES, RANDOM_AVRO_BODY, WRONG_SCHEMA_ID, UNKNOWN_SUBJECT_SCHEMA, JSON_NOT_AVRO,
        NULL_KEY, EVENT_TS_OUT_OF_RANGE, RECORD_TS_OUT_OF_RANGE, INTERNAL_BAD_META, INTERNAL_NO_META,
        INTERNAL_DUPLICATE_META, INTERNAL_BAD_CONTROL, HUGE_KEY, OVERSIZE_VALUE;

        boolean internal() {
            return name().startsWith("INTERNAL_");
        }

        boolean rare() {
            return this == HUGE_KEY || this == OVERSIZE_VALUE;
        }
    }

    /** Copies each message to the output. */
    public static final class Copy implements RowFunction {
        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
            output.addMessage(context.createMessageBuilder("marked").setPayload(message.getPayload()).build());
        }
    }

    private String scope;

    @AfterEach
    void dropRegistry() {
        if (scope != null) {
            MockSchemaRegistry.dropScope(scope);
        }
    }

    @Test
    @Timeout(1800)
    void shouldDeadLetterEveryBadRecordAndProcessEveryGoodOneOnce(KafkaCluster cluster, TestNames names)
            throws Exception {
        long seed = Long.getLong("flow.fuzz.seed", new Random().nextLong());
        int badCount = Integer.getInteger("flow.fuzz.records", DEFAULT_BAD);
        int rareCap = Math.max(2, badCount / 1000);
        System.out.println("FuzzedRecordsIT seed " + seed + " (rerun: -Dflow.fuzz.seed=" + seed + "), " + badCount
                + " bad records");
        Random random = new Random(seed);
        String input = names.topic("in");
        String output = names.topic("out");
        String pipeline = names.name("fuzz");
        scope = pipeline;
        cluster.createTopic(input, 2, Map.of("max.message.bytes", "4000000",
                "message.timestamp.after.max.ms", Long.toString(Long.MAX_VALUE)));
        Map<String, Object> source = Map.of("topics", input, "value_serde", SERDE, "key_column", "id",
                "event_timestamp_column", "ts", "serde_config", Map.of("schema.registry.url", "mock://" + scope));
        PipelineSpec spec = PipelineSpec.builder(pipeline).stream("raw", EVENT).stream("events", EVENT)
                .stream("marked", EVENT)
                .computation("read", c -> c.kind(ComputationKind.SOURCE).source("raw", "KafkaSource", source)
                        .outputStreamIds("events"))
                .computation("mark", c -> c.inputStreamIds("events").groupBy("hash", ColumnType.UINT64, "farm_hash(id)")
                        .groupBy("id", ColumnType.STRING, null).processingFunction(Copy::new).outputStreamIds("marked")
                        .desiredPartitionCount(2)
                        .sink("out", "KafkaSink", List.of("marked"), Map.of("topic", output, "key_column", "id")))
                .build();
        Serde<GenericRecord> serde = GenericRecordSerdes.create(SERDE, Map.of("schema.registry.url", "mock://" + scope),
                false);
        int otherId = MockSchemaRegistry.forScope(scope).register("unknown-subject-value", OTHER);

        Map<String, Kind> badAt = new HashMap<>(); // topic/partition/offset -> kind
        Map<Kind, Integer> sent = new EnumMap<>(Kind.class);
        List<String> goodIds = new ArrayList<>();
        try (FlowRuntime runtime = FlowRuntime.create(spec, properties(cluster));
                KafkaProducer<byte[], byte[]> producer = producer(cluster)) {
            runtime.start();
            runtime.awaitState(FlowRuntime.State.RUNNING, Duration.ofMinutes(2));
            String internal = runtime.streamTopics("events").get(0);
            List<Future<RecordMetadata>> badSends = new ArrayList<>();
            List<Kind> badKinds = new ArrayList<>();
            int good = 0;
            for (int bad = 0; bad < badCount; ) {
                if (random.nextBoolean()) {
                    String id = "good-" + good++;
                    goodIds.add(id);
                    byte[] value = serde.serializer().serialize(input, event(id, good, 1_000L + good, "n"));
                    ProducerRecord<byte[], byte[]> r = new ProducerRecord<>(input, null, utf8(id), value);
                    if (random.nextInt(10) == 0) { // junk flow.* headers on a source record are not read
                        r.headers().add("flow.meta", randomBytes(random, 12)).add("flow.meta", randomBytes(random, 3))
                                .add("flow.control", randomBytes(random, 5));
                    }
                    producer.send(r);
                    continue;
                }
                Kind kind = Kind.values()[random.nextInt(Kind.values().length)];
                if (kind.rare() && sent.getOrDefault(kind, 0) >= rareCap) {
                    continue;
                }
                ProducerRecord<byte[], byte[]> r = bad(kind, random, serde, input, internal, otherId, bad);
                badSends.add(producer.send(r));
                badKinds.add(kind);
                sent.merge(kind, 1, Integer::sum);
                bad++;
            }
            producer.flush();
            for (int i = 0; i < badSends.size(); i++) {
                RecordMetadata md = badSends.get(i).get();
                badAt.put(md.topic() + "/" + md.partition() + "/" + md.offset(), badKinds.get(i));
            }
            int goodCount = good;
            System.out.println("FuzzedRecordsIT seed " + seed + ": sent " + goodCount + " good, " + badCount + " bad "
                    + new TreeMap<>(sent));

            Map<Kind, Integer> dead = new EnumMap<>(Kind.class);
            List<String> reasonless = new ArrayList<>();
            List<String> unexpected = new ArrayList<>();
            Map<String, Integer> outputs = new HashMap<>();
            try (KafkaConsumer<byte[], byte[]> dlq = consumer(cluster, runtime.deadLetterTopic());
                    KafkaConsumer<byte[], byte[]> out = consumer(cluster, output)) {
                int[] deadTotal = {0};
                Await.until(Duration.ofMinutes(25), "every bad record dead-lettered and every good one written", () -> {
                    for (ConsumerRecord<byte[], byte[]> r : dlq.poll(Duration.ofMillis(200))) {
                        deadTotal[0]++;
                        String where = header(r, "flow.dlq.topic") + "/" + header(r, "flow.dlq.partition") + "/"
                                + header(r, "flow.dlq.offset");
                        Kind kind = badAt.get(where);
                        if (kind == null) {
                            unexpected.add(where + ": " + header(r, "flow.dlq.error.message"));
                        } else {
                            dead.merge(kind, 1, Integer::sum);
                        }
                        String reason = header(r, "flow.dlq.error.message");
                        if (reason == null || reason.isBlank()) {
                            reasonless.add(where);
                        }
                    }
                    for (ConsumerRecord<byte[], byte[]> r : out.poll(Duration.ofMillis(200))) {
                        outputs.merge(new String(r.key(), StandardCharsets.UTF_8), 1, Integer::sum);
                    }
                    assertThat(runtime.state()).as("pipeline state").isEqualTo(FlowRuntime.State.RUNNING);
                    return deadTotal[0] >= badCount && outputs.values().stream().mapToInt(Integer::intValue).sum()
                            >= goodCount;
                });
                // everything consumed and committed: nothing more can come; read what is left
                awaitCommittedToEnd(cluster, runtime.applicationId(), input, internal);
                for (int i = 0; i < 5; i++) {
                    out.poll(Duration.ofMillis(200)).forEach(r ->
                            outputs.merge(new String(r.key(), StandardCharsets.UTF_8), 1, Integer::sum));
                    dlq.poll(Duration.ofMillis(200)).forEach(r -> unexpected.add("late dead letter "
                            + header(r, "flow.dlq.error.message")));
                }
                System.out.println("FuzzedRecordsIT seed " + seed + ": dead letters by kind " + new TreeMap<>(dead)
                        + ", outputs " + outputs.size() + " ids, state " + runtime.state());
                assertThat(unexpected).as("dead letters of no bad record").isEmpty();
                assertThat(reasonless).as("dead letters without a reason").isEmpty();
                assertThat(dead).as("dead letters by kind, seed %d", seed).isEqualTo(sent);
                assertThat(outputs.keySet()).as("seed %d", seed).containsExactlyInAnyOrderElementsOf(goodIds);
                assertThat(outputs).as("each good record written once").allSatisfy((id, n) -> assertThat(n).isOne());
                assertThat(runtime.state()).isEqualTo(FlowRuntime.State.RUNNING);
            }
        }
    }

    private static ProducerRecord<byte[], byte[]> bad(Kind kind, Random random, Serde<GenericRecord> serde,
            String input, String internal, int otherId, int n) {
        String id = "bad-" + n;
        byte[] valid = serde.serializer().serialize(input, event(id, n, 1_000L, "n"));
        return switch (kind) {
            case TRUNCATED_AVRO -> record(input, id, Arrays.copyOf(valid, random.nextInt(valid.length)));
            case RANDOM_BYTES -> {
                byte[] b = randomBytes(random, 1 + random.nextInt(64));
                b[0] = (byte) (1 + random.nextInt(255)); // not the magic byte
                yield record(input, id, b);
            }
            case RANDOM_AVRO_BODY -> {
                byte[] b = Arrays.copyOf(valid, 5 + 1 + random.nextInt(40));
                byte[] body = randomBytes(random, b.length - 5);
                body[0] = (byte) (2 * random.nextInt(60) + 1); // odd: a negative string length
                System.arraycopy(body, 0, b, 5, body.length);
                yield record(input, id, b);
            }
            case WRONG_SCHEMA_ID -> {
                byte[] b = valid.clone();
                ByteBuffer.wrap(b).putInt(1, 100_000 + random.nextInt(1_000_000));
                yield record(input, id, b);
            }
            case UNKNOWN_SUBJECT_SCHEMA -> {
                // the id of a schema of another subject, and a record of it: not a record of this topic
                ByteBuffer b = ByteBuffer.allocate(6);
                b.put((byte) 0).putInt(otherId).put((byte) (2 * random.nextInt(60)));
                yield record(input, id, b.array());
            }
            case JSON_NOT_AVRO -> record(input, id, utf8("{\"id\": \"" + id + "\", \"seq\": 1, \"ts\": 1, \"note\": \"\"}"));
            case NULL_KEY -> new ProducerRecord<>(input, null, null, valid);
            case EVENT_TS_OUT_OF_RANGE -> record(input, id, serde.serializer().serialize(input, event(id, n,
                    random.nextBoolean() ? 9_300_000_000_000_000L + random.nextInt(1000) : Long.MIN_VALUE + random.nextInt(1000),
                    "n")));
            case RECORD_TS_OUT_OF_RANGE -> new ProducerRecord<>(input, null,
                    9_300_000_000_000_000L + random.nextInt(1_000_000), utf8(id), valid);
            case INTERNAL_BAD_META -> internal(internal, new RecordHeaders().add("flow.meta", randomBytes(random, 17 + random.nextInt(8))));
            case INTERNAL_NO_META -> internal(internal, new RecordHeaders().add("flow.other", randomBytes(random, 4)));
            case INTERNAL_DUPLICATE_META -> internal(internal, new RecordHeaders()
                    .add("flow.meta", randomBytes(random, 20)).add("flow.meta", randomBytes(random, 1 + random.nextInt(16))));
            case INTERNAL_BAD_CONTROL -> internal(internal, new RecordHeaders().add("flow.control", new byte[] {1}));
            case HUGE_KEY -> record(input, "k".repeat(1_200_000) + n, valid);
            case OVERSIZE_VALUE -> record(input, id, serde.serializer().serialize(input,
                    event(id, n, 1_000L, letters(random, 1_500_000))));
        };
    }

    private static ProducerRecord<byte[], byte[]> record(String topic, String key, byte[] value) {
        return new ProducerRecord<>(topic, null, utf8(key), value);
    }

    /** A record in the internal topic's partition 0, with junk key and value and the given headers. */
    private static ProducerRecord<byte[], byte[]> internal(String topic, Headers headers) {
        return new ProducerRecord<>(topic, 0, null, new byte[] {7, 7}, new byte[] {1, 2, 3}, headers);
    }

    private static GenericRecord event(String id, long seq, long ts, String note) {
        return new GenericRecordBuilder(EVENT).set("id", id).set("seq", seq).set("ts", ts).set("note", note).build();
    }

    private static String letters(Random random, int n) {
        StringBuilder s = new StringBuilder(n);
        for (int i = 0; i < n; i++) {
            s.append((char) ('a' + random.nextInt(26)));
        }
        return s.toString();
    }

    private static byte[] randomBytes(Random random, int n) {
        byte[] b = new byte[n];
        random.nextBytes(b);
        return b;
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /** Waits until the pipeline's group committed the end of every partition of {@code topics}. */
    private static void awaitCommittedToEnd(KafkaCluster cluster, String group, String... topics) {
        Await.until(Duration.ofMinutes(2), "offsets committed to the end of " + Arrays.toString(topics), () -> {
            try (KafkaConsumer<byte[], byte[]> c = consumer(cluster, null)) {
                List<TopicPartition> parts = new ArrayList<>();
                for (String t : topics) {
                    c.partitionsFor(t).forEach(p -> parts.add(new TopicPartition(t, p.partition())));
                }
                Map<TopicPartition, Long> ends = c.endOffsets(parts);
                var committed = cluster.admin().listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get();
                return parts.stream().allMatch(p -> committed.get(p) != null
                        && committed.get(p).offset() >= ends.get(p) - 1);
            } catch (Exception e) {
                return false;
            }
        });
    }

    private static Properties properties(KafkaCluster cluster) throws java.io.IOException {
        Properties props = cluster.clientProperties();
        props.put("state.dir", Files.createTempDirectory(tempRoot, "flow-fuzz").toString());
        props.put("commit.interval.ms", "100");
        props.put("session.timeout.ms", "300000"); // a replaced stream thread's member leaves rather than times out
        return props;
    }

    private static KafkaProducer<byte[], byte[]> producer(KafkaCluster cluster) {
        Properties pp = cluster.clientProperties();
        pp.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        pp.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        pp.put(ProducerConfig.MAX_REQUEST_SIZE_CONFIG, "4000000");
        pp.put(ProducerConfig.LINGER_MS_CONFIG, "5");
        return new KafkaProducer<>(pp);
    }

    private static KafkaConsumer<byte[], byte[]> consumer(KafkaCluster cluster, String topic) {
        Properties cp = cluster.clientProperties();
        cp.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        cp.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        cp.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        cp.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        cp.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        cp.put(ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG, "8000000");
        KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(cp);
        if (topic != null) {
            List<TopicPartition> parts = new ArrayList<>();
            c.partitionsFor(topic).forEach(p -> parts.add(new TopicPartition(topic, p.partition())));
            c.assign(parts);
        }
        return c;
    }

    private static String header(ConsumerRecord<byte[], byte[]> r, String name) {
        var h = r.headers().lastHeader(name);
        return h == null ? null : new String(h.value(), StandardCharsets.UTF_8);
    }
}
