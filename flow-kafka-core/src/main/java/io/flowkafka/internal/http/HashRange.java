package io.flowkafka.internal.http;

import io.flowkafka.internal.partition.RangePartitioner;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * A range of key hashes {@code [from, to)} a state query reads or deletes: the keys of a computation whose first
 * column, the unsigned 64-bit hash, falls in it. Keeps Flow's rule that a partition owns a key range: the range
 * splits into one sub-range per partition it touches, in the pipeline's range partitioning
 * ({@link RangePartitioner}), and store rows sort by hash first, so each sub-range is one store range.
 *
 * @param from the first hash (unsigned)
 * @param to the hash after the last (unsigned), or null for the end of the hash space
 */
record HashRange(long from, @Nullable Long to) {

    /**
     * Parses the two bounds: unsigned decimal or {@code 0x} hex; an absent {@code from} is 0, an absent {@code to} the
     * end of the hash space.
     *
     * @throws IllegalArgumentException a sentence naming the bad parameter
     */
    static HashRange parse(@Nullable String from, @Nullable String to) {
        long f = from == null ? 0L : hash("hash_from", from);
        Long t = to == null ? null : hash("hash_to", to);
        if (t != null && Long.compareUnsigned(f, t) >= 0) {
            throw new IllegalArgumentException("hash_from " + Long.toUnsignedString(f) + " is not below hash_to "
                    + Long.toUnsignedString(t) + "; the range is [hash_from, hash_to)");
        }
        return new HashRange(f, t);
    }

    private static long hash(String name, String text) {
        String s = text.strip();
        try {
            return s.startsWith("0x") || s.startsWith("0X") ? Long.parseUnsignedLong(s.substring(2), 16)
                    : Long.parseUnsignedLong(s);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(name + " '" + text + "' is not an unsigned 64-bit hash; give a decimal "
                    + "number or 0x hex, e.g. " + name + "=0 or " + name + "=0x8000000000000000");
        }
    }

    /** Whether {@code hash} is in the range. */
    boolean contains(long hash) {
        return Long.compareUnsigned(hash, from) >= 0 && (to == null || Long.compareUnsigned(hash, to) < 0);
    }

    /**
     * The part of the range each partition owns, in partition order (only partitions the range touches).
     *
     * @param partitions the computation's partition count
     */
    List<Part> split(int partitions) {
        List<Part> out = new ArrayList<>();
        int first = RangePartitioner.partition(from, partitions);
        int last = to == null ? partitions - 1 : RangePartitioner.partition(to - 1, partitions);
        for (int p = first; p <= last; p++) {
            long lo = p == first ? from : RangePartitioner.lowerBound(p, partitions);
            Long hi = p == partitions - 1 ? to : p == last ? to : Long.valueOf(RangePartitioner.lowerBound(p + 1, partitions));
            out.add(new Part(p, new HashRange(lo, hi)));
        }
        return out;
    }

    /**
     * One partition's part of a range.
     *
     * @param partition the partition
     * @param range the hashes it owns in the range
     */
    record Part(int partition, HashRange range) {
    }

    /** The query parameters of this range. */
    String params() {
        return "hash_from=" + Long.toUnsignedString(from) + (to == null ? "" : "&hash_to=" + Long.toUnsignedString(to));
    }
}
