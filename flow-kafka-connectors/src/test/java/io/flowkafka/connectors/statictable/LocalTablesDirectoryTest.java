package io.flowkafka.connectors.statictable;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.io.UncheckedIOException;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link LocalTablesDirectory} on the real filesystem: the {@link TablesDirectoryContractTest} plus
 * what only files show — crash leftovers, stored sizes, foreign children, the attributes file.
 */
class LocalTablesDirectoryTest extends TablesDirectoryContractTest {
    @TempDir
    Path dir;

    @Override
    TablesDirectory directory() throws IOException {
        return LocalTablesDirectory.open(dir);
    }

    @Test
    void shouldNotListWhatACrashedWriterLeftAndRemoveItOnRequest() throws IOException {
        LocalTablesDirectory tables = LocalTablesDirectory.open(dir);
        // A crash: parts and even the manifest were written, but the final rename never happened.
        PendingTable crashed = tables.beginTable();
        try (OutputStream out = crashed.createPart("part-00000.avro")) {
            out.write("half an avro file".getBytes(StandardCharsets.UTF_8));
        }
        // Drop the handle without close(), as a killed process would.
        LocalTablesDirectory reopened = LocalTablesDirectory.open(dir);
        assertThat(reopened.tableNames()).isEmpty();
        assertThat(reopened.removeAbandoned()).isEqualTo(1);
        try (var children = Files.list(dir)) {
            assertThat(children).isEmpty();
        }
    }

    @Test
    void shouldPublishACompleteTable() throws IOException {
        LocalTablesDirectory tables = LocalTablesDirectory.open(dir);
        try (StaticTableWriter w = StaticTableWriter.builder(tables, "t", SCHEMA).tableTimestamp(T0).rowsPerPart(4)
                .attribute("version", JsonNodeFactory.instance.numberNode(7)).open()) {
            for (GenericRecord r : rows(10)) {
                w.append(r);
            }
            w.publish();
        }
        LocalTablesDirectory reopened = LocalTablesDirectory.open(dir);
        TableAttributes a = reopened.attributes("t");
        assertThat(a.tableTimestamp()).isEqualTo(T0);
        assertThat(a.parts()).extracting(TablePart::rowCount).containsExactly(4L, 4L, 2L);
        assertThat(a.custom().get("version").asInt()).isEqualTo(7);
        for (TablePart p : a.parts()) {
            assertThat(Files.size(dir.resolve("t").resolve(p.name()))).isEqualTo(p.byteSize());
        }
        assertThat(StaticTableReader.open(reopened, "t").readAll()).isEqualTo(rows(10));
    }

    @Test
    void shouldReadAForeignChildWithoutTableTimestamp() throws IOException {
        LocalTablesDirectory tables = LocalTablesDirectory.open(dir);
        StaticTableWriter.write(tables, "t", SCHEMA, null, rows(5));
        Files.delete(dir.resolve("t").resolve(LocalTablesDirectory.MANIFEST));
        TableAttributes a = tables.attributes("t");
        assertThat(a.timestamp()).isEmpty();
        assertThat(a.rowCount()).isEqualTo(5);
        assertThat(StaticTableReader.open(tables, "t").readAll()).isEqualTo(rows(5));
    }

    /**
     * Counting another tool's table inflates every block: it is done once per part file, not at each open (a source
     * starting the table, its schema check, a task moving), and again only when the file changes.
     */
    @Test
    void shouldCountAForeignTableOnceUntilItsFilesChange() throws IOException {
        LocalTablesDirectory tables = LocalTablesDirectory.open(dir);
        StaticTableWriter.write(tables, "theirs", SCHEMA, null, rows(4));
        Files.delete(dir.resolve("theirs").resolve(LocalTablesDirectory.MANIFEST));
        long before = AvroParts.countsRead();
        assertThat(tables.attributes("theirs").rowCount()).isEqualTo(4);
        assertThat(LocalTablesDirectory.open(dir).attributes("theirs").rowCount()).isEqualTo(4);
        assertThat(tables.attributes("theirs").rowCount()).isEqualTo(4);
        assertThat(AvroParts.countsRead() - before).as("one part, counted once").isEqualTo(1);

        StaticTableWriter.write(tables, "next", SCHEMA, null, rows(6)); // its part replaces theirs: another file
        Files.delete(dir.resolve("next").resolve(LocalTablesDirectory.MANIFEST));
        try (var parts = Files.list(dir.resolve("next"))) {
            for (Path p : parts.toList()) {
                Files.move(p, dir.resolve("theirs").resolve(p.getFileName()), StandardCopyOption.REPLACE_EXISTING);
            }
        }
        assertThat(tables.attributes("theirs").rowCount()).as("the changed file counted again").isEqualTo(6);
    }

    @Test
    void shouldCallAForeignChildCompleteOnlyOnceItHoldsSuccess() throws IOException {
        LocalTablesDirectory tables = LocalTablesDirectory.open(dir);
        StaticTableWriter.write(tables, "ours", SCHEMA, null, rows(2));
        StaticTableWriter.write(tables, "theirs", SCHEMA, null, rows(2));
        Files.delete(dir.resolve("theirs").resolve(LocalTablesDirectory.MANIFEST));
        assertThat(tables.complete("ours")).isTrue();
        assertThat(tables.complete("theirs")).isFalse();

        Files.createFile(dir.resolve("theirs").resolve("_SUCCESS"));

        assertThat(tables.complete("theirs")).isTrue();
        assertThat(tables.tableNames()).containsExactly("ours", "theirs");
    }

    @Test
    void shouldReplaceDirectoryAttributesAtomically() throws IOException {
        LocalTablesDirectory tables = LocalTablesDirectory.open(dir);
        assertThat(tables.directoryAttributes().isEmpty()).isTrue();
        ObjectNode progress = JsonNodeFactory.instance.objectNode();
        progress.putObject("progress").put("owner", "pipeline/computation/sink");
        tables.replaceDirectoryAttributes(progress);
        ObjectNode next = progress.deepCopy();
        ((ObjectNode) next.get("progress")).put("sequence", 2);
        tables.replaceDirectoryAttributes(next);
        assertThat(LocalTablesDirectory.open(dir).directoryAttributes()).isEqualTo(next);
        assertThat(tables.tableNames()).isEmpty();
        try (var children = Files.list(dir)) {
            assertThat(children.map(p -> p.getFileName().toString())).containsExactly("_attributes.json");
        }
    }
}
