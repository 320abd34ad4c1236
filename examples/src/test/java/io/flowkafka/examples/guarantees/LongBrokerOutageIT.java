package io.flowkafka.examples.guarantees;

import io.flowkafka.testing.EmbeddedKafkaCluster;
import io.flowkafka.testing.TestNames;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

/**
 * The only broker down for longer than the pipeline's producers wait for an acknowledgement
 * ({@code delivery.timeout.ms}): sends and commits time out while it is gone, and the runtime, never touched by the
 * test, must recover by itself once it is back, with every input exactly one output with the right contents (so every
 * timer fired once) and the runtime {@code RUNNING}. The {@link BrokerFaultPipeline} runs as in
 * {@link BrokerRestartIT}; its producers get {@code delivery.timeout.ms} 6 s and the broker stays down
 * {@code flow.reliability.outage.ms} (15 s).
 *
 * <p>Opt-in ({@code -Dflow.reliability.longOutage=true}): a run takes about 2 minutes, most of it the replaced
 * stream thread's old consumer waiting out its session timeout after the broker is back.
 */
@EnabledIfSystemProperty(named = "flow.reliability.longOutage", matches = "true")
class LongBrokerOutageIT {
    /** State directories of this class's runtimes; JUnit deletes it after the class if it passed. */
    @TempDir(cleanup = CleanupMode.ON_SUCCESS)
    static Path tempRoot;

    static final long OUTAGE_MS = Long.getLong("flow.reliability.outage.ms", 15_000);
    static final int RECORDS = Integer.getInteger("flow.reliability.records", 2000);
    static final int RATE = Integer.getInteger("flow.reliability.rate", 100);

    @Test
    @Timeout(value = 300, unit = TimeUnit.SECONDS)
    void shouldRecoverByItselfAfterTheBrokerWasGoneLongerThanTheDeliveryTimeout() throws Exception {
        TestNames names = TestNames.of(LongBrokerOutageIT.class, "outage");
        Map<String, String> producers = Map.of(
                "producer.delivery.timeout.ms", "6000",
                "producer.request.timeout.ms", "3000",
                "producer.max.block.ms", "6000");
        try (EmbeddedKafkaCluster cluster = EmbeddedKafkaCluster.start();
                BrokerFaultRun run = new BrokerFaultRun(cluster, names.name("outage"),
                        Files.createTempDirectory(tempRoot, "state"), RECORDS, RATE, Map.of(), producers)) {
            BrokerFaultRun.Fault outage = (c, applicationId) -> {
                c.stopBroker(1);
                Thread.sleep(OUTAGE_MS); // the outage's length: what this test is about, not a wait for a condition
                c.startBroker(1);
                return "broker 1 (of 1) down for " + OUTAGE_MS + " ms";
            };
            BrokerFaultRun.Outcome outcome = run.run(List.of(outage));
            outcome.printAndCheck("LongBrokerOutageIT", 1, "outage", RECORDS);
        }
    }
}
