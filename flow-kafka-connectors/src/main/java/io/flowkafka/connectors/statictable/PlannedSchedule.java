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
 * rows already assigned for reading": the range handed out after {@code assigned} of the plan's
 * {@code rowCount} rows is planned at {@code start + duration * assigned / rowCount}, and that
 * instant is both its SystemTimestamp and its EventTimestamp.
 *
 * <p>The schedule is fixed by {@link #plan} when the table starts, "using the current read limits",
 * and changes only by {@link #replan} (a reread, a switch of replica): later limit changes do not
 * move it. It counts assigned rows, not row indexes, so a replan over the remaining ranges, however
 * scattered, spreads them evenly from the replan's start. It encodes to {@value #ENCODED_SIZE} bytes
 * ({@link #toBytes()}) for a changelogged store: "Process restarts preserve the schedule". The count
 * of rows assigned so far is the source's progress, kept beside it. Planned instants may lie in the
 * future.
 *
 * @param rowCount the rows the plan hands out: the table's, or those remaining at a replan
 * @param start the planned instant of the first range
 * @param duration the planned time to hand out all {@code rowCount} rows
 */
public record PlannedSchedule(long rowCount, Instant start, Duration duration) {
    /** The size of {@link #toBytes()}. */
    public static final int ENCODED_SIZE = 1 + 8 + 8 + 4 + 8;
    private static final byte VERSION = 1;

    /**
     * Checks the fields.
     *
     * @param rowCount the rows of the plan, {@code >= 0}
     * @param start the planned instant of the first range; not null
     * @param duration the read duration; not null, not negative
     * @throws IllegalArgumentException if the row count or the duration is negative
     */
    public PlannedSchedule {
        if (rowCount < 0) {
            throw new IllegalArgumentException("schedule rowCount must be >= 0 but was " + rowCount);
        }
        Objects.requireNonNull(start, "start");
        Objects.requireNonNull(duration, "duration");
        if (duration.isNegative()) {
            throw new IllegalArgumentException("schedule duration must be >= 0 but was " + duration);
        }
    }

    /**
     * Plans rows from {@code now}, over the time the limits allow for them: a table as it starts.
     *
     * @param rowCount the rows to hand out, {@code >= 0}
     * @param dataWeight their data weight in bytes, {@code >= 0}
     * @param now the current time; not null
     * @param limits the current read limits; not null
     * @return the schedule
     */
    public static PlannedSchedule plan(long rowCount, long dataWeight, Instant now, ReadLimits limits) {
        return new PlannedSchedule(rowCount, now, limits.durationOf(rowCount, dataWeight));
    }

    /**
     * Replans the remaining ranges "from the current time and read limits", as a reread or a switch
     * of replica does. Their data weight is taken pro rata from the table's.
     *
     * @param remaining the ranges not yet read, assigned or not; not null
     * @param tableRowCount the table's rows, {@code >= 0}
     * @param tableDataWeight the table's data weight, {@code >= 0}
     * @param now the current time; not null
     * @param limits the current read limits; not null
     * @return a schedule over the remaining rows, whose count of assigned rows starts again at 0
     */
    public static PlannedSchedule replan(Collection<RowRange> remaining, long tableRowCount, long tableDataWeight,
            Instant now, ReadLimits limits) {
        long rows = remaining.stream().mapToLong(RowRange::size).sum();
        long weight = tableRowCount == 0 ? 0 : scale(tableDataWeight, Math.min(rows, tableRowCount), tableRowCount);
        return plan(rows, weight, now, limits);
    }

    /**
     * The planned instant of the range handed out after {@code assignedRows} rows of this plan.
     *
     * @param assignedRows the rows of this plan already assigned, in {@code [0, rowCount]}
     * @return the planned instant
     * @throws IllegalArgumentException if {@code assignedRows} is outside the plan
     */
    public Instant timestampAt(long assignedRows) {
        if (assignedRows < 0 || assignedRows > rowCount) {
            throw new IllegalArgumentException("assigned rows must lie in [0, " + rowCount + "] but were "
                    + assignedRows);
        }
        return rowCount == 0 ? start : start.plusNanos(scale(duration.toNanos(), assignedRows, rowCount));
    }

    /**
     * The minimum timestamp of the table: "Minimum timestamps track unfinished ranges, including
     * those not yet distributed" — the earliest of the planned instants of the ranges handed out and
     * not finished, and of the next range to hand out while rows remain.
     *
     * @param unfinished the planned instants of the ranges handed out and not finished; not null
     * @param assignedRows the rows of this plan already assigned, in {@code [0, rowCount]}
     * @return the minimum, or empty once every range is handed out and finished
     */
    public Optional<Instant> minimumTimestamp(Collection<Instant> unfinished, long assignedRows) {
        Optional<Instant> next = assignedRows < rowCount ? Optional.of(timestampAt(assignedRows)) : Optional.empty();
        return unfinished.stream().min(Instant::compareTo).map(u -> next.filter(n -> n.isBefore(u)).orElse(u))
                .or(() -> next);
    }

    /**
     * Encodes the schedule in {@value #ENCODED_SIZE} bytes.
     *
     * @return the encoding, read back by {@link #fromBytes}
     */
    public byte[] toBytes() {
        return ByteBuffer.allocate(ENCODED_SIZE).put(VERSION).putLong(rowCount).putLong(start.getEpochSecond())
                .putInt(start.getNano()).putLong(duration.toNanos()).array();
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
        long rows = b.getLong();
        Instant start = Instant.ofEpochSecond(b.getLong(), b.getInt());
        return new PlannedSchedule(rows, start, Duration.ofNanos(b.getLong()));
    }

    private static long scale(long value, long numerator, long denominator) {
        return BigInteger.valueOf(value).multiply(BigInteger.valueOf(numerator))
                .divide(BigInteger.valueOf(denominator)).longValueExact();
    }
}
