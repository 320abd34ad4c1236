package io.flowkafka.internal.state;

import static io.flowkafka.internal.state.StoreRows.drain;
import static io.flowkafka.internal.state.StoreRows.key;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.Random;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.processor.StateRestoreCallback;
import org.apache.kafka.streams.processor.StateStoreContext;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;
import org.junit.jupiter.api.Test;

/** {@link HashedMemoryStore} against Kafka's in-memory store as the reference. */
class HashedMemoryStoreTest {

    @Test
    void randomOperationsMatchKafkasInMemoryStore() {
        Random random = new Random(7);
        HashedMemoryStore store = new HashedMemoryStore("s");
        KeyValueStore<Bytes, byte[]> reference = Stores.inMemoryKeyValueStore("ref").get();
        for (int round = 0; round < 4; round++) {
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
            if (round == 0) {
                assertThat(store.hasSortedIndex()).isFalse(); // point operations only so far
            }
            // scans (the first builds the sorted index, later rounds check it was kept up to date)
            Bytes from = key(random.nextInt(256));
            Bytes to = key(random.nextInt(256), 255);
            assertThat(drain(store.all())).isEqualTo(drain(reference.all()));
            assertThat(drain(store.reverseAll())).isEqualTo(drain(reference.reverseAll()));
            assertThat(drain(store.range(from, to))).isEqualTo(drain(reference.range(from, to)));
            assertThat(drain(store.reverseRange(from, to))).isEqualTo(drain(reference.reverseRange(from, to)));
            assertThat(drain(store.range(null, to))).isEqualTo(drain(reference.range(null, to)));
            assertThat(drain(store.range(from, null))).isEqualTo(drain(reference.range(from, null)));
            byte[] prefix = {(byte) random.nextInt(256)};
            assertThat(drain(store.prefixScan(prefix, new ByteArraySerializer())))
                    .isEqualTo(drain(reference.prefixScan(prefix, new ByteArraySerializer())));
            assertThat(store.hasSortedIndex()).isTrue();
        }
    }

    @Test
    void iteratorsCopyKeysReadValuesLiveAndSkipDeletedKeys() {
        HashedMemoryStore store = new HashedMemoryStore("s");
        store.put(key(1), new byte[] {1});
        store.put(key(2), new byte[] {2});
        store.put(key(3), new byte[] {3});
        KeyValueIterator<Bytes, byte[]> it = store.all();
        store.delete(key(2));
        store.put(key(3), new byte[] {33});
        store.put(key(4), new byte[] {4}); // after the copy: not seen
        assertThat(it.peekNextKey()).isEqualTo(key(1));
        assertThat(drain(it)).containsExactly(key(1) + "=" + Bytes.wrap(new byte[] {1}),
                key(3) + "=" + Bytes.wrap(new byte[] {33}));
        assertThatThrownBy(it::next).isInstanceOf(NoSuchElementException.class);
        assertThat(drain(store.range(key(3), key(1)))).isEmpty(); // inverted range
        store.put(key(4), null); // a null value deletes
        assertThat(store.get(key(4))).isNull();
        assertThat(drain(store.all())).hasSize(2);
    }

    @Test
    void restoresFromTheChangelogCallback() {
        HashedMemoryStore store = new HashedMemoryStore("s");
        AtomicReference<StateRestoreCallback> callback = new AtomicReference<>();
        StateStoreContext context = (StateStoreContext) java.lang.reflect.Proxy.newProxyInstance(
                getClass().getClassLoader(), new Class<?>[] {StateStoreContext.class}, (proxy, method, args) -> {
                    if (method.getName().equals("register")) {
                        assertThat(args[0]).isSameAs(store);
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
        store.close();
        assertThat(store.isOpen()).isFalse();
    }
}
