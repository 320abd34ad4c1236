package io.flowkafka.connectors.statictable;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.flowkafka.api.MessageId;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.avro.file.DataFileWriter;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericDatumWriter;
import org.apache.avro.generic.GenericRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The arrival-order sink's engine on the real filesystem; each test quotes the rule of reference 001 it checks. */
class ArrivalOrderTableSinkTest {
    static final Schema ROW = SchemaBuilder.record("Row").namespace("t").fields().requiredLong("n").endRecord();
    static final Duration HOUR = Duration.ofHours(1);
    static final Instant T0 = Instant.parse("2026-12-03T10:00:00Z");
    static final SinkProgress.Owner OWNER = new SinkProgress.Owner("p", "c", "tables");

    @TempDir
    Path dir;

    private ArrivalOrderTableSink sink(Long maxRows) throws Exception {
        return sink(maxRows, Duration.ofDays(1));
    }

    private ArrivalOrderTableSink sink(Long maxRows, Duration ttl) throws Exception {
        return new ArrivalOrderTableSink(LocalTablesDirectory.open(dir), new ArrivalOrderSinkParameters(HOUR,
                ttl, maxRows, null), ROW, OWNER);
    }

    static MessageId id(long n) {
        return MessageId.of(ByteBuffer.allocate(8).putLong(n).array());
    }

    /** Stages rows as a task's committed epoch: prepared, then made visible. */
    static void stage(ArrivalOrderTableSink sink, int partition, List<ArrivalOrderTableSink.Staged> rows)
            throws java.io.IOException {
        sink.complete(sink.prepare(partition, rows));
    }

    static List<ArrivalOrderTableSink.Staged> rows(long from, long to) {
        List<ArrivalOrderTableSink.Staged> out = new ArrayList<>();
        RowEncoder encoder = new RowEncoder(ROW);
        for (long n = from; n < to; n++) {
            GenericRecord r = new GenericData.Record(ROW);
            r.put("n", n);
            out.add(new ArrivalOrderTableSink.Staged(n, id(n), 1_000 + n, 8, encoder.encode(r)));
        }
        return out;
    }

    private List<Long> read(String table) throws Exception {
        List<Long> out = new ArrayList<>();
        LocalTablesDirectory d = LocalTablesDirectory.open(dir);
        StaticTableReader.open(d, table, ROW).readAll().forEach(row -> out.add((Long) row.get("n")));
        return out;
    }

    @Test
    void shouldCloseANonEmptySlotAtItsTimeBoundary() throws Exception {
        // "A non-empty current slot is closed either at the time boundary or when max_row_count/max_data_weight is
        // reached"
        ArrivalOrderTableSink sink = sink(null);
        sink.load(T0.plusSeconds(5));
        stage(sink, 0, rows(0, 5));
        assertThat(sink.publish(T0.plus(HOUR).minusNanos(1), null)).isEmpty();
        assertThat(sink.publish(T0.plus(HOUR), null)).containsExactly("2026-12-03T10:00:00Z");
        assertThat(read("2026-12-03T10:00:00Z")).containsExactly(0L, 1L, 2L, 3L, 4L);
        assertThat(sink.stagedFiles()).as("staged rows the frontier covers are deleted").isEmpty();
        assertThat(LocalTablesDirectory.open(dir).attributes("2026-12-03T10:00:00Z").tableTimestamp()).isEqualTo(T0);
    }

    @Test
    void shouldPublishRowsWhoseWeightsSumPastTheLargestLong() throws Exception {
        // a data_weight_column is any non-negative int64: two halves of Long.MAX_VALUE must not make the slot's
        // weight negative and stop every publish after it
        ArrivalOrderTableSink sink = sink(null);
        sink.load(T0.plusSeconds(5));
        RowEncoder encoder = new RowEncoder(ROW);
        List<ArrivalOrderTableSink.Staged> heavy = new ArrayList<>();
        for (long n = 0; n < 2; n++) {
            GenericRecord r = new GenericData.Record(ROW);
            r.put("n", n);
            heavy.add(new ArrivalOrderTableSink.Staged(n, id(n), 1_000 + n, Long.MAX_VALUE / 2 + 1, encoder.encode(r)));
        }
        stage(sink, 0, heavy);
        assertThat(sink.publish(T0.plus(HOUR), null)).containsExactly("2026-12-03T10:00:00Z");
        assertThat(read("2026-12-03T10:00:00Z")).containsExactly(0L, 1L);
    }

    @Test
    void shouldShiftTheNextSlotByOnePeriodOnALimitCloseAndNotCloseByTimeWhileAhead() throws Exception {
        // "closing by limit also shifts the next logical timestamp by one period, so the sequence can run ahead of
        // the wall clock. While the sequence is ahead of the wall clock, closing by time doesn't happen ... and a
        // restart doesn't reset this, because the lag is kept in external state."
        ArrivalOrderTableSink sink = sink(3L);
        sink.load(T0);
        stage(sink, 0, rows(0, 7));
        assertThat(sink.publish(T0.plusSeconds(1), null))
                .containsExactly("2026-12-03T10:00:00Z", "2026-12-03T11:00:00Z");
        assertThat(read("2026-12-03T10:00:00Z")).containsExactly(0L, 1L, 2L);
        assertThat(read("2026-12-03T11:00:00Z")).containsExactly(3L, 4L, 5L);
        // slot 12:00 holds one row and is ahead of the wall clock: a restart keeps it there
        ArrivalOrderTableSink restarted = sink(3L);
        assertThat(restarted.load(T0.plusSeconds(2)).nextTableTimestamp()).isEqualTo(Instant.parse(
                "2026-12-03T12:00:00Z"));
        assertThat(restarted.publish(Instant.parse("2026-12-03T12:59:59Z"), null)).isEmpty();
        assertThat(restarted.publish(Instant.parse("2026-12-03T13:00:00Z"), null))
                .containsExactly("2026-12-03T12:00:00Z");
        assertThat(read("2026-12-03T12:00:00Z")).containsExactly(6L);
    }

    @Test
    void shouldCreateAnEmptySlotOnlyWhenTheWatermarkIsStrictlyPastItsEnd() throws Exception {
        // "An empty slot T is created strictly in order, only if T <= wall clock and the known non-zero system
        // watermark of the input stream is strictly greater than T + table_period. A watermark equal to the boundary
        // is therefore not enough, and empty tables aren't created in the future."
        ArrivalOrderTableSink sink = sink(null);
        sink.load(T0);
        Instant now = T0.plus(Duration.ofHours(5));
        assertThat(sink.publish(now, null)).as("unknown watermark").isEmpty();
        assertThat(sink.publish(now, Instant.EPOCH)).as("zero watermark").isEmpty();
        assertThat(sink.publish(now, T0.plus(HOUR))).as("watermark equal to the boundary").isEmpty();
        assertThat(sink.publish(now, T0.plus(HOUR).plusNanos(1))).containsExactly("2026-12-03T10:00:00Z");
        assertThat(read("2026-12-03T10:00:00Z")).isEmpty();
        // far watermark: slots created in order, never in the future of the wall clock
        assertThat(sink.publish(T0.plus(Duration.ofMinutes(150)), T0.plus(Duration.ofDays(1))))
                .containsExactly("2026-12-03T11:00:00Z", "2026-12-03T12:00:00Z");
    }

    @Test
    void shouldCommitTheTableAndTheProgressInOneRename() throws Exception {
        // "The table and the progress are committed in a single master transaction": here the table carries the
        // progress, so the rename that publishes it also advances the progress; a crash before the directory
        // attribute is replaced is repaired from the newest table.
        ArrivalOrderTableSink sink = sink(null);
        sink.load(T0);
        ObjectNode before = LocalTablesDirectory.open(dir).directoryAttributes();
        stage(sink, 0, rows(0, 2));
        sink.publish(T0.plus(HOUR), null);
        LocalTablesDirectory d = LocalTablesDirectory.open(dir);
        assertThat(d.attributes("2026-12-03T10:00:00Z").custom().get("progress").toString())
                .isEqualTo(d.directoryAttributes().get("progress").toString());
        d.replaceDirectoryAttributes(before); // as if the process died right after the rename
        SinkProgress repaired = sink(null).load(T0.plus(HOUR));
        assertThat(repaired.nextTableTimestamp()).isEqualTo(T0.plus(HOUR));
        assertThat(repaired.covered(0)).isEqualTo(id(1));
        assertThat(d.directoryAttributes().get("progress").toString()).isEqualTo(repaired.toJson().toString());
    }

    @Test
    void shouldShareOneSequenceBetweenPartitionsWithAFrontierEach() throws Exception {
        // "All partitions share one table sequence ... a separate frontier (system_timestamp, message_id) for each
        // partition"
        ArrivalOrderTableSink sink = sink(null);
        sink.load(T0);
        stage(sink, 0, rows(0, 3));
        stage(sink, 1, rows(100, 102));
        sink.publish(T0.plus(HOUR), null);
        assertThat(read("2026-12-03T10:00:00Z")).containsExactlyInAnyOrder(0L, 1L, 2L, 100L, 101L);
        SinkProgress progress = sink.load(T0.plus(HOUR));
        assertThat(progress.frontiers()).containsEntry(0, new SinkProgress.Frontier(1_002, id(2)))
                .containsEntry(1, new SinkProgress.Frontier(1_101, id(101)));
        assertThat(sink.coverage(1, List.of(), T0.plus(HOUR))).isEqualTo(id(101));
    }

    @Test
    void shouldWriteARowStagedTwiceOnce() throws Exception {
        // "the frontier is used for deduplication during replay"
        ArrivalOrderTableSink sink = sink(null);
        sink.load(T0);
        stage(sink, 0, rows(0, 4));
        stage(sink, 0, rows(2, 6)); // a zombie deliverer staged an overlapping replay
        sink.publish(T0.plus(HOUR), null);
        assertThat(read("2026-12-03T10:00:00Z")).containsExactly(0L, 1L, 2L, 3L, 4L, 5L);
    }

    @Test
    void shouldRefuseADirectoryOfAnotherOwner() throws Exception {
        // "if a different owner is recorded in the attribute, the sink fails with an error and asks you to delete the
        // attribute manually"
        sink(null).load(T0);
        ArrivalOrderTableSink other = new ArrivalOrderTableSink(LocalTablesDirectory.open(dir),
                new ArrivalOrderSinkParameters(HOUR, Duration.ofDays(1), null, null), ROW,
                new SinkProgress.Owner("other", "c", "tables"));
        assertThatThrownBy(() -> other.publish(T0, null))
                .isInstanceOf(ArrivalOrderTableSink.DirectoryRefusedException.class)
                .hasMessageContaining("another owner (pipeline 'p', computation 'c', sink 'tables')")
                .hasMessageContaining("remove the 'progress' attribute");
    }

    @Test
    void shouldContinueTheGridAfterTheNewestTableWhenHandedOver() throws Exception {
        // "the new owner continues the grid after the most recent table in the directory"
        ArrivalOrderTableSink first = sink(null);
        first.load(T0);
        stage(first, 0, rows(0, 1));
        first.publish(T0.plus(HOUR), null);
        LocalTablesDirectory d = LocalTablesDirectory.open(dir);
        ObjectNode attrs = d.directoryAttributes();
        attrs.remove("progress");
        d.replaceDirectoryAttributes(attrs);
        ArrivalOrderTableSink other = new ArrivalOrderTableSink(d, new ArrivalOrderSinkParameters(HOUR,
                Duration.ofDays(1), null, null), ROW, new SinkProgress.Owner("other", "c", "tables"));
        assertThat(other.load(T0.plus(Duration.ofHours(30))).nextTableTimestamp()).isEqualTo(T0.plus(HOUR));
    }

    /**
     * A handover with rows of the previous writer still staged is refused: they are their only copy, and their ids,
     * another input's, would count as covered for the new writer's partitions, which would skip its own messages.
     */
    @Test
    void shouldRefuseAHandoverWhileThePreviousWritersRowsAreStaged() throws Exception {
        ArrivalOrderTableSink first = sink(null);
        first.load(T0);
        stage(first, 0, rows(0, 2));
        assertThat(first.publish(T0.plus(HOUR).plusSeconds(1), null)).containsExactly("2026-12-03T10:00:00Z");
        stage(first, 0, rows(2, 4)); // staged, not in a table yet, when the pipeline is stopped
        Path watermark = dir.resolve(ArrivalOrderTableSink.STAGING).resolve(ArrivalOrderTableSink.WATERMARKS)
                .resolve("0");
        Files.createDirectories(watermark.getParent());
        Files.writeString(watermark, Long.toString(Long.MAX_VALUE)); // the previous input's: complete
        LocalTablesDirectory d = LocalTablesDirectory.open(dir);
        ObjectNode attrs = d.directoryAttributes();
        attrs.remove("progress");
        d.replaceDirectoryAttributes(attrs);
        ArrivalOrderTableSink other = new ArrivalOrderTableSink(d, new ArrivalOrderSinkParameters(HOUR,
                Duration.ofDays(1), null, null), ROW, new SinkProgress.Owner("other", "c", "tables"));
        assertThatThrownBy(() -> other.coverage(0, List.of(), T0.plus(HOUR)))
                .isInstanceOf(ArrivalOrderTableSink.DirectoryRefusedException.class)
                .hasMessageContaining("(pipeline 'p', computation 'c', sink 'tables')")
                .hasMessageContaining("1 staged file(s)").hasMessageContaining("Run that pipeline again");

        // the previous writer runs again (its newest table gives it its progress back) and publishes them
        assertThat(first.publish(T0.plus(Duration.ofHours(2)).plusSeconds(1), null))
                .containsExactly("2026-12-03T11:00:00Z");
        assertThat(read("2026-12-03T11:00:00Z")).containsExactly(2L, 3L);
        attrs = d.directoryAttributes();
        attrs.remove("progress");
        d.replaceDirectoryAttributes(attrs);
        assertThat(other.coverage(0, List.of(), T0.plus(Duration.ofHours(2)))).as("nothing covered: a new input")
                .isNull();
        assertThat(watermark).as("the previous input's watermark is not this one's").doesNotExist();
    }

    @Test
    void shouldRefuseChildrenWithoutATableTimestampUntilTheyAreRemoved() throws Exception {
        // "The sink doesn't accept a directory with children that have no table_timestamp attribute: it fails with an
        // error until they are removed."
        Files.createDirectories(dir.resolve("copied-by-hand"));
        ArrivalOrderTableSink sink = sink(null);
        assertThatThrownBy(() -> sink.load(T0)).isInstanceOf(ArrivalOrderTableSink.DirectoryRefusedException.class)
                .hasMessageContaining("children without a table_timestamp attribute: [copied-by-hand]")
                .hasMessageContaining("remove them");
        Files.delete(dir.resolve("copied-by-hand"));
        assertThat(sink.load(T0).nextTableTimestamp()).isEqualTo(T0);
    }

    @Test
    void shouldExpireTablesAtTheLaterOfTimestampAndCreationPlusTtl() throws Exception {
        // "the Cypress expiration_time set on each table is max(table_timestamp, table-creation time) + table_ttl ...
        // a catch-up table whose table_timestamp already lies further in the past than table_ttl is clamped to
        // expire table_ttl after it's created"
        ArrivalOrderTableSink sink = sink(null);
        sink.load(T0);
        stage(sink, 0, rows(0, 1));
        Instant created = T0.plus(Duration.ofDays(3)); // a catch-up table, written long after its slot
        sink.publish(created, null);
        LocalTablesDirectory d = LocalTablesDirectory.open(dir);
        assertThat(d.attributes("2026-12-03T10:00:00Z").custom().get("expiration_time").asText())
                .isEqualTo(created.plus(Duration.ofDays(1)).toString());
        assertThat(sink.publish(created.plus(Duration.ofDays(1)).minusNanos(1), null)).isEmpty();
        assertThat(d.tableNames()).containsExactly("2026-12-03T10:00:00Z");
        sink.publish(created.plus(Duration.ofDays(1)), null);
        assertThat(d.tableNames()).as("the sink removes expired tables").isEmpty();
        assertThat(sink.load(created.plus(Duration.ofDays(1))).nextTableTimestamp()).as("the sequence goes on")
                .isEqualTo(T0.plus(HOUR));
    }

    @Test
    void shouldDropAFrontierOnceTheInputSystemWatermarkPassesIt() throws Exception {
        // "A partition's frontier is deleted as soon as its system_timestamp drops below the system watermark of the
        // input stream"
        ArrivalOrderTableSink sink = sink(null);
        sink.load(T0);
        stage(sink, 0, rows(0, 2)); // system timestamps 1000, 1001 ns
        stage(sink, 1, rows(10, 12)); // 1010, 1011 ns
        Instant watermark = Instant.EPOCH.plusNanos(1_005);
        sink.publish(T0.plus(HOUR), watermark);
        assertThat(sink.load(T0.plus(HOUR)).frontiers()).as("the table's rows are still staged: both kept")
                .containsOnlyKeys(0, 1);
        stage(sink, 1, rows(12, 13));
        sink.publish(T0.plus(Duration.ofHours(2)), watermark);
        assertThat(sink.load(T0.plus(Duration.ofHours(2))).frontiers())
                .as("partition 0 is below the watermark, partition 1 is not").containsOnlyKeys(1);
        stage(sink, 0, rows(2, 3));
        sink.publish(T0.plus(Duration.ofHours(3)), Instant.EPOCH.plusNanos(1_013));
        assertThat(sink.load(T0.plus(Duration.ofHours(3))).frontiers()).as("partition 1 is below it now")
                .doesNotContainKey(1);
    }

    @Test
    void shouldNotWriteRowsAgainAfterDroppingTheirFrontier() throws Exception {
        // the frontier "is used for deduplication during replay": dropping it must not let the staged rows of the
        // table just written count as unwritten
        ArrivalOrderTableSink sink = sink(null);
        sink.load(T0);
        stage(sink, 0, rows(0, 2)); // system timestamps 1000, 1001 ns, far below the watermark
        Instant watermark = T0.plus(Duration.ofHours(2)).plusNanos(1);
        assertThat(sink.publish(T0.plus(HOUR).plusSeconds(1), watermark))
                .containsExactly("2026-12-03T10:00:00Z", "2026-12-03T11:00:00Z");
        assertThat(read("2026-12-03T10:00:00Z")).containsExactly(0L, 1L);
        assertThat(read("2026-12-03T11:00:00Z")).as("the empty slot, its watermark strictly past it").isEmpty();
        assertThat(sink.load(T0.plus(HOUR)).frontiers()).as("dropped once its rows left staging").isEmpty();
    }

    @Test
    void shouldKeepAFrontierWhileItsPartitionHasAFileBeingMadeVisible() throws Exception {
        // the frontier "is used for deduplication during replay" and dropped only "as soon as its system_timestamp
        // drops below the system watermark of the input stream": a listing that skips a partition (one of its files
        // is being made visible) must not drop its frontier while a covered file of it is still staged
        ArrivalOrderTableSink sink = sink(null);
        sink.load(T0);
        stage(sink, 0, rows(0, 2)); // system timestamps 1000, 1001 ns, far below every watermark below
        Path covered = sink.stagedFiles().get(0).path();
        byte[] coveredBytes = Files.readAllBytes(covered);
        assertThat(sink.publish(T0.plus(HOUR).plusSeconds(1), null)).containsExactly("2026-12-03T10:00:00Z");
        // the moment before the next table deletes the covered file: it is still there ...
        Files.write(covered, coveredBytes);
        // ... when the partition's next epoch is renamed into place and its directory not yet fsynced
        StagingArea.Prepared next = sink.prepare(0, rows(2, 4));
        boolean moved = sink.stagingArea().makeVisible(next);
        assertThat(sink.publish(T0.plus(Duration.ofHours(2)).plusSeconds(1), T0.plus(Duration.ofHours(2))
                .plusNanos(1))).as("the empty slot, its watermark strictly past it").containsExactly(
                        "2026-12-03T11:00:00Z");
        sink.stagingArea().count(next, moved);

        assertThat(sink.publish(T0.plus(Duration.ofHours(3)).plusSeconds(1), T0.plus(Duration.ofHours(3))
                .plusNanos(1))).containsExactly("2026-12-03T12:00:00Z");

        assertThat(read("2026-12-03T10:00:00Z")).containsExactly(0L, 1L);
        assertThat(read("2026-12-03T11:00:00Z")).isEmpty();
        assertThat(read("2026-12-03T12:00:00Z")).as("every message in exactly one table").containsExactly(2L, 3L);
    }

    /**
     * "Every input message in exactly one table": a partly covered file that the normalizing listing skipped (its
     * partition had a file being made visible) holds its whole partition back, so that the partition's later file does
     * not move the frontier past the uncut tail, which the next normalization would delete unwritten.
     */
    @Test
    void shouldHoldBackAPartitionWithAPartlyCoveredFile() {
        SinkProgress progress = new SinkProgress(OWNER, T0, Map.of(0,
                new SinkProgress.Frontier(1, id(5))));
        ArrivalOrderTableSink.StagedFile cut = staged(1, 0, 1, 10);
        ArrivalOrderTableSink.StagedFile later = staged(2, 0, 11, 20);
        ArrivalOrderTableSink.StagedFile covered = staged(0, 0, 1, 4);
        ArrivalOrderTableSink.StagedFile other = staged(3, 1, 1, 3);
        assertThat(ArrivalOrderTableSink.uncovered(List.of(covered, cut, later, other), progress))
                .as("partition 0 waits for its tail; partition 1 goes on").containsExactly(other);
        assertThat(ArrivalOrderTableSink.uncovered(List.of(covered, later, other), progress))
                .as("once cut (the tail is a file after the frontier), the partition goes on")
                .containsExactly(later, other);
    }

    private static ArrivalOrderTableSink.StagedFile staged(long stamp, int partition, long first, long last) {
        return new ArrivalOrderTableSink.StagedFile(Path.of("staged-" + stamp), stamp, partition, id(first), id(last),
                last - first + 1, 0);
    }

    @Test
    void shouldKeepOneGapFreeSequenceWhenInstancesStageAndPublishConcurrently() throws Exception {
        // "All partitions share one table sequence": four partitions stage while two instances publish under the lock
        ArrivalOrderTableSink first = sink(50L, Duration.ofDays(30));
        ArrivalOrderTableSink second = sink(50L, Duration.ofDays(30));
        first.load(T0);
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(6);
        try {
            List<java.util.concurrent.Future<?>> work = new ArrayList<>();
            for (int p = 0; p < 4; p++) {
                int partition = p;
                work.add(pool.submit(() -> {
                    for (int batch = 0; batch < 20; batch++) {
                        long base = partition * 1_000_000L + batch * 25L;
                        stage(partition % 2 == 0 ? first : second, partition, rows(base, base + 25));
                    }
                    return null;
                }));
            }
            for (ArrivalOrderTableSink publisher : List.of(first, second)) {
                work.add(pool.submit(() -> {
                    for (int i = 0; i < 50; i++) {
                        publisher.publish(T0.plusSeconds(1), null);
                    }
                    return null;
                }));
            }
            for (var f : work) {
                f.get(); // bounded by the test's work, never a sleep
            }
        } finally {
            pool.shutdownNow();
        }
        Instant far = T0.plus(Duration.ofDays(3)); // wall clock far ahead: every slot, limit-closed or not, closes
        while (!first.publish(far, null).isEmpty()) {
            // drain: each call writes at most MAX_TABLES_PER_PUBLISH tables
        }
        LocalTablesDirectory d = LocalTablesDirectory.open(dir);
        List<String> names = d.tableNames().stream().sorted().toList();
        List<Long> all = new ArrayList<>();
        Instant expected = T0;
        for (String name : names) {
            assertThat(d.attributes(name).tableTimestamp()).as("no gap, no duplicate").isEqualTo(expected);
            expected = expected.plus(HOUR);
            List<Long> rows = read(name);
            assertThat(rows.size()).as("at most max_row_count rows").isLessThanOrEqualTo(50);
            all.addAll(rows);
        }
        assertThat(all).hasSize(4 * 20 * 25).doesNotHaveDuplicates();
        assertThat(first.stagedFiles()).isEmpty();
    }

    @Test
    void shouldRefuseAStagedFileOfAnotherFormatInsteadOfDroppingItsRows() throws Exception {
        // staged rows are Avro bytes of the table's schema; a staged file of another layout (an earlier build staged
        // decoded rows) stops the publisher with its name: its rows are neither written wrongly nor deleted
        ArrivalOrderTableSink sink = sink(null);
        sink.load(T0);
        Schema other = SchemaBuilder.record("StagedRow").namespace("io.flowkafka.statictable.staging").fields()
                .requiredLong("offset").requiredString("message_id").requiredLong("system_timestamp")
                .requiredLong("weight").name("row").type(ROW).noDefault().endRecord();
        Path file = dir.resolve(ArrivalOrderTableSink.STAGING).resolve(StagingArea.stagedName(1, 0, 0));
        try (DataFileWriter<GenericRecord> w = new DataFileWriter<>(new GenericDatumWriter<GenericRecord>(other))) {
            w.setMeta("flow.partition", 0);
            w.setMeta("flow.first_id", id(0).toString());
            w.setMeta("flow.last_id", id(0).toString());
            w.setMeta("flow.rows", 1);
            w.setMeta("flow.weight", 8);
            w.create(other, file.toFile());
            GenericRecord row = new GenericData.Record(ROW);
            row.put("n", 0L);
            GenericRecord staged = new GenericData.Record(other);
            staged.put("offset", 0L);
            staged.put("message_id", id(0).toString());
            staged.put("system_timestamp", 1_000L);
            staged.put("weight", 8L);
            staged.put("row", row);
            w.append(staged);
        }
        assertThatThrownBy(() -> sink.publish(T0.plus(HOUR), null)).isInstanceOf(java.io.IOException.class)
                .hasMessageContaining(file.toString()).hasMessageContaining("not in the staging format");
        assertThat(LocalTablesDirectory.open(dir).tableNames()).isEmpty();
        assertThat(file).exists();
    }

    @Test
    void shouldNeitherPublishNorKeepAPendingFileCutShort() throws Exception {
        // an epoch fsyncs only its own pool file (its directory entry was made durable with the pool): a file cut
        // short (an epoch being prepared, or a crash during one) is never listed, and the partition's next owner,
        // whose last commit did not record it, removes it
        ArrivalOrderTableSink sink = sink(null);
        sink.load(T0);
        stage(sink, 0, rows(0, 300));
        Path complete = sink.stagedFiles().get(0).path();
        byte[] bytes = Files.readAllBytes(complete);
        Path staging = dir.resolve(ArrivalOrderTableSink.STAGING);
        List<Path> cut = new ArrayList<>();
        for (int length = 0; length < bytes.length; length += 1 + length / 8) {
            Path f = staging.resolve(".pool-0-" + UUID.nameUUIDFromBytes(new byte[] {(byte) cut.size()})
                    + ".avro");
            Files.write(f, Arrays.copyOf(bytes, length));
            cut.add(f);
        }
        assertThat(sink.stagedFiles()).extracting(ArrivalOrderTableSink.StagedFile::path).containsExactly(complete);
        assertThat(sink.publish(T0.plus(HOUR), null)).containsExactly("2026-12-03T10:00:00Z");
        assertThat(read("2026-12-03T10:00:00Z")).hasSize(300).doesNotHaveDuplicates();
        assertThat(cut).as("the publisher leaves files being written alone").allMatch(Files::exists);
        assertThat(sink(null).coverage(0, List.of(), T0.plus(HOUR))).isEqualTo(id(299));
        assertThat(cut).as("removed when the partition is opened").noneMatch(Files::exists);
    }

    @Test
    void shouldTakeAPartitionsFilesInIdOrderWhateverTheirStamps() throws Exception {
        // a clock that went back (here, or on the partition's next owner) stamps a later batch earlier: its frontier
        // must not cover the earlier batch
        ArrivalOrderTableSink sink = sink(null);
        sink.load(T0);
        stage(sink, 0, rows(0, 3));
        Path earlier = dir.resolve(ArrivalOrderTableSink.STAGING).resolve(StagingArea.stagedName(0, 0, 3));
        try (DataFileWriter<GenericRecord> w = new DataFileWriter<>(
                new GenericDatumWriter<GenericRecord>(StagedRowReader.SCHEMA))) {
            w.setMeta("flow.stamp", 0);
            w.setMeta("flow.partition", 0);
            w.setMeta("flow.first_id", id(3).toString());
            w.setMeta("flow.last_id", id(5).toString());
            w.setMeta("flow.rows", 3);
            w.setMeta("flow.weight", 24);
            w.create(StagedRowReader.SCHEMA, earlier.toFile());
            for (ArrivalOrderTableSink.Staged r : rows(3, 6)) {
                GenericRecord staged = new GenericData.Record(StagedRowReader.SCHEMA);
                staged.put("offset", r.offset());
                staged.put("message_id", ByteBuffer.wrap(r.messageId().toBytes()));
                staged.put("system_timestamp", r.systemTimestamp());
                staged.put("weight", r.weight());
                staged.put("row", ByteBuffer.wrap(r.row()));
                w.append(staged);
            }
        }
        assertThat(sink.stagedFiles()).extracting(ArrivalOrderTableSink.StagedFile::stamp).hasSize(2);
        assertThat(sink.publish(T0.plus(HOUR), null)).containsExactly("2026-12-03T10:00:00Z");
        assertThat(read("2026-12-03T10:00:00Z")).containsExactly(0L, 1L, 2L, 3L, 4L, 5L);
    }

    @Test
    void shouldFinishATailRewriteThatACrashCutShort() throws Exception {
        // a limit close took part of a staged file; the crash came after its tail was written, before the file went
        ArrivalOrderTableSink sink = sink(3L);
        sink.load(T0);
        stage(sink, 0, rows(0, 5));
        Path original = sink.stagedFiles().get(0).path();
        Path copy = dir.resolve("original.bak");
        Files.copy(original, copy);
        sink.publish(T0.plusSeconds(1), null); // table 10:00 holds 0..2; the file is rewritten as its tail 3..4
        Files.copy(copy, original); // the original is back, beside its tail
        Files.delete(copy);
        Files.createDirectories(dir.resolve(".pending-crashed")); // and a table it was writing
        ArrivalOrderTableSink restarted = sink(3L);
        assertThat(restarted.publish(T0.plus(Duration.ofHours(2)), null)).containsExactly("2026-12-03T11:00:00Z");
        assertThat(dir.resolve(".pending-crashed")).as("abandoned pending tables are swept").doesNotExist();
        assertThat(read("2026-12-03T11:00:00Z")).containsExactly(3L, 4L);
        assertThat(restarted.stagedFiles()).isEmpty();
    }
}
