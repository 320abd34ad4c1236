package io.flowkafka.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ChildJvmIT {
    private static final Duration BOUND = Duration.ofSeconds(30);

    @Test
    void shouldAwaitAPrintedLineAndKillTheChild() throws Exception {
        try (ChildJvm child = ChildJvm.builder(PrintAndWaitMain.class)
                .arg("hello")
                .systemProperty("greeting.suffix", "!")
                .environment("GREETING_ENV", " from env")
                .maxHeap("64m")
                .start()) {
            String line = child.awaitOutputLine(l -> l.startsWith("ready"), BOUND);

            assertThat(line).isEqualTo("ready hello! from env");
            assertThat(child.isAlive()).isTrue();
            assertThat(child.exitCode()).isEmpty();

            child.kill();

            assertThat(child.isAlive()).isFalse();
            assertThat(child.exitCode()).hasValue(137);
            assertThat(Files.readString(child.logFile())).contains("ready hello! from env");
        }
    }

    @Test
    void shouldGiveTheChildATempDirOfItsOwnAndDeleteItOnClose() throws Exception {
        Path file;
        Path dir;
        try (ChildJvm child = ChildJvm.builder(PrintAndWaitMain.class).arg("temp-file").maxHeap("64m").start()) {
            file = Path.of(child.awaitOutputLine(l -> l.startsWith("file "), BOUND).substring("file ".length()));
            dir = child.tempDir().orElseThrow();

            assertThat(file.getParent()).isEqualTo(dir);
            assertThat(dir.getFileName().toString()).startsWith("flow-child-jvm-");
            assertThat(file).exists();
            child.kill();
            assertThat(file).as("the file outlives the child until close()").exists();
        }
        assertThat(dir).as("close() deletes the child's java.io.tmpdir").doesNotExist();
    }

    @Test
    void shouldKeepATempDirTheBuilderSets(@TempDir Path mine) throws Exception {
        try (ChildJvm child = ChildJvm.builder(PrintAndWaitMain.class).arg("temp-file")
                .systemProperty("java.io.tmpdir", mine.toString()).maxHeap("64m").start()) {
            Path file = Path.of(child.awaitOutputLine(l -> l.startsWith("file "), BOUND).substring("file ".length()));

            assertThat(child.tempDir()).isEmpty();
            assertThat(file.getParent()).isEqualTo(mine);
        }
        assertThat(mine).as("not the child's to delete").exists();
    }

    /** A timeout and a failing matcher take the same way out; a matcher is not at the mercy of a slow start. */
    @Test
    void shouldCloseTheChildWhenAwaitingItsLineFails() {
        ChildJvm.Builder b = ChildJvm.builder(PrintAndWaitMain.class).arg("temp-file").maxHeap("64m");
        long before = ProcessHandle.current().children().count();

        assertThatThrownBy(() -> b.startAndAwaitOutputLine(l -> {
            if (l.startsWith("ready")) {
                throw new AssertionError("not the line awaited: " + l);
            }
            return false;
        }, BOUND)).isInstanceOf(AssertionError.class).hasMessageContaining("ready temp-file");

        assertThat(ProcessHandle.current().children().filter(ProcessHandle::isAlive).count())
                .as("the child was killed").isEqualTo(before);
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
    void shouldNameTheLastLinesWhenTheAwaitedLineDoesNotCome() {
        try (ChildJvm child = ChildJvm.builder(PrintAndWaitMain.class).arg("until-killed").maxHeap("64m").start()) {
            child.awaitOutputLine(l -> l.startsWith("ready"), BOUND);

            assertThatThrownBy(() -> child.awaitOutputLine(l -> l.equals("never"), Duration.ofMillis(500)))
                    .isInstanceOf(AssertionError.class).hasMessageContaining("last lines").hasMessageContaining("ready");
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
