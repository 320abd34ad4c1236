package io.flowkafka.connectors.statictable;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowkafka.spec.SourceSpec;
import io.flowkafka.spi.PunctuatedSource;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;
import java.util.stream.LongStream;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The static-table reader under the runtime's time-bounded punctuations, as on a real stream thread (FlowTestDriver
 * steps once per punctuation): the runtime steps it again while it is {@link PunctuatedSource.Reader#ready() ready};
 * it reads on while rows are ready, and the rate limits still decide how many rows a second.
 */
class StaticTableReadStepsTest {
    @TempDir
    Path dir;
    private long nowMs = 1_000_000;
    private final List<Long> ids = new ArrayList<>();

    /** One task's reader, stepped as the runtime does within a (here generous) time bound. */
    private record Steps(PunctuatedSource.Reader reader, PunctuatedSource.Progress progress,
            PunctuatedSource.Emitter emitter, LongSupplier clock, Map<String, Object> parameters) {
        void punctuate() {
            int steps = 0;
            do {
                reader.step(clock.getAsLong(), progress, emitter);
            } while (reader.ready() && ++steps < 10_000);
        }

        boolean ready() {
            return reader.ready();
        }

        boolean done() {
            return reader.done(progress);
        }
    }

    private Steps steps(Map<String, Object> extra) {
        return steps(extra, 0, 1, new HashMap<>(), new HashMap<>(), ids);
    }

    /**
     * Partition {@code partition} of {@code partitions}: its progress in {@code store} (kept across a restart), its
     * status reports in {@code reports} (path to message, removed when cleared), the ids it emits in {@code out}.
     */
    private Steps steps(Map<String, Object> extra, int partition, int partitions, Map<String, byte[]> store,
            Map<String, String> reports, List<Long> out) {
        Map<String, Object> p = new HashMap<>(Map.of("tables_path", dir.toString(), "max_rows_per_iteration", 10,
                "range_row_count", 4, "finite", true));
        p.putAll(extra);
        if (extra.containsKey("tables")) {
            p.remove("tables_path");
        }
        SourceSpec source = new SourceSpec("rows", StaticTableSource.FLOW_NAME, p);
        PunctuatedSource.Status status = new PunctuatedSource.Status() {
            @Override
            public void report(String path, String message) {
                reports.put(path, message);
            }

            @Override
            public void clear(String path) {
                reports.remove(path);
            }
        };
        PunctuatedSource.Reader reader = new StaticTableSource().open(new PunctuatedSource.Context("reader", source,
                StaticTableSourceTest.ROW, partition, partitions, () -> p, status));
        PunctuatedSource.Progress progress = new PunctuatedSource.Progress() {
            @Override
            public byte @Nullable [] get(String key) {
                return store.get(key);
            }

            @Override
            public void put(String key, byte[] value) {
                store.put(key, value);
            }
        };
        return new Steps(reader, progress, (payload, ts, wm) -> out.add((Long) payload.get("id")), () -> nowMs, p);
    }

    private void table(String name, long rows) throws IOException {
        write(dir, name, rows);
    }

    /** Writes table {@code name} of rows with ids 0 to {@code rows - 1} into the tables directory {@code in}. */
    private static void write(Path in, String name, long rows) throws IOException {
        List<GenericRecord> list = new ArrayList<>();
        for (long i = 0; i < rows; i++) {
            GenericRecord r = new GenericData.Record(StaticTableSourceTest.ROW);
            r.put("id", i);
            r.put("table", name);
            list.add(r);
        }
        StaticTableWriter.write(LocalTablesDirectory.open(in), name, StaticTableSourceTest.ROW, null, list);
    }

    @Test
    void shouldReadEveryReadyRowOfEveryTableInOnePunctuationWithoutALimit() throws IOException {
        table("2026-01-01", 95);
        table("2026-01-02", 7);
        Steps steps = steps(Map.of());

        steps.punctuate();

        assertThat(ids).containsExactlyElementsOf(LongStream.concat(LongStream.range(0, 95), LongStream.range(0, 7))
                .boxed().toList());
        assertThat(steps.done()).isTrue();
        assertThat(steps.ready()).isFalse();
    }

    /**
     * A caught-up task of an endless source lists its directory (all its tables, with the attribute locator all
     * their attributes) at most once a second, not at every tick of 100 ms; a table published meanwhile is read at
     * the next listing.
     */
    @Test
    void shouldListTheTablesAtMostOnceASecondOnceCaughtUp() throws IOException {
        write(dir, "2026-01-01", 3);
        Steps steps = steps(Map.of("finite", false));
        steps.punctuate();
        assertThat(ids).containsExactly(0L, 1L, 2L);
        steps.punctuate(); // nothing after the first table: caught up
        write(dir, "2026-01-02", 2);
        for (int tick = 1; tick < 10; tick++) {
            nowMs += 100;
            steps.punctuate();
        }
        assertThat(ids).as("no listing within the second").containsExactly(0L, 1L, 2L);
        nowMs += 100;
        steps.punctuate();
        assertThat(ids).as("the next listing finds the new table").containsExactly(0L, 1L, 2L, 0L, 1L);
    }

    @Test
    void shouldWaitForAMissingTablesPathWithoutCreatingItOrFinishing() throws IOException {
        // a mistyped tables_path: a finite source must not complete having read nothing
        Path missing = dir.resolve("nope");
        Map<String, String> reports = new HashMap<>();
        Steps steps = steps(Map.of("tables_path", missing.toString()), 0, 1, new HashMap<>(), reports, ids);
        steps.punctuate();
        assertThat(steps.done()).isFalse();
        assertThat(reports.get("tables")).contains("cannot list its tables", missing.toString());
        assertThat(missing).doesNotExist();

        write(missing, "2026-01-01", 3);
        steps.punctuate();
        assertThat(ids).containsExactly(0L, 1L, 2L);
        assertThat(steps.done()).isTrue();
        assertThat(reports).doesNotContainKey("tables");
    }

    @Test
    void shouldSkipATableWhoseDirectoryWentAwayWhileATaskRestarted() throws IOException {
        // "a table that disappears mid-read is reported in the status": also when its tables directory went with it
        Path tables = dir.resolve("tables");
        write(tables, "2026-01-01", 100);
        Map<String, byte[]> store = new HashMap<>();
        Map<String, String> reports = new HashMap<>();
        Map<String, Object> p = Map.of("tables_path", tables.toString(), "max_rows_per_second", 10);
        steps(p, 0, 1, store, reports, ids).punctuate();
        assertThat(ids).hasSize(10);
        try (var walk = Files.walk(tables)) {
            for (Path f : walk.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.delete(f);
            }
        }

        Steps restarted = steps(p, 0, 1, store, reports, ids); // a new task attempt: nothing cached
        nowMs += 1_000;
        restarted.punctuate();
        assertThat(reports.get("table/2026-01-01")).contains("disappeared while being read", "had read 10 of its 100");
        assertThat(ids).hasSize(10);
    }

    @Test
    void shouldReadATableRepublishedUnderItsNameAfterItsSchemaWasRefused() throws IOException {
        // "...or remove the table": the fixed table, published under the same name, is read in full
        org.apache.avro.Schema other = org.apache.avro.SchemaBuilder.record("Other").fields().requiredString("id")
                .endRecord();
        List<GenericRecord> bad = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            GenericRecord r = new GenericData.Record(other);
            r.put("id", "x" + i);
            bad.add(r);
        }
        StaticTableWriter.write(LocalTablesDirectory.open(dir), "2026-01-01", other, null, bad);
        Map<String, String> reports = new HashMap<>();
        Steps steps = steps(Map.of(), 0, 1, new HashMap<>(), reports, ids);
        steps.punctuate();
        assertThat(reports).containsKey("table/2026-01-01/schema");
        assertThat(ids).isEmpty();

        assertThat(LocalTablesDirectory.open(dir).removeTable("2026-01-01")).isTrue();
        table("2026-01-01", 10);
        steps.punctuate();
        assertThat(ids).containsExactlyElementsOf(LongStream.range(0, 10).boxed().toList());
        assertThat(reports).doesNotContainKey("table/2026-01-01/schema");
    }

    @Test
    void shouldKeepTheRowsPerSecondLimitAcrossTheStepsOfAPunctuation() throws IOException {
        table("2026-01-01", 200);
        Steps steps = steps(Map.of("max_rows_per_second", 25));

        steps.punctuate();
        assertThat(ids).as("a bucket of one second").hasSize(25);
        assertThat(steps.ready()).as("held back by the limit").isFalse();
        nowMs += 1_000;
        steps.punctuate();

        assertThat(ids).as("25 rows/s").containsExactlyElementsOf(LongStream.range(0, 50).boxed().toList());
    }

    @Test
    void shouldKeepTheBytesPerSecondLimitAcrossTheStepsOfAPunctuation() throws IOException {
        table("2026-01-01", 200);
        long weight = LocalTablesDirectory.open(dir).attributes("2026-01-01").dataWeight();
        Steps steps = steps(Map.of("max_bytes_per_second", (weight * 30 + 199) / 200));

        steps.punctuate();

        assertThat(ids).as("a second's bytes: 30 rows").hasSize(30);
        assertThat(steps.ready()).isFalse();
    }

    @Test
    void shouldKeepTheRangeSizeItStartedWithWhenRangeRowCountChanges() throws IOException {
        table("2026-01-01", 8);
        table("2026-01-02", 24);
        Map<String, byte[]> store0 = new HashMap<>();
        Map<String, byte[]> store1 = new HashMap<>();
        Map<String, String> reports = new HashMap<>();
        List<Long> first = new ArrayList<>();
        List<Long> second = new ArrayList<>();
        Map<String, Object> four = Map.of("max_rows_per_iteration", 4, "range_row_count", 4);
        Steps task0 = steps(four, 0, 2, store0, reports, first);
        Steps task1 = steps(four, 1, 2, store1, reports, second);
        task0.reader().step(nowMs, task0.progress(), task0.emitter()); // the first table, its share of 4 rows
        task0.reader().step(nowMs, task0.progress(), task0.emitter()); // 4 rows into the second table
        task1.reader().step(nowMs, task1.progress(), task1.emitter()); // the first table only
        assertThat(first).containsExactly(0L, 1L, 2L, 3L, 0L, 1L, 2L, 3L);
        assertThat(second).containsExactly(4L, 5L, 6L, 7L);
        first.clear();
        second.clear();

        // both tasks restart with another range size while task 0 is inside the second table and task 1 is not
        Map<String, Object> three = Map.of("max_rows_per_iteration", 4, "range_row_count", 3);
        task0 = steps(three, 0, 2, store0, reports, first);
        task1 = steps(three, 1, 2, store1, reports, second);
        task0.punctuate();
        task1.punctuate();

        List<Long> all = new ArrayList<>(List.of(0L, 1L, 2L, 3L));
        all.addAll(first);
        all.addAll(second);
        assertThat(all).as("every row of the second table read once").containsExactlyInAnyOrderElementsOf(
                LongStream.range(0, 24).boxed().toList());
        assertThat(reports).hasEntrySatisfying("range_row_count", m -> assertThat(m)
                .contains("range_row_count is 3", "started with 4", "keeps 4"));
    }

    /** Another tool's table (no _table.json): its part files, moved into place only if {@code filesInPlace}. */
    private Path foreignTable(String name, long rows, boolean filesInPlace) throws IOException {
        Path elsewhere = dir.resolveSibling(dir.getFileName() + "-elsewhere");
        write(elsewhere, name, rows);
        Path table = Files.createDirectories(dir.resolve(name));
        Path staging = Files.createDirectories(table.resolve("_temporary"));
        try (var parts = Files.list(elsewhere.resolve(name))) {
            for (Path part : parts.filter(f -> f.toString().endsWith(".avro")).toList()) {
                Files.copy(part, staging.resolve(part.getFileName()));
            }
        }
        if (filesInPlace) {
            moveInPlace(table);
        }
        return table;
    }

    /** What a Hadoop committer does on commit: the part files into the table, then _SUCCESS. */
    private static void moveInPlace(Path table) throws IOException {
        Path staging = table.resolve("_temporary");
        try (var parts = Files.list(staging)) {
            for (Path part : parts.toList()) {
                Files.move(part, table.resolve(part.getFileName()));
            }
        }
        Files.delete(staging);
    }

    @Test
    void shouldWaitForATableOfAnotherToolUntilItsWriterLeavesSuccess() throws IOException {
        Path spark = foreignTable("2026-01-01", 30, false); // a Spark job still writing: its files in _temporary
        table("2026-01-02", 7);
        Map<String, String> reports = new HashMap<>();
        Steps steps = steps(Map.of(), 0, 1, new HashMap<>(), reports, ids);

        steps.punctuate();
        assertThat(ids).as("nothing read while the first table is being written, nor after it").isEmpty();
        assertThat(reports).hasEntrySatisfying("table/2026-01-01/incomplete", m -> assertThat(m)
                .contains("not complete", "_SUCCESS", "waits"));
        moveInPlace(spark);
        steps.punctuate();
        assertThat(ids).as("files in place, no _SUCCESS yet").isEmpty();

        Files.createFile(spark.resolve("_SUCCESS"));
        steps.punctuate();

        assertThat(ids).containsExactlyElementsOf(LongStream.concat(LongStream.range(0, 30), LongStream.range(0, 7))
                .boxed().toList());
        assertThat(reports).doesNotContainKey("table/2026-01-01/incomplete");
        assertThat(steps.done()).isTrue();
    }

    @Test
    void shouldNotCompleteAFiniteListBeforeItsLastTableIsPublished() throws IOException {
        table("2026-01-01", 5);
        Steps steps = steps(Map.of("tables", List.of(dir.resolve("2026-01-01").toString(),
                dir.resolve("2026-01-02").toString())));

        steps.punctuate();
        assertThat(ids).containsExactly(0L, 1L, 2L, 3L, 4L);
        assertThat(steps.done()).as("a listed table is still to come").isFalse();
        table("2026-01-02", 3);
        steps.punctuate();

        assertThat(ids).containsExactly(0L, 1L, 2L, 3L, 4L, 0L, 1L, 2L);
        assertThat(steps.done()).isTrue();
    }

    @Test
    void shouldSkipAListedTableGoneWhileALaterOneIsPublishedAndSaySo() throws IOException {
        // static-tables audit: a listed table removed (after other tasks read it) while a later listed one exists
        // held this task for good, and a finite source never completed
        table("2026-01-01", 2);
        table("2026-01-03", 3);
        Map<String, String> reports = new HashMap<>();
        Steps steps = steps(Map.of("tables", List.of(dir.resolve("2026-01-01").toString(),
                dir.resolve("2026-01-02").toString(), dir.resolve("2026-01-03").toString())), 0, 1, new HashMap<>(),
                reports, ids);

        steps.punctuate();

        assertThat(ids).containsExactly(0L, 1L, 0L, 1L, 2L);
        assertThat(reports.get("table/2026-01-02")).contains("is listed but gone", "skipped");
        assertThat(steps.done()).isTrue();
    }

    @Test
    void shouldApplyARowsLimitSetAfterReadingWithoutOne() throws IOException {
        table("2026-01-01", 200);
        Steps steps = steps(Map.of("finite", false));
        steps.punctuate();
        assertThat(ids).hasSize(200);
        table("2026-01-02", 100);

        steps.parameters().put("max_rows_per_second", 25);
        nowMs += 1_000;
        steps.punctuate();

        assertThat(ids).as("a second at 25 rows/s, the rows read without a limit left no debt").hasSize(225);
    }

    @Test
    void shouldMoveTheWatermarkOfATaskWhoseShareOfATableIsEmpty() throws IOException {
        table("2026-01-01", 3); // one range of 4 rows: partition 1 of 2 has nothing to read
        table("2026-01-02", 0);
        List<Long> watermarks = new ArrayList<>();
        List<Long> rowWatermarks = new ArrayList<>();
        for (int partition = 0; partition < 2; partition++) {
            List<Long> moved = partition == 0 ? rowWatermarks : watermarks;
            Steps steps = steps(Map.of(), partition, 2, new HashMap<>(), new HashMap<>(), ids);
            PunctuatedSource.Emitter emitter = new PunctuatedSource.Emitter() {
                @Override
                public void emit(GenericRecord payload, long timestampMs, long watermarkMs) {
                    rowWatermarks.add(watermarkMs);
                }

                @Override
                public void advance(long watermarkMs) {
                    moved.add(watermarkMs);
                }
            };
            for (int i = 0; i < 4; i++) {
                steps.reader().step(nowMs, steps.progress(), emitter);
            }
        }

        long hour = 3_600_000L;
        long first = java.time.Instant.parse("2026-01-01T00:00:00Z").toEpochMilli() - hour; // watermark_delay 1h
        long second = java.time.Instant.parse("2026-01-02T00:00:00Z").toEpochMilli() - hour;
        assertThat(rowWatermarks).as("partition 0: its rows, then the empty table").containsExactly(first, first,
                first, first, second);
        assertThat(watermarks).as("partition 1: no row, its watermark moves table by table").containsExactly(first,
                second);
    }
}
