package io.flowkafka.examples.guarantees;

import io.flowkafka.testing.EmbeddedKafkaCluster;
import io.flowkafka.testing.TestNames;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
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
 *
 * <p>A second fault, opt-in ({@code -Dflow.reliability.longOutage=true}, about 2 minutes): the broker down for longer
 * than the pipeline's producers wait for an acknowledgement ({@code delivery.timeout.ms} 6 s, the broker gone
 * {@code flow.reliability.outage.ms}, 15 s), so sends and commits time out while it is gone.
 */
class BrokerRestartIT {
    /** State directories of this class's runtimes; JUnit deletes it after the class if it passed. */
    @TempDir(cleanup = CleanupMode.ON_SUCCESS)
    static Path tempRoot;

    static final int RUNS = Integer.getInteger("flow.reliability.runs", 1);
    static final int RECORDS_PER_FAULT = Integer.getInteger("flow.reliability.records", 2000);
    static final int RATE = Integer.getInteger("flow.reliability.rate", 100);
    static final long OUTAGE_MS = Long.getLong("flow.reliability.outage.ms", 15_000);

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
            outcome.printAndCheck("BrokerRestartIT", restarts, "restart", records);
        }
    }

    @Test
    @Timeout(value = 300, unit = TimeUnit.SECONDS)
    @EnabledIfSystemProperty(named = "flow.reliability.longOutage", matches = "true")
    void shouldRecoverByItselfAfterTheBrokerWasGoneLongerThanTheDeliveryTimeout() throws Exception {
        TestNames names = TestNames.of(BrokerRestartIT.class, "outage");
        Map<String, String> producers = Map.of(
                "producer.delivery.timeout.ms", "6000",
                "producer.request.timeout.ms", "3000",
                "producer.max.block.ms", "6000");
        try (EmbeddedKafkaCluster cluster = EmbeddedKafkaCluster.start();
                BrokerFaultRun run = new BrokerFaultRun(cluster, names.name("outage"),
                        Files.createTempDirectory(tempRoot, "state"), RECORDS_PER_FAULT, RATE, Map.of(), producers)) {
            BrokerFaultRun.Fault outage = (c, applicationId) -> {
                c.stopBroker(1);
                Thread.sleep(OUTAGE_MS); // the outage's length: what this test is about, not a wait for a condition
                c.startBroker(1);
                return "broker 1 (of 1) down for " + OUTAGE_MS + " ms";
            };
            BrokerFaultRun.Outcome outcome = run.run(List.of(outage));
            outcome.printAndCheck("BrokerRestartIT (long outage)", 1, "outage", RECORDS_PER_FAULT);
        }
    }
}
