package io.flowkafka.internal.visitor;

import io.flowkafka.internal.serde.KeyCodec;
import io.flowkafka.spec.GroupByColumn;
import io.flowkafka.spi.StaticTableProvider;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.apache.kafka.common.utils.Bytes;
import org.jspecify.annotations.Nullable;

/**
 * Scans the static table of a {@code TStaticTableKeyVisitorJoiner} beside the state scan (reference 000, "Static
 * table joiner"): "The joiner reads the table sequentially, in the same key order as the state scan, and passes the
 * table row to ProcessVisit as a read-only state for the visit key. Table keys take part in the scan on an equal
 * footing with state keys: a visit arrives even for a key that isn't yet in the computation's own state."
 *
 * <p>The table is read with one open cursor: a read continuing after the previous one goes on from where it
 * stopped; a read starting at or before a row already passed (a new pass, a restart, another bucket), or beyond the
 * next row's hash, reopens the table at the read's first hash (the provider seeks there), selecting it again (so a
 * new newest table is read from the next pass on): each task reads only its hash range.
 * "The table must be strictly sorted by the computation's group_by_schema": the order is checked as rows are read
 * (hash unsigned, then the other key columns); a violation fails the read, which the key visitor reports in its
 * status and retries. Rows of one hash are returned in the encoded key order of the state scan.
 *
 * <p>The rows of the last read are kept for the visits that follow it ({@link #row}). Not thread-safe.
 */
public final class StaticTableScanSource implements ScanSource {
    /** A row and its encoded key. */
    private record Entry(byte[] key, GenericRecord row) {
    }

    private final String joiner;
    private final List<GroupByColumn> columns;
    private final KeyCodec codec;
    private final StaticTableProvider provider;
    private final Map<String, Object> parameters;
    private StaticTableProvider.@Nullable Rows cursor;
    /** Rows of one hash, sorted by encoded key, not yet passed. */
    private final ArrayDeque<Entry> group = new ArrayDeque<>();
    private @Nullable GenericRecord lookahead;
    private @Nullable GenericRecord previous;
    private long rowIndex;
    private byte @Nullable [] lastPassed;
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
        if (cursor == null || (lastPassed != null && Arrays.compareUnsigned(from, lastPassed) <= 0)) {
            reopen(from);
        } else {
            Entry next = peek();
            if (next != null && Long.compareUnsigned(hashOf(next.key()), hashOf(from)) < 0) {
                reopen(from); // seek rather than read the rows of a skipped hash range (another bucket's)
            }
        }
        List<byte[]> keys = new ArrayList<>();
        Map<Bytes, GenericRecord> rows = new HashMap<>();
        boolean capped = false;
        byte[] lastComplete = null;
        while (true) {
            Entry e = peek();
            if (e == null || (to != null && Arrays.compareUnsigned(e.key(), to) >= 0)) {
                break;
            }
            if (Arrays.compareUnsigned(e.key(), from) < 0) {
                pass();
                continue;
            }
            if (keys.size() == maxRows) {
                capped = true;
                break;
            }
            pass();
            keys.add(e.key());
            rows.put(Bytes.wrap(e.key()), e.row());
            lastComplete = e.key();
        }
        lastRead = rows;
        return new Read(keys, keys.size(), capped, lastComplete, null);
    }

    /** Closes the open table. */
    public void close() {
        if (cursor != null) {
            cursor.close();
            cursor = null;
        }
    }

    private void reopen(byte[] from) {
        close();
        group.clear();
        lookahead = null;
        previous = null;
        rowIndex = 0;
        lastPassed = null;
        try {
            cursor = provider.open(parameters, columns.get(0).name(), hashOf(from));
        } catch (IOException e) {
            throw new UncheckedIOException("static table of joiner '" + joiner + "' is unavailable: " + e.getMessage(),
                    e);
        }
    }

    private static long hashOf(byte[] key) {
        long h = 0;
        for (int i = 0; i < 8; i++) {
            h = (h << 8) | (i < key.length ? key[i] & 0xFF : 0);
        }
        return h;
    }

    private void pass() {
        lastPassed = group.removeFirst().key();
    }

    private @Nullable Entry peek() {
        if (group.isEmpty()) {
            fill();
        }
        return group.peekFirst();
    }

    /** Reads the rows of the next hash, checking the order. */
    private void fill() {
        StaticTableProvider.Rows c = cursor;
        if (c == null) {
            return;
        }
        GenericRecord first = lookahead != null ? lookahead : next(c);
        lookahead = null;
        if (first == null) {
            return;
        }
        List<Entry> rows = new ArrayList<>();
        rows.add(entry(first));
        long hash = hash(first);
        GenericRecord r;
        while ((r = next(c)) != null) {
            if (hash(r) != hash) {
                lookahead = r;
                break;
            }
            rows.add(entry(r));
        }
        rows.sort((a, b) -> Arrays.compareUnsigned(a.key(), b.key()));
        group.addAll(rows);
    }

    private @Nullable GenericRecord next(StaticTableProvider.Rows c) {
        if (!c.hasNext()) {
            return null;
        }
        GenericRecord r = c.next();
        if (previous != null && compare(previous, r) >= 0) {
            String problem = "static table '" + c.table() + "' of joiner '" + joiner + "' is not strictly sorted by "
                    + "the computation's group_by_schema " + names() + ": row " + rowIndex + " has key "
                    + keyOf(r) + " after " + keyOf(previous) + "; sort the table by " + names()
                    + " with no duplicate keys and publish it again";
            throw new IllegalStateException(problem);
        }
        previous = r;
        rowIndex++;
        return r;
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

    /** The order of the table: the hash unsigned, then the other key columns, nulls first. */
    @SuppressWarnings({"unchecked", "rawtypes"})
    private int compare(GenericRecord a, GenericRecord b) {
        int c = Long.compareUnsigned(hash(a), hash(b));
        for (int i = 1; c == 0 && i < columns.size(); i++) {
            Object x = a.get(columns.get(i).name());
            Object y = b.get(columns.get(i).name());
            if (x == null || y == null) {
                c = x == null ? (y == null ? 0 : -1) : 1;
            } else if (x instanceof CharSequence || y instanceof CharSequence) {
                c = x.toString().compareTo(y.toString());
            } else {
                c = ((Comparable) x).compareTo(y);
            }
        }
        return c;
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
