package io.flowkafka.internal.streams;

import java.util.Arrays;
import java.util.Iterator;
import java.util.Map;
import java.util.NavigableMap;
import java.util.TreeMap;
import org.apache.kafka.common.serialization.Serializer;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.processor.StateStore;
import org.apache.kafka.streams.state.KeyValueBytesStoreSupplier;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.internals.WrappedStateStore;
import org.jspecify.annotations.Nullable;

/**
 * An in-memory key-value store whose scans walk the sorted map itself: the store of a computation's
 * timers and watermark holds on in-memory stores ({@code flow.state.stores=memory}, FlowTestDriver).
 *
 * <p>Why not Kafka's {@code InMemoryKeyValueStore}: its range iterator copies every key of the range
 * into a new sorted set before returning the first row, so each timer scan (a watermark step, the
 * first pending hold) cost a copy of all pending timers of the range: with ~10k pending timers in the
 * wait-click join on the test driver, timers were the largest flow-kafka item of a record's time.
 * Here a scan costs one seek and a step per row.
 *
 * <p>Contract: that of an in-memory {@link KeyValueStore}, with one difference in scans that run
 * while the store is written: values are read as the scan advances and a key deleted meanwhile is
 * skipped (as in Kafka's store), and a key added meanwhile ahead of the scan is seen (Kafka's copy
 * would not see it). The timer store never writes a store while scanning it. Restores from a
 * changelog put and delete. No interactive-query support beyond {@link StateStore#query}'s default;
 * the position stays empty.
 *
 * <p>Threading: owned by one stream thread (one task), as the runtime uses state stores.
 */
public final class SortedMemoryStore extends MemoryStore {
    private final TreeMap<Bytes, byte[]> map = new TreeMap<>();
    /** Bumped by every insertion or removal of a key: an open scan then seeks past its last key again. */
    private long structuralChanges;
    /** Scans opened (each a seek down the tree), for tests. */
    private long scansOpened;
    /** Point reads ({@link #get}), for tests. */
    private long gets;

    SortedMemoryStore(String name) {
        super(name);
    }

    /** A supplier of these stores, for {@link org.apache.kafka.streams.state.Stores#keyValueStoreBuilder}. */
    public static KeyValueBytesStoreSupplier supplier(String name) {
        return MemoryStore.supplier(name, SortedMemoryStore::new);
    }

    /**
     * The store of this class under {@code store}'s wrappers (metering, change logging), or null: reads may go to
     * it directly (the wrappers add metrics to a read, nothing else), writes must go through the wrappers.
     */
    public static @Nullable SortedMemoryStore find(StateStore store) {
        StateStore s = store;
        while (true) {
            if (s instanceof SortedMemoryStore m) {
                return m;
            }
            if (!(s instanceof WrappedStateStore<?, ?, ?> w)) {
                return null;
            }
            s = w.wrapped();
        }
    }

    @Override
    public byte @Nullable [] get(Bytes key) {
        gets++;
        return map.get(key);
    }

    @Override
    public void put(Bytes key, byte @Nullable [] value) {
        if (value == null) {
            delete(key);
        } else if (map.put(key, value) == null) {
            structuralChanges++;
        }
    }

    @Override
    public byte @Nullable [] delete(Bytes key) {
        byte[] before = map.remove(key);
        if (before != null) {
            structuralChanges++;
        }
        return before;
    }

    @Override
    public KeyValueIterator<Bytes, byte[]> range(@Nullable Bytes from, @Nullable Bytes to) {
        return scan(from, to, false);
    }

    @Override
    public KeyValueIterator<Bytes, byte[]> reverseRange(@Nullable Bytes from, @Nullable Bytes to) {
        return scan(from, to, true);
    }

    @Override
    public KeyValueIterator<Bytes, byte[]> all() {
        return scan(null, null, false);
    }

    @Override
    public KeyValueIterator<Bytes, byte[]> reverseAll() {
        return scan(null, null, true);
    }

    @Override
    public <PS extends Serializer<P>, P> KeyValueIterator<Bytes, byte[]> prefixScan(P prefix, PS prefixKeySerializer) {
        byte[] p = prefixKeySerializer.serialize(null, prefix);
        Bytes from = Bytes.wrap(p);
        return new Scan(map.tailMap(from, true)) {
            @Override
            protected boolean inRange(Bytes key) {
                byte[] b = key.get();
                return b.length >= p.length && Arrays.equals(b, 0, p.length, p, 0, p.length);
            }
        };
    }

    private KeyValueIterator<Bytes, byte[]> scan(@Nullable Bytes from, @Nullable Bytes to, boolean reverse) {
        scansOpened++;
        NavigableMap<Bytes, byte[]> view;
        if (from != null && to != null) {
            view = from.compareTo(to) > 0 ? java.util.Collections.emptyNavigableMap() // as Kafka's stores: empty
                    : map.subMap(from, true, to, true);
        } else if (from != null) {
            view = map.tailMap(from, true);
        } else if (to != null) {
            view = map.headMap(to, true);
        } else {
            view = map;
        }
        return new Scan(reverse ? view.descendingMap() : view);
    }

    /** How many point reads this store served. */
    public long gets() {
        return gets;
    }

    /** How many range scans were opened on this store (each a seek). */
    public long scansOpened() {
        return scansOpened;
    }

    @Override
    public long approximateNumEntries() {
        return map.size();
    }

    @Override
    protected void clear() {
        map.clear();
        structuralChanges++;
    }

    /**
     * A scan over an ordered view of the map, walking the view's own iterator until a key is inserted or
     * removed, then seeking past the last key it returned (the view's iterator would fail).
     */
    private class Scan extends LookaheadIterator {
        private final NavigableMap<Bytes, byte[]> view;
        private Iterator<Map.Entry<Bytes, byte[]>> it;
        private long seen;
        private @Nullable Bytes last;
        private boolean done;

        Scan(NavigableMap<Bytes, byte[]> view) {
            this.view = view;
            this.it = view.entrySet().iterator();
            this.seen = structuralChanges;
        }

        /** Whether a key of the view belongs to the scan (a prefix scan ends at the first key without it). */
        protected boolean inRange(Bytes key) {
            return true;
        }

        @Override
        protected @Nullable KeyValue<Bytes, byte[]> fetch() {
            if (done) {
                return null;
            }
            if (seen != structuralChanges) {
                it = (last == null ? view : view.tailMap(last, false)).entrySet().iterator();
                seen = structuralChanges;
            }
            if (!it.hasNext()) {
                done = true;
                return null;
            }
            Map.Entry<Bytes, byte[]> e = it.next();
            if (!inRange(e.getKey())) {
                done = true;
                return null;
            }
            last = e.getKey();
            return KeyValue.pair(e.getKey(), e.getValue());
        }

        @Override
        public void close() {
            done = true;
        }
    }
}
