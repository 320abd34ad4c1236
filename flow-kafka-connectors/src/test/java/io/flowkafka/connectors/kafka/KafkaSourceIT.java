package io.flowkafka.connectors.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowkafka.api.Message;
import io.flowkafka.api.OutputCollector;
import io.flowkafka.api.RowFunction;
import io.flowkafka.api.RuntimeContext;
import io.flowkafka.avro.ControlRecord;
import io.flowkafka.avro.FlowAvroClasses;
import io.flowkafka.runtime.FlowRuntime;
import io.flowkafka.spec.ColumnType;
import io.flowkafka.spec.ComputationKind;
import io.flowkafka.spec.PipelineSpec;
import io.flowkafka.spec.WatermarkStrategy;
import io.flowkafka.testing.Await;
import io.flowkafka.testing.KafkaCluster;
import io.flowkafka.testing.TestNames;
import io.flowkafka.testing.WithKafka;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.avro.io.DecoderFactory;
import org.apache.avro.specific.SpecificDatumReader;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Kafka source on a real broker, where partitions are real: starting offsets seeded from
 * another consumer group ({@code group_id} + {@code use_consumer_group_offset}), and a
 * {@code partition_filter} whose skipped partitions neither hold watermarks back nor keep a finite
 * pipeline from completing, while their offsets are still committed.
 */
@WithKafka
class KafkaSourceIT {
    /** State directories of this class's runtimes (and child JVMs); JUnit deletes it after the class if it passed. */
    @TempDir(cleanup = CleanupMode.ON_SUCCESS)
    static Path tempRoot;

    private static final long MS = 1_000_000L;

    /** Copies each message to the output stream. */
    public static final class Copy implements RowFunction {
        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
            output.addMessage(context.createMessageBuilder("out").setPayload(message.getPayload()).build());
        }
    }

    private static PipelineSpec spec(String name, Map<String, Object> sourceParameters, String output,
            WatermarkStrategy strategy) {
        Map<String, Object> params = new HashMap<>(sourceParameters);
        return PipelineSpec.builder(name)
                .stream("raw", KafkaSourceTest.EVENT).stream("events", KafkaSourceTest.EVENT)
                .stream("out", KafkaSourceTest.EVENT)
                .computation("read", c -> c.kind(ComputationKind.SOURCE).source("raw", "KafkaSource", params)
                        .watermarkStrategy(strategy.withTimestampColumn("ts")).outputStreamIds("events")
                        .sink("copy", "KafkaSink", List.of("events"), Map.of("topic", output)))
                .computation("mid", c -> c.inputStreamIds("events")
                        .groupBy("hash", ColumnType.UINT64, "farm_hash(id)").groupBy("id", ColumnType.STRING, null)
                        .processingFunction(Copy::new).outputStreamIds("out").desiredPartitionCount(2))
                .build();
    }

    @Test
    @Timeout(240)
    void shouldStartWhereAnotherGroupLeftOffWithoutMovingThePipelineBack(KafkaCluster cluster, TestNames names)
            throws Exception {
        String input = names.topic("in");
        String output = names.topic("out");
        String legacy = names.name("legacy-app");
        cluster.createTopic(input, 2);
        for (int p = 0; p < 2; p++) {
            for (int i = 0; i < 10; i++) {
                produce(cluster, input, p, "p" + p + "-" + i, 1000 + i);
            }
        }
        PipelineSpec spec = spec(names.name("seed"), Map.of("topics", input, "finite", true, "group_id", legacy,
                "use_consumer_group_offset", true), output, WatermarkStrategy.DEFAULT);
        TopicPartition p0 = new TopicPartition(input, 0);
        TopicPartition p1 = new TopicPartition(input, 1);
        // the application being migrated read up to 6 and 3; the pipeline itself already committed 8 on partition 1
        cluster.admin().alterConsumerGroupOffsets(legacy, Map.of(p0, new OffsetAndMetadata(6), p1,
                new OffsetAndMetadata(3))).all().get();
        cluster.admin().alterConsumerGroupOffsets(spec.name(), Map.of(p1, new OffsetAndMetadata(8))).all().get();

        try (FlowRuntime runtime = FlowRuntime.create(spec, props(cluster))) {
            runtime.start();
            assertThat(runtime.awaitCompletion(Duration.ofMinutes(3))).as("state " + runtime.state()).isTrue();
        }

        assertThat(readIds(cluster, output, 6)).as("partition 0 from the legacy group's 6, partition 1 from the "
                + "pipeline's own 8, never back to the legacy group's 3")
                .containsExactlyInAnyOrder("p0-6", "p0-7", "p0-8", "p0-9", "p1-8", "p1-9");
        Map<TopicPartition, OffsetAndMetadata> after = cluster.admin().listConsumerGroupOffsets(legacy)
                .partitionsToOffsetAndMetadata().get();
        assertThat(after.get(p0).offset()).as("the named group is read, never written").isEqualTo(6);
        assertThat(after.get(p1).offset()).isEqualTo(3);
    }

    @Test
    @Timeout(240)
    void shouldNotLetAFilteredPartitionHoldTheWatermarkBack(KafkaCluster cluster, TestNames names) throws Exception {
        String input = names.topic("in");
        cluster.createTopic(input, 2);
        // idle partitions would release the stream only after 10 minutes: only the filter can let it advance
        WatermarkStrategy strategy = WatermarkStrategy.DEFAULT.withOutOfOrdernessBound(Duration.ZERO)
                .withIdlePartitions(Duration.ofMinutes(10), 0.0);
        PipelineSpec spec = spec(names.name("wm"), Map.of("topics", input, "partition_filter", List.of(0L)),
                names.topic("out"), strategy);
        try (FlowRuntime runtime = FlowRuntime.create(spec, props(cluster));
                ControlReader mid = new ControlReader(cluster, spec.name() + ".out")) {
            runtime.start();
            produce(cluster, input, 1, "p1-0", 1000); // skipped
            produce(cluster, input, 0, "p0-0", 5000);

            mid.awaitEventWatermarkOfEveryProducer("mid", 2, 5000 * MS);
            Await.until(Duration.ofMinutes(1), "the skipped record's offset committed", () -> {
                OffsetAndMetadata om = committed(cluster, spec.name()).get(new TopicPartition(input, 1));
                return om != null && om.offset() == 1;
            });
            Await.until(Duration.ofSeconds(30), "partition 0's record in the next computation's output",
                    () -> mid.dataRecords() >= 1);
            assertThat(mid.dataRecords()).as("only partition 0's record reaches the next computation").isEqualTo(1);
        }
    }

    @Test
    @Timeout(240)
    void shouldCompleteAFiniteSourceWhenItsUnfilteredPartitionsAreRead(KafkaCluster cluster, TestNames names)
            throws Exception {
        String input = names.topic("in");
        String output = names.topic("out");
        cluster.createTopic(input, 3);
        for (int p = 0; p < 3; p++) {
            for (int i = 0; i < 5; i++) {
                produce(cluster, input, p, "p" + p + "-" + i, 1000 + i);
            }
        }
        produce(cluster, input, 1, "p1-bad", -1, "not json"); // filtered: never decoded, so no dead letter
        PipelineSpec spec = spec(names.name("finite"), Map.of("topics", input, "finite", true,
                "partition_filter", "0,2"), output, WatermarkStrategy.DEFAULT);
        try (FlowRuntime runtime = FlowRuntime.create(spec, props(cluster))) {
            runtime.start();
            assertThat(runtime.awaitCompletion(Duration.ofMinutes(3))).as("state " + runtime.state()).isTrue();
            assertThat(readIds(cluster, output, 10)).hasSize(10).allMatch(id -> !id.startsWith("p1-"));
            assertThat(readAll(cluster, runtime.deadLetterTopic(), Duration.ofSeconds(2))).isEmpty();
        }
    }

    @Test
    @Timeout(240)
    void shouldCompleteAFiniteSourceWhoseLastRecordsAreATransactionMarkerOrAborted(KafkaCluster cluster,
            TestNames names) throws Exception {
        // finite: "complete once every partition is read to its end"; an end that is no record a task can see (the
        // commit marker after the last record, a partition holding only aborted records) must not keep it running
        String input = names.topic("in");
        String output = names.topic("out");
        cluster.createTopic(input, 2);
        Properties p = cluster.clientProperties();
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, names.name("tx"));
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
            producer.initTransactions();
            producer.beginTransaction();
            for (int i = 0; i < 3; i++) { // partition 0: three records, then the commit marker
                producer.send(new ProducerRecord<>(input, 0, "p0-" + i, "{\"id\":\"p0-" + i + "\",\"ts\":1000}"));
            }
            producer.commitTransaction();
            producer.beginTransaction(); // partition 1: aborted records and the abort marker only
            producer.send(new ProducerRecord<>(input, 1, "p1-0", "{\"id\":\"p1-0\",\"ts\":1000}"));
            producer.flush();
            producer.abortTransaction();
        }
        PipelineSpec spec = spec(names.name("fintx"), Map.of("topics", input, "finite", true), output,
                WatermarkStrategy.DEFAULT);
        try (FlowRuntime runtime = FlowRuntime.create(spec, props(cluster))) {
            runtime.start();
            assertThat(runtime.awaitCompletion(Duration.ofMinutes(1))).as("state " + runtime.state()).isTrue();
            assertThat(readIds(cluster, output, 3)).containsExactlyInAnyOrder("p0-0", "p0-1", "p0-2");
        }
    }

    private static Properties props(KafkaCluster cluster) throws Exception {
        Properties p = cluster.clientProperties();
        p.put("state.dir", Files.createTempDirectory(tempRoot, "flow-source-it").toString());
        p.put("commit.interval.ms", "100");
        p.put("flow.watermark.interval.ms", "100");
        p.put("flow.watermark.heartbeat.ms", "500");
        return p;
    }

    private static void produce(KafkaCluster cluster, String topic, int partition, String id, long tsMs) {
        produce(cluster, topic, partition, id, tsMs, "{\"id\":\"" + id + "\",\"ts\":" + tsMs + "}");
    }

    private static void produce(KafkaCluster cluster, String topic, int partition, String id, long tsMs,
            String value) {
        Properties p = cluster.clientProperties();
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
            producer.send(new ProducerRecord<>(topic, partition, id, value));
        }
    }

    private static Map<TopicPartition, OffsetAndMetadata> committed(KafkaCluster cluster, String group) {
        try {
            return cluster.admin().listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get();
        } catch (Exception e) {
            return Map.of();
        }
    }

    /** The ids of the JSON records of a topic, read_committed, once {@code expected} have arrived (and a bit more). */
    private static List<String> readIds(KafkaCluster cluster, String topic, int expected) {
        List<String> ids = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> consumer = consumer(cluster, topic)) {
            Await.until(Duration.ofMinutes(1), expected + " records in " + topic, () -> {
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                    String json = new String(r.value(), StandardCharsets.UTF_8);
                    ids.add(json.substring(json.indexOf("\"id\":\"") + 6, json.indexOf("\",")));
                }
                return ids.size() >= expected;
            });
            for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(500))) {
                ids.add("unexpected:" + new String(r.value(), StandardCharsets.UTF_8));
            }
        }
        return ids;
    }

    private static List<ConsumerRecord<byte[], byte[]>> readAll(KafkaCluster cluster, String topic, Duration wait) {
        List<ConsumerRecord<byte[], byte[]>> out = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> consumer = consumer(cluster, topic)) {
            long deadline = System.nanoTime() + wait.toNanos();
            while (System.nanoTime() < deadline) {
                consumer.poll(Duration.ofMillis(200)).forEach(out::add);
            }
        }
        return out;
    }

    private static KafkaConsumer<byte[], byte[]> consumer(KafkaCluster cluster, String topic) {
        Properties p = cluster.clientProperties();
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.GROUP_ID_CONFIG, topic + "-reader-" + System.nanoTime());
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(p);
        consumer.subscribe(List.of(topic));
        return consumer;
    }

    /** Reads the control records (and counts the data records) of an internal topic. */
    private static final class ControlReader implements AutoCloseable {
        private final KafkaConsumer<byte[], byte[]> consumer;
        private final SpecificDatumReader<ControlRecord> reader;
        private final Map<String, Long> latest = new HashMap<>();
        private int data;

        ControlReader(KafkaCluster cluster, String topic) {
            FlowAvroClasses.trust();
            reader = new SpecificDatumReader<>(ControlRecord.class);
            consumer = consumer(cluster, topic);
        }

        void poll() {
            for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(100))) {
                if (r.headers().lastHeader("flow.control") == null) {
                    data++;
                    continue;
                }
                try {
                    ControlRecord c = reader.read(null, DecoderFactory.get().binaryDecoder(r.value(), null));
                    latest.merge(c.getComputation() + "/" + c.getPartition(), c.getEventWatermark(), Math::max);
                } catch (java.io.IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            }
        }

        void awaitEventWatermarkOfEveryProducer(String computation, int partitions, long expected) {
            Await.until(Duration.ofMinutes(2), "event watermark " + expected + " from every task of " + computation,
                    () -> {
                        poll();
                        for (int p = 0; p < partitions; p++) {
                            Long wm = latest.get(computation + "/" + p);
                            if (wm == null || wm < expected) {
                                return false;
                            }
                        }
                        return true;
                    });
        }

        int dataRecords() {
            poll();
            return data;
        }

        @Override
        public void close() {
            consumer.close();
        }
    }
}
