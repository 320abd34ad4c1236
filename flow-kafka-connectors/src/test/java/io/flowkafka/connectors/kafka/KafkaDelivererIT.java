package io.flowkafka.connectors.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowkafka.api.MessageId;
import io.flowkafka.spec.SinkSpec;
import io.flowkafka.spi.OutboxBatch;
import io.flowkafka.spi.OutboxRecord;
import io.flowkafka.spi.SinkContext;
import io.flowkafka.testing.Await;
import io.flowkafka.testing.KafkaCluster;
import io.flowkafka.testing.TestNames;
import io.flowkafka.testing.WithKafka;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * TKafkaSink's exactly-once deliverer driven directly, as the outbox service drives it: several ready batches of a
 * partition go in one transaction with one progress marker, and whatever an earlier attempt committed is skipped when
 * the batches are offered again.
 */
@WithKafka
class KafkaDelivererIT {
    private static final int PARTITION = 2;

    @Test
    @Timeout(120)
    void shouldWriteBatchesDeliveredTogetherOnceInOneTransactionAndSkipThemWhenOfferedAgain(KafkaCluster cluster,
            TestNames names) throws Exception {
        String topic = names.topic("target");
        cluster.createTopic(topic, 1);
        // epochs of the outbox partition: [0..2] marker 3, [4..5] marker 6, [7..9] marker 10
        OutboxBatch a = batch(0, 3, 3);
        OutboxBatch b = batch(4, 2, 6);
        OutboxBatch c = batch(7, 3, 10);
        try (KafkaDeliverer deliverer = new KafkaDeliverer(context(cluster, topic))) {
            assertThat(deliverer.maxBatchesTogether()).isGreaterThan(1);
            assertThat(deliverer.open(PARTITION, OptionalLong.empty())).isEmpty();
            deliverer.deliverTogether(List.of(a, b));
            assertThat(awaitCommitted(cluster, topic, 5)).containsExactly(0L, 1L, 2L, 4L, 5L);
            assertThat(endOffset(cluster, topic)).as("5 records and one commit marker: one transaction").isEqualTo(6);
            // the service offers them again (it did not learn the outcome), now with the next epoch's batch
            deliverer.deliverTogether(List.of(a, b, c));
        }
        assertThat(awaitCommitted(cluster, topic, 8)).as("each outbox record once")
                .containsExactly(0L, 1L, 2L, 4L, 5L, 7L, 8L, 9L);
        long end = endOffset(cluster, topic);
        try (KafkaDeliverer restarted = new KafkaDeliverer(context(cluster, topic))) {
            assertThat(restarted.open(PARTITION, OptionalLong.of(6))).as("the marker is after the last batch")
                    .hasValue(10);
            restarted.deliverTogether(List.of(b, c));
        }
        assertThat(endOffset(cluster, topic)).as("a new instance writes nothing the marker covers").isEqualTo(end);
        assertThat(committedOffsets(cluster, topic)).containsExactly(0L, 1L, 2L, 4L, 5L, 7L, 8L, 9L);
        // every delivery transaction leaves a commit marker in the progress topic, which a marker read walks: kept an
        // hour, not compaction's default day
        ConfigResource progress = new ConfigResource(ConfigResource.Type.TOPIC, topic + ".flow-progress");
        assertThat(cluster.admin().describeConfigs(List.of(progress)).all().get().get(progress)
                .get("delete.retention.ms").value()).isEqualTo("3600000");
    }

    @Test
    @Timeout(120)
    void shouldNotMoveTheMarkerBackPastARejectedRecordAnotherOwnerDeliveredSince(KafkaCluster cluster,
            TestNames names) throws Exception {
        String topic = names.topic("target");
        cluster.createTopic(topic, 1);
        OutboxBatch a = batch(0, 3, 3);
        OutboxBatch b = batch(3, 3, 6);
        try (KafkaDeliverer zombie = new KafkaDeliverer(context(cluster, topic));
                KafkaDeliverer owner = new KafkaDeliverer(context(cluster, topic))) {
            zombie.open(PARTITION, OptionalLong.empty());
            // the partition's next owner fences the first and delivers both batches, while the first, which has
            // not noticed (its rejection came from the client, before any request), dead-letters record 1 ...
            owner.open(PARTITION, OptionalLong.empty());
            owner.deliverTogether(List.of(a, b));
            assertThat(awaitCommitted(cluster, topic, 6)).containsExactly(0L, 1L, 2L, 3L, 4L, 5L);
            // ... and then moves the marker past it
            zombie.movePast(PARTITION, a.records().get(1));
        }
        try (KafkaDeliverer next = new KafkaDeliverer(context(cluster, topic))) {
            assertThat(next.open(PARTITION, OptionalLong.of(6))).as("the marker stays after what was delivered")
                    .hasValue(6);
            next.deliverTogether(List.of(a, b));
        }
        assertThat(committedOffsets(cluster, topic)).as("nothing delivered twice")
                .containsExactly(0L, 1L, 2L, 3L, 4L, 5L);
    }

    @Test
    @Timeout(120)
    void shouldResumeAtTheDeliveryGroupsOffsetWhenTheMarkerIsBehindIt(KafkaCluster cluster, TestNames names)
            throws Exception {
        // exactly_once, then at_least_once for a while (its progress is the delivery group's offset only), then
        // exactly_once again: the marker is behind what was delivered; delivery goes on from the group's offset
        String topic = names.topic("target");
        cluster.createTopic(topic, 1);
        OutboxBatch a = batch(0, 3, 3);
        OutboxBatch b = batch(3, 3, 6);
        OutboxBatch c = batch(6, 3, 9);
        try (KafkaDeliverer deliverer = new KafkaDeliverer(context(cluster, topic))) {
            deliverer.open(PARTITION, OptionalLong.empty());
            deliverer.deliverTogether(List.of(a));
        }
        try (KafkaDeliverer back = new KafkaDeliverer(context(cluster, topic))) {
            assertThat(back.open(PARTITION, OptionalLong.of(6))).as("where the group's offset says").hasValue(6);
            back.deliverTogether(List.of(b, c));
        }
        assertThat(awaitCommitted(cluster, topic, 6)).as("batch b was delivered at least once meanwhile: not again")
                .containsExactly(0L, 1L, 2L, 6L, 7L, 8L);
    }

    /** The committed records once there are at least {@code count} (commit markers are written after the commit). */
    private static List<Long> awaitCommitted(KafkaCluster cluster, String topic, int count) {
        return Await.untilValue(Duration.ofSeconds(30), count + " committed records in " + topic,
                () -> committedOffsets(cluster, topic), l -> l.size() >= count);
    }

    private static SinkContext context(KafkaCluster cluster, String topic) {
        Map<String, Object> client = new HashMap<>();
        cluster.clientProperties().forEach((k, v) -> client.put(String.valueOf(k), v));
        SinkSpec sink = new SinkSpec("out", KafkaSinkProvider.T_KAFKA_SINK, List.of("rows"), Map.of("topic", topic));
        return new SinkContext("kd", topic + "-app", "compute", sink, client, Map.of(), new SimpleMeterRegistry(),
                topic + "-dlq", Map.of());
    }

    /** A batch of {@code count} outbox records from {@code from}, whose value is the outbox offset. */
    private static OutboxBatch batch(long from, int count, long nextOffset) {
        List<OutboxRecord> records = new ArrayList<>();
        for (long o = from; o < from + count; o++) {
            records.add(new OutboxRecord(o, MessageId.of(ByteBuffer.allocate(8).putLong(o).array()),
                    ("k" + o).getBytes(StandardCharsets.UTF_8), Long.toString(o).getBytes(StandardCharsets.UTF_8),
                    new RecordHeaders(), System.currentTimeMillis()));
        }
        return new OutboxBatch("out", PARTITION, records, nextOffset);
    }

    /** The outbox offsets (values) committed to the target, read read_committed, in target order. */
    private static List<Long> committedOffsets(KafkaCluster cluster, String topic) {
        Map<String, Object> props = new HashMap<>();
        cluster.clientProperties().forEach((k, v) -> props.put(String.valueOf(k), v));
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        TopicPartition tp = new TopicPartition(topic, 0);
        List<Long> out = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props)) {
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            long end = consumer.endOffsets(List.of(tp)).get(tp);
            while (consumer.position(tp) < end) {
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                    out.add(Long.parseLong(new String(r.value(), StandardCharsets.UTF_8)));
                }
            }
        }
        return out;
    }

    /** The end offset (high watermark) of the target partition: records plus transaction markers. */
    private static long endOffset(KafkaCluster cluster, String topic) throws Exception {
        TopicPartition tp = new TopicPartition(topic, 0);
        return cluster.admin().listOffsets(Map.of(tp, OffsetSpec.latest())).all()
                .get().get(tp).offset();
    }
}
