package io.flowkafka.internal.streams;

import static io.flowkafka.internal.state.StoreRows.drain;
import static io.flowkafka.internal.state.StoreRows.key;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.processor.StateStoreContext;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;
import org.apache.kafka.streams.state.internals.WrappedStateStore;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link WriteBackStore} over Kafka's in-memory store, against a model of what the store must show, and
 * counting what reaches the store below (where the changelog would record it).
 */
class WriteBackStoreTest {

    /** Kafka's in-memory store, counting the writes it receives. */
    static final class Below extends WrappedStateStore<KeyValueStore<Bytes, byte[]>, Bytes, byte[]>
            implements KeyValueStore<Bytes, byte[]> {
        int puts;
        int tombstones;

        Below() {
            super(Stores.inMemoryKeyValueStore("below").get());
        }

        @Override
        public void put(Bytes key, byte[] value) {
            if (value == null) {
                tombstones++;
            } else {
                puts++;
            }
            wrapped().put(key, value);
        }

        @Override
        public byte[] putIfAbsent(Bytes key, byte[] value) {
            throw new UnsupportedOperationException();
        }

        @Override
        public void putAll(List<KeyValue<Bytes, byte[]>> entries) {
            throw new UnsupportedOperationException();
        }

        @Override
        public byte[] delete(Bytes key) {
            throw new UnsupportedOperationException("the cache writes deletes as tombstones");
        }

        @Override
        public byte[] get(Bytes key) {
            return wrapped().get(key);
        }

        @Override
        public KeyValueIterator<Bytes, byte[]> range(Bytes from, Bytes to) {
            return wrapped().range(from, to);
        }

        @Override
        public KeyValueIterator<Bytes, byte[]> all() {
            return wrapped().all();
        }

        @Override
        public long approximateNumEntries() {
            return wrapped().approximateNumEntries();
        }
    }

    private static StateStoreContext context(long cacheBytes) {
        return (StateStoreContext) java.lang.reflect.Proxy.newProxyInstance(WriteBackStoreTest.class.getClassLoader(),
                new Class<?>[] {StateStoreContext.class}, (proxy, method, args) -> switch (method.getName()) {
                    case "register" -> null;
                    case "appConfigs" -> Map.of(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, cacheBytes);
                    case "recordMetadata" -> java.util.Optional.empty();
                    default -> throw new UnsupportedOperationException(method.getName());
                });
    }

    private static WriteBackStore open(Below below, long cacheBytes, boolean sorted) {
        WriteBackStore store = new WriteBackStore(below, new WriteBackStore.Budget(), sorted);
        store.init(context(cacheBytes), store);
        return store;
    }

    private static List<String> rows(Map<Bytes, byte[]> model) {
        List<String> out = new ArrayList<>();
        model.forEach((k, v) -> out.add(k + "=" + Bytes.wrap(v)));
        return out;
    }

    @ParameterizedTest(name = "sorted index {0}")
    @ValueSource(booleans = {true, false})
    void randomOperationsShowTheModelAndFlushItBelow(boolean sorted) {
        for (long cacheBytes : new long[] {0, 3_000, 1 << 20}) { // off, evicting all the time, holding everything
            Random random = new Random(11 + cacheBytes);
            Below below = new Below();
            WriteBackStore store = open(below, cacheBytes, sorted);
            TreeMap<Bytes, byte[]> model = new TreeMap<>();
            for (int op = 0; op < 20_000; op++) {
                Bytes k = key(random.nextInt(64), random.nextInt(3) * 100);
                switch (random.nextInt(9)) {
                    case 0, 1, 2 -> {
                        byte[] v = {(byte) op, (byte) (op >> 8)};
                        store.put(k, v);
                        model.put(k, v);
                    }
                    case 3 -> assertThat(store.delete(k)).isEqualTo(model.remove(k));
                    case 4 -> {
                        store.put(k, null); // a blind delete, as KeyStates writes them
                        model.remove(k);
                    }
                    case 5 -> {
                        byte[] v = {(byte) op};
                        assertThat(store.putIfAbsent(k, v)).isEqualTo(model.putIfAbsent(k, v));
                    }
                    case 6 -> {
                        int a = random.nextInt(64);
                        Bytes from = key(a);
                        Bytes to = key(a + random.nextInt(64 - a), 255);
                        assertThat(drain(store.range(from, to))).isEqualTo(rows(model.subMap(from, true, to, true)));
                    }
                    case 7 -> {
                        if (random.nextInt(50) == 0) {
                            store.flushCache();
                            assertThat(drain(below.all())).as("the store below after a flush").isEqualTo(rows(model));
                        }
                    }
                    default -> assertThat(store.get(k)).isEqualTo(model.get(k));
                }
                assertThat(store.cachedBytes()).isLessThanOrEqualTo(cacheBytes);
            }
            assertThat(drain(store.all())).isEqualTo(rows(model));
            store.flushCache();
            assertThat(drain(below.all())).isEqualTo(rows(model));
            store.close();
        }
    }

    @ParameterizedTest(name = "sorted index {0}")
    @ValueSource(booleans = {true, false})
    void aRowCreatedAndRemovedBetweenTwoFlushesNeverReachesTheStoreBelow(boolean sorted) {
        Below below = new Below();
        WriteBackStore store = open(below, 1 << 20, sorted);
        Bytes a = key(1);
        Bytes b = key(2);
        assertThat(store.get(a)).isNull(); // read first, as KeyStates and TimerStore do: the store below has no a
        store.put(a, new byte[] {1});
        store.put(a, new byte[] {2});
        store.put(a, null);
        store.put(b, new byte[] {3});
        store.flushCache();
        assertThat(below.puts).as("only b's last value").isEqualTo(1);
        assertThat(below.tombstones).as("a never existed below").isZero();
        assertThat(store.writeCounts()).containsExactly(1, 1);

        // b exists below now: deleting it must write a tombstone, however briefly it was cached
        store.put(b, new byte[] {4});
        store.delete(b);
        store.flushCache();
        assertThat(below.tombstones).isEqualTo(1);
        assertThat(below.get(b)).isNull();

        // a blind delete of a key the cache knows nothing of is written: the store below may hold it
        below.put(key(3), new byte[] {9});
        WriteBackStore fresh = open(below, 1 << 20, sorted);
        fresh.put(key(3), null);
        fresh.flushCache();
        assertThat(below.get(key(3))).isNull();
    }

    @Test
    void aRowWrittenAsNewIsDroppedWhenRemovedBeforeTheFlushButNotWhenTheStoreBelowHadIt() {
        Below below = new Below();
        WriteBackStore store = open(below, 1 << 20, true);
        store.putNew(key(1), new byte[] {1}); // a hold of a timer that did not exist
        store.put(key(1), null);
        store.flushCache();
        assertThat(below.puts + below.tombstones).isZero();

        store.put(key(2), new byte[] {2});
        store.flushCache(); // key 2 below
        store.put(key(2), null); // a hold removed, then the same hold written again as new
        store.putNew(key(2), new byte[] {3});
        store.put(key(2), null);
        store.flushCache();
        assertThat(below.get(key(2))).as("the cache knew the store below held it").isNull();
        assertThat(below.tombstones).isEqualTo(1);
        assertThat(WriteBackStore.find(store)).isSameAs(store);
        assertThat(WriteBackStore.find(below)).isNull();
    }

    @Test
    void aClearedCacheForgetsWhatWasNotFlushed() {
        Below below = new Below();
        WriteBackStore store = open(below, 1 << 20, true);
        store.put(key(1), new byte[] {1});
        store.flushCache();
        store.put(key(1), new byte[] {2});
        store.put(key(2), new byte[] {3});
        store.clearCache(); // a task closed dirty: its transaction aborted
        assertThat(store.get(key(1))).containsExactly(1);
        assertThat(store.get(key(2))).isNull();
        store.flushCache();
        assertThat(drain(below.all())).containsExactly(key(1) + "=" + Bytes.wrap(new byte[] {1}));
    }

    @Test
    void withoutACacheEveryWriteGoesThrough() {
        Below below = new Below();
        WriteBackStore store = open(below, 0, true);
        store.put(key(1), new byte[] {1});
        assertThat(below.get(key(1))).containsExactly(1);
        store.delete(key(1));
        assertThat(below.tombstones).isEqualTo(1);
        assertThat(store.cachedBytes()).isZero();
    }

    @Test
    void aMergedScanSeesWritesMadeWhileItIsOpen() {
        Below below = new Below();
        WriteBackStore store = open(below, 1 << 20, true);
        for (int i = 0; i < 6; i += 2) {
            store.put(key(i), new byte[] {(byte) i});
        }
        store.flushCache(); // 0, 2, 4 below
        store.put(key(3), new byte[] {3}); // dirty
        List<Integer> seen = new ArrayList<>();
        try (KeyValueIterator<Bytes, byte[]> it = store.range(key(0), key(9))) {
            seen.add((int) it.next().value[0]); // 0
            store.put(key(1), new byte[] {1}); // ahead: seen
            store.put(key(4), null); // ahead, below: hidden
            store.put(key(5), new byte[] {5}); // ahead: seen
            assertThatThrownBy(store::flushCache).as("no write-through under an open scan")
                    .isInstanceOf(IllegalStateException.class);
            it.forEachRemaining(kv -> seen.add((int) kv.value[0]));
        }
        assertThat(seen).containsExactly(0, 1, 2, 3, 5);
        store.flushCache(); // closed: allowed again
        assertThat(below.get(key(4))).isNull();
    }

    @Test
    void storesShareTheBudgetEvenly() {
        WriteBackStore.Budget budget = new WriteBackStore.Budget();
        WriteBackStore first = new WriteBackStore(new Below(), budget, false);
        first.init(context(8_000), first);
        assertThat(budget.share()).isEqualTo(8_000);
        WriteBackStore second = new WriteBackStore(new Below(), budget, true);
        second.init(context(8_000), second);
        assertThat(budget.share()).isEqualTo(4_000);
        for (int i = 0; i < 200; i++) {
            first.put(key(i), new byte[10]);
        }
        assertThat(first.cachedBytes()).isBetween(4_000L - WriteBackStore.ROW_OVERHEAD - 20, 4_000L);
        second.close();
        assertThat(budget.share()).isEqualTo(8_000);
        first.close();
    }
}
