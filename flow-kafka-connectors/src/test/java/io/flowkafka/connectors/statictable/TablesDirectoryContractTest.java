package io.flowkafka.connectors.statictable;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.NoSuchFileException;
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
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Test;

/**
 * The contract of every {@link TablesDirectory}: listing in name order, "listed means complete",
 * one winner per name, removal, directory attributes. Each implementation extends it.
 */
abstract class TablesDirectoryContractTest {
    static final Schema SCHEMA = SchemaBuilder.record("Row").fields().requiredLong("id").requiredString("name")
            .endRecord();
    static final Instant T0 = Instant.parse("2026-12-03T00:00:00Z");

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

    /** A fresh, empty directory of the implementation under test. */
    abstract TablesDirectory directory() throws IOException;

    @Test
    void shouldListPublishedTablesInNameOrder() throws IOException {
        TablesDirectory tables = directory();
        for (String name : List.of("2026-12-03T02:00:00Z", "2026-12-03T00:00:00Z", "2026-12-03T01:00:00Z")) {
            StaticTableWriter.write(tables, name, SCHEMA, T0, rows(3));
        }
        assertThat(tables.tableNames()).containsExactly("2026-12-03T00:00:00Z", "2026-12-03T01:00:00Z",
                "2026-12-03T02:00:00Z");
    }

    @Test
    void shouldNeverListATableStillBeingWritten() throws IOException {
        TablesDirectory tables = directory();
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
    void shouldRefuseToPublishOverAnExistingTable() throws IOException {
        TablesDirectory tables = directory();
        StaticTableWriter.write(tables, "t", SCHEMA, T0, rows(2));
        assertThatThrownBy(() -> StaticTableWriter.write(tables, "t", SCHEMA, T0, rows(3)))
                .isInstanceOf(FileAlreadyExistsException.class).hasMessageContaining("table exists");
        assertThat(StaticTableReader.open(tables, "t").rowCount()).isEqualTo(2);
        assertThat(tables.removeAbandoned()).isZero();
    }

    @Test
    void shouldDiscardATableClosedWithoutPublish() throws IOException {
        TablesDirectory tables = directory();
        try (StaticTableWriter w = StaticTableWriter.builder(tables, "t", SCHEMA).open()) {
            w.append(rows(1).get(0));
        }
        assertThat(tables.tableNames()).isEmpty();
        assertThat(tables.removeAbandoned()).as("nothing left behind").isZero();
    }

    @Test
    void shouldRemoveATable() throws IOException {
        TablesDirectory tables = directory();
        StaticTableWriter.write(tables, "a", SCHEMA, T0, rows(2));
        StaticTableWriter.write(tables, "b", SCHEMA, T0, rows(2));
        assertThat(tables.removeTable("a")).isTrue();
        assertThat(tables.removeTable("a")).isFalse();
        assertThat(tables.tableNames()).containsExactly("b");
    }

    @Test
    void shouldRejectReservedAndPathLikeTableNames() throws IOException {
        TablesDirectory tables = directory();
        for (String bad : List.of("", ".hidden", "_attributes.json", "a/b")) {
            assertThatThrownBy(() -> tables.attributes(bad)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("table name");
        }
    }

    @RepeatedTest(20)
    void shouldLetExactlyOneOfTwoConcurrentPublishersOfANameWin() throws Exception {
        TablesDirectory tables = directory();
        CountDownLatch ready = new CountDownLatch(2);
        Callable<Boolean> publisher = () -> {
            try (PendingTable pending = tables.beginTable()) {
                ready.countDown();
                ready.await();
                pending.publish("t", TableAttributes.of(T0, List.of()));
                return true;
            } catch (FileAlreadyExistsException e) {
                return false;
            }
        };
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            Future<Boolean> a = pool.submit(publisher);
            Future<Boolean> b = pool.submit(publisher);
            assertThat(List.of(a.get(), b.get())).containsExactlyInAnyOrder(true, false);
        } finally {
            pool.shutdownNow();
        }
        assertThat(tables.tableNames()).containsExactly("t");
    }

    @Test
    void shouldReportATableRemovedWhileItIsRead() throws IOException {
        TablesDirectory tables = directory();
        try (StaticTableWriter w = StaticTableWriter.builder(tables, "t", SCHEMA).rowsPerPart(2).open()) {
            for (GenericRecord r : rows(4)) {
                w.append(r);
            }
            w.publish();
        }
        StaticTableReader reader = StaticTableReader.open(tables, "t");
        tables.removeTable("t");
        assertThatThrownBy(() -> reader.rows(0, 4).hasNext()).isInstanceOf(UncheckedIOException.class)
                .hasMessageContaining("cannot read table t at row 0").hasCauseInstanceOf(NoSuchFileException.class);
        assertThatThrownBy(() -> StaticTableReader.open(tables, "t")).isInstanceOf(NoSuchFileException.class);
    }

    @Test
    void shouldReplaceDirectoryAttributesAsAWhole() throws IOException {
        TablesDirectory tables = directory();
        assertThat(tables.directoryAttributes().isEmpty()).isTrue();
        ObjectNode first = JsonNodeFactory.instance.objectNode();
        first.putObject("progress").put("owner", "pipeline/computation/sink").put("sequence", 1);
        first.put("other", "kept only if written again");
        tables.replaceDirectoryAttributes(first);
        ObjectNode second = JsonNodeFactory.instance.objectNode();
        second.putObject("progress").put("owner", "pipeline/computation/sink").put("sequence", 2);
        tables.replaceDirectoryAttributes(second);
        assertThat(tables.directoryAttributes()).isEqualTo(second);
        tables.directoryAttributes().put("mutated", true);
        assertThat(tables.directoryAttributes()).isEqualTo(second);
        assertThat(tables.tableNames()).isEmpty();
    }
}
