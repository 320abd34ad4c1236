package io.flowkafka.connectors.statictable;

import java.math.BigInteger;
import java.time.Duration;

/**
 * The static-table source's read rate limits, rows and bytes per second; 0 means unlimited.
 *
 * @param rowsPerSecond the row limit, {@code >= 0}; 0 for none
 * @param bytesPerSecond the byte (data weight) limit, {@code >= 0}; 0 for none
 */
public record ReadLimits(long rowsPerSecond, long bytesPerSecond) {
    /** No limit at all. */
    public static final ReadLimits UNLIMITED = new ReadLimits(0, 0);

    /**
     * Checks the fields.
     *
     * @param rowsPerSecond the row limit, {@code >= 0}
     * @param bytesPerSecond the byte limit, {@code >= 0}
     * @throws IllegalArgumentException if a limit is negative
     */
    public ReadLimits {
        if (rowsPerSecond < 0 || bytesPerSecond < 0) {
            throw new IllegalArgumentException("read limits must be >= 0 (0 = unlimited) but were " + rowsPerSecond
                    + " rows/s and " + bytesPerSecond + " bytes/s");
        }
    }

    /**
     * How long reading takes at these limits: the slower of the two, zero when unlimited.
     *
     * @param rows the rows to read, {@code >= 0}
     * @param bytes their data weight, {@code >= 0}
     * @return the read duration
     */
    public Duration durationOf(long rows, long bytes) {
        return Duration.ofNanos(Math.max(nanos(rows, rowsPerSecond), nanos(bytes, bytesPerSecond)));
    }

    private static long nanos(long amount, long perSecond) {
        if (perSecond == 0 || amount <= 0) {
            return 0;
        }
        return BigInteger.valueOf(amount).multiply(BigInteger.valueOf(1_000_000_000L))
                .divide(BigInteger.valueOf(perSecond)).min(BigInteger.valueOf(Long.MAX_VALUE)).longValueExact();
    }
}
