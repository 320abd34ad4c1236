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
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link LocalTablesDirectory} on the real filesystem: listing, atomic publish, crash leftovers, attributes. */
class LocalTablesDirectoryTest {
    static final Schema SCHEMA = SchemaBuilder.record("Row").fields().requiredLong("id").requiredString("name")
            .endRecord();
    static final Instant T0 = Instant.parse("2026-12-03T00:00:00Z");

    @TempDir
    Path dir;

    static List<GenericRecord> rows(int n) {
        List<GenericRecord> rows = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            GenericRecord r = new GenericData.Record(SCHEMA);
            r.put("id", (long) i);
            r.put("name", "row-" + i);
            rows.add(r);
        }
        return rows;
    }

    @Test
    void shouldListPublishedTablesInNameOrder() throws IOException {
        LocalTablesDirectory tables = LocalTablesDirectory.open(dir);
        for (String name : List.of("2026-12-03T02:00:00Z", "2026-12-03T00:00:00Z", "2026-12-03T01:00:00Z")) {
            StaticTableWriter.write(tables, name, SCHEMA, T0, rows(3));
        }
        assertThat(tables.tableNames()).containsExactly("2026-12-03T00:00:00Z", "2026-12-03T01:00:00Z",
                "2026-12-03T02:00:00Z");
    }

    @Test
    void shouldNeverListATableStillBeingWritten() throws IOException {
        LocalTablesDirectory tables = LocalTablesDirectory.open(dir);
        StaticTableWriter w = StaticTableWriter.builder(tables, "t1", SCHEMA).rowsPerPart(2).open();
        for (GenericRecord r : rows(5)) {
            w.append(r);
        }
        assertThat(tables.tableNames()).isEmpty();
        assertThatThrownBy(() -> tables.attributes("t1")).isInstanceOf(NoSuchFileException.class);
        w.publish();
        w.close();
        assertThat(tables.tableNames()).containsExactly("t1");
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
    void shouldRefuseToPublishOverAnExistingTable() throws IOException {
        LocalTablesDirectory tables = LocalTablesDirectory.open(dir);
        StaticTableWriter.write(tables, "t", SCHEMA, T0, rows(2));
        assertThatThrownBy(() -> StaticTableWriter.write(tables, "t", SCHEMA, T0, rows(3)))
                .isInstanceOf(FileAlreadyExistsException.class).hasMessageContaining("table exists");
        assertThat(StaticTableReader.open(tables, "t").rowCount()).isEqualTo(2);
        assertThat(tables.removeAbandoned()).isZero();
    }

    @Test
    void shouldDiscardATableClosedWithoutPublish() throws IOException {
        LocalTablesDirectory tables = LocalTablesDirectory.open(dir);
        try (StaticTableWriter w = StaticTableWriter.builder(tables, "t", SCHEMA).open()) {
            w.append(rows(1).get(0));
        }
        assertThat(tables.tableNames()).isEmpty();
        try (var children = Files.list(dir)) {
            assertThat(children).isEmpty();
        }
    }

    @Test
    void shouldRemoveATable() throws IOException {
        LocalTablesDirectory tables = LocalTablesDirectory.open(dir);
        StaticTableWriter.write(tables, "a", SCHEMA, T0, rows(2));
        StaticTableWriter.write(tables, "b", SCHEMA, T0, rows(2));
        assertThat(tables.removeTable("a")).isTrue();
        assertThat(tables.removeTable("a")).isFalse();
        assertThat(tables.tableNames()).containsExactly("b");
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

    @Test
    void shouldRejectReservedAndPathLikeTableNames() throws IOException {
        LocalTablesDirectory tables = LocalTablesDirectory.open(dir);
        for (String bad : List.of("", ".hidden", "_attributes.json", "a/b")) {
            assertThatThrownBy(() -> tables.attributes(bad)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("table name");
        }
    }
}
