package io.flowkafka.internal.partition;

import java.util.Optional;
import java.util.Set;
import org.apache.kafka.streams.processor.StreamPartitioner;

/**
 * Range partitioning by the uint64 key hash, as in Flow: partition(h) = ⌊h·N / 2^64⌋ on the
 * unsigned 128-bit product, so each partition owns a contiguous hash range.
 *
 * <p>Records are keyed by an encoded group-by key whose first 8 bytes are the hash
 * (big-endian). Stateless and thread-safe.
 */
public final class RangePartitioner implements StreamPartitioner<byte[], byte[]> {
    /** The shared instance. */
    public static final RangePartitioner INSTANCE = new RangePartitioner();

    /** The partition owning {@code hash} (an unsigned 64-bit value) among {@code n} partitions. */
    public static int partition(long hash, int n) {
        if (n <= 0) {
            throw new IllegalArgumentException("partition count must be > 0 but was " + n);
        }
        // unsigned high 64 bits of hash * n (Java 17 has only the signed multiplyHigh)
        long high = Math.multiplyHigh(hash, n) + ((hash >> 63) & n);
        return (int) high;
    }

    /** The smallest hash owned by {@code partition} among {@code n}: ⌈p·2^64 / N⌉. */
    public static long lowerBound(int partition, int n) {
        if (partition == 0) {
            return 0L;
        }
        java.math.BigInteger two64 = java.math.BigInteger.ONE.shiftLeft(64);
        java.math.BigInteger[] qr = two64.multiply(java.math.BigInteger.valueOf(partition))
                .divideAndRemainder(java.math.BigInteger.valueOf(n));
        java.math.BigInteger ceil = qr[1].signum() == 0 ? qr[0] : qr[0].add(java.math.BigInteger.ONE);
        return ceil.longValue();
    }

    /** Reads the hash from an encoded key. */
    public static long hashOf(byte[] key) {
        return ((long) (key[0] & 0xff) << 56) | ((long) (key[1] & 0xff) << 48) | ((long) (key[2] & 0xff) << 40)
                | ((long) (key[3] & 0xff) << 32) | ((long) (key[4] & 0xff) << 24) | ((long) (key[5] & 0xff) << 16)
                | ((long) (key[6] & 0xff) << 8) | (key[7] & 0xff);
    }

    @Override
    public Optional<Set<Integer>> partitions(String topic, byte[] key, byte[] value, int numPartitions) {
        return Optional.of(Set.of(partition(hashOf(key), numPartitions)));
    }
}
