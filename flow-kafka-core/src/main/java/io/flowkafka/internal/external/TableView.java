package io.flowkafka.internal.external;

import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.jspecify.annotations.Nullable;

/**
 * The rows of one external table as a reader sees them: by encoded group-by key, or a hash range in key order.
 * A view of a versioned reference reads one version (see {@link TableReader#pin()}).
 */
public interface TableView {
    /**
     * The row of a key.
     *
     * @param encodedKey the group-by key as the computation's key codec encodes it (hash first)
     * @return the row value (Avro binary of the table's schema), null when absent
     */
    byte @Nullable [] get(byte[] encodedKey);

    /**
     * The rows whose hash is in {@code [fromHash, toHash]} (unsigned), in key order. The caller closes it.
     *
     * @param fromHash the smallest hash, unsigned
     * @param toHash the largest hash, unsigned, inclusive
     * @return (encoded key, row value) pairs
     */
    KeyValueIterator<Bytes, byte[]> scan(long fromHash, long toHash);

    /** {@return the version this view reads; null for a table that is not versioned, or before any pointer} */
    @Nullable String version();
}
