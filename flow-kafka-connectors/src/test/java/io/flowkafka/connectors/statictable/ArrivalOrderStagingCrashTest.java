package io.flowkafka.connectors.statictable;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
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
 * Staging with a real process killed by SIGKILL: the test plays the task's transaction, recording each prepared
 * epoch and then telling the stager it committed. Killed while it makes an epoch visible or prepares the next, the
 * partition's next owner completes the epoch the last commit recorded and deletes the one that never committed: every
 * committed row is published once, nothing else.
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
    void shouldPublishEveryCommittedEpochOnceAfterTheStagerIsKilled() throws Exception {
        String classpath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        Process stager = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-cp",
                classpath, CrashingStager.class.getName(), dir.toString())
                .redirectError(ProcessBuilder.Redirect.DISCARD).start();
        String recorded = null;
        long lastCommitted = -1;
        try (BufferedReader out = new BufferedReader(new InputStreamReader(stager.getInputStream(),
                StandardCharsets.UTF_8));
                Writer commits = new OutputStreamWriter(stager.getOutputStream(), StandardCharsets.UTF_8)) {
            // five epochs commit; kill it while it makes the fifth visible or prepares the sixth (nothing sleeps)
            for (int epochs = 0; epochs < 5; epochs++) {
                String line = out.readLine();
                assertThat(line).as("the stager died before preparing 5 epochs").isNotNull();
                String[] parts = line.split(" ");
                recorded = parts[0]; // the transaction records the epoch, then commits
                lastCommitted = Long.parseLong(parts[1]);
                commits.write("committed\n");
                commits.flush();
            }
            stager.destroyForcibly();
            stager.waitFor();
        }

        ArrivalOrderTableSink next = sink(dir);
        Instant now = Instant.now();
        assertThat(next.coverage(0, List.of(recorded), now)).as("the next owner sees every committed epoch staged")
                .isEqualTo(ArrivalOrderTableSinkTest.id(lastCommitted));
        Instant far = now.plus(Duration.ofDays(1));
        while (!next.publish(far, null).isEmpty()) {
            // drain
        }
        LocalTablesDirectory tables = LocalTablesDirectory.open(dir);
        List<Long> ids = new ArrayList<>();
        for (String table : tables.tableNames().stream().sorted().toList()) {
            StaticTableReader.open(tables, table).readAll().forEach(r -> ids.add((Long) r.get("n")));
        }
        assertThat(ids).as("every committed row once, in order, no gap, nothing uncommitted").isEqualTo(
                LongStream.rangeClosed(0, lastCommitted).boxed().toList());
        try (Stream<Path> left = Files.list(dir.resolve(ArrivalOrderTableSink.STAGING))) {
            assertThat(left.filter(p -> !p.getFileName().toString().startsWith(".")).toList())
                    .as("no staged row left").isEmpty();
        }
        try (Stream<Path> left = Files.list(dir.resolve(ArrivalOrderTableSink.STAGING))) {
            assertThat(left.filter(p -> StagingPool.partitionOf(p) == 0).toList())
                    .as("no pending file of the dead process: the uncommitted epoch was deleted").isEmpty();
        }
    }
}
