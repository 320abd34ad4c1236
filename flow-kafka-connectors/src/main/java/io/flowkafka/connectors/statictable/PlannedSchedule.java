package io.flowkafka.connectors.statictable;

import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.Objects;
import java.util.Optional;

/**
 * The read schedule of one static table under {@code use_planned_timestamps} (reference 001,
 * "Planned read timestamps"). It keeps the rule "The timestamp is proportional to the fraction of
 * rows already assigned for reading": row {@code r} of {@code [firstRow, endRow)} is planned at
 * {@code start + duration * (r - firstRow) / (endRow - firstRow)}, and that instant is both the
 * SystemTimestamp and the EventTimestamp of a range starting at {@code r}.
 *
 * <p>The schedule is fixed by {@link #plan} when the table starts, "using the current read limits",
 * and changes only by {@link #replan} (a reread); later limit changes do not move it. It encodes to
 * {@value #ENCODED_SIZE} bytes ({@link #toBytes()}) so the source can keep it in a changelogged store:
 * "Process restarts preserve the schedule". Planned instants may lie in the future.
 *
 * @param firstRow the first row the schedule covers (0, or where a replan started)
 * @param endRow the row count of the table
 * @param start the planned instant of {@code firstRow}
 * @param duration the planned time to read {@code [firstRow, endRow)}
 */
public record PlannedSchedule(long firstRow, long endRow, Instant start, Duration duration) {
    /** The size of {@link #toBytes()}. */
    public static final int ENCODED_SIZE = 1 + 8 + 8 + 8 + 8 + 4;
    private static final byte VERSION = 1;

    /**
     * Checks the fields.
     *
     * @param firstRow the first row, {@code >= 0}
     * @param endRow the row count, {@code >= firstRow}
     * @param start the planned instant of {@code firstRow}; not null
     * @param duration the read duration; not null, not negative
     * @throws IllegalArgumentException if the rows or the duration are out of range
     */
    public PlannedSchedule {
        if (firstRow < 0 || endRow < firstRow) {
            throw new IllegalArgumentException("schedule rows must have 0 <= firstRow <= endRow but were " + firstRow
                    + " and " + endRow);
        }
        Objects.requireNonNull(start, "start");
        Objects.requireNonNull(duration, "duration");
        if (duration.isNegative()) {
            throw new IllegalArgumentException("schedule duration must be >= 0 but was " + duration);
        }
    }

    /**
     * Plans a table when it starts: from {@code now}, over the time the limits allow for its rows
     * and data weight.
     *
     * @param rowCount the table's rows, {@code >= 0}
     * @param dataWeight the table's data weight in bytes, {@code >= 0}
     * @param now the current time; not null
     * @param limits the current read limits; not null
     * @return the schedule of rows {@code [0, rowCount)}
     */
    public static PlannedSchedule plan(long rowCount, long dataWeight, Instant now, ReadLimits limits) {
        return new PlannedSchedule(0, rowCount, now, limits.durationOf(rowCount, dataWeight));
    }

    /**
     * Replans the remaining rows from the current time and read limits, as a reread (or a switch of
     * replica) does: rows {@code [fromRow, endRow)} are planned anew from {@code now}; their data
     * weight is taken pro rata from the table's.
     *
     * @param fromRow the first row not yet read, {@code 0 <= fromRow <= endRow}
     * @param tableDataWeight the data weight of the whole table, {@code >= 0}
     * @param now the current time; not null
     * @param limits the current read limits; not null
     * @return the new schedule
     * @throws IllegalArgumentException if {@code fromRow} is outside the table
     */
    public PlannedSchedule replan(long fromRow, long tableDataWeight, Instant now, ReadLimits limits) {
        if (fromRow < 0 || fromRow > endRow) {
            throw new IllegalArgumentException("replan row must lie in [0, " + endRow + "] but was " + fromRow);
        }
        long rows = endRow - fromRow;
        long weight = endRow == 0 ? 0 : scale(tableDataWeight, rows, endRow);
        return new PlannedSchedule(fromRow, endRow, now, limits.durationOf(rows, weight));
    }

    /**
     * The planned instant of a row: proportional to the rows before it in the schedule.
     *
     * @param row a row in {@code [firstRow, endRow]}
     * @return the planned instant
     * @throws IllegalArgumentException if the row is outside the schedule
     */
    public Instant timestampOf(long row) {
        if (row < firstRow || row > endRow) {
            throw new IllegalArgumentException("row " + row + " lies outside the schedule [" + firstRow + ", " + endRow
                    + "]");
        }
        long span = endRow - firstRow;
        return span == 0 ? start : start.plusNanos(scale(duration.toNanos(), row - firstRow, span));
    }

    /**
     * The minimum timestamp the source may publish for this table: "Minimum timestamps track
     * unfinished ranges, including those not yet distributed" — the earliest planned instant among
     * the unfinished ranges and the first row not yet handed out.
     *
     * @param unfinished the ranges handed out and not finished; not null
     * @param firstUndistributedRow the first row not yet handed out, {@code endRow} when all are
     * @return the minimum, or empty once every row is finished
     */
    public Optional<Instant> minimumTimestamp(Collection<RowRange> unfinished, long firstUndistributedRow) {
        Instant min = null;
        for (RowRange r : unfinished) {
            if (r.size() > 0) {
                Instant t = timestampOf(Math.max(r.from(), firstRow));
                min = min == null || t.isBefore(min) ? t : min;
            }
        }
        if (firstUndistributedRow < endRow) {
            Instant t = timestampOf(Math.max(firstUndistributedRow, firstRow));
            min = min == null || t.isBefore(min) ? t : min;
        }
        return Optional.ofNullable(min);
    }

    /**
     * Encodes the schedule in {@value #ENCODED_SIZE} bytes.
     *
     * @return the encoding, read back by {@link #fromBytes}
     */
    public byte[] toBytes() {
        return ByteBuffer.allocate(ENCODED_SIZE).put(VERSION).putLong(firstRow).putLong(endRow)
                .putLong(start.getEpochSecond()).putLong(duration.toNanos()).putInt(start.getNano()).array();
    }

    /**
     * Decodes {@link #toBytes()}.
     *
     * @param bytes the encoding; not null
     * @return the schedule
     * @throws IllegalArgumentException if the bytes are not an encoded schedule
     */
    public static PlannedSchedule fromBytes(byte[] bytes) {
        if (bytes.length != ENCODED_SIZE || bytes[0] != VERSION) {
            throw new IllegalArgumentException("an encoded planned schedule has " + ENCODED_SIZE
                    + " bytes and version " + VERSION + " but got " + bytes.length + " bytes");
        }
        ByteBuffer b = ByteBuffer.wrap(bytes, 1, ENCODED_SIZE - 1);
        long first = b.getLong();
        long end = b.getLong();
        long seconds = b.getLong();
        long durationNanos = b.getLong();
        return new PlannedSchedule(first, end, Instant.ofEpochSecond(seconds, b.getInt()), Duration.ofNanos(durationNanos));
    }

    private static long scale(long value, long numerator, long denominator) {
        return BigInteger.valueOf(value).multiply(BigInteger.valueOf(numerator))
                .divide(BigInteger.valueOf(denominator)).longValueExact();
    }
}
