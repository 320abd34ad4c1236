package io.flowkafka.internal.visitor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flowkafka.internal.serde.KeyCodec;
import io.flowkafka.spec.ColumnType;
import io.flowkafka.spec.GroupByColumn;
import io.flowkafka.spi.StaticTableProvider;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.NoSuchFileException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.junit.jupiter.api.Test;

/** {@link StaticTableScanSource} over an in-memory provider (reference 000, "Static table joiner"). */
class StaticTableScanSourceTest {
    private static final Schema ROW = SchemaBuilder.record("Row").fields().requiredLong("hash").requiredLong("id")
            .requiredString("value").endRecord();
    private static final List<GroupByColumn> KEY = List.of(new GroupByColumn("hash", ColumnType.UINT64, null),
            new GroupByColumn("id", ColumnType.INT64, null));

    /** Rows in memory; seeks by hash, and counts opens and rows handed out. */
    private static class Memory implements StaticTableProvider {
        List<GenericRecord> rows = new ArrayList<>();
        int opens;
        int handed;
        boolean missing;

        @Override
        public List<String> problems(Map<String, Object> parameters) {
            return List.of();
        }

        @Override
        public Optional<Schema> rowSchema(Map<String, Object> parameters) {
            return Optional.of(ROW);
        }

        @Override
        public Rows open(Map<String, Object> parameters, String hashColumn, long fromHash) throws IOException {
            if (missing) {
                throw new NoSuchFileException("tables/t");
            }
            opens++;
            int i = 0;
            while (i < rows.size() && Long.compareUnsigned((Long) rows.get(i).get(hashColumn), fromHash) < 0) {
                i++;
            }
            var it = rows.subList(i, rows.size()).iterator();
            return new Rows() {
                @Override
                public String table() {
                    return "t";
                }

                @Override
                public boolean hasNext() {
                    return it.hasNext();
                }

                @Override
                public GenericRecord next() {
                    handed++;
                    return it.next();
                }

                @Override
                public void close() {
                }
            };
        }
    }

    private static GenericRecord row(long hash, long id) {
        GenericRecord r = new GenericData.Record(ROW);
        r.put("hash", hash);
        r.put("id", id);
        r.put("value", "v" + id);
        return r;
    }

    private static byte[] hash(long h) {
        return ByteBuffer.allocate(8).putLong(h).array();
    }

    private final Memory memory = new Memory();
    private final StaticTableScanSource source = new StaticTableScanSource("/t", KEY, KeyCodec.of(KEY, "c"), memory,
            Map.of());

    private List<Long> ids(ScanSource.Read r) {
        List<Long> out = new ArrayList<>();
        for (byte[] k : r.keys()) {
            out.add((Long) source.row(k).get("id"));
        }
        return out;
    }

    @Test
    void shouldReadTheRangeInKeyOrderAndOfferEachRowForItsVisit() {
        // "The joiner reads the table sequentially, in the same key order as the state scan, and passes the table
        // row to ProcessVisit as a read-only state for the visit key."
        memory.rows = List.of(row(1, 10), row(5, 50), row(5, 51), row(9, 90), row(-1L, 99));
        ScanSource.Read r = source.read(hash(2), hash(9), 100);
        assertThat(ids(r)).containsExactly(50L, 51L);
        assertThat(r.capped()).isFalse();
        assertThat(source.row(KeyCodec.of(KEY, "c").encode(keyOf(1, 10)))).as("only the last read's rows").isNull();
        ScanSource.Read rest = source.read(hash(9), null, 100);
        assertThat(ids(rest)).as("the uint64 hash is unsigned: -1 is the greatest").containsExactly(90L, 99L);
        assertThat(memory.opens).as("a read continuing the previous one keeps the cursor").isEqualTo(1);
    }

    @Test
    void shouldStopAtTheRowLimitAndContinueFromTheBound() {
        memory.rows = List.of(row(1, 1), row(2, 2), row(3, 3));
        ScanSource.Read r = source.read(hash(0), null, 2);
        assertThat(ids(r)).containsExactly(1L, 2L);
        assertThat(r.capped()).isTrue();
        byte[] next = r.lastComplete().clone();
        next = java.util.Arrays.copyOf(next, next.length + 1); // a successor
        assertThat(ids(source.read(next, null, 2))).containsExactly(3L);
        assertThat(memory.opens).isEqualTo(1);
    }

    @Test
    void shouldReopenAtTheRangeForANewPassOrAnotherBucketWithoutReadingOtherRanges() {
        memory.rows = new ArrayList<>();
        for (long h = 0; h < 100; h++) {
            memory.rows.add(row(h, h));
        }
        assertThat(ids(source.read(hash(10), hash(12), 100))).containsExactly(10L, 11L);
        assertThat(ids(source.read(hash(80), hash(82), 100))).containsExactly(80L, 81L);
        assertThat(ids(source.read(hash(10), hash(12), 100))).as("a new pass").containsExactly(10L, 11L);
        assertThat(memory.opens).isEqualTo(3);
        assertThat(memory.handed).as("each task reads only its hash range (seeking)").isLessThanOrEqualTo(12); // each read: its rows, the next hash and one lookahead
    }

    @Test
    void shouldKeepACursorPerBucketReadRoundRobinAndReselectTheTableAtANewPass() {
        memory.rows = new ArrayList<>();
        for (long h = 0; h < 100; h++) {
            memory.rows.add(row(h, h));
        }
        // buckets [0, 50) and [50, 100) read round robin, each where it stopped
        assertThat(ids(source.read(hash(0), hash(10), 100))).hasSize(10);
        assertThat(ids(source.read(hash(50), hash(60), 100))).hasSize(10);
        assertThat(ids(source.read(hash(10), hash(50), 100))).hasSize(40);
        assertThat(ids(source.read(hash(60), null, 100))).hasSize(40);
        assertThat(memory.opens).as("one cursor per bucket").isEqualTo(2);
        memory.rows = List.of(row(7, 700));
        assertThat(ids(source.read(hash(0), hash(50), 100))).as("a new pass reads the table selected now")
                .containsExactly(700L);
        assertThat(memory.opens).isEqualTo(3);
    }

    @Test
    void shouldRewindWhenTheVisitorCutsAReadShort() {
        memory.rows = List.of(row(1, 1), row(2, 2), row(3, 3));
        ScanSource.Read r = source.read(hash(0), null, 100);
        assertThat(ids(r)).containsExactly(1L, 2L, 3L);
        // the visitor visited key 1 only (deadline): it resumes after it
        byte[] after = java.util.Arrays.copyOf(r.keys().get(0), r.keys().get(0).length + 1);
        assertThat(ids(source.read(after, null, 100))).containsExactly(2L, 3L);
        assertThat(memory.opens).as("from the rows kept, without reopening").isEqualTo(1);
    }

    @Test
    void shouldResumeAfterARestartFromTheVisitorsCursor() {
        // coverage (the visitor's cursor) is changelogged; a new source (a restart) seeks to it
        memory.rows = List.of(row(1, 1), row(2, 2), row(3, 3));
        byte[] position = java.util.Arrays.copyOf(KeyCodec.of(KEY, "c").encode(keyOf(2, 2)), 20);
        StaticTableScanSource restarted = new StaticTableScanSource("/t", KEY, KeyCodec.of(KEY, "c"), memory,
                Map.of());
        ScanSource.Read r = restarted.read(hash(2), null, 100);
        assertThat(r.keys()).hasSize(2);
        assertThat(restarted.read(position, null, 100).keys()).as("keys after the cursor").hasSize(1);
        assertThat(memory.handed).as("rows below the cursor's hash are not read").isLessThanOrEqualTo(4);
    }

    @Test
    void shouldFailAReadOfATableNotStrictlySortedAndAgainAtTheRetry() {
        // "The table must be strictly sorted by the computation's group_by_schema"
        memory.rows = List.of(row(1, 1), row(3, 3), row(2, 2));
        assertThatThrownBy(() -> source.read(hash(0), null, 100)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("static table 't' of joiner '/t' is not strictly sorted by the computation's "
                        + "group_by_schema [hash, id]: row 2 has key [2, 2] after [3, 3]");
        assertThatThrownBy(() -> source.read(hash(0), null, 100)).hasMessageContaining("not strictly sorted");
        memory.rows = List.of(row(1, 1), row(1, 1));
        assertThatThrownBy(() -> source.read(hash(0), null, 100)).as("a duplicate key is not strict")
                .hasMessageContaining("row 1 has key [1, 1] after [1, 1]");
    }

    @Test
    void shouldTakeATableSortedAsYtsaurusSortsUint64AndStringColumns() {
        // sorted by group_by_schema as YTsaurus sorts: uint64 unsigned (2^63 + 1 after 5), strings by their UTF-8
        // bytes (U+FF21 before U+1F600, which Java's UTF-16 order puts the other way round)
        Schema wide = SchemaBuilder.record("Wide").fields().requiredLong("hash").requiredLong("order")
                .requiredString("name").endRecord();
        List<GroupByColumn> key = List.of(new GroupByColumn("hash", ColumnType.UINT64, null),
                new GroupByColumn("order", ColumnType.UINT64, null), new GroupByColumn("name", ColumnType.STRING, null));
        List<GenericRecord> rows = new ArrayList<>();
        for (Object[] v : new Object[][] {{5L, 5L, "a"}, {5L, Long.MIN_VALUE + 1, "a"}, {6L, 1L, "\uFF21"},
                {6L, 1L, "\uD83D\uDE00"}}) {
            GenericRecord r = new GenericData.Record(wide);
            r.put("hash", v[0]);
            r.put("order", v[1]);
            r.put("name", v[2]);
            rows.add(r);
        }
        Memory table = new Memory() {
            @Override
            public Optional<Schema> rowSchema(Map<String, Object> parameters) {
                return Optional.of(wide);
            }
        };
        table.rows = rows;
        StaticTableScanSource scan = new StaticTableScanSource("/t", key, KeyCodec.of(key, "c"), table, Map.of());

        ScanSource.Read r = scan.read(hash(0), null, 100);

        assertThat(r.keys()).hasSize(4);
        assertThat(r.keys()).extracting(k -> scan.row(k).get("name").toString())
                .containsExactlyInAnyOrder("a", "a", "\uFF21", "\uD83D\uDE00");
    }

    @Test
    void shouldReportAnUnavailableTableAsAFailedReadThatIsRetried() {
        memory.missing = true;
        assertThatThrownBy(() -> source.read(hash(0), null, 100))
                .hasMessageContaining("static table of joiner '/t' is unavailable");
        memory.missing = false;
        memory.rows = List.of(row(1, 1));
        assertThat(ids(source.read(hash(0), null, 100))).containsExactly(1L);
    }

    private static GenericRecord keyOf(long hash, long id) {
        GenericData.Record k = new GenericData.Record(KeyCodec.of(KEY, "c").schema());
        k.put(0, hash);
        k.put(1, id);
        return k;
    }
}
