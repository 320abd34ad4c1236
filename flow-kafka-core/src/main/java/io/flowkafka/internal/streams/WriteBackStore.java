package io.flowkafka.internal.streams;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.Serializer;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.processor.StateStore;
import org.apache.kafka.streams.processor.StateStoreContext;
import org.apache.kafka.streams.processor.internals.InternalProcessorContext;
import org.apache.kafka.streams.processor.internals.ProcessorRecordContext;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.StoreBuilder;
import org.apache.kafka.streams.state.internals.WrappedStateStore;
import org.jspecify.annotations.Nullable;

/**
 * flow-kafka's record cache for its state and timer stores, in place of Kafka Streams' caching layer:
 * a bounded, hash-indexed write-back cache that writes a commit interval's changes to the changelogged
 * store below it once, when Kafka Streams flushes caches before committing the task's transaction, and
 * writes nothing at all for a row that was created and removed between two such flushes.
 *
 * <h2>Why not Kafka Streams' cache</h2>
 * Kafka Streams' record cache is a {@code TreeMap} per store, and flushing it writes a tombstone for
 * every key deleted since the last flush, whether the store below ever held the key or not. flow-kafka's
 * rows are short-lived (a join's state lives until its timer fires, a timer until it fires), and their
 * keys begin with a hash, so the tree's lookups walk random paths. This cache is a hash map, and it
 * knows, per row, whether the store below holds the key ({@code stored}: learnt from a read of the store
 * or from the cache's own last write): a row that is absent below and deleted in the cache leaves the
 * dirty rows at once (and the sorted index, so scans do not walk over it), with neither a RocksDB write nor
 * a changelog record. In the wait-click join most rows are born
 * and gone within one commit interval.
 *
 * <h2>Correctness</h2>
 * What the store below holds, and what the changelog holds, is at every flush exactly what it would
 * hold if every write had gone straight through: the cache only skips writes that leave a key absent
 * that was absent. A transaction that aborts loses the cache with it: Kafka Streams closes the stores of
 * a task it closes dirty ({@link #close()}) and clears the caches of a task it recycles
 * ({@link #clearCache()}), and {@link #init} and {@link #close()} start empty.
 * Writes reach the changelog only from the stream thread that owns the task, inside its transaction:
 * when flushed before the commit, or when the cache evicts a dirty row to stay within its share.
 *
 * <h2>Scans</h2>
 * With a sorted index ({@code sortedIndex}: the timers store, scanned on every watermark step) the
 * dirty rows are also kept in a {@code TreeMap}, and {@link #range} merges them with the store's own
 * iterator, so a timer added and fired between two flushes never reaches the store. Without one (the
 * state store, scanned only by key visitors) a scan first writes the dirty rows through.
 *
 * <h2>Memory</h2>
 * The cache of every flow-kafka store of a runtime shares one {@link Budget}: Kafka Streams'
 * {@code statestore.cache.max.bytes} (10 MiB unless set), divided evenly among the stores open in the
 * runtime (standby stores included, which hold no rows); a store over its share evicts its oldest rows (first in, first out: a read does not reorder the map; writing the dirty ones). 0 turns
 * the cache off: every write goes straight to the store, as Kafka Streams does without a cache.
 *
 * <h2>Kafka Streams internals</h2>
 * This class owns flow-kafka's place in Kafka Streams' store stack (outermost, above the metered,
 * change-logging and RocksDB layers a {@link StoreBuilder} builds) and relies on these internals, pinned by
 * {@code KafkaStreamsInternalsTest} for the Kafka Streams version it names:
 * <ul>
 * <li>It extends {@link WrappedStateStore}, so it is a {@code CachedStateStore}: {@code StreamTask.prepareCommit}
 * -> {@code StreamTask.flush} -> {@code ProcessorStateManager.flushCache()} calls its {@link #flushCache()}
 * before the task's offsets and transaction commit, which is when the dirty rows reach the store below and
 * its changelog. {@code StateStore.commit} comes after the transaction ({@code StreamTask.postCommit}, the
 * checkpoint), too late to write. {@code ProcessorStateManager.recycle()} calls {@link #clearCache()}.
 * <li>{@link #find} walks the {@link WrappedStateStore}s Kafka Streams puts around a store
 * ({@code ProcessorContext.getStateStore} returns it inside a read-write decorator).
 * <li>The {@link StateStoreContext} given to {@link #init} is an {@code InternalProcessorContext}: at a flush
 * outside of processing the task may have no current {@code ProcessorRecordContext}, which the change-logging
 * layer below needs for the changelog record's timestamp, so the writes borrow one ({@code beginWrites}).
 * </ul>
 *
 * <p>Threading: used by one stream thread (the task's); not for interactive queries.
 */
public final class WriteBackStore extends WrappedStateStore<KeyValueStore<Bytes, byte[]>, Bytes, byte[]>
        implements KeyValueStore<Bytes, byte[]> {
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(WriteBackStore.class);
    /** Estimated heap bytes of a cached row besides its key and value bytes (map node, row, Bytes, array headers, sorted-index node). */
    static final int ROW_OVERHEAD = 160;

    private static final class Row {
        byte @Nullable [] value;
        boolean dirty;
        /** Whether the store below may hold the key (true when not known). */
        boolean stored;

        Row(byte @Nullable [] value, boolean stored) {
            this.value = value;
            this.stored = stored;
        }
    }

    private final Budget budget;
    private final boolean sortedIndex;
    private final LinkedHashMap<Bytes, Row> rows = new LinkedHashMap<>(256);
    private final @Nullable TreeMap<Bytes, Row> dirtySorted;
    private int dirtyCount;
    private long bytes;
    /** Bumped by every change of the dirty set, so open iterators re-seek it. */
    private int modifications;
    private @Nullable InternalProcessorContext<?, ?> internalContext;
    private boolean registered;
    private int openIterators;
    private long writesSkipped;
    private long writesThrough;

    WriteBackStore(KeyValueStore<Bytes, byte[]> inner, Budget budget, boolean sortedIndex) {
        super(inner);
        this.budget = budget;
        this.sortedIndex = sortedIndex;
        this.dirtySorted = sortedIndex ? new TreeMap<>() : null;
    }

    /** {@code inner} behind a write-back cache (tests; topologies use {@link #builder}). */
    public static WriteBackStore wrap(KeyValueStore<Bytes, byte[]> inner, Budget budget, boolean sortedIndex) {
        return new WriteBackStore(inner, budget, sortedIndex);
    }

    /**
     * The cache shared by the stores of one runtime (one compiled topology): its size comes from the
     * application's {@code statestore.cache.max.bytes}, read when the first store opens.
     */
    public static final class Budget {
        private volatile long capacity = -1;
        private final AtomicInteger open = new AtomicInteger();

        /** A budget whose size is read from the application's config when a store opens. */
        public Budget() {
        }

        /** A budget of a fixed size (tests). */
        public Budget(long capacityBytes) {
            this.capacity = capacityBytes;
        }

        void opened(Map<String, Object> appConfigs) {
            if (capacity < 0) {
                Object v = appConfigs.get(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG);
                capacity = v == null ? 10L * 1024 * 1024 : Long.parseLong(v.toString().trim());
            }
            open.incrementAndGet();
        }

        void closed() {
            open.decrementAndGet();
        }

        long share() {
            long c = capacity;
            return c <= 0 ? 0 : c / Math.max(1, open.get());
        }
    }

    /**
     * A builder of {@code inner}'s stores behind a write-back cache (the inner builder's own caching is
     * turned off; its logging choice is kept).
     */
    public static StoreBuilder<KeyValueStore<Bytes, byte[]>> builder(StoreBuilder<KeyValueStore<Bytes, byte[]>> inner,
            Budget budget, boolean sortedIndex) {
        return new CachedBuilder(inner.withCachingDisabled(), budget, sortedIndex);
    }

    private static final class CachedBuilder implements StoreBuilder<KeyValueStore<Bytes, byte[]>> {
        private StoreBuilder<KeyValueStore<Bytes, byte[]>> inner;
        private final Budget budget;
        private final boolean sortedIndex;

        CachedBuilder(StoreBuilder<KeyValueStore<Bytes, byte[]>> inner, Budget budget, boolean sortedIndex) {
            this.inner = inner;
            this.budget = budget;
            this.sortedIndex = sortedIndex;
        }

        @Override
        public StoreBuilder<KeyValueStore<Bytes, byte[]>> withCachingEnabled() {
            return this; // this is the cache
        }

        @Override
        public StoreBuilder<KeyValueStore<Bytes, byte[]>> withCachingDisabled() {
            return this;
        }

        @Override
        public StoreBuilder<KeyValueStore<Bytes, byte[]>> withLoggingEnabled(Map<String, String> config) {
            inner = inner.withLoggingEnabled(config);
            return this;
        }

        @Override
        public StoreBuilder<KeyValueStore<Bytes, byte[]>> withLoggingDisabled() {
            inner = inner.withLoggingDisabled();
            return this;
        }

        @Override
        public KeyValueStore<Bytes, byte[]> build() {
            return new WriteBackStore(inner.build(), budget, sortedIndex);
        }

        @Override
        public Map<String, String> logConfig() {
            return inner.logConfig();
        }

        @Override
        public boolean loggingEnabled() {
            return inner.loggingEnabled();
        }

        @Override
        public String name() {
            return inner.name();
        }
    }

    // ---- lifecycle ----

    @Override
    public void init(StateStoreContext context, StateStore root) {
        dropAll();
        internalContext = context instanceof InternalProcessorContext<?, ?> ipc ? ipc : null;
        super.init(context, root);
        if (!registered) {
            budget.opened(context.appConfigs());
            registered = true;
        }
    }

    @Override
    public void flushCache() {
        writeDirty();
        super.flushCache();
    }

    @Override
    public void clearCache() {
        dropAll();
        super.clearCache();
    }

    @Override
    public void commit(Map<org.apache.kafka.common.TopicPartition, Long> changelogOffsets) {
        // Kafka Streams flushes caches before the transaction commits (flushCache); this runs after it
        // (checkpoint): rows written here would join the next transaction under this one's offsets. Any row
        // still dirty waits for the next flushCache.
        super.commit(changelogOffsets);
    }

    @Override
    public void close() {
        if (LOG.isDebugEnabled()) {
            LOG.debug("store {}: {} rows written through, {} deletes of rows never written skipped, cache share {} bytes",
                    name(), writesThrough, writesSkipped, budget.share());
        }
        dropAll();
        if (registered) {
            budget.closed();
            registered = false;
        }
        super.close();
    }

    private void dropAll() {
        rows.clear();
        if (dirtySorted != null) {
            dirtySorted.clear();
        }
        dirtyCount = 0;
        bytes = 0;
        openIterators = 0;
        modifications++;
    }

    // ---- reads ----

    @Override
    public byte @Nullable [] get(Bytes key) {
        Row r = rows.get(key);
        if (r != null) {
            return r.value;
        }
        byte[] v = wrapped().get(key);
        if (budget.share() > 0) {
            rows.put(key, new Row(v, v != null));
            bytes += size(key, v);
            maybeEvict();
        }
        return v;
    }

    @Override
    public KeyValueIterator<Bytes, byte[]> range(@Nullable Bytes from, @Nullable Bytes to) {
        if (dirtyCount == 0) {
            return wrapped().range(from, to);
        }
        if (dirtySorted == null) {
            writeDirty();
            return wrapped().range(from, to);
        }
        return new Merged(wrapped().range(from, to), from, to);
    }

    @Override
    public KeyValueIterator<Bytes, byte[]> all() {
        return range(null, null);
    }

    @Override
    public KeyValueIterator<Bytes, byte[]> reverseRange(Bytes from, Bytes to) {
        writeDirty();
        return wrapped().reverseRange(from, to);
    }

    @Override
    public KeyValueIterator<Bytes, byte[]> reverseAll() {
        writeDirty();
        return wrapped().reverseAll();
    }

    @Override
    public <PS extends Serializer<P>, P> KeyValueIterator<Bytes, byte[]> prefixScan(P prefix, PS prefixKeySerializer) {
        writeDirty();
        return wrapped().prefixScan(prefix, prefixKeySerializer);
    }

    @Override
    public long approximateNumEntries() {
        return wrapped().approximateNumEntries();
    }

    // ---- writes ----

    @Override
    public void put(Bytes key, byte @Nullable [] value) {
        Row r = rows.get(key);
        if (r == null) {
            r = new Row(null, true); // not known whether the store below holds the key
            rows.put(key, r);
            bytes += size(key, value);
        } else {
            bytes += length(value) - length(r.value);
        }
        r.value = value;
        if (value == null && !r.stored) {
            // deletes a row the store below does not hold (a timer added and fired since the last flush): nothing
            // to write; the row stays cached as known absent, and scans no longer walk over it
            if (r.dirty) {
                writeRow(key, r); // writes nothing for it: counts the skip, cleans and unindexes the row
            }
            return;
        }
        if (!r.dirty) {
            r.dirty = true;
            dirtyCount++;
            if (dirtySorted != null) {
                dirtySorted.put(key, r);
                modifications++;
            }
        }
        if (budget.share() == 0) {
            writeRow(key, r);
            rows.remove(key);
            bytes -= size(key, r.value);
            return;
        }
        maybeEvict();
    }

    /**
     * Writes a row whose key the caller knows to be absent from the store, as it reads now (a timer's hold,
     * written with a timer that did not exist): removed again before the next flush, it is never written
     * below. Equivalent to {@link #put} when the cache holds a row for the key.
     */
    public void putNew(Bytes key, byte[] value) {
        if (!rows.containsKey(key) && budget.share() > 0) {
            rows.put(key, new Row(null, false));
            bytes += size(key, null);
        }
        put(key, value);
    }

    /** The write-back cache under {@code store} and the wrappers Kafka Streams puts around it; null when there is none. */
    public static @Nullable WriteBackStore find(StateStore store) {
        StateStore s = store;
        while (true) {
            if (s instanceof WriteBackStore w) {
                return w;
            }
            if (!(s instanceof WrappedStateStore<?, ?, ?> w)) {
                return null;
            }
            s = w.wrapped();
        }
    }

    @Override
    public byte @Nullable [] putIfAbsent(Bytes key, byte @Nullable [] value) {
        byte[] old = get(key);
        if (old == null) {
            put(key, value);
        }
        return old;
    }

    @Override
    public void putAll(List<KeyValue<Bytes, byte[]>> entries) {
        for (KeyValue<Bytes, byte[]> e : entries) {
            put(e.key, e.value);
        }
    }

    @Override
    public byte @Nullable [] delete(Bytes key) {
        byte[] old = get(key);
        put(key, null);
        return old;
    }

    private void maybeEvict() {
        long share = budget.share();
        if (bytes <= share || openIterators > 0) { // an open merged iterator must not lose rows ahead of it
            return;
        }
        Iterator<Map.Entry<Bytes, Row>> it = rows.entrySet().iterator();
        while (bytes > share && it.hasNext()) {
            Map.Entry<Bytes, Row> e = it.next();
            Row r = e.getValue();
            if (r.dirty) {
                writeRow(e.getKey(), r);
            }
            it.remove();
            bytes -= size(e.getKey(), r.value);
        }
    }

    /** Writes the dirty rows to the store below. */
    private void writeDirty() {
        if (dirtyCount == 0) {
            return;
        }
        if (openIterators > 0) {
            // an open merged scan reads the rows it has not reached from the sorted index or from its RocksDB
            // snapshot: rows written through now would be in neither
            throw new IllegalStateException("store " + name() + " written through while one of its scans is open");
        }
        ProcessorRecordContext previous = beginWrites();
        try {
            if (dirtySorted != null) {
                boolean all = false;
                try {
                    for (Map.Entry<Bytes, Row> e : dirtySorted.entrySet()) {
                        writeRow(e.getKey(), e.getValue(), false);
                    }
                    all = true;
                } finally {
                    // one clear instead of a removal per row; after a failed write the rows not written stay
                    if (all) {
                        dirtySorted.clear();
                    } else {
                        dirtySorted.values().removeIf(r -> !r.dirty);
                    }
                    modifications++;
                }
            } else {
                for (Map.Entry<Bytes, Row> e : rows.entrySet()) {
                    if (e.getValue().dirty) {
                        writeRow(e.getKey(), e.getValue());
                    }
                }
            }
        } finally {
            endWrites(previous);
        }
    }

    /** Writes one dirty row through (or drops the write when it deletes a key the store does not hold). */
    private void writeRow(Bytes key, Row r) {
        writeRow(key, r, true);
    }

    /** {@link #writeRow(Bytes, Row)}; {@code unindex} false leaves the sorted index to the caller. */
    private void writeRow(Bytes key, Row r, boolean unindex) {
        if (r.value != null || r.stored) {
            if (internalContext != null && internalContext.recordContext() == null) {
                ProcessorRecordContext previous = beginWrites();
                try {
                    wrapped().put(key, r.value);
                } finally {
                    endWrites(previous);
                }
            } else {
                wrapped().put(key, r.value);
            }
            writesThrough++;
        } else {
            writesSkipped++;
        }
        r.stored = r.value != null;
        r.dirty = false;
        dirtyCount--;
        if (dirtySorted != null && unindex) {
            dirtySorted.remove(key);
            modifications++;
        }
    }

    /**
     * The change logger stamps a changelog record with the current record's timestamp: at a commit
     * outside of processing there may be none, so one is lent for the writes.
     */
    private @Nullable ProcessorRecordContext beginWrites() {
        if (internalContext == null) {
            return null;
        }
        ProcessorRecordContext current = internalContext.recordContext();
        if (current == null) {
            internalContext.setRecordContext(new ProcessorRecordContext(System.currentTimeMillis(), -1, -1, null,
                    new RecordHeaders()));
        }
        return current;
    }

    private void endWrites(@Nullable ProcessorRecordContext previous) {
        if (internalContext != null && previous == null) {
            internalContext.setRecordContext(null);
        }
    }

    private static long size(Bytes key, byte @Nullable [] value) {
        return key.get().length + length(value) + ROW_OVERHEAD;
    }

    private static int length(byte @Nullable [] value) {
        return value == null ? 0 : value.length;
    }

    /** Rows written through to the store below, and deletes skipped because it did not hold the key (tests, metrics). */
    long[] writeCounts() {
        return new long[] {writesThrough, writesSkipped};
    }

    /**
     * Registers the cache's counters of the store under {@code name} (a state or timer store of a task), if it has
     * a write-back cache: {@code flow.store.cache.written} (rows written through to RocksDB and the changelog) and
     * {@code flow.store.cache.skipped} (rows removed before they were ever written: nothing written for them).
     *
     * @return the registered meters (none without a cache), for the caller to remove when the task closes
     */
    public static List<io.micrometer.core.instrument.Meter> registerMeters(StateStore store,
            io.micrometer.core.instrument.MeterRegistry registry, Iterable<io.micrometer.core.instrument.Tag> tags) {
        WriteBackStore cache = find(store);
        if (cache == null) {
            return List.of();
        }
        List<io.micrometer.core.instrument.Tag> all = new ArrayList<>();
        tags.forEach(all::add);
        all.add(io.micrometer.core.instrument.Tag.of("store", cache.name()));
        return List.of(
                io.micrometer.core.instrument.FunctionCounter.builder("flow.store.cache.written", cache,
                        c -> c.writesThrough).description("Rows the store cache wrote through to RocksDB and the changelog")
                        .tags(all).register(registry),
                io.micrometer.core.instrument.FunctionCounter.builder("flow.store.cache.skipped", cache,
                        c -> c.writesSkipped).description("Rows removed before the store cache wrote them: never written")
                        .tags(all).register(registry));
    }

    /** Heap bytes the cache accounts for (tests). */
    long cachedBytes() {
        return bytes;
    }

    /**
     * The store's iterator merged with the dirty rows of {@code [from, to]}: a dirty row replaces the
     * store's row of its key, a dirty delete hides it. The dirty rows are read live from the sorted index;
     * when a write changes it during the iteration, the iterator seeks it again past the last key it
     * returned, and a row of the store's iterator is replaced by the cache's row of its key, if any. While
     * it is open the store neither evicts nor writes through ({@link #writeDirty} refuses).
     */
    private final class Merged extends LookaheadIterator {
        private final KeyValueIterator<Bytes, byte[]> below;
        private final @Nullable Bytes to;
        private @Nullable KeyValue<Bytes, byte[]> belowNext;
        private @Nullable Iterator<Map.Entry<Bytes, Row>> dirtyIt;
        private Map.@Nullable Entry<Bytes, Row> dirtyNext;
        private @Nullable Bytes last;
        private int seenModifications;
        private final @Nullable Bytes from;

        Merged(KeyValueIterator<Bytes, byte[]> below, @Nullable Bytes from, @Nullable Bytes to) {
            this.below = below;
            this.from = from;
            this.to = to;
            this.belowNext = below.hasNext() ? below.next() : null;
            seekDirty();
            openIterators++;
        }

        private void seekDirty() {
            TreeMap<Bytes, Row> sorted = dirtySorted;
            seenModifications = modifications;
            NavigableMap<Bytes, Row> view;
            if (last != null) {
                view = sorted.tailMap(last, false);
            } else if (from != null) {
                view = sorted.tailMap(from, true);
            } else {
                view = sorted;
            }
            dirtyIt = view.entrySet().iterator();
            dirtyNext = advanceDirty();
        }

        private Map.@Nullable Entry<Bytes, Row> advanceDirty() {
            if (dirtyIt.hasNext()) {
                Map.Entry<Bytes, Row> e = dirtyIt.next();
                if (to == null || e.getKey().compareTo(to) <= 0) {
                    return e;
                }
            }
            return null;
        }

        @Override
        protected @Nullable KeyValue<Bytes, byte[]> fetch() {
            if (seenModifications != modifications) {
                seekDirty();
            }
            while (true) {
                if (dirtyNext == null && belowNext == null) {
                    return null;
                }
                int c = dirtyNext == null ? 1 : belowNext == null ? -1 : dirtyNext.getKey().compareTo(belowNext.key);
                if (c <= 0) {
                    Bytes k = dirtyNext.getKey();
                    byte[] v = dirtyNext.getValue().value;
                    dirtyNext = advanceDirty();
                    if (c == 0) {
                        belowNext = below.hasNext() ? below.next() : null;
                    }
                    last = k;
                    if (v != null) {
                        return KeyValue.pair(k, v);
                    }
                } else {
                    KeyValue<Bytes, byte[]> candidate = belowNext;
                    belowNext = below.hasNext() ? below.next() : null;
                    last = candidate.key;
                    Row r = rows.get(candidate.key);
                    if (r == null) {
                        return candidate;
                    }
                    // the cache's row is the current one (a clean row equals the store's, unless written
                    // since the store's iterator was opened)
                    if (r.value != null) {
                        return KeyValue.pair(candidate.key, r.value);
                    }
                }
            }
        }

        private boolean closed;

        @Override
        public void close() {
            if (!closed) {
                closed = true;
                openIterators--;
            }
            below.close();
        }
    }
}
