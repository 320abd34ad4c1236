package io.flowkafka.connectors.statictable;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.LongStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Staging into pool files with a real process killed by SIGKILL while it stages: every batch whose {@code stage}
 * returned is published once, a file the kill cut short is not, and the partition's next owner removes what the
 * dead process left.
 */
class ArrivalOrderStagingCrashTest {
    @TempDir
    Path dir;

    static ArrivalOrderTableSink sink(Path dir) throws Exception {
        return new ArrivalOrderTableSink(LocalTablesDirectory.open(dir), new ArrivalOrderSinkParameters(
                ArrivalOrderTableSinkTest.HOUR, Duration.ofDays(1), null, null), ArrivalOrderTableSinkTest.ROW,
                ArrivalOrderTableSinkTest.OWNER);
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void shouldPublishEveryStagedBatchOnceAfterTheStagerIsKilled() throws Exception {
        String classpath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        Process stager = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-cp",
                classpath, CrashingStager.class.getName(), dir.toString())
                .redirectError(ProcessBuilder.Redirect.DISCARD).start();
        long lastStaged = -1;
        try (BufferedReader out = new BufferedReader(new InputStreamReader(stager.getInputStream(),
                StandardCharsets.UTF_8))) {
            // kill it while it stages the sixth batch or later: the pipe read blocks, nothing sleeps
            for (int batches = 0; batches < 5; batches++) {
                String line = out.readLine();
                assertThat(line).as("the stager died before staging 5 batches").isNotNull();
                lastStaged = Long.parseLong(line);
            }
            stager.destroyForcibly();
            stager.waitFor();
        }

        ArrivalOrderTableSink next = sink(dir);
        Instant now = Instant.now();
        assertThat(next.coverage(0, now)).as("the partition's next owner sees every returned batch staged")
                .isGreaterThanOrEqualTo(ArrivalOrderTableSinkTest.id(lastStaged));
        Instant far = now.plus(Duration.ofDays(1));
        while (!next.publish(far, null).isEmpty()) {
            // drain
        }
        LocalTablesDirectory tables = LocalTablesDirectory.open(dir);
        List<Long> ids = new ArrayList<>();
        for (String table : tables.tableNames().stream().sorted().toList()) {
            StaticTableReader.open(tables, table).readAll().forEach(r -> ids.add((Long) r.get("n")));
        }
        assertThat(ids).as("every staged row once, in order, no gap").isEqualTo(
                LongStream.range(0, ids.size()).boxed().toList());
        assertThat(ids.size() - 1L).isGreaterThanOrEqualTo(lastStaged);
        try (Stream<Path> left = Files.list(dir.resolve(ArrivalOrderTableSink.STAGING))) {
            assertThat(left.filter(p -> !p.getFileName().toString().startsWith(".")).toList())
                    .as("no staged row left, no pool file of the dead process").isEmpty();
        }
    }
}
