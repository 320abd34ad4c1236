package io.flowkafka.internal.state;

import io.flowkafka.internal.streams.WriteBackStore;
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
 * RocksDB store per computation keyed {@code (hash, key, state name)} (behind flow-kafka's
 * {@link WriteBackStore} in a compiled topology), with a write buffer that holds one process-function
 * call's writes until the call returns.
 *
 * <p>Store key layout: {@code encodedKey | stateName (UTF-8) | stateName length (2 bytes)}, where
 * the encoded key starts with the 8-byte hash. Keys therefore sort by hash first, so scans by hash
 * range read the keys of a hash range in order (the key visitor relies on this), and lookups
 * compare the discriminating hash bytes first. The trailing length makes every store key
 * decompose one way only.
 *
 * <p>Invariants: store writes happen only in {@link #commitCall()}, after the user function
 * returned; {@link #abortCall()} drops the buffer, so a failed call leaves no trace.
 *
 * <p>Threading: owned by one stream thread (one task).
 */
public final class KeyStates {
    private static final byte[] DELETED = new byte[0];
    private final @Nullable KeyValueStore<Bytes, byte[]> store;
    private Map<Bytes, byte[]> buffer = new HashMap<>();
    /** During a key-visitor scan: store keys written since it began (their scanned rows are stale). */
    private java.util.@Nullable Set<Bytes> writtenDuringScan;
    private byte @Nullable [] prefetchedKey;
    private @Nullable Map<Bytes, byte[]> prefetched;

    /** Per-key states over {@code store}; null for a computation that declares no state (nothing is ever written). */
    public KeyStates(@Nullable KeyValueStore<Bytes, byte[]> store) {
        this.store = store;
    }

    /** The name of a computation's state store (also names its changelog topic). */
    public static String storeName(String computationId) {
        return computationId + ".state";
    }

    /**
     * A builder of the changelogged, cached store of a computation: RocksDB if {@code persistent}, else a
     * {@link HashedMemoryStore} (hash map; sorted only once scanned).
     */
    public static StoreBuilder<KeyValueStore<Bytes, byte[]>> storeBuilder(String computationId, boolean persistent) {
        return storeBuilder(computationId, persistent, null);
    }

    /**
     * As {@link #storeBuilder(String, boolean)}, with a persistent store cached by a {@link WriteBackStore} of
     * {@code cache} instead of Kafka Streams' record cache (when not null).
     */
    public static StoreBuilder<KeyValueStore<Bytes, byte[]>> storeBuilder(String computationId, boolean persistent,
            WriteBackStore.@Nullable Budget cache) {
        if (persistent && cache != null) {
            return WriteBackStore.builder(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(
                    storeName(computationId)), org.apache.kafka.common.serialization.Serdes.Bytes(),
                    org.apache.kafka.common.serialization.Serdes.ByteArray()).withLoggingEnabled(Map.of()), cache, false);
        }
        KeyValueBytesStoreSupplier supplier = persistent
                ? Stores.persistentKeyValueStore(storeName(computationId))
                : HashedMemoryStore.supplier(storeName(computationId));
        return Stores.keyValueStoreBuilder(supplier, org.apache.kafka.common.serialization.Serdes.Bytes(),
                org.apache.kafka.common.serialization.Serdes.ByteArray())
                .withCachingEnabled()
                .withLoggingEnabled(Map.of());
    }

    /** The store key of one state of one key. */
    public static Bytes storeKey(byte[] encodedKey, String stateName) {
        return storeKey(encodedKey, stateName.getBytes(StandardCharsets.UTF_8));
    }

    /** The store key of one state of one key, with the state name already encoded. */
    public static Bytes storeKey(byte[] encodedKey, byte[] stateName) {
        if (stateName.length > 0xffff) {
            throw new IllegalArgumentException("a state name must be shorter than 65536 bytes");
        }
        byte[] k = new byte[encodedKey.length + stateName.length + 2];
        System.arraycopy(encodedKey, 0, k, 0, encodedKey.length);
        System.arraycopy(stateName, 0, k, encodedKey.length, stateName.length);
        k[k.length - 2] = (byte) (stateName.length >>> 8);
        k[k.length - 1] = (byte) stateName.length;
        return Bytes.wrap(k);
    }

    /** The state name of a store key ({@link #storeKey}'s inverse). */
    public static String stateNameOf(Bytes storeKey) {
        byte[] k = storeKey.get();
        int nameLen = ((k[k.length - 2] & 0xff) << 8) | (k[k.length - 1] & 0xff);
        return new String(k, k.length - 2 - nameLen, nameLen, StandardCharsets.UTF_8);
    }

    /** The encoded key of a store key ({@link #storeKey}'s inverse). */
    public static byte[] encodedKeyOf(Bytes storeKey) {
        byte[] k = storeKey.get();
        int nameLen = ((k[k.length - 2] & 0xff) << 8) | (k[k.length - 1] & 0xff);
        return java.util.Arrays.copyOf(k, k.length - 2 - nameLen);
    }

    /** The value, seeing this call's buffered writes first; null when absent. */
    public byte @Nullable [] get(Bytes storeKey) {
        byte[] v = buffer.get(storeKey);
        if (v != null) {
            return v == DELETED ? null : v;
        }
        if (prefetched != null && isRowOf(storeKey.get(), prefetchedKey)
                && (writtenDuringScan == null || !writtenDuringScan.contains(storeKey))) {
            return prefetched.get(storeKey); // every row of the key as the scan read it: absent means absent
        }
        return store == null ? null : store.get(storeKey);
    }

    private static boolean isRowOf(byte[] storeKey, byte[] encodedKey) {
        int n = storeKey.length;
        if (n < 2) {
            return false;
        }
        int nameLen = ((storeKey[n - 2] & 0xff) << 8) | (storeKey[n - 1] & 0xff);
        return n - 2 - nameLen == encodedKey.length && java.util.Arrays.equals(storeKey, 0, encodedKey.length,
                encodedKey, 0, encodedKey.length);
    }

    /** A key-visitor scan begins: rows it reads are current until written. */
    public void beginScan() {
        writtenDuringScan = new java.util.HashSet<>();
    }

    /** The scan ended. */
    public void endScan() {
        writtenDuringScan = null;
        clearPrefetch();
    }

    /**
     * Serves reads of {@code encodedKey}'s states from {@code rows} (every row of that key as a scan
     * that began with {@link #beginScan()} read it) until {@link #clearPrefetch()}; rows written since
     * the scan began are read from the store.
     */
    public void prefetch(byte[] encodedKey, Map<Bytes, byte[]> rows) {
        this.prefetchedKey = encodedKey;
        this.prefetched = rows;
    }

    /** Stops serving reads from prefetched rows. */
    public void clearPrefetch() {
        prefetchedKey = null;
        prefetched = null;
    }

    /** Buffers a write. */
    public void put(Bytes storeKey, byte[] value) {
        buffer.put(storeKey, value);
    }

    /** Buffers a delete. */
    public void delete(Bytes storeKey) {
        buffer.put(storeKey, DELETED);
    }

    /** Hands each row the current call would write (its last value per key; not its deletes) to {@code check}. */
    public void forEachBufferedPut(java.util.function.BiConsumer<Bytes, byte[]> check) {
        for (Map.Entry<Bytes, byte[]> e : buffer.entrySet()) {
            if (e.getValue() != DELETED) {
                check.accept(e.getKey(), e.getValue());
            }
        }
    }

    /**
     * Hands each row the current call would write to {@code row}: its last value, null for a delete (the external
     * table publisher reads a call's manager rows here before they are applied).
     */
    public void forEachBuffered(java.util.function.BiConsumer<Bytes, byte @Nullable []> row) {
        for (Map.Entry<Bytes, byte[]> e : buffer.entrySet()) {
            row.accept(e.getKey(), e.getValue() == DELETED ? null : e.getValue());
        }
    }

    /** Applies the buffered writes of a call that returned normally. */
    public void commitCall() {
        if (buffer.isEmpty()) {
            return;
        }
        if (store == null) {
            throw new IllegalStateException("state written by a computation that declares no state");
        }
        if (writtenDuringScan != null) {
            writtenDuringScan.addAll(buffer.keySet());
        }
        for (Map.Entry<Bytes, byte[]> e : buffer.entrySet()) {
            if (e.getValue() == DELETED) {
                // put(null), not delete(): the same tombstone, without delete()'s read of the old value
                // (a cache lookup, and a RocksDB read when the entry is not cached)
                store.put(e.getKey(), null);
            } else {
                store.put(e.getKey(), e.getValue());
            }
        }
        resetBuffer();
    }

    /** Drops the buffered writes of a call that threw. */
    public void abortCall() {
        resetBuffer();
    }

    private void resetBuffer() {
        // a map that grew for one big call would make every later clear() walk its whole table
        if (buffer.size() > 64) {
            buffer = new HashMap<>();
        } else {
            buffer.clear();
        }
    }

    /** The underlying store (read-only use by inspectors); null when the computation declares no state. */
    public @Nullable KeyValueStore<Bytes, byte[]> store() {
        return store;
    }
}
