package io.flowkafka.connectors.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flowkafka.runtime.FlowRuntime;
import io.flowkafka.spec.ColumnType;
import io.flowkafka.spec.ComputationKind;
import io.flowkafka.spec.ComputationSpec;
import io.flowkafka.spec.PipelineSpec;
import io.flowkafka.testing.KafkaCluster;
import io.flowkafka.testing.TestNames;
import io.flowkafka.testing.WithKafka;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

/**
 * A failed start or close leaves nothing half open. Resource audit: a sink that could not open at {@code start()} (a ClickHouse table without the sharding key) made
 * {@code start()} throw after Kafka Streams had started, and its stream threads went on reading and committing into
 * the outbox with no delivery service, maintenance or health: a pipeline that looked failed and was not.
 */
@WithKafka
class StartAndCloseFailuresIT {
    @TempDir(cleanup = CleanupMode.ON_SUCCESS)
    static Path tempRoot;

    @Test
    @Timeout(180)
    void shouldLeaveNothingRunningWhenASinkCannotOpen(KafkaCluster cluster, TestNames names) throws Exception {
        BlockingTestSink.reset();
        BlockingTestSink.refuseToOpen = "table t has no column 'nope' for sharding_key";
        PipelineSpec spec = countingInto(cluster, names, "failstart",
                c -> c.sink("out", "BlockingTestSink", List.of("counted"), Map.of("key_column", "id")));
        Properties props = props(cluster, "failstart");
        try (FlowRuntime runtime = FlowRuntime.create(spec, props)) {
            assertThatThrownBy(runtime::start).isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("table t has no column 'nope' for sharding_key");

            assertThat(runtime.state()).isEqualTo(FlowRuntime.State.FAILED);
            assertThat(Thread.getAllStackTraces().keySet()).as("no thread of the pipeline runs (stream threads, "
                    + "maintenance, the dynamic-spec listener)").noneMatch(t -> t.isAlive()
                            && t.getName().contains(spec.name()));
        } finally {
            BlockingTestSink.reset();
        }
    }

    @Test
    @Timeout(180)
    void shouldCloseEverySinkWhenOneFailsToClose(KafkaCluster cluster, TestNames names) throws Exception {
        // resource audit: the first sink whose close threw left the others (and maintenance) open
        BlockingTestSink.reset();
        BlockingTestSink.closeFails = true;
        FailingAckTestSink.reset(false);
        PipelineSpec spec = countingInto(cluster, names, "failclose", c -> c
                .sink("queued", "BlockingTestSink", List.of("counted"), Map.of("key_column", "id",
                        "at_most_once_strategy", Map.of("enabled", true)))
                .sink("direct", "FailingAckTestSink", List.of("counted"), Map.of("key_column", "id")));
        Properties props = props(cluster, "failclose");
        try {
            FlowRuntime runtime = FlowRuntime.create(spec, props);
            runtime.start();
            runtime.awaitState(FlowRuntime.State.RUNNING, Duration.ofSeconds(60));

            runtime.close();

            assertThat(FailingAckTestSink.CLOSED.get()).as("the writer after the failing sink").isEqualTo(1);
            assertThat(runtime.state()).isEqualTo(FlowRuntime.State.STOPPED);
        } finally {
            BlockingTestSink.reset();
        }
    }

    /** A topic read into a per-user count whose output {@code counted} goes to the sinks {@code sinks} adds. */
    private static PipelineSpec countingInto(KafkaCluster cluster, TestNames names, String name,
            UnaryOperator<ComputationSpec.Builder> sinks) throws Exception {
        String input = names.topic("input");
        cluster.createTopic(input, 1);
        return PipelineSpec.builder(names.name(name))
                .stream("raw", OutboxPipeline.EVENT).stream("events", OutboxPipeline.EVENT)
                .stream("counted", OutboxPipeline.COUNTED)
                .computation("read", c -> c.kind(ComputationKind.SOURCE)
                        .source("raw", "KafkaSource", Map.of("topics", input)).outputStreamIds("events"))
                .computation("count", c -> sinks.apply(c.inputStreamIds("events")
                        .groupBy("hash", ColumnType.UINT64, "farm_hash(user)").groupBy("user", ColumnType.STRING, null)
                        .state("total", OutboxPipeline.TOTAL).processingFunction(OutboxPipeline.Count::new)
                        .outputStreamIds("counted")))
                .build();
    }

    private static Properties props(KafkaCluster cluster, String name) throws Exception {
        Properties props = cluster.clientProperties();
        props.put("state.dir", Files.createTempDirectory(tempRoot, name).toString());
        return props;
    }
}
