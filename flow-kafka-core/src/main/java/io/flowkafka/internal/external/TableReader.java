package io.flowkafka.internal.external;

import io.flowkafka.internal.streams.LookaheadIterator;
import java.nio.charset.StandardCharsets;
import java.util.Objects;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.processor.api.ProcessingContext;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;
import org.jspecify.annotations.Nullable;

/**
 * Reads one external table through its global store ({@link TableStore}): a lookup by encoded key, a hash-range
 * scan in key order, and, for a versioned reference, the pointer.
 *
 * <p>Rule kept: a versioned reference is read through a pinned view ({@link #pin()}), which reads one version
 * however often the pointer switches meanwhile, so a call (or a scan) that pins once never mixes versions. The
 * reader itself ({@link #get}, {@link #scan}) follows the pointer on every access.
 *
 * <p>Threading: a global store is written by the global thread and read by stream threads; RocksDB and the
 * in-memory store allow that. One reader per task.
 */
public final class TableReader implements TableView, TableSource {
    private final ReadOnlyKeyValueStore<Bytes, byte[]> store;
    private final boolean versioned;
    private final String topic;

    /**
     * A reader of a table's store.
     *
     * @param store the global store of the table
     * @param topic the table's topic (for messages)
     * @param versioned whether the topic holds a versioned reference
     */
    public TableReader(ReadOnlyKeyValueStore<Bytes, byte[]> store, String topic, boolean versioned) {
        this.store = Objects.requireNonNull(store, "store");
        this.topic = topic;
        this.versioned = versioned;
    }

    /**
     * The reader of {@code topic}'s global store, from a task's context (global stores are visible to every
     * processor of the topology).
     *
     * @param context a processor's context
     * @param topic the table's topic; the topology has its global store
     * @param versioned whether the topic holds a versioned reference
     * @return the reader
     */
    public static TableReader of(ProcessingContext context, String topic, boolean versioned) {
        ReadOnlyKeyValueStore<Bytes, byte[]> store = context.getStateStore(TableStore.storeName(topic));
        if (store == null) {
            throw new IllegalStateException("the topology has no global store of external table topic " + topic);
        }
        return new TableReader(store, topic, versioned);
    }

    /** {@return the table's topic} */
    public String topic() {
        return topic;
    }

    /** {@return whether the table is a versioned reference} */
    public boolean versioned() {
        return versioned;
    }

    /** {@return the current version the pointer names; null for a plain table or before the first switch} */
    @Override
    public @Nullable String version() {
        if (!versioned) {
            return null;
        }
        byte[] v = store.get(Bytes.wrap(VersionedKeys.pointer()));
        return v == null ? null : new String(v, StandardCharsets.UTF_8);
    }

    /**
     * A view reading the current version until dropped (the table itself when it is not versioned).
     *
     * @return the pinned view
     */
    @Override
    public TableView pin() {
        if (!versioned) {
            return this;
        }
        return new Pinned(version());
    }

    /**
     * A view reading version {@code version} of a versioned reference.
     *
     * @param version a version name
     * @return the view
     */
    public TableView at(String version) {
        if (!versioned) {
            throw new IllegalStateException("external table topic " + topic + " is not versioned");
        }
        VersionedKeys.checkedVersion(version);
        return new Pinned(version);
    }

    @Override
    public byte @Nullable [] get(byte[] encodedKey) {
        return versioned ? pin().get(encodedKey) : store.get(Bytes.wrap(encodedKey));
    }

    @Override
    public KeyValueIterator<Bytes, byte[]> scan(long fromHash, long toHash) {
        if (versioned) {
            return pin().scan(fromHash, toHash);
        }
        return new HashRange(store.range(Bytes.wrap(hashKey(fromHash)), null), 0, toHash, null);
    }

    private static byte[] hashKey(long hash) {
        byte[] k = new byte[8];
        for (int i = 0; i < 8; i++) {
            k[i] = (byte) (hash >>> (56 - 8 * i));
        }
        return k;
    }

    /** One version of a versioned reference. */
    private final class Pinned implements TableView {
        private final @Nullable String version;
        private final byte @Nullable [] versionBytes;

        Pinned(@Nullable String version) {
            this.version = version;
            this.versionBytes = version == null ? null : version.getBytes(StandardCharsets.UTF_8);
        }

        @Override
        public byte @Nullable [] get(byte[] encodedKey) {
            return versionBytes == null ? null : store.get(Bytes.wrap(VersionedKeys.rowKey(versionBytes, encodedKey)));
        }

        @Override
        public KeyValueIterator<Bytes, byte[]> scan(long fromHash, long toHash) {
            if (versionBytes == null) {
                return new HashRange(null, 0, toHash, null);
            }
            return new HashRange(store.range(Bytes.wrap(VersionedKeys.rangeStart(versionBytes, fromHash)), null),
                    versionBytes.length + 1, toHash, versionBytes);
        }

        @Override
        public @Nullable String version() {
            return version;
        }
    }

    /**
     * The rows of a store range up to a hash: keys stripped of a version prefix of {@code offset} bytes, stopping
     * at the first key past {@code toHash} or outside the version.
     */
    private static final class HashRange extends LookaheadIterator {
        private final @Nullable KeyValueIterator<Bytes, byte[]> rows;
        private final int offset;
        private final long toHash;
        private final byte @Nullable [] version;
        private boolean done;

        HashRange(@Nullable KeyValueIterator<Bytes, byte[]> rows, int offset, long toHash, byte @Nullable [] version) {
            this.rows = rows;
            this.offset = offset;
            this.toHash = toHash;
            this.version = version;
            this.done = rows == null;
        }

        @Override
        protected @Nullable KeyValue<Bytes, byte[]> fetch() {
            while (!done && Objects.requireNonNull(rows).hasNext()) {
                KeyValue<Bytes, byte[]> row = rows.next();
                byte[] k = row.key.get();
                if (version != null && !VersionedKeys.isRowOf(k, version)) {
                    break;
                }
                if (k.length < offset + 8) {
                    continue; // not an encoded key
                }
                if (Long.compareUnsigned(hashAt(k, offset), toHash) > 0) {
                    break;
                }
                byte[] key = offset == 0 ? k : java.util.Arrays.copyOfRange(k, offset, k.length);
                return KeyValue.pair(Bytes.wrap(key), row.value);
            }
            done = true;
            return null;
        }

        private static long hashAt(byte[] k, int offset) {
            long h = 0;
            for (int i = 0; i < 8; i++) {
                h = (h << 8) | (k[offset + i] & 0xff);
            }
            return h;
        }

        @Override
        public void close() {
            if (rows != null) {
                rows.close();
            }
        }
    }
}
