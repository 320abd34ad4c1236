package io.flowkafka.internal.visitor;

import io.flowkafka.internal.serde.KeyCodec;
import io.flowkafka.spec.ColumnType;
import io.flowkafka.spec.GroupByColumn;
import io.flowkafka.spi.StaticTableProvider;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.util.Utf8;
import org.apache.kafka.common.utils.Bytes;
import org.jspecify.annotations.Nullable;

/**
 * Scans the static table of a {@code TStaticTableKeyVisitorJoiner} beside the state scan (reference 000, "Static
 * table joiner"): "The joiner reads the table sequentially, in the same key order as the state scan, and passes the
 * table row to ProcessVisit as a read-only state for the visit key. Table keys take part in the scan on an equal
 * footing with state keys: a visit arrives even for a key that isn't yet in the computation's own state."
 *
 * <p>The table is read through open cursors, one per stretch being read (the key visitor reads its buckets round
 * robin, each where it stopped): a read continuing a cursor goes on from where it stopped; a read starting inside
 * the previous read of a cursor (a read the visitor cut short) rewinds it; a read no cursor continues opens one at
 * the read's first hash (the provider seeks there), so each task reads only its hash range. A read going back
 * before every cursor (a new pass, a restart) closes them all, so the table is selected again (a new newest table
 * is read from the next pass on).
 * "The table must be strictly sorted by the computation's group_by_schema": the order is checked as rows are read
 * (hash unsigned, then the other key columns); a violation fails the read, which the key visitor reports in its
 * status and retries. Rows of one hash are returned in the encoded key order of the state scan.
 *
 * <p>The rows of the last read are kept for the visits that follow it ({@link #row}). Not thread-safe.
 */
public final class StaticTableScanSource implements ScanSource {
    /** Open cursors kept at most; the least recently used is closed first. */
    static final int MAX_CURSORS = 64;

    /** A row and its encoded key. */
    private record Entry(byte[] key, GenericRecord row) {
    }

    /** One open read of the table, from {@code startHash} on. */
    private final class Cursor {
        final StaticTableProvider.Rows rows;
        final long startHash;
        /** Rows of one hash, sorted by encoded key, not yet passed. */
        final ArrayDeque<Entry> group = new ArrayDeque<>();
        /** The rows the last read through this cursor returned, in order. */
        List<Entry> recent = List.of();
        @Nullable GenericRecord lookahead;
        @Nullable GenericRecord previous;
        long rowIndex;
        byte @Nullable [] lastPassed;

        Cursor(StaticTableProvider.Rows rows, long startHash) {
            this.rows = rows;
            this.startHash = startHash;
        }

        /** Whether this cursor has passed a row at or after {@code from}. */
        boolean passed(byte[] from) {
            return lastPassed != null && Arrays.compareUnsigned(from, lastPassed) <= 0;
        }

        /** Whether this cursor read {@code from}'s stretch of the table already (a read going back: a new pass). */
        boolean covers(byte[] from) {
            return Long.compareUnsigned(startHash, hashOf(from)) <= 0 && passed(from);
        }

        /**
         * Whether a read from {@code from} resumes inside this cursor's last read: a read the visitor cut short resumes
         * after a key it visited, while a new pass starts at a bucket's start, before every key of the bucket.
         */
        boolean rewindable(byte[] from) {
            return passed(from) && !recent.isEmpty() && Arrays.compareUnsigned(from, recent.get(0).key()) > 0;
        }

        /** Whether a read from {@code from} can go on with this cursor, rewinding within its last read if need be. */
        boolean continues(byte[] from) {
            if (passed(from)) {
                return rewindable(from);
            }
            if (lastPassed == null && Long.compareUnsigned(hashOf(from), startHash) < 0) {
                return false;
            }
            Entry next = peek();
            return next == null || Long.compareUnsigned(hashOf(next.key()), hashOf(from)) >= 0;
        }

        /** Puts back the rows of the last read at or after {@code from}. */
        void rewind(byte[] from) {
            if (!passed(from)) {
                return;
            }
            byte[] before = null;
            List<Entry> back = new ArrayList<>();
            for (Entry e : recent) {
                if (Arrays.compareUnsigned(e.key(), from) >= 0) {
                    back.add(e);
                } else {
                    before = e.key();
                }
            }
            for (int i = back.size() - 1; i >= 0; i--) {
                group.addFirst(back.get(i));
            }
            lastPassed = before;
            recent = List.of();
        }

        @Nullable Entry peek() {
            if (group.isEmpty()) {
                fill();
            }
            return group.peekFirst();
        }

        void pass() {
            lastPassed = group.removeFirst().key();
        }

        /** Reads the rows of the next hash, checking the order. */
        private void fill() {
            GenericRecord first = lookahead != null ? lookahead : next();
            lookahead = null;
            if (first == null) {
                return;
            }
            List<Entry> read = new ArrayList<>();
            read.add(entry(first));
            long hash = hash(first);
            GenericRecord r;
            while ((r = next()) != null) {
                if (hash(r) != hash) {
                    lookahead = r;
                    break;
                }
                read.add(entry(r));
            }
            read.sort((a, b) -> Arrays.compareUnsigned(a.key(), b.key()));
            group.addAll(read);
        }

        private @Nullable GenericRecord next() {
            if (!rows.hasNext()) {
                return null;
            }
            GenericRecord r = rows.next();
            if (previous != null && compare(previous, r) >= 0) {
                throw new IllegalStateException("static table '" + rows.table() + "' of joiner '" + joiner
                        + "' is not strictly sorted by the computation's group_by_schema " + names() + ": row "
                        + rowIndex + " has key " + keyOf(r) + " after " + keyOf(previous) + "; sort the table by "
                        + names() + " with no duplicate keys and publish it again");
            }
            previous = r;
            rowIndex++;
            return r;
        }
    }

    private final String joiner;
    private final List<GroupByColumn> columns;
    private final KeyCodec codec;
    private final StaticTableProvider provider;
    private final Map<String, Object> parameters;
    /** Open cursors, least recently used first. */
    private final List<Cursor> cursors = new ArrayList<>();
    private Map<Bytes, GenericRecord> lastRead = Map.of();

    /**
     * @param joiner the joiner's name
     * @param columns the computation's {@code group_by_schema}
     * @param codec the computation's key codec
     * @param provider opens the table
     * @param parameters the joiner's parameters
     */
    public StaticTableScanSource(String joiner, List<GroupByColumn> columns, KeyCodec codec,
            StaticTableProvider provider, Map<String, Object> parameters) {
        this.joiner = joiner;
        this.columns = List.copyOf(columns);
        this.codec = codec;
        this.provider = provider;
        this.parameters = Map.copyOf(parameters);
    }

    @Override
    public String name() {
        return "static table of joiner " + joiner;
    }

    /**
     * The table row of a key returned by the last read, for the visit of that key.
     *
     * @param encodedKey the visit key
     * @return the row, or null if the table has none
     */
    public @Nullable GenericRecord row(byte[] encodedKey) {
        return lastRead.get(Bytes.wrap(encodedKey));
    }

    @Override
    public Read read(byte[] from, byte @Nullable [] to, int maxRows) {
        try {
            return readOrThrow(from, to, maxRows);
        } catch (RuntimeException e) {
            close(); // the next read reopens the table: an unsorted table fails again, a missing one is retried
            throw e;
        }
    }

    private Read readOrThrow(byte[] from, byte @Nullable [] to, int maxRows) {
        lastRead = Map.of();
        Cursor c = cursorFor(from);
        c.rewind(from);
        List<byte[]> keys = new ArrayList<>();
        List<Entry> returned = new ArrayList<>();
        Map<Bytes, GenericRecord> rows = new HashMap<>();
        boolean capped = false;
        byte[] lastComplete = null;
        while (true) {
            Entry e = c.peek();
            if (e == null || (to != null && Arrays.compareUnsigned(e.key(), to) >= 0)) {
                break;
            }
            if (Arrays.compareUnsigned(e.key(), from) < 0) {
                c.pass();
                continue;
            }
            if (keys.size() == maxRows) {
                capped = true;
                break;
            }
            c.pass();
            keys.add(e.key());
            returned.add(e);
            rows.put(Bytes.wrap(e.key()), e.row());
            lastComplete = e.key();
        }
        c.recent = returned;
        lastRead = rows;
        return new Read(keys, keys.size(), capped, lastComplete, null);
    }

    /** The cursor a read from {@code from} goes on with, opening one if none does. */
    private Cursor cursorFor(byte[] from) {
        if (cursors.stream().anyMatch(c -> c.covers(from) && !c.rewindable(from))) {
            close(); // going back over rows already read: a new pass, which selects the table again
        }
        for (int i = 0; i < cursors.size(); i++) {
            Cursor c = cursors.get(i);
            if (c.continues(from)) {
                cursors.remove(i);
                cursors.add(c);
                return c;
            }
        }
        if (cursors.size() >= MAX_CURSORS) {
            cursors.remove(0).rows.close();
        }
        long hash = hashOf(from);
        StaticTableProvider.Rows rows;
        try {
            rows = provider.open(parameters, columns.get(0).name(), hash);
        } catch (IOException e) {
            throw new UncheckedIOException("static table of joiner '" + joiner + "' is unavailable: " + e.getMessage(),
                    e);
        }
        Cursor c = new Cursor(rows, hash);
        cursors.add(c);
        return c;
    }

    /** Closes the open cursors. */
    public void close() {
        cursors.forEach(c -> c.rows.close());
        cursors.clear();
    }

    private static long hashOf(byte[] key) {
        long h = 0;
        for (int i = 0; i < 8; i++) {
            h = (h << 8) | (i < key.length ? key[i] & 0xFF : 0);
        }
        return h;
    }

    private Entry entry(GenericRecord row) {
        GenericData.Record key = new GenericData.Record(codec.schema());
        for (int i = 0; i < columns.size(); i++) {
            key.put(i, row.get(columns.get(i).name()));
        }
        return new Entry(codec.encode(key), row);
    }

    private long hash(GenericRecord row) {
        Object h = row.get(columns.get(0).name());
        return h == null ? 0L : ((Number) h).longValue();
    }

    /**
     * The order of the table, as YTsaurus sorts: the hash unsigned, then the other key columns, nulls first, a
     * {@code uint64} unsigned and a string by its UTF-8 bytes.
     */
    @SuppressWarnings({"unchecked", "rawtypes"})
    private int compare(GenericRecord a, GenericRecord b) {
        int c = Long.compareUnsigned(hash(a), hash(b));
        for (int i = 1; c == 0 && i < columns.size(); i++) {
            Object x = a.get(columns.get(i).name());
            Object y = b.get(columns.get(i).name());
            if (x == null || y == null) {
                c = x == null ? (y == null ? 0 : -1) : 1;
            } else if (columns.get(i).type() == ColumnType.UINT64) {
                c = Long.compareUnsigned(((Number) x).longValue(), ((Number) y).longValue());
            } else if (x instanceof CharSequence || y instanceof CharSequence) {
                byte[] xs = utf8(x);
                byte[] ys = utf8(y);
                c = Arrays.compareUnsigned(xs, 0, utf8Length(x, xs), ys, 0, utf8Length(y, ys));
            } else {
                c = ((Comparable) x).compareTo(y);
            }
        }
        return c;
    }

    /** A string's UTF-8 bytes: an Avro {@link Utf8}'s own (no copy), else encoded. */
    private static byte[] utf8(Object s) {
        return s instanceof Utf8 u ? u.getBytes() : s.toString().getBytes(StandardCharsets.UTF_8);
    }

    private static int utf8Length(Object s, byte[] bytes) {
        return s instanceof Utf8 u ? u.getByteLength() : bytes.length;
    }

    private List<String> names() {
        return columns.stream().map(GroupByColumn::name).toList();
    }

    private List<Object> keyOf(GenericRecord row) {
        List<Object> out = new ArrayList<>();
        for (GroupByColumn col : columns) {
            Object v = row.get(col.name());
            out.add(v instanceof Long l && col == columns.get(0) ? Long.toUnsignedString(l) : String.valueOf(v));
        }
        return out;
    }
}
