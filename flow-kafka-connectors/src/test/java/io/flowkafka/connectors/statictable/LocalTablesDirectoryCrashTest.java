package io.flowkafka.connectors.statictable;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.avro.generic.GenericRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Crash safety of {@link LocalTablesDirectory} with a real process killed by SIGKILL in the middle
 * of writing: a half-written table is never listed, and every listed table is complete.
 */
class LocalTablesDirectoryCrashTest {
    @TempDir
    Path dir;

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void shouldListOnlyCompleteTablesAfterTheWriterIsKilled() throws Exception {
        String classpath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        Process writer = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-cp",
                classpath, CrashingTableWriter.class.getName(), dir.toString())
                .redirectError(ProcessBuilder.Redirect.DISCARD).start();
        List<String> announced = new ArrayList<>();
        try (BufferedReader out = new BufferedReader(new InputStreamReader(writer.getInputStream(),
                StandardCharsets.UTF_8))) {
            // Kill it while it writes the sixth table or later: the pipe read blocks, nothing sleeps.
            while (announced.size() < 5) {
                String line = out.readLine();
                assertThat(line).as("the writer died before publishing 5 tables").isNotNull();
                announced.add(line);
            }
            writer.destroyForcibly();
            writer.waitFor();
        }

        LocalTablesDirectory tables = LocalTablesDirectory.open(dir);
        List<String> listed = tables.tableNames();
        assertThat(listed).containsAll(announced);
        for (int i = 0; i < listed.size(); i++) {
            assertThat(listed.get(i)).isEqualTo(String.format("t-%05d", i));
            StaticTableReader reader = StaticTableReader.open(tables, listed.get(i));
            List<GenericRecord> rows = reader.readAll();
            assertThat(rows).as(listed.get(i)).hasSize(2_000 + i % 7).isEqualTo(LocalTablesDirectoryTest.rows(2_000 + i % 7));
            assertThat(reader.attributes().byteSize()).isEqualTo(sizeOnDisk(dir.resolve(listed.get(i))));
        }
        tables.removeAbandoned();
        assertThat(tables.tableNames()).isEqualTo(listed);
        assertThat(dir.toFile().list((d, n) -> n.startsWith("."))).isEmpty();
    }

    private static long sizeOnDisk(Path table) throws IOException {
        long size = 0;
        for (File f : table.toFile().listFiles((d, n) -> n.endsWith(".avro"))) {
            size += f.length();
        }
        return size;
    }
}
