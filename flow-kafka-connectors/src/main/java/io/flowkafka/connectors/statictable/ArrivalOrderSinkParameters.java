package io.flowkafka.connectors.statictable;

import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * The slot parameters of {@code TArrivalOrderTableSink} (reference 001, "Writing to static tables
 * in arrival order") and the two rules that need only them: the size limits that close a slot, and
 * the expiration of an output table. It keeps the spec rules "The mandatory table_ttl parameter"
 * and "A spec with a table_ttl / table_period ratio greater than 40000 is rejected because of the
 * Cypress limit on the number of children".
 *
 * <p>Immutable and thread-safe.
 *
 * @param tablePeriod {@code table_period}, the step of the table sequence
 * @param tableTtl {@code table_ttl}, how long an output table lives
 * @param maxRowCount {@code max_row_count}, or null for no row limit
 * @param maxDataWeight {@code max_data_weight} in bytes, or null for no weight limit
 */
public record ArrivalOrderSinkParameters(Duration tablePeriod, Duration tableTtl, @Nullable Long maxRowCount,
        @Nullable Long maxDataWeight) {
    /** The largest allowed {@code table_ttl / table_period}. */
    public static final long MAX_TTL_TO_PERIOD_RATIO = 40_000;

    /**
     * Checks the parameters.
     *
     * @param tablePeriod the table period; not null, positive
     * @param tableTtl the table TTL; mandatory, positive, at most {@value #MAX_TTL_TO_PERIOD_RATIO} periods
     * @param maxRowCount the row limit; null or positive
     * @param maxDataWeight the weight limit; null or positive
     * @throws NullPointerException if {@code table_period} or {@code table_ttl} is missing
     * @throws IllegalArgumentException if a value is out of range or the ratio exceeds the limit
     */
    public ArrivalOrderSinkParameters {
        Objects.requireNonNull(tablePeriod, "table_period is mandatory");
        Objects.requireNonNull(tableTtl, "table_ttl is mandatory: it bounds the lifetime of the output tables");
        if (tablePeriod.isNegative() || tablePeriod.isZero()) {
            throw new IllegalArgumentException("table_period must be > 0 but was " + tablePeriod);
        }
        if (tableTtl.isNegative() || tableTtl.isZero()) {
            throw new IllegalArgumentException("table_ttl must be > 0 but was " + tableTtl);
        }
        if (tableTtl.compareTo(tablePeriod.multipliedBy(MAX_TTL_TO_PERIOD_RATIO)) > 0) {
            throw new IllegalArgumentException("table_ttl / table_period must be <= " + MAX_TTL_TO_PERIOD_RATIO
                    + " (the limit on the number of tables in a directory) but was " + tableTtl + " / " + tablePeriod
                    + "; fix: lower table_ttl or raise table_period");
        }
        if (maxRowCount != null && maxRowCount <= 0) {
            throw new IllegalArgumentException("max_row_count must be > 0 but was " + maxRowCount);
        }
        if (maxDataWeight != null && maxDataWeight <= 0) {
            throw new IllegalArgumentException("max_data_weight must be > 0 but was " + maxDataWeight);
        }
    }

    /**
     * Whether a slot holding {@code rowCount} rows of {@code dataWeight} bytes has reached
     * {@code max_row_count} or {@code max_data_weight}.
     *
     * @param rowCount the slot's rows
     * @param dataWeight the slot's data weight
     * @return true if a limit is reached (equal counts)
     */
    public boolean limitReached(long rowCount, long dataWeight) {
        return (maxRowCount != null && rowCount >= maxRowCount)
                || (maxDataWeight != null && dataWeight >= maxDataWeight);
    }

    /**
     * The expiration time of an output table: {@code max(table_timestamp, table-creation time) +
     * table_ttl}, "not simply table_timestamp + table_ttl", so that a catch-up table whose
     * timestamp lies further back than {@code table_ttl} does not expire at once.
     *
     * @param tableTimestamp the table's {@code table_timestamp}; not null
     * @param creationTime when the table was created; not null
     * @return when the table expires
     */
    public Instant expirationOf(Instant tableTimestamp, Instant creationTime) {
        Instant later = tableTimestamp.isAfter(creationTime) ? tableTimestamp : creationTime;
        return later.plus(tableTtl);
    }
}
