package io.flowkafka.examples.guarantees;

import io.flowkafka.testing.EmbeddedKafkaCluster;
import io.flowkafka.testing.TestNames;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

/**
 * A broker of a 3-broker cluster stopped mid-run and not restarted: the {@link BrokerFaultPipeline} runs with
 * replication 3 and {@code min.insync.replicas} 2 on every topic (its own through {@code flow.topics.*}, Kafka
 * Streams' changelogs through the same settings, the input and output topics as the test creates them, the broker's
 * internal topics as {@link EmbeddedKafkaCluster} sets them). The broker stopped is the pipeline's group coordinator,
 * so the group coordinator moves as well as partition leaders. The runtime, never touched, must go on by itself:
 * every input exactly one output with the right contents, the runtime {@code RUNNING}. Prints the time to recover.
 *
 * <p>CI stops one broker over 2000 inputs. A full run: {@code -Dflow.reliability.runs=N} stops N brokers in one run,
 * each time starting the previously stopped one again first (one broker down at a time), over
 * {@code flow.reliability.records} (2000) inputs per fault at {@code flow.reliability.rate} (100) a second.
 */
class ReplicatedBrokerStopIT {
    /** State directories of this class's runtimes; JUnit deletes it after the class if it passed. */
    @TempDir(cleanup = CleanupMode.ON_SUCCESS)
    static Path tempRoot;

    @Test
    @Timeout(value = 240, unit = TimeUnit.SECONDS)
    void shouldGoOnByItselfWhenTheGroupCoordinatorOfThreeBrokersStops() throws Exception {
        int faults = BrokerRestartIT.RUNS;
        int records = BrokerRestartIT.RECORDS_PER_FAULT * faults;
        TestNames names = TestNames.of(ReplicatedBrokerStopIT.class, "stop");
        Map<String, String> minIsr = Map.of("min.insync.replicas", "2");
        Map<String, String> runtime = Map.of("flow.topics.replication.factor", "3",
                "flow.topics.min.insync.replicas", "2");
        List<Integer> stopped = new ArrayList<>();
        BrokerFaultRun.Fault stopCoordinator = (c, applicationId) -> {
            String started = "";
            if (!stopped.isEmpty()) {
                int back = stopped.get(stopped.size() - 1);
                c.startBroker(back);
                started = "broker " + back + " started again, ";
            }
            ConsumerGroupDescription group = c.admin().describeConsumerGroups(List.of(applicationId)).all().get()
                    .get(applicationId);
            int coordinator = group.coordinator().id();
            c.stopBroker(coordinator);
            stopped.add(coordinator);
            return started + "broker " + coordinator + " (of 3, the group coordinator) stopped";
        };
        try (EmbeddedKafkaCluster cluster = EmbeddedKafkaCluster.start(3);
                BrokerFaultRun run = new BrokerFaultRun(cluster, names.name("stop"),
                        Files.createTempDirectory(tempRoot, "state"), records, BrokerRestartIT.RATE, minIsr,
                        runtime)) {
            BrokerFaultRun.Outcome outcome = run.run(Collections.nCopies(faults, stopCoordinator));
            outcome.printAndCheck("ReplicatedBrokerStopIT", faults, "stop", records);
        }
    }
}
