package io.flowkafka.internal.visitor;

import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * One source of keys a key visitor scans: the computation's internal states (a manager's rows among
 * them, under its name), or the table of a joiner ({@link ScanSources} says which). Keys are
 * encoded group-by keys (8-byte hash
 * first), compared as unsigned bytes; every source returns them in that order.
 *
 * <p>Threading: used by one task's stream thread.
 */
public interface ScanSource {
    /**
     * The result of one read.
     *
     * @param keys the distinct matching keys read completely, in order
     * @param rows the rows read
     * @param capped whether the read stopped at its row limit (keys after {@code lastComplete} may
     *     exist in the range)
     * @param lastComplete the last key whose rows were all read (matching or not); null if none
     * @param values for each of {@code keys}, the rows read (store key to value), so a visit need not
     *     read them again; null when the source has no rows to offer
     */
    record Read(List<byte[]> keys, int rows, boolean capped, byte @Nullable [] lastComplete,
            @Nullable List<java.util.Map<org.apache.kafka.common.utils.Bytes, byte[]>> values) {
    }

    /** A name for diagnostics. */
    String name();

    /**
     * Reads the keys in {@code [from, to)} ({@code to} null: to the end), at most {@code maxRows}
     * rows. A key whose rows were cut by the limit is not returned.
     *
     * @throws RuntimeException when the backing store cannot be read (reported, then retried)
     */
    Read read(byte[] from, byte @Nullable [] to, int maxRows);
}
