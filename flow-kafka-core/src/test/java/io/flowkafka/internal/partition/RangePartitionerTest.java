package io.flowkafka.internal.partition;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Range partitioning as in Flow: partition(h) = ⌊h·N / 2^64⌋ on the unsigned 128-bit product, so
 * partition p owns the contiguous hash range [lowerBound(p, N), lowerBound(p + 1, N)).
 */
class RangePartitionerTest {
    private static final BigInteger TWO_64 = BigInteger.ONE.shiftLeft(64);

    /** The definition, computed with big integers. */
    private static int reference(long hash, int n) {
        return new BigInteger(Long.toUnsignedString(hash)).multiply(BigInteger.valueOf(n)).divide(TWO_64).intValueExact();
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 3, 4, 7, 16, 1000})
    void shouldMapHashZeroToFirstPartition(int n) {
        assertThat(RangePartitioner.partition(0L, n)).isZero();
        assertThat(RangePartitioner.partition(1L, n)).isZero();
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 3, 4, 7, 16, 1000})
    void shouldMapHalfOfTheRangeToMiddlePartition(int n) {
        // 2^63 as an unsigned hash is Long.MIN_VALUE: ⌊2^63·N / 2^64⌋ = ⌊N/2⌋
        assertThat(RangePartitioner.partition(Long.MIN_VALUE, n)).isEqualTo(n / 2);
        assertThat(RangePartitioner.partition(Long.MAX_VALUE, n)).isEqualTo(reference(Long.MAX_VALUE, n));
        if (n % 2 == 0) {
            assertThat(RangePartitioner.partition(Long.MAX_VALUE, n)).as("2^63 - 1 is the last hash of the first half")
                    .isEqualTo(n / 2 - 1);
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 3, 4, 7, 16, 1000})
    void shouldMapLargestHashToLastPartition(int n) {
        assertThat(RangePartitioner.partition(-1L, n)).isEqualTo(n - 1);
        assertThat(RangePartitioner.partition(-2L, n)).isEqualTo(n - 1);
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 3, 4, 7, 16, 1000})
    void shouldStartEachPartitionAtItsLowerBound(int n) {
        assertThat(RangePartitioner.lowerBound(0, n)).isZero();
        for (int p = 1; p < n; p++) {
            long lower = RangePartitioner.lowerBound(p, n);
            assertThat(RangePartitioner.partition(lower, n)).as("first hash of partition %d of %d", p, n).isEqualTo(p);
            assertThat(RangePartitioner.partition(lower - 1, n)).as("hash before partition %d of %d", p, n)
                    .isEqualTo(p - 1);
            assertThat(Long.compareUnsigned(lower, RangePartitioner.lowerBound(p - 1, n))).isPositive();
            BigInteger exact = TWO_64.multiply(BigInteger.valueOf(p)).add(BigInteger.valueOf(n - 1))
                    .divide(BigInteger.valueOf(n));
            assertThat(Long.toUnsignedString(lower)).as("⌈p·2^64 / N⌉").isEqualTo(exact.toString());
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 3, 4, 7, 16, 1000})
    void shouldBeMonotonicAndExactOverUnsignedHashes(int n) {
        Random random = new Random(42L + n);
        long[] hashes = new long[20_000];
        for (int i = 0; i < hashes.length; i++) {
            hashes[i] = random.nextLong();
        }
        hashes[0] = 0L;
        hashes[1] = -1L;
        hashes[2] = Long.MIN_VALUE;
        hashes[3] = Long.MAX_VALUE;
        Long[] sorted = Arrays.stream(hashes).boxed().sorted(Long::compareUnsigned).toArray(Long[]::new);
        int previous = 0;
        for (long h : sorted) {
            int p = RangePartitioner.partition(h, n);
            assertThat(p).as("partition of %s among %d", Long.toUnsignedString(h), n)
                    .isBetween(previous, n - 1)
                    .isEqualTo(reference(h, n));
            previous = p;
        }
    }

    @Test
    void shouldReadHashAsBigEndianPrefixOfKey() {
        byte[] key = ByteBuffer.allocate(11).putLong(0x8000_0000_0000_0001L).put(new byte[] {1, 2, 3}).array();
        assertThat(RangePartitioner.hashOf(key)).isEqualTo(0x8000_0000_0000_0001L);
        assertThat(RangePartitioner.INSTANCE.partitions("t", key, new byte[0], 4)).isEqualTo(Optional.of(Set.of(2)));
        assertThat(RangePartitioner.INSTANCE.partitions("t", new byte[8], null, 4)).isEqualTo(Optional.of(Set.of(0)));
    }

    @Test
    void shouldRejectNonPositivePartitionCount() {
        assertThatThrownBy(() -> RangePartitioner.partition(1L, 0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("partition count must be > 0 but was 0");
    }
}
