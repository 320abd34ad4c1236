package io.flowkafka.examples.guarantees;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowkafka.runtime.FlowRuntime;
import io.flowkafka.runtime.StatusError;
import io.flowkafka.spec.ColumnType;
import io.flowkafka.spec.PipelineSpec;
import io.flowkafka.testing.Await;
import io.flowkafka.testing.KafkaCluster;
import io.flowkafka.testing.TestNames;
import io.flowkafka.testing.WithKafka;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

/**
 * A finite pipeline waiting for a key visitor's final pass, spread over its period, says so: on a real broker,
 * {@code status()} lists {@code /key_visitor/<stream>/final_pass} (INFO, with when it ends) for every task while
 * the pass runs, and nothing once the pipeline completed.
 */
@WithKafka
class FinalPassStatusIT {
    @TempDir(cleanup = CleanupMode.ON_SUCCESS)
    static Path tempRoot;

    @Test
    @Timeout(180)
    void shouldListTheAwaitedFinalPassInStatusUntilThePipelineCompletes(KafkaCluster cluster, TestNames names)
            throws Exception {
        // a visitor-only computation follows no stream: its first pass is its final one (finite: true, the default)
        String pipeline = names.name("final-pass");
        PipelineSpec spec = PipelineSpec.builder(pipeline).stream("unused", VisitPipeline.SEEN)
                .computation("auditor", c -> c.groupBy("hash", ColumnType.UINT64, null)
                        .processingFunction(KeyVisitorIT.Auditor::new).state("seen", VisitPipeline.SEEN)
                        .desiredPartitionCount(2).keyVisitorStream("v", Map.of("period", "8s")))
                .build();
        Properties props = new Properties();
        props.put("bootstrap.servers", cluster.bootstrapServers());
        props.put("state.dir", Files.createTempDirectory(tempRoot, "flow-final-pass").toString());
        props.put("commit.interval.ms", "100");
        try (FlowRuntime runtime = FlowRuntime.create(spec, props)) {
            runtime.start();
            Await.until(Duration.ofMinutes(1), "both tasks report their final pass",
                    () -> runtime.status().size() == 2 || runtime.state() == FlowRuntime.State.COMPLETED);
            List<StatusError> status = runtime.status();
            assertThat(status).extracting(StatusError::partition).containsExactly(0, 1);
            assertThat(status).allSatisfy(e -> {
                assertThat(e.path()).isEqualTo("/key_visitor/v/final_pass");
                assertThat(e.computation()).isEqualTo("auditor");
                assertThat(e.severity()).isEqualTo(StatusError.Severity.INFO);
                assertThat(e.message()).contains("is in its final pass, spread over its period (8s)", "it ends about");
            });
            assertThat(runtime.awaitCompletion(Duration.ofMinutes(1))).as("completes after the final pass").isTrue();
            assertThat(runtime.status()).as("nothing awaited any more").isEmpty();
        }
    }
}
