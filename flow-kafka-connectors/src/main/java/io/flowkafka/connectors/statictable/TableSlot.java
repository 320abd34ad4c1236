package io.flowkafka.connectors.statictable;

import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * The open slot of the arrival-order sink: the logical timestamp {@code T} of the table being
 * filled, and what it holds so far. It owns the slot rules of reference 001:
 * <ol>
 *   <li>the sequence has "a fixed table_period step": every close, by time or by limit, moves to
 *       {@code T + table_period} ({@link #next}), so "closing by limit also shifts the next logical
 *       timestamp by one period, so the sequence can run ahead of the wall clock";</li>
 *   <li>a non-empty slot closes by limit when "max_row_count/max_data_weight is reached", and by
 *       time at its boundary, {@code wall clock >= T + table_period}; so "While the sequence is ahead
 *       of the wall clock, closing by time doesn't happen";</li>
 *   <li>"An empty slot T is created strictly in order, only if T &lt;= wall clock and the known non-zero
 *       system watermark of the input stream is strictly greater than T + table_period".</li>
 * </ol>
 * Free of I/O: the sink keeps the slot (with its lag) in external state, since "a restart doesn't
 * reset this". Immutable and thread-safe.
 *
 * @param start the slot's logical timestamp {@code T}, its table's {@code table_timestamp}
 * @param rowCount the rows in the slot
 * @param dataWeight their data weight
 */
public record TableSlot(Instant start, long rowCount, long dataWeight) {
    /**
     * Checks the fields.
     *
     * @param start the logical timestamp; not null
     * @param rowCount the rows, {@code >= 0}
     * @param dataWeight the data weight, {@code >= 0}
     * @throws IllegalArgumentException if a count is negative
     */
    public TableSlot {
        Objects.requireNonNull(start, "start");
        if (rowCount < 0 || dataWeight < 0) {
            throw new IllegalArgumentException("slot rowCount and dataWeight must be >= 0 but were " + rowCount + " and "
                    + dataWeight);
        }
    }

    /**
     * The first slot of a directory without tables: the period containing {@code wallClock}, on the
     * grid of multiples of {@code table_period} since the epoch.
     *
     * @param wallClock the current time; not null
     * @param tablePeriod the table period; not null, positive
     * @return an empty slot
     */
    public static TableSlot first(Instant wallClock, Duration tablePeriod) {
        long period = tablePeriod.toNanos();
        long now = wallClock.getEpochSecond() * 1_000_000_000L + wallClock.getNano();
        return new TableSlot(Instant.EPOCH.plusNanos(Math.floorDiv(now, period) * period), 0, 0);
    }

    /**
     * The slot after the most recent table of the directory: "the new owner continues the grid after
     * the most recent table in the directory".
     *
     * @param lastTableTimestamp the newest {@code table_timestamp} in the directory; not null
     * @param tablePeriod the table period; not null
     * @return an empty slot
     */
    public static TableSlot after(Instant lastTableTimestamp, Duration tablePeriod) {
        return new TableSlot(lastTableTimestamp.plus(tablePeriod), 0, 0);
    }

    /**
     * The slot with one more message.
     *
     * @param weight the message's weight, {@code >= 0}
     * @return the new slot
     */
    public TableSlot withMessage(long weight) {
        return new TableSlot(start, rowCount + 1, Math.addExact(dataWeight, weight));
    }

    /**
     * Whether the slot holds no message.
     *
     * @return true if empty
     */
    public boolean isEmpty() {
        return rowCount == 0;
    }

    /**
     * The slot's time boundary, {@code T + table_period}.
     *
     * @param tablePeriod the table period; not null
     * @return the end of the slot
     */
    public Instant end(Duration tablePeriod) {
        return start.plus(tablePeriod);
    }

    /**
     * Whether the sequence runs ahead of the wall clock: {@code T > wall clock}.
     *
     * @param wallClock the current time; not null
     * @return true if ahead
     */
    public boolean aheadOf(Instant wallClock) {
        return start.isAfter(wallClock);
    }

    /**
     * Decides what to do with the slot now.
     *
     * @param parameters the sink's parameters; not null
     * @param wallClock the current time; not null
     * @param inputSystemWatermark the input stream's system watermark; null or {@link Instant#EPOCH} when unknown
     * @return {@link SlotClose#BY_LIMIT} before {@link SlotClose#BY_TIME} for a non-empty slot,
     *     {@link SlotClose#EMPTY} for an empty one under the empty-slot rule, else {@link SlotClose#NONE}
     */
    public SlotClose decide(ArrivalOrderSinkParameters parameters, Instant wallClock,
            @Nullable Instant inputSystemWatermark) {
        Duration period = parameters.tablePeriod();
        if (!isEmpty()) {
            if (parameters.limitReached(rowCount, dataWeight)) {
                return SlotClose.BY_LIMIT;
            }
            return wallClock.isBefore(end(period)) ? SlotClose.NONE : SlotClose.BY_TIME;
        }
        boolean known = inputSystemWatermark != null && !inputSystemWatermark.equals(Instant.EPOCH);
        return !start.isAfter(wallClock) && known && inputSystemWatermark.isAfter(end(period))
                ? SlotClose.EMPTY : SlotClose.NONE;
    }

    /**
     * The next slot, after this one is written: {@code T + table_period}, empty.
     *
     * @param tablePeriod the table period; not null
     * @return the next slot
     */
    public TableSlot next(Duration tablePeriod) {
        return new TableSlot(end(tablePeriod), 0, 0);
    }

    /** The sum of two non-negative weights, held at {@link Long#MAX_VALUE} instead of overflowing. */
    static long addWeights(long a, long b) {
        long sum = a + b;
        return sum < 0 ? Long.MAX_VALUE : sum;
    }
}
