package io.flowkafka.connectors.statictable;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Instant;
import java.util.Collection;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * How the static-table source stamps the rows of the table it reads: fixed when the table starts,
 * so that it keeps reference 001's rule "Enabling or disabling it takes effect from the next table.
 * After disabling the option, the next table uses locator timestamps again." A change of
 * {@code use_planned_timestamps} while a table is read leaves this plan as it is; the next
 * {@link #start} reads the option again.
 *
 * <p>With a schedule, a range's SystemTimestamp and EventTimestamp are its planned instant;
 * without one, both are the locator's timestamp of the table. Immutable; encodes to a few bytes
 * ({@link #toBytes()}) for a changelogged store.
 *
 * @param table the table name
 * @param locatorTimestamp the timestamp the {@link TableTimestampLocator} found
 * @param schedule the planned schedule, or null when the table uses locator timestamps
 */
public record TableReadPlan(String table, Instant locatorTimestamp, @Nullable PlannedSchedule schedule) {
    /**
     * Checks the fields.
     *
     * @param table the table name; not null
     * @param locatorTimestamp the locator's timestamp; not null
     * @param schedule the schedule; null for locator timestamps
     */
    public TableReadPlan {
        Objects.requireNonNull(table, "table");
        Objects.requireNonNull(locatorTimestamp, "locatorTimestamp");
    }

    /**
     * Fixes the plan of a table as it starts. {@code use_planned_timestamps} is disabled by default;
     * the value passed here is the option's value at this table's start.
     *
     * @param table the located table; not null
     * @param usePlannedTimestamps the option's current value
     * @param rowCount the table's rows
     * @param dataWeight the table's data weight
     * @param now the current time; not null
     * @param limits the current read limits; not null
     * @return the plan
     */
    public static TableReadPlan start(LocatedTable table, boolean usePlannedTimestamps, long rowCount,
            long dataWeight, Instant now, ReadLimits limits) {
        return new TableReadPlan(table.name(), table.timestamp(),
                usePlannedTimestamps ? PlannedSchedule.plan(rowCount, dataWeight, now, limits) : null);
    }

    /**
     * Whether this table uses planned timestamps.
     *
     * @return true if it has a schedule
     */
    public boolean planned() {
        return schedule != null;
    }

    /**
     * The SystemTimestamp and EventTimestamp of the range handed out after {@code assignedRows} rows
     * of this plan.
     *
     * @param assignedRows the rows of this plan already assigned
     * @return its planned instant, or the locator's timestamp
     */
    public Instant timestampAt(long assignedRows) {
        return schedule == null ? locatorTimestamp : schedule.timestampAt(assignedRows);
    }

    /**
     * Replans the remaining ranges after a reread, keeping the choice made at start: "rereading a
     * table replans the remaining ranges from the current time and read limits". A plan with
     * locator timestamps stays as it is.
     *
     * @param remaining the ranges not yet read; not null
     * @param tableRowCount the table's rows
     * @param tableDataWeight the table's data weight
     * @param now the current time; not null
     * @param limits the current read limits; not null
     * @return the new plan, whose count of assigned rows starts again at 0
     */
    public TableReadPlan replan(Collection<RowRange> remaining, long tableRowCount, long tableDataWeight, Instant now,
            ReadLimits limits) {
        return schedule == null ? this : new TableReadPlan(table, locatorTimestamp,
                PlannedSchedule.replan(remaining, tableRowCount, tableDataWeight, now, limits));
    }

    /**
     * Encodes the plan.
     *
     * @return the encoding, read back by {@link #fromBytes}
     */
    public byte[] toBytes() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            out.writeByte(1);
            out.writeUTF(table);
            out.writeLong(locatorTimestamp.getEpochSecond());
            out.writeInt(locatorTimestamp.getNano());
            out.writeBoolean(schedule != null);
            if (schedule != null) {
                out.write(schedule.toBytes());
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return bytes.toByteArray();
    }

    /**
     * Decodes {@link #toBytes()}.
     *
     * @param bytes the encoding; not null
     * @return the plan
     * @throws IllegalArgumentException if the bytes are not an encoded plan
     */
    public static TableReadPlan fromBytes(byte[] bytes) {
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes))) {
            if (in.readByte() != 1) {
                throw new IllegalArgumentException("unknown table read plan version " + bytes[0]);
            }
            String table = in.readUTF();
            Instant locator = Instant.ofEpochSecond(in.readLong(), in.readInt());
            PlannedSchedule schedule = null;
            if (in.readBoolean()) {
                schedule = PlannedSchedule.fromBytes(in.readNBytes(PlannedSchedule.ENCODED_SIZE));
            }
            return new TableReadPlan(table, locator, schedule);
        } catch (IOException e) {
            throw new IllegalArgumentException("not an encoded table read plan: " + e.getMessage(), e);
        }
    }
}
