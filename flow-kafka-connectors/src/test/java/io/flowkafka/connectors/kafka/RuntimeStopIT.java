package io.flowkafka.connectors.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowkafka.runtime.FlowRuntime;
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
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

/**
 * How {@code FlowRuntime}'s stop, close and state end together, on a real broker with a {@code TKafkaSink} (an
 * outbox delivery thread the stop must close): {@link FlowRuntime.State#STOPPED} is reported once everything is
 * closed, a close after a stop that timed out closes what that stop left open, and a stop and a close from two
 * threads (a {@code flow-kafka stop} while a shutdown hook closes the runtime) both end cleanly.
 */
@WithKafka
class RuntimeStopIT {
    @TempDir(cleanup = CleanupMode.ON_SUCCESS)
    static Path tempRoot;

    @Test
    @Timeout(180)
    void shouldCloseTheSinksWhenCloseFollowsAStopThatTimedOut(KafkaCluster cluster, TestNames names)
            throws Exception {
        String pipeline = names.name("late");
        try (FlowRuntime runtime = started(cluster, names, pipeline)) {
            assertThat(runtime.stop(Duration.ZERO)).as("a stop given no time").isFalse();
            // FAILED until Kafka Streams has finished closing (which it may have done while the stop returned)
            assertThat(runtime.state()).isIn(FlowRuntime.State.FAILED, FlowRuntime.State.STOPPED);
            // Kafka Streams goes on closing; its sinks stay open until the runtime closes
            Await.until(Duration.ofMinutes(1), "Kafka Streams closed", () -> runtime.state() == FlowRuntime.State.STOPPED);
            runtime.close();
            assertThat(deliveryThreads(pipeline)).as("outbox delivery threads after close").isEmpty();
        }
    }

    @Test
    @Timeout(180)
    void shouldReportStoppedOnlyOnceTheSinksAreClosedAndLetAConcurrentCloseEndCleanly(KafkaCluster cluster,
            TestNames names) throws Exception {
        String pipeline = names.name("both");
        try (FlowRuntime runtime = started(cluster, names, pipeline)) {
            CyclicBarrier go = new CyclicBarrier(2);
            CompletableFuture<Boolean> stop = CompletableFuture.supplyAsync(() -> {
                await(go);
                return runtime.stop(Duration.ofSeconds(60));
            });
            CompletableFuture<Void> close = CompletableFuture.runAsync(() -> {
                await(go);
                runtime.close();
            });
            assertThat(runtime.awaitState(FlowRuntime.State.STOPPED, Duration.ofMinutes(1))).isTrue();
            assertThat(deliveryThreads(pipeline)).as("outbox delivery threads once STOPPED").isEmpty();
            assertThat(stop.get(1, TimeUnit.MINUTES)).as("the stop").isTrue();
            close.get(1, TimeUnit.MINUTES); // throws if the close threw
            assertThat(runtime.state()).isEqualTo(FlowRuntime.State.STOPPED);
        }
    }

    private static FlowRuntime started(KafkaCluster cluster, TestNames names, String pipeline) throws Exception {
        String input = names.topic("input");
        String output = names.topic("output");
        cluster.createTopic(input, 2);
        cluster.createTopic(output, 2);
        Properties props = cluster.clientProperties();
        props.put("state.dir", Files.createTempDirectory(tempRoot, "stop-it").toString());
        props.put("commit.interval.ms", "100");
        FlowRuntime runtime = FlowRuntime.create(OutboxPipeline.spec(pipeline, input, output,
                Map.of("delivery_guarantee", "exactly_once")), props);
        runtime.start();
        assertThat(runtime.awaitState(FlowRuntime.State.RUNNING, Duration.ofMinutes(1))).isTrue();
        Await.until(Duration.ofMinutes(1), "the outbox delivery thread runs", () -> !deliveryThreads(pipeline).isEmpty());
        return runtime;
    }

    /** The live threads of the pipeline's outbox deliveries. */
    private static List<String> deliveryThreads(String pipeline) {
        return Thread.getAllStackTraces().keySet().stream().filter(Thread::isAlive).map(Thread::getName)
                .filter(n -> n.startsWith("flow-" + pipeline + "-outbox-")).toList();
    }

    private static void await(CyclicBarrier barrier) {
        try {
            barrier.await(1, TimeUnit.MINUTES);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
