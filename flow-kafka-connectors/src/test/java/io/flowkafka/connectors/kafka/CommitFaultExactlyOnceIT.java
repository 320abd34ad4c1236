package io.flowkafka.connectors.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowkafka.runtime.FlowRuntime;
import io.flowkafka.spec.ColumnType;
import io.flowkafka.spec.ComputationKind;
import io.flowkafka.spec.PipelineSpec;
import io.flowkafka.testing.Await;
import io.flowkafka.testing.CommitFaults;
import io.flowkafka.testing.ExactlyOnceChecker;
import io.flowkafka.testing.KafkaCluster;
import io.flowkafka.testing.TestNames;
import io.flowkafka.testing.WithKafka;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

/**
 * The shape of {@code AtMostOnceSinkIT#shouldDeliverNothingOfAnEpochWhoseCommitFailed}, exactly once: a Source
 * computation writes an internal stream, a Transform reads it and writes each record to a KafkaSink topic. The first
 * commit carrying the internal stream's offsets fails ({@link CommitFaults}); Kafka Streams revives the thread's
 * tasks. Every input must have exactly one output.
 */
@WithKafka
class CommitFaultExactlyOnceIT {
    @TempDir(cleanup = CleanupMode.ON_SUCCESS)
    static Path tempRoot;

    static final int BEFORE = 300;
    static final int AFTER = 50;

    @Test
    @Timeout(240)
    void shouldWriteEveryInputOnceWhenTheFirstInternalCommitFailsOnce(KafkaCluster cluster, TestNames names)
            throws Exception {
        run(cluster, names, CommitFaults.failOnce(CommitFaultExactlyOnceIT::carriesEvents));
    }

    @Test
    @Timeout(240)
    void shouldWriteEveryInputOnceWhenTheFirstInternalCommitFailsUntilAborted(KafkaCluster cluster, TestNames names)
            throws Exception {
        run(cluster, names, CommitFaults.failUntilAborted(CommitFaultExactlyOnceIT::carriesEvents));
    }

    private static boolean carriesEvents(Map<org.apache.kafka.common.TopicPartition, ?> offsets) {
        return offsets.keySet().stream().anyMatch(tp -> tp.topic().endsWith(".events"));
    }

    private static void run(KafkaCluster cluster, TestNames names, CommitFaults faults) throws Exception {
        String input = names.topic("input");
        String output = names.topic("output");
        cluster.createTopic(input, 1);
        cluster.createTopic(output, 1);
        PipelineSpec spec = PipelineSpec.builder(names.name("eof"))
                .stream("raw", OutboxPipeline.EVENT).stream("events", OutboxPipeline.EVENT)
                .stream("counted", OutboxPipeline.COUNTED)
                .computation("read", c -> c.kind(ComputationKind.SOURCE)
                        .source("raw", "KafkaSource", Map.of("topics", input)).outputStreamIds("events"))
                .computation("count", c -> c.inputStreamIds("events")
                        .groupBy("hash", ColumnType.UINT64, "farm_hash(user)")
                        .groupBy("user", ColumnType.STRING, null)
                        .state("total", OutboxPipeline.TOTAL).processingFunction(OutboxPipeline.Count::new)
                        .outputStreamIds("counted")
                        .sink("out", "KafkaSink", List.of("counted"),
                                Map.of("topic", output, "key_column", "id", "timestamp", "system"))
                        .desiredPartitionCount(1))
                .build();
        Properties props = cluster.clientProperties();
        props.put("state.dir", Files.createTempDirectory(tempRoot, "eof-it").toString());
        props.put("commit.interval.ms", "100");
        faults.install(props);
        produce(cluster, input, 0, BEFORE);
        Set<String> expected = new TreeSet<>();
        for (int i = 0; i < BEFORE + AFTER; i++) {
            expected.add("e" + i);
        }
        try (FlowRuntime runtime = FlowRuntime.create(spec, props)) {
            runtime.start();
            Await.until(Duration.ofMinutes(2), "a commit failed and the first inputs committed",
                    () -> faults.injected() >= 1 && committedOnEvents(runtime, cluster) >= BEFORE);
            produce(cluster, input, BEFORE, BEFORE + AFTER);
            Await.until(Duration.ofMinutes(1), "every input's offset committed",
                    () -> committedOnEvents(runtime, cluster) >= BEFORE + AFTER);
            ExactlyOnceChecker.Report report = ExactlyOnceChecker.check(cluster, output, expected,
                    Duration.ofSeconds(10), r -> new String(r.key(), StandardCharsets.UTF_8));
            String summary = String.format("CommitFaultExactlyOnceIT: %d commit(s) failed, %d abort(s); "
                    + "committed on .events %d; results %s", faults.injected(), faults.aborted(),
                    committedOnEvents(runtime, cluster), report);
            System.out.println(summary);
            assertThat(report.isExact()).as(summary).isTrue();
        }
    }

    private static long committedOnEvents(FlowRuntime runtime, KafkaCluster cluster) {
        try {
            return cluster.admin().listConsumerGroupOffsets(runtime.applicationId()).partitionsToOffsetAndMetadata()
                    .get().entrySet().stream().filter(e -> e.getKey().topic().endsWith(".events"))
                    .mapToLong(e -> e.getValue().offset()).sum();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private static void produce(KafkaCluster cluster, String topic, int from, int to) throws Exception {
        Properties pp = cluster.clientProperties();
        pp.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        pp.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        pp.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, "1");
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(pp)) {
            for (int i = from; i < to; i++) {
                producer.send(new ProducerRecord<>(topic, "u" + (i % 7),
                        "{\"id\":\"e" + i + "\",\"user\":\"u" + (i % 7) + "\"}")).get();
            }
        }
    }
}
