package io.flowkafka.internal.external;

import java.util.HashMap;
import java.util.Map;
import java.util.function.Function;
import java.util.function.LongSupplier;
import org.apache.avro.generic.GenericRecord;
import org.jspecify.annotations.Nullable;

/**
 * The tables one task reads through its joiners and state joiners, and the lookups of one call.
 *
 * <p>Rules kept: each table is pinned at the call's first lookup and stays pinned until the call ends, so one call
 * never reads two versions of a versioned reference; with {@code cache.ttl} a row is reused for at most that long
 * ({@link RowCache}); without it every lookup reads the global store.
 *
 * <p>Threading: one per task, used by its stream thread.
 */
public final class ExternalReads {
    /** Rows cached per joiner with {@code cache.ttl}, at most. */
    static final int CACHE_ROWS = 10_000;

    private final Map<String, ExternalPlan.Read> reads;
    private final Map<String, TableSource> tables = new HashMap<>();
    private final Map<String, RowCache> caches = new HashMap<>();
    private final Map<String, TableView> pinned = new HashMap<>();
    private final LongSupplier clockNanos;
    private final Map<String, Function<byte[], @Nullable GenericRecord>> staticRows = new HashMap<>();
    /** Per static-table joiner: the key-visitor stream that scans its table. */
    private final Map<String, String> staticVisitStreams = new HashMap<>();

    /**
     * The reads of a task.
     *
     * @param reads the computation's joiners and state joiners, by name
     * @param tableOf the table of a topic (the global store's reader in a task)
     * @param clockNanos the task's clock, which measures the cache TTL
     */
    public ExternalReads(Map<String, ExternalPlan.Read> reads, Function<ExternalPlan.Read, TableSource> tableOf,
            LongSupplier clockNanos) {
        this.reads = reads;
        this.clockNanos = clockNanos;
        reads.forEach((name, r) -> {
            if (r.staticTable()) {
                return; // its rows come from the key visitor's scan (staticRows)
            }
            tables.put(name, tableOf.apply(r));
            if (r.cacheTtl() != null && !r.cacheTtl().isZero()) {
                caches.put(name, new RowCache(r.cacheTtl().toNanos(), CACHE_ROWS));
            }
        });
    }

    /** {@return the read {@code name}, or null if the computation has no joiner of that name} */
    public ExternalPlan.@Nullable Read read(String name) {
        return reads.get(name);
    }

    /**
     * Where the rows of a static-table joiner come from: the scan of its key visitor.
     *
     * @param name the joiner's name
     * @param visitStream the key-visitor stream whose scan reads the table
     * @param rows the row of an encoded key, or null
     */
    public void staticRows(String name, String visitStream, Function<byte[], @Nullable GenericRecord> rows) {
        staticRows.put(name, rows);
        staticVisitStreams.put(name, visitStream);
    }

    /**
     * The row of {@code encodedKey} in the static table of joiner {@code name}, as its visitor's scan read it for the
     * visit running: a static table is read beside the state scan, not looked up, so only the visits of the stream
     * that scans it see its rows (reference 001: "the row is passed to the visit as read-only state").
     *
     * @param name a static-table joiner of the computation
     * @param encodedKey the key, encoded by the computation's key codec
     * @param visitStream the key-visitor stream of the running visit; null in onMessage or onTimer
     * @return the row, or null if the table has none
     * @throws IllegalStateException outside a visit of the stream that scans the table
     */
    public @Nullable GenericRecord staticRow(String name, byte[] encodedKey, @Nullable String visitStream) {
        String scanning = staticVisitStreams.get(name);
        if (visitStream == null || !visitStream.equals(scanning)) {
            throw new IllegalStateException("the static table of joiner '" + name + "' is read beside the scan of "
                    + (scanning == null ? "the key visitor that lists it in external_names"
                            : "key visitor '" + scanning + "'") + ", so its rows are readable only in onVisit of "
                    + "that visitor, not " + (visitStream == null ? "in onMessage or onTimer"
                            : "in a visit of '" + visitStream + "'") + "; to look rows up by key from any call, "
                    + "import the table into state or an external-state joiner (static-tables.md)");
        }
        Function<byte[], @Nullable GenericRecord> rows = staticRows.get(name);
        return rows == null ? null : rows.apply(encodedKey);
    }

    /** A call begins: its tables are pinned at their first lookup. */
    public void beginCall() {
        pinned.clear();
    }

    /**
     * The row of {@code encodedKey} in the table read as {@code name}.
     *
     * @param name a joiner or state joiner of the computation
     * @param encodedKey the key, encoded by the computation's key codec
     * @return the row (Avro binary), null if absent
     */
    public byte @Nullable [] lookup(String name, byte[] encodedKey) {
        TableView view = pinned.computeIfAbsent(name, n -> tables.get(n).pin());
        RowCache cache = caches.get(name);
        return cache == null ? view.get(encodedKey) : cache.get(view, encodedKey, clockNanos.getAsLong());
    }
}
