package io.flowkafka.internal.state;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.KeyValueBytesStoreSupplier;
import org.apache.kafka.streams.state.StoreBuilder;
import org.apache.kafka.streams.state.Stores;
import org.jspecify.annotations.Nullable;

/**
 * A computation's per-key state, like Flow's KeyStates table: one persistent, changelogged
 * RocksDB store per computation keyed {@code (hash, key, state name)}, with a write buffer that
 * holds one process-function call's writes until the call returns.
 *
 * <p>Store key layout: {@code encodedKey.length (4 bytes) | encodedKey | stateName (UTF-8)}, where
 * the encoded key starts with the 8-byte hash. The length prefix keeps keys unambiguous; scans by
 * hash range read keys of a hash range in order (the key visitor relies on this).
 *
 * <p>Invariants: store writes happen only in {@link #commitCall()}, after the user function
 * returned; {@link #abortCall()} drops the buffer, so a failed call leaves no trace.
 *
 * <p>Threading: owned by one stream thread (one task).
 */
public final class KeyStates {
    private static final byte[] DELETED = new byte[0];
    private final KeyValueStore<Bytes, byte[]> store;
    private final Map<Bytes, byte[]> buffer = new HashMap<>();

    public KeyStates(KeyValueStore<Bytes, byte[]> store) {
        this.store = store;
    }

    /** The name of a computation's state store (also names its changelog topic). */
    public static String storeName(String computationId) {
        return computationId + ".state";
    }

    /** A builder of the persistent, changelogged, cached store of a computation. */
    public static StoreBuilder<KeyValueStore<Bytes, byte[]>> storeBuilder(String computationId, boolean persistent) {
        KeyValueBytesStoreSupplier supplier = persistent
                ? Stores.persistentKeyValueStore(storeName(computationId))
                : Stores.inMemoryKeyValueStore(storeName(computationId));
        return Stores.keyValueStoreBuilder(supplier, org.apache.kafka.common.serialization.Serdes.Bytes(),
                org.apache.kafka.common.serialization.Serdes.ByteArray())
                .withCachingEnabled()
                .withLoggingEnabled(Map.of());
    }

    /** The store key of one state of one key. */
    public static Bytes storeKey(byte[] encodedKey, String stateName) {
        byte[] name = stateName.getBytes(StandardCharsets.UTF_8);
        return Bytes.wrap(ByteBuffer.allocate(4 + encodedKey.length + name.length)
                .putInt(encodedKey.length).put(encodedKey).put(name).array());
    }

    /** The value, seeing this call's buffered writes first; null when absent. */
    public byte @Nullable [] get(Bytes storeKey) {
        byte[] v = buffer.get(storeKey);
        if (v != null) {
            return v == DELETED ? null : v;
        }
        return store.get(storeKey);
    }

    /** Buffers a write. */
    public void put(Bytes storeKey, byte[] value) {
        buffer.put(storeKey, value);
    }

    /** Buffers a delete. */
    public void delete(Bytes storeKey) {
        buffer.put(storeKey, DELETED);
    }

    /** Applies the buffered writes of a call that returned normally. */
    public void commitCall() {
        if (buffer.isEmpty()) {
            return;
        }
        for (Map.Entry<Bytes, byte[]> e : buffer.entrySet()) {
            if (e.getValue() == DELETED) {
                store.delete(e.getKey());
            } else {
                store.put(e.getKey(), e.getValue());
            }
        }
        buffer.clear();
    }

    /** Drops the buffered writes of a call that threw. */
    public void abortCall() {
        buffer.clear();
    }

    /** The underlying store (read-only use by inspectors). */
    public KeyValueStore<Bytes, byte[]> store() {
        return store;
    }
}
