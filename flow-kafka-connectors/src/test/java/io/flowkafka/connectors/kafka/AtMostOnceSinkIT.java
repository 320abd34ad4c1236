package io.flowkafka.connectors.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowkafka.runtime.FlowRuntime;
import io.flowkafka.testing.Await;
import io.flowkafka.testing.CommitFaults;
import io.flowkafka.testing.KafkaCluster;
import io.flowkafka.testing.TestNames;
import io.flowkafka.testing.WithKafka;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code at_most_once_strategy} on a real broker (reference 002: "messages are placed in an internal
 * queue. If the queue is full (total_queue_bytes_limit), new messages are dropped without an error.
 * Deduplication and delivery guarantees are absent."). The test sink blocks its deliveries until
 * the test releases it, so the queue fills deterministically.
 */
@WithKafka
class AtMostOnceSinkIT {
    /** State directories of this class's runtimes (and child JVMs); JUnit deletes it after the class if it passed. */
    @TempDir(cleanup = CleanupMode.ON_SUCCESS)
    static Path tempRoot;

    @Test
    @Timeout(300)
    void shouldDropOnlyPastTheQueueLimitCountTheDropsAndDeliverTheRest(KafkaCluster cluster, TestNames names)
            throws Exception {
        BlockingTestSink.reset();
        String input = names.topic("input");
        cluster.createTopic(input, 1);
        // a queued message is 35-45 bytes (key e<i> and the JSON value {"id":..,"user":..,"count":..}): 2000 bytes
        // hold about 50, one more is held by the blocked deliverer, the rest of the 200 must be dropped
        var spec = io.flowkafka.spec.PipelineSpec.builder(names.name("amo"))
                .stream("raw", OutboxPipeline.EVENT).stream("events", OutboxPipeline.EVENT)
                .stream("counted", OutboxPipeline.COUNTED)
                .computation("read", c -> c.kind(io.flowkafka.spec.ComputationKind.SOURCE)
                        .source("raw", "KafkaSource", Map.of("topics", input)).outputStreamIds("events"))
                .computation("count", c -> c.inputStreamIds("events")
                        .groupBy("hash", io.flowkafka.spec.ColumnType.UINT64, "farm_hash(user)")
                        .groupBy("user", io.flowkafka.spec.ColumnType.STRING, null)
                        .state("total", OutboxPipeline.TOTAL).processingFunction(OutboxPipeline.Count::new)
                        .outputStreamIds("counted")
                        .sink("out", "BlockingTestSink", List.of("counted"), Map.of("key_column", "id",
                                "max_batch_records", 1, "at_most_once_strategy",
                                Map.of("enabled", true, "total_queue_bytes_limit", 2000,
                                        "suspend_destruction_duration", "30s")))
                        .desiredPartitionCount(1))
                .build();
        Properties props = cluster.clientProperties();
        props.put("state.dir", Files.createTempDirectory(tempRoot, "amo-it").toString());
        props.put("commit.interval.ms", "100");
        int records = 200;
        produce(cluster, input, records);
        try (FlowRuntime runtime = FlowRuntime.create(spec, props)) {
            runtime.start();
            var dropped = runtime.meterRegistry().get("flow.sink.dropped").tag("sink", "out").counter();
            // the deliverer holds one message (blocked); the queue fills to its limit; the rest is dropped
            var queued = runtime.meterRegistry().get("flow.sink.queue_messages").tag("sink", "out").gauge();
            // every message ends up dropped, queued, or in the blocked deliverer's hands (one batch of one record)
            Await.until(Duration.ofMinutes(2), "every input queued, held or dropped",
                    () -> committedOffset(runtime, cluster) >= records
                            && dropped.count() + queued.value() + 1 >= records);
            double droppedBeforeRelease = dropped.count();
            assertThat(droppedBeforeRelease).as("most of 200 messages cannot fit 2000 bytes").isBetween(130.0, 170.0);
            BlockingTestSink.release();
            Await.until(Duration.ofMinutes(1), "the queue delivered",
                    () -> BlockingTestSink.DELIVERED.size() + dropped.count() >= records);
            Set<String> delivered = new HashSet<>(BlockingTestSink.DELIVERED);
            assertThat(delivered).as("what was not dropped is delivered, each once").hasSize(BlockingTestSink.DELIVERED.size());
            assertThat(delivered.size() + (int) dropped.count()).isEqualTo(records);
            assertThat(delivered.size()).as("drops only past the limit: the queue was full, 2000 / 35-45 bytes + 1")
                    .isBetween(2000 / 45, 2000 / 35 + 1);
            assertThat(dropped.count()).as("no drop once the queue drains").isEqualTo(droppedBeforeRelease);
        }
    }

    @Test
    @Timeout(300)
    void shouldDeliverNothingOfAnEpochWhoseCommitFailed(KafkaCluster cluster, TestNames names) throws Exception {
        // connectors README: an at-most-once message is released once its epoch committed; an aborted epoch is
        // replayed, and the replay's messages are the ones delivered
        BlockingTestSink.reset();
        BlockingTestSink.release();
        String input = names.topic("input");
        cluster.createTopic(input, 1);
        var spec = io.flowkafka.spec.PipelineSpec.builder(names.name("amof"))
                .stream("raw", OutboxPipeline.EVENT).stream("events", OutboxPipeline.EVENT)
                .stream("counted", OutboxPipeline.COUNTED)
                .computation("read", c -> c.kind(io.flowkafka.spec.ComputationKind.SOURCE)
                        .source("raw", "KafkaSource", Map.of("topics", input)).outputStreamIds("events"))
                .computation("count", c -> c.inputStreamIds("events")
                        .groupBy("hash", io.flowkafka.spec.ColumnType.UINT64, "farm_hash(user)")
                        .groupBy("user", io.flowkafka.spec.ColumnType.STRING, null)
                        .state("total", OutboxPipeline.TOTAL).processingFunction(OutboxPipeline.Count::new)
                        .outputStreamIds("counted")
                        .sink("out", "BlockingTestSink", List.of("counted"), Map.of("key_column", "id",
                                "at_most_once_strategy", Map.of("enabled", true)))
                        .desiredPartitionCount(1))
                .build();
        Properties props = cluster.clientProperties();
        props.put("state.dir", Files.createTempDirectory(tempRoot, "amof-it").toString());
        props.put("commit.interval.ms", "100");
        // the first commit carrying the count computation's work (its input offsets) fails, and its retry: the
        // transaction aborts
        CommitFaults faults = CommitFaults.failUntilAborted(offsets -> offsets.keySet().stream()
                .anyMatch(tp -> tp.topic().endsWith(".events")));
        faults.install(props);
        int records = 300;
        produce(cluster, input, records);
        try (FlowRuntime runtime = FlowRuntime.create(spec, props)) {
            runtime.start();
            Await.until(Duration.ofMinutes(2), "a transaction aborted after its commit failed",
                    () -> faults.aborted() == 1 && committedOffset(runtime, cluster) >= records);
            // inputs after the abort: their messages go out once their own epochs committed
            produce(cluster, input, records, records + 50);
            Set<String> later = new HashSet<>();
            for (int i = records; i < records + 50; i++) {
                later.add("e" + i);
            }
            Await.until(Duration.ofMinutes(1), "the later inputs' messages delivered",
                    () -> new HashSet<>(BlockingTestSink.DELIVERED).containsAll(later));
            Set<String> all = new HashSet<>(later);
            for (int i = 0; i < records; i++) {
                all.add("e" + i);
            }
            Await.until(Duration.ofMinutes(1), "the replay's messages delivered (no queue limit: nothing dropped)",
                    () -> new HashSet<>(BlockingTestSink.DELIVERED).containsAll(all));
            assertThat(List.copyOf(BlockingTestSink.DELIVERED)).as("no message twice: none of the aborted epoch, "
                    + "then the replay's").doesNotHaveDuplicates();
        }
    }

    static long committedOffset(FlowRuntime runtime, KafkaCluster cluster) {
        return committedOffset(runtime, cluster, ".events");
    }

    /** The pipeline's committed offsets, summed over the partitions of the topics whose name ends so. */
    static long committedOffset(FlowRuntime runtime, KafkaCluster cluster, String topicSuffix) {
        try {
            return cluster.admin().listConsumerGroupOffsets(runtime.applicationId()).partitionsToOffsetAndMetadata()
                    .get().entrySet().stream().filter(e -> e.getKey().topic().endsWith(topicSuffix))
                    .mapToLong(e -> e.getValue().offset()).sum();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    static void produce(KafkaCluster cluster, String topic, int count) throws Exception {
        produce(cluster, topic, 0, count);
    }

    private static void produce(KafkaCluster cluster, String topic, int from, int to) throws Exception {
        Properties pp = cluster.clientProperties();
        pp.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        pp.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        pp.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, "1");
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(pp)) {
            for (int i = from; i < to; i++) {
                producer.send(new ProducerRecord<>(topic, "u" + (i % 7), "{\"id\":\"e" + i + "\",\"user\":\"u" + (i % 7) + "\"}")).get();
            }
        }
    }
}
