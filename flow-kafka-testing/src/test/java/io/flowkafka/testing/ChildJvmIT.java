package io.flowkafka.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ChildJvmIT {
    private static final Duration BOUND = Duration.ofSeconds(30);

    @Test
    void shouldAwaitAPrintedLineAndKillTheChild() throws Exception {
        try (ChildJvm child = ChildJvm.builder(PrintAndWaitMain.class)
                .arg("hello")
                .systemProperty("greeting.suffix", "!")
                .maxHeap("64m")
                .start()) {
            String line = child.awaitOutputLine(l -> l.startsWith("ready"), BOUND);

            assertThat(line).isEqualTo("ready hello!");
            assertThat(child.isAlive()).isTrue();
            assertThat(child.exitCode()).isEmpty();

            child.kill();

            assertThat(child.isAlive()).isFalse();
            assertThat(child.exitCode()).hasValue(137);
            assertThat(Files.readString(child.logFile())).contains("ready hello!");
        }
    }

    @Test
    void shouldStopTheChildWithSigterm() {
        try (ChildJvm child = ChildJvm.builder(PrintAndWaitMain.class).arg("until-killed")
                .maxHeap("64m").start()) {
            child.awaitOutputLine(l -> l.startsWith("ready"), BOUND);

            assertThat(child.stop()).isEqualTo(143);
            assertThat(child.isAlive()).isFalse();
        }
    }

    @Test
    void shouldFailFastWhenTheChildExitsWithoutTheLine() {
        try (ChildJvm child = ChildJvm.builder(PrintAndWaitMain.class).arg("exit").start()) {
            long start = System.nanoTime();

            assertThatThrownBy(() -> child.awaitOutputLine(l -> l.equals("never"), BOUND))
                    .isInstanceOf(AssertionError.class)
                    .hasMessageContaining("exited with code 3")
                    .hasMessageContaining("bye");
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(BOUND);
        }
    }
}
