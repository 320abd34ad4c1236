package io.flowkafka.internal.timers;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * "Never all held on the heap" (DESIGN.md), where Flow's own timers run jobs out of memory
 * (reference 003: "all active timers are additionally stored in the process memory"): a child
 * JVM with {@code -Xmx256m} registers and fires a million timers (ten million with
 * {@code -Dflow.timers.stress.count=10000000}) through RocksDB stores, checking order, the hold
 * and completeness itself ({@link TimerStressMain}).
 */
class TimersMemoryTest {
    private static final long COUNT = Long.getLong("flow.timers.stress.count", 1_000_000L);

    @TempDir
    Path stateDir;

    @Test
    @Timeout(value = 30, unit = TimeUnit.MINUTES)
    void shouldRegisterAndFireTimersInA256MiBHeap() throws IOException, InterruptedException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process child = new ProcessBuilder(java, "-Xmx256m", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
                "-cp", System.getProperty("java.class.path"), TimerStressMain.class.getName(),
                Long.toString(COUNT), "1000", stateDir.toString())
                .redirectErrorStream(true).start();
        String output = new String(child.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        int exit = child.waitFor();
        System.out.println(output);

        assertThat(exit).as(output).isZero();
        List<String> result = output.lines().filter(l -> l.startsWith("RESULT ")).toList();
        assertThat(result).as(output).singleElement().asString()
                .contains("timers=" + COUNT + " fired=" + COUNT + " inOrder=true")
                .contains("maxHeapMB=256");
    }
}
