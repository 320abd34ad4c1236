package io.flowkafka.internal.streams;

import static io.flowkafka.internal.state.StoreRows.drain;
import static io.flowkafka.internal.state.StoreRows.key;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.NoSuchElementException;
import java.util.Random;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.processor.StateRestoreCallback;
import org.apache.kafka.streams.processor.StateStoreContext;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;
import org.junit.jupiter.api.Test;

/** {@link SortedMemoryStore} against Kafka's in-memory store as the reference. */
class SortedMemoryStoreTest {

    @Test
    void randomOperationsMatchKafkasInMemoryStore() {
        Random random = new Random(11);
        SortedMemoryStore store = new SortedMemoryStore("s");
        KeyValueStore<Bytes, byte[]> reference = Stores.inMemoryKeyValueStore("ref").get();
        for (int round = 0; round < 6; round++) {
            for (int op = 0; op < 2000; op++) {
                Bytes k = key(random.nextInt(256), random.nextInt(4) * 60);
                switch (random.nextInt(4)) {
                    case 0, 1 -> {
                        byte[] v = {(byte) random.nextInt(), (byte) op};
                        store.put(k, v);
                        reference.put(k, v);
                    }
                    case 2 -> assertThat(store.delete(k)).isEqualTo(reference.delete(k));
                    default -> {
                        byte[] v = {(byte) op};
                        assertThat(store.putIfAbsent(k, v)).isEqualTo(reference.putIfAbsent(k, v));
                    }
                }
                assertThat(store.get(k)).isEqualTo(reference.get(k));
            }
            assertThat(store.approximateNumEntries()).isEqualTo(reference.approximateNumEntries());
            Bytes from = key(random.nextInt(256));
            Bytes to = key(random.nextInt(256), 255);
            assertThat(drain(store.all())).isEqualTo(drain(reference.all()));
            assertThat(drain(store.reverseAll())).isEqualTo(drain(reference.reverseAll()));
            assertThat(drain(store.range(from, to))).isEqualTo(drain(reference.range(from, to)));
            assertThat(drain(store.reverseRange(from, to))).isEqualTo(drain(reference.reverseRange(from, to)));
            assertThat(drain(store.range(null, to))).isEqualTo(drain(reference.range(null, to)));
            assertThat(drain(store.range(from, null))).isEqualTo(drain(reference.range(from, null)));
            assertThat(drain(store.reverseRange(null, to))).isEqualTo(drain(reference.reverseRange(null, to)));
            assertThat(drain(store.reverseRange(from, null))).isEqualTo(drain(reference.reverseRange(from, null)));
            byte[] prefix = {(byte) random.nextInt(256)};
            assertThat(drain(store.prefixScan(prefix, new ByteArraySerializer())))
                    .isEqualTo(drain(reference.prefixScan(prefix, new ByteArraySerializer())));
        }
    }

    @Test
    void scansReadValuesLiveSkipDeletedKeysAndSeekPastChanges() {
        SortedMemoryStore store = new SortedMemoryStore("s");
        for (int i = 1; i <= 5; i++) {
            store.put(key(i), new byte[] {(byte) i});
        }
        KeyValueIterator<Bytes, byte[]> it = store.range(key(1), key(4));
        assertThat(it.next().key).isEqualTo(key(1));
        store.delete(key(2)); // ahead of the scan: skipped
        store.put(key(3), new byte[] {33}); // a new value: read as the scan reaches it
        store.delete(key(1)); // behind the scan
        assertThat(it.peekNextKey()).isEqualTo(key(3));
        store.put(key(2), new byte[] {22}); // behind the scan's position: not seen
        assertThat(drain(it)).containsExactly(key(3) + "=" + Bytes.wrap(new byte[] {33}),
                key(4) + "=" + Bytes.wrap(new byte[] {4}));
        assertThatThrownBy(it::next).isInstanceOf(NoSuchElementException.class);

        KeyValueIterator<Bytes, byte[]> back = store.reverseAll();
        assertThat(back.next().key).isEqualTo(key(5));
        store.delete(key(4));
        assertThat(drain(back)).containsExactly(key(3) + "=" + Bytes.wrap(new byte[] {33}),
                key(2) + "=" + Bytes.wrap(new byte[] {22}));
        assertThat(drain(store.range(key(3), key(1)))).isEmpty(); // inverted range
        store.put(key(5), null); // a null value deletes
        assertThat(store.get(key(5))).isNull();
        assertThat(drain(store.all())).hasSize(2);
    }

    @Test
    void restoresFromTheChangelogCallbackAndIsFoundUnderWrappers() {
        SortedMemoryStore store = new SortedMemoryStore("s");
        AtomicReference<StateRestoreCallback> callback = new AtomicReference<>();
        StateStoreContext context = (StateStoreContext) java.lang.reflect.Proxy.newProxyInstance(
                getClass().getClassLoader(), new Class<?>[] {StateStoreContext.class}, (proxy, method, args) -> {
                    if (method.getName().equals("register")) {
                        callback.set((StateRestoreCallback) args[1]);
                        return null;
                    }
                    throw new UnsupportedOperationException(method.getName());
                });
        store.init(context, store);
        assertThat(store.isOpen()).isTrue();
        callback.get().restore(new byte[] {1}, new byte[] {10});
        callback.get().restore(new byte[] {2}, new byte[] {20});
        callback.get().restore(new byte[] {1}, null); // a tombstone deletes
        assertThat(store.get(key(1))).isNull();
        assertThat(store.get(key(2))).containsExactly(20);
        assertThat(store.approximateNumEntries()).isEqualTo(1);
        assertThat(SortedMemoryStore.find(store)).isSameAs(store);
        assertThat(SortedMemoryStore.find(Stores.inMemoryKeyValueStore("other").get())).isNull();
        store.close();
        assertThat(store.isOpen()).isFalse();
    }
}
