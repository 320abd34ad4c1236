package io.flowkafka.examples.guarantees;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowkafka.runtime.FlowRuntime;
import io.flowkafka.testing.EmbeddedKafkaCluster;
import io.flowkafka.testing.TestNames;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collections;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

/**
 * The only broker restarted mid-run, on a cluster of its own: the {@link BrokerFaultPipeline} (state, an event-time
 * timer, an internal stream, a Kafka sink; exactly-once) runs under a steady stream of inputs, the broker (also the
 * controller, group and transaction coordinator) stops and starts again on the same port and data directory, and the
 * runtime, never touched by the test, must recover by itself: every input exactly one output with the right
 * contents (so every timer fired once), the runtime {@code RUNNING} again. Prints the time to recover.
 *
 * <p>CI runs one restart over 2000 inputs. A full run: {@code -Dflow.reliability.runs=N} restarts N times in one run,
 * over {@code flow.reliability.records} (2000) inputs per restart at {@code flow.reliability.rate} (100) a second.
 */
class BrokerRestartIT {
    /** State directories of this class's runtimes; JUnit deletes it after the class if it passed. */
    @TempDir(cleanup = CleanupMode.ON_SUCCESS)
    static Path tempRoot;

    static final int RUNS = Integer.getInteger("flow.reliability.runs", 1);
    static final int RECORDS_PER_FAULT = Integer.getInteger("flow.reliability.records", 2000);
    static final int RATE = Integer.getInteger("flow.reliability.rate", 100);

    @Test
    @Timeout(value = 240, unit = TimeUnit.SECONDS)
    void shouldRecoverByItselfWhenTheOnlyBrokerRestartsMidRun() throws Exception {
        check(RUNS);
    }

    static void check(int restarts) throws Exception {
        TestNames names = TestNames.of(BrokerRestartIT.class, "restart");
        int records = RECORDS_PER_FAULT * restarts;
        try (EmbeddedKafkaCluster cluster = EmbeddedKafkaCluster.start();
                BrokerFaultRun run = new BrokerFaultRun(cluster, names.name("restart"),
                        Files.createTempDirectory(tempRoot, "state"), records, RATE, Map.of(), Map.of())) {
            BrokerFaultRun.Fault restart = (c, applicationId) -> {
                c.restartBroker(1);
                return "broker 1 (of 1) restarted";
            };
            BrokerFaultRun.Outcome outcome = run.run(Collections.nCopies(restarts, restart));
            System.out.println("BrokerRestartIT: " + restarts + " restart(s), " + records + " inputs: " + outcome
                    + "; first new output after the fault began " + BrokerFaultRun.spread(outcome.timings(),
                            BrokerFaultRun.Timing::firstOutputMs) + ", caught up " + BrokerFaultRun.spread(
                            outcome.timings(), BrokerFaultRun.Timing::caughtUpMs) + ", restart took "
                    + BrokerFaultRun.spread(outcome.timings(), BrokerFaultRun.Timing::outageMs));
            SoftAssertions softly = new SoftAssertions();
            softly.assertThat(outcome.produceError()).as("input producer error").isNull();
            softly.assertThat(outcome.report().isExact()).as("every input exactly one output: " + outcome.report())
                    .isTrue();
            softly.assertThat(outcome.wrongContents()).as("outputs with wrong contents").isEmpty();
            softly.assertThat(outcome.finalState()).as("runtime state at the end; states " + outcome.states())
                    .isEqualTo(FlowRuntime.State.RUNNING);
            softly.assertThat(outcome.timings()).as("restarts injected").isNotEmpty();
            softly.assertAll();
            assertThat(outcome.report().total()).isEqualTo(records);
        }
    }
}
