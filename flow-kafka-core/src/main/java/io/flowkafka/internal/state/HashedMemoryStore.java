package io.flowkafka.internal.state;

import io.flowkafka.internal.streams.LookaheadIterator;
import io.flowkafka.internal.streams.MemoryStore;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.NavigableSet;
import java.util.TreeSet;
import org.apache.kafka.common.serialization.Serializer;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.processor.StateStore;
import org.apache.kafka.streams.state.KeyValueBytesStoreSupplier;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.jspecify.annotations.Nullable;

/**
 * The in-memory store of a computation's per-key states ({@code flow.state.stores=memory}): a hash
 * map for point reads and writes, and a sorted index of the keys that exists only once something
 * scanned the store (a key visitor), kept up to date from then on (a new or deleted key, not a new
 * value of a key, touches it).
 *
 * <p>Why not Kafka's {@code InMemoryKeyValueStore} (a {@code TreeMap}): state keys begin with the
 * key's 8-byte {@code farm_hash}, so consecutive calls look up keys spread over the whole tree,
 * each lookup a chain of cache misses down ~log2(keys) levels; in the wait-click join on the test
 * driver the state reads and writes took about 30% of a record's time. A computation that never
 * scans its states (no key visitor) only needs point reads and writes.
 *
 * <p>Contract: that of an in-memory {@link KeyValueStore}. Iterators are Kafka's in-memory ones:
 * the keys of the range are copied when the iterator is created, values are read as it advances,
 * and a key deleted meanwhile is skipped. Restores from a changelog put and delete. No
 * interactive-query support beyond {@link StateStore#query}'s default (flow-kafka serves no
 * interactive queries); the position stays empty.
 *
 * <p>Threading: owned by one stream thread (one task), as the runtime uses state stores.
 */
final class HashedMemoryStore extends MemoryStore {
    private final HashMap<Bytes, byte[]> map = new HashMap<>();
    /** Every key, in order: null until the first scan. */
    private @Nullable TreeSet<Bytes> sorted;

    HashedMemoryStore(String name) {
        super(name);
    }

    /** A supplier of these stores, for {@link org.apache.kafka.streams.state.Stores#keyValueStoreBuilder}. */
    static KeyValueBytesStoreSupplier supplier(String name) {
        return MemoryStore.supplier(name, HashedMemoryStore::new);
    }

    @Override
    public byte @Nullable [] get(Bytes key) {
        return map.get(key);
    }

    @Override
    public void put(Bytes key, byte @Nullable [] value) {
        if (value == null) {
            delete(key);
            return;
        }
        if (map.put(key, value) == null && sorted != null) {
            sorted.add(key);
        }
    }

    @Override
    public byte @Nullable [] delete(Bytes key) {
        byte[] before = map.remove(key);
        if (before != null && sorted != null) {
            sorted.remove(key);
        }
        return before;
    }

    @Override
    public KeyValueIterator<Bytes, byte[]> range(@Nullable Bytes from, @Nullable Bytes to) {
        return range(from, to, false);
    }

    @Override
    public KeyValueIterator<Bytes, byte[]> reverseRange(@Nullable Bytes from, @Nullable Bytes to) {
        return range(from, to, true);
    }

    @Override
    public KeyValueIterator<Bytes, byte[]> all() {
        return range(null, null, false);
    }

    @Override
    public KeyValueIterator<Bytes, byte[]> reverseAll() {
        return range(null, null, true);
    }

    @Override
    public <PS extends Serializer<P>, P> KeyValueIterator<Bytes, byte[]> prefixScan(P prefix, PS prefixKeySerializer) {
        byte[] p = prefixKeySerializer.serialize(null, prefix);
        List<Bytes> keys = new ArrayList<>();
        for (Bytes k : index().tailSet(Bytes.wrap(p), true)) {
            byte[] b = k.get();
            if (b.length < p.length || !Arrays.equals(b, 0, p.length, p, 0, p.length)) {
                break;
            }
            keys.add(k);
        }
        return new Iter(keys);
    }

    private KeyValueIterator<Bytes, byte[]> range(@Nullable Bytes from, @Nullable Bytes to, boolean reverse) {
        if (from != null && to != null && from.compareTo(to) > 0) {
            return new Iter(List.of()); // as Kafka's stores: an inverted range is empty
        }
        NavigableSet<Bytes> s = index();
        if (from != null && to != null) {
            s = s.subSet(from, true, to, true);
        } else if (from != null) {
            s = s.tailSet(from, true);
        } else if (to != null) {
            s = s.headSet(to, true);
        }
        return new Iter(new ArrayList<>(reverse ? s.descendingSet() : s));
    }

    /** The sorted index, built at the first scan and kept from then on. */
    private TreeSet<Bytes> index() {
        if (sorted == null) {
            sorted = new TreeSet<>(map.keySet());
        }
        return sorted;
    }

    @Override
    public long approximateNumEntries() {
        return map.size();
    }

    @Override
    protected void clear() {
        map.clear();
        sorted = null;
    }

    /** Over keys copied when the scan began; values read as it advances; keys deleted since are skipped. */
    private final class Iter extends LookaheadIterator {
        private final List<Bytes> keys;
        private int i;

        Iter(List<Bytes> keys) {
            this.keys = keys;
        }

        @Override
        protected @Nullable KeyValue<Bytes, byte[]> fetch() {
            while (i < keys.size()) {
                Bytes k = keys.get(i++);
                byte[] v = map.get(k);
                if (v != null) {
                    return KeyValue.pair(k, v);
                }
            }
            return null;
        }

        @Override
        public void close() {
            // nothing held
        }
    }

    /** For tests: whether the sorted index was built. */
    boolean hasSortedIndex() {
        return sorted != null;
    }

    /** For tests: the entries, as a map. */
    Map<Bytes, byte[]> entries() {
        return Map.copyOf(map);
    }
}
