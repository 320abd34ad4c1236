package io.flowkafka.internal.hash;

import com.google.common.hash.HashFunction;
import com.google.common.hash.Hashing;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * YTsaurus' {@code farm_hash(v1, ..., vn)}, bit for bit.
 *
 * <p>Flow puts {@code farm_hash(col, ...)} in the first, uint64 column of a computation's
 * {@code group_by_schema}; keys, partitions and tables sorted by that column agree with YTsaurus
 * only if the value is the same. It is not FarmHash Fingerprint64 of a string: each value is hashed
 * on its own and the hashes are folded together.
 *
 * <p>Model (all arithmetic on unsigned 64-bit values; Java {@code long} with {@code >>>} and
 * wrapping multiplication, K = {@code 0x9ddfea08eb382d69}):
 * <ul>
 *   <li>{@code fp64(x)}: b = x·K; b ^= b >>> 44; b = b·K; b ^= b >>> 41; b = b·K.</li>
 *   <li>{@code fp128(lo, hi)}: a = (lo ^ hi)·K; a ^= a >>> 47; b = (hi ^ a)·K; b ^= b >>> 44;
 *       b = b·K; b ^= b >>> 41; b = b·K.</li>
 *   <li>the hash of one value: a string is FarmHash Fingerprint64 of its UTF-8 bytes (Guava's
 *       {@code farmHashFingerprint64}); int64, uint64 and double are {@code fp64} of their 64 bits
 *       (so int64 -1 and uint64 2^64-1 hash alike); a boolean is {@code fp64(0 or 1)}; null is
 *       {@code fp64(0)}.</li>
 *   <li>{@code farm_hash(v1..vn)}: r = {@code 0xdeadc0de}; for each value r = {@code fp128(r, hash(v))};
 *       the result is r ^ n.</li>
 * </ul>
 * The golden values of YTsaurus' query-engine tests are checked by {@code FarmHashTest}.
 *
 * <p>Threading: stateless; every method is safe to call from any thread.
 */
public final class FarmHash {
    private static final long K = 0x9ddfea08eb382d69L;
    private static final long SEED = 0xdeadc0deL;
    private static final HashFunction FINGERPRINT = Hashing.farmHashFingerprint64();

    private FarmHash() {
    }

    /**
     * The hash of one column value, as YTsaurus computes it before folding.
     *
     * <p>Accepted values: {@code null}; a {@link CharSequence} (Avro {@code Utf8} included), hashed
     * as its UTF-8 bytes; a {@code byte[]} or {@link ByteBuffer} (its remaining bytes, position
     * unchanged), hashed as a string; {@link Long}, {@link Integer}, {@link Short}, {@link Byte}
     * as int64 (a uint64 is the {@code long} with the same 64 bits, e.g. 2^64-1 is {@code -1L});
     * {@link Double} (its raw IEEE-754 bits) and {@link Float} (widened to double); {@link Boolean}.
     *
     * @param v the value, or null
     * @return the 64-bit hash
     * @throws IllegalArgumentException if {@code v} is of another type
     */
    public static long hashValue(@Nullable Object v) {
        if (v == null) {
            return fp64(0);
        }
        if (v instanceof CharSequence s) {
            return FINGERPRINT.hashBytes(s.toString().getBytes(StandardCharsets.UTF_8)).asLong();
        }
        if (v instanceof Long || v instanceof Integer || v instanceof Short || v instanceof Byte) {
            return fp64(((Number) v).longValue());
        }
        if (v instanceof Double || v instanceof Float) {
            return fp64(Double.doubleToRawLongBits(((Number) v).doubleValue()));
        }
        if (v instanceof Boolean b) {
            return fp64(b ? 1 : 0);
        }
        if (v instanceof byte[] bytes) {
            return FINGERPRINT.hashBytes(bytes).asLong();
        }
        if (v instanceof ByteBuffer buffer) {
            ByteBuffer copy = buffer.duplicate();
            byte[] bytes = new byte[copy.remaining()];
            copy.get(bytes);
            return FINGERPRINT.hashBytes(bytes).asLong();
        }
        throw new IllegalArgumentException("farm_hash cannot hash a value of type " + v.getClass().getName()
                + ": use a string, int64/uint64 (Long), double, boolean or null");
    }

    /**
     * {@code farm_hash(values...)} over the given column values, in order.
     *
     * @param values the column values; elements may be null (each is hashed by {@link #hashValue})
     * @return the uint64 result as a {@code long} with the same 64 bits
     * @throws IllegalArgumentException if a value is of an unsupported type
     * @throws NullPointerException if {@code values} itself is null
     */
    public static long farmHash(List<? extends @Nullable Object> values) {
        Objects.requireNonNull(values, "values");
        long r = SEED;
        for (Object v : values) {
            r = fp128(r, hashValue(v));
        }
        return r ^ values.size();
    }

    /**
     * Varargs form of {@link #farmHash(List)}: {@code farmHash("alpha", 7L)}.
     *
     * @param values the column values; elements may be null
     * @return the uint64 result as a {@code long} with the same 64 bits
     * @throws IllegalArgumentException if a value is of an unsupported type
     */
    public static long farmHash(@Nullable Object... values) {
        Objects.requireNonNull(values, "values");
        long r = SEED;
        for (Object v : values) {
            r = fp128(r, hashValue(v));
        }
        return r ^ values.length;
    }

    static long fp64(long x) {
        long b = x * K;
        b ^= b >>> 44;
        b *= K;
        b ^= b >>> 41;
        b *= K;
        return b;
    }

    static long fp128(long lo, long hi) {
        long a = (lo ^ hi) * K;
        a ^= a >>> 47;
        long b = (hi ^ a) * K;
        b ^= b >>> 44;
        b *= K;
        b ^= b >>> 41;
        b *= K;
        return b;
    }
}
