package io.flowkafka.examples.guarantees;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowkafka.testing.Await;
import io.flowkafka.testing.ChildJvm;
import io.flowkafka.testing.KafkaCluster;
import io.flowkafka.testing.TestNames;
import io.flowkafka.testing.WithKafka;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code system_time} and {@code real_time} timers under SIGKILL, on a real broker (the crash tests of
 * {@code RandomCrashIT} use event-time timers). watermarks-and-timers.md: a firing's effects and the timer's deletion
 * commit in one transaction, for every time type. Two instances set two timers per input over 20k inputs, firing
 * over about 5 s; one is killed while timers are pending and firing, and restarted. Read read_committed, each timer
 * fired exactly once.
 */
@WithKafka
class TimersCrashIT {
    @TempDir(cleanup = CleanupMode.ON_SUCCESS)
    static Path tempRoot;

    private static final int MESSAGES = 20_000;
    private static final long SEED = Long.getLong("flow.it.seed", 20261207L);

    @Test
    @Timeout(600)
    void shouldFireEverySystemAndRealTimeTimerOnceWhenAnInstanceIsKilled(KafkaCluster cluster, TestNames names)
            throws Exception {
        Set<String> expected = new HashSet<>();
        for (int i = 0; i < MESSAGES; i++) {
            expected.add("sys-m" + i);
            expected.add("wall-m" + i);
        }
        long killAt = 5_000 + new Random(SEED).nextInt(20_000);
        try (CrashTestRun run = new CrashTestRun(cluster, "timers", names.name("timers"), names.topic("input"),
                names.topic("output"), Files.createTempDirectory(tempRoot, "timers"),
                r -> List.of(new String(r.key(), StandardCharsets.UTF_8)));
                ChildJvm a = run.instance("a");
                ChildJvm b = run.instance("b")) {
            run.produce(MESSAGES, 200, SEED + 1);
            Await.until(Duration.ofMinutes(3), killAt + " timers fired", () -> run.read() >= killAt);
            a.kill(); // SIGKILL: its pending timers move with its tasks; its open transaction's firings abort
            assertThat(a.isAlive()).isFalse();
            int firedAtKill = run.read();
            System.out.println("TimersCrashIT: killed with " + firedAtKill + " of " + expected.size() + " timers fired");
            assertThat(firedAtKill).as("timers still pending at the kill").isLessThan(expected.size());
            try (ChildJvm a2 = run.instance("a2")) {
                Await.until(Duration.ofMinutes(3), "all " + expected.size() + " timers fired",
                        () -> run.read() >= expected.size());
                run.readQuietWindow(Duration.ofSeconds(2)); // a second firing after the last would be here
            }
            assertThat(run.seen().keySet()).as("timers fired").isEqualTo(expected);
            assertThat(run.repeated()).as("timers fired more than once").isEmpty();
        }
    }
}
