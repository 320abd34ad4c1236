package io.flowkafka.connectors.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowkafka.runtime.FlowRuntime;
import io.flowkafka.spec.ComputationKind;
import io.flowkafka.spec.PipelineSpec;
import io.flowkafka.testing.Await;
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
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

/**
 * The outbox service hands a deliverer several ready batches of a partition in one call (one transaction for
 * TKafkaSink). A call that fails is retried with fewer batches: one too large to ever commit in time must not stop
 * delivery for good.
 */
@WithKafka
class OutboxBatchesTogetherIT {
    @TempDir(cleanup = CleanupMode.ON_SUCCESS)
    static Path tempRoot;

    @Test
    @Timeout(300)
    void shouldDeliverEverythingWhenOnlyASingleBatchPerCallSucceeds(KafkaCluster cluster, TestNames names)
            throws Exception {
        BlockingTestSink.reset();
        BlockingTestSink.together = 4;
        BlockingTestSink.failAbove = 1;
        String input = names.topic("input");
        cluster.createTopic(input, 1);
        PipelineSpec spec = PipelineSpec.builder(names.name("together"))
                .stream("raw", OutboxPipeline.EVENT).stream("events", OutboxPipeline.EVENT)
                .computation("read", c -> c.kind(ComputationKind.SOURCE)
                        .source("raw", "KafkaSource", Map.of("topics", input)).outputStreamIds("events")
                        .sink("out", "BlockingTestSink", List.of("events"), Map.of("key_column", "id",
                                "max_batch_records", 5))
                        .desiredPartitionCount(1))
                .build();
        Properties props = cluster.clientProperties();
        props.put("state.dir", Files.createTempDirectory(tempRoot, "together-it").toString());
        props.put("commit.interval.ms", "100");
        int records = 100;
        AtMostOnceSinkIT.produce(cluster, input, records);
        try (FlowRuntime runtime = FlowRuntime.create(spec, props)) {
            runtime.start();
            Await.until(Duration.ofMinutes(2), "the input read and its outbox records committed",
                    () -> AtMostOnceSinkIT.committedOffset(runtime, cluster, input) >= records);
            BlockingTestSink.release(); // a backlog of 20 batches: calls of 4 fail

            Await.until(Duration.ofMinutes(1), "every message delivered",
                    () -> BlockingTestSink.DELIVERED.size() >= records);
            assertThat(BlockingTestSink.FAILED_CALLS.get()).as("calls of several batches failed").isPositive();
            Set<String> expected = new HashSet<>();
            for (int i = 0; i < records; i++) {
                expected.add("e" + i);
            }
            assertThat(List.copyOf(BlockingTestSink.DELIVERED)).as("each message once")
                    .doesNotHaveDuplicates().containsExactlyInAnyOrderElementsOf(expected);
        }
    }
}
