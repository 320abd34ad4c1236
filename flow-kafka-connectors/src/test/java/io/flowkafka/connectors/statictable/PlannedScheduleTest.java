package io.flowkafka.connectors.statictable;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@link PlannedSchedule} and {@link TableReadPlan}: each rule of reference 001, "Planned read timestamps". */
class PlannedScheduleTest {
    static final Instant NOW = Instant.parse("2026-12-03T10:00:00Z");
    static final ReadLimits TEN_ROWS_PER_SECOND = new ReadLimits(10, 0);
    static final LocatedTable TABLE = new LocatedTable("2026-12-03T00:00:00Z", Instant.parse("2026-12-03T00:00:00Z"));

    /**
     * "Set use_planned_timestamps = %true ... to set both SystemTimestamp and EventTimestamp to the
     * planned start of each row range. The timestamp is proportional to the fraction of rows already
     * assigned for reading."
     */
    @Test
    void shouldPlanTimestampsProportionalToTheFractionOfRowsAssigned() {
        PlannedSchedule s = PlannedSchedule.plan(1000, 0, NOW, TEN_ROWS_PER_SECOND);
        assertThat(s.duration()).isEqualTo(Duration.ofSeconds(100));
        assertThat(s.timestampAt(0)).isEqualTo(NOW);
        assertThat(s.timestampAt(250)).isEqualTo(NOW.plusSeconds(25));
        assertThat(s.timestampAt(500)).isEqualTo(NOW.plusSeconds(50));
        assertThat(s.timestampAt(1000)).isEqualTo(NOW.plusSeconds(100));
    }

    /**
     * "The controller fixes the start time and total read duration when it starts a table, using the
     * current read limits": the slower of the row and byte limits sets the duration.
     */
    @Test
    void shouldFixTheDurationFromTheCurrentReadLimits() {
        assertThat(PlannedSchedule.plan(1000, 5_000_000, NOW, new ReadLimits(10, 1_000_000)).duration())
                .isEqualTo(Duration.ofSeconds(100));
        assertThat(PlannedSchedule.plan(1000, 500_000_000, NOW, new ReadLimits(10, 1_000_000)).duration())
                .isEqualTo(Duration.ofSeconds(500));
        assertThat(PlannedSchedule.plan(1000, 5, NOW, ReadLimits.UNLIMITED).timestampAt(999)).isEqualTo(NOW);
    }

    /** "Process restarts preserve the schedule." */
    @Test
    void shouldPreserveTheScheduleAcrossARestart() {
        PlannedSchedule s = PlannedSchedule.plan(123_456_789, 9_876_543_210L, NOW.plusNanos(17), new ReadLimits(1000, 0));
        byte[] stored = s.toBytes();
        assertThat(stored).hasSize(PlannedSchedule.ENCODED_SIZE);
        PlannedSchedule restored = PlannedSchedule.fromBytes(stored);
        assertThat(restored).isEqualTo(s);
        assertThat(restored.timestampAt(61_728_394)).isEqualTo(s.timestampAt(61_728_394));

        TableReadPlan plan = TableReadPlan.start(TABLE, true, 1000, 0, NOW, TEN_ROWS_PER_SECOND);
        assertThat(TableReadPlan.fromBytes(plan.toBytes())).isEqualTo(plan);
        TableReadPlan locator = TableReadPlan.start(TABLE, false, 1000, 0, NOW, TEN_ROWS_PER_SECOND);
        assertThat(TableReadPlan.fromBytes(locator.toBytes())).isEqualTo(locator);
    }

    /**
     * "Switching replicas, returning to a replica, or rereading a table replans the remaining ranges
     * from the current time and read limits."
     */
    @Test
    void shouldReplanTheRemainingRangesFromTheCurrentTimeAndLimits() {
        Instant later = NOW.plusSeconds(300);
        // Rows [200, 300) and [600, 1000) remain; [300, 600) finished before the reread.
        List<RowRange> remaining = List.of(new RowRange(200, 300), new RowRange(600, 1000));
        PlannedSchedule r = PlannedSchedule.replan(remaining, 1000, 2000, later, new ReadLimits(20, 0));
        assertThat(r.rowCount()).isEqualTo(500);
        assertThat(r.duration()).isEqualTo(Duration.ofSeconds(25)); // 500 rows at 20 rows/s
        assertThat(r.timestampAt(0)).isEqualTo(later);
        assertThat(r.timestampAt(100)).as("[600, ...) follows [200, 300) directly").isEqualTo(later.plusSeconds(5));
        // The byte limit applies to the remaining rows' share of the table's weight: 1000 of 2000 bytes.
        assertThat(PlannedSchedule.replan(List.of(new RowRange(500, 1000)), 1000, 2000, later, new ReadLimits(0, 10))
                .duration()).isEqualTo(Duration.ofSeconds(100));
        // The plan keeps the table's choice of timestamps.
        TableReadPlan planned = TableReadPlan.start(TABLE, true, 1000, 2000, NOW, TEN_ROWS_PER_SECOND);
        assertThat(planned.replan(remaining, 1000, 2000, later, TEN_ROWS_PER_SECOND).timestampAt(0)).isEqualTo(later);
    }

    /** "Timestamps may be in the future." */
    @Test
    void shouldPlanTimestampsInTheFuture() {
        PlannedSchedule s = PlannedSchedule.plan(3600, 0, NOW, new ReadLimits(1, 0));
        assertThat(s.timestampAt(3599)).isEqualTo(NOW.plusSeconds(3599));
    }

    /** "Minimum timestamps track unfinished ranges, including those not yet distributed." */
    @Test
    void shouldTrackTheMinimumOverUnfinishedAndUndistributedRanges() {
        PlannedSchedule s = PlannedSchedule.plan(1000, 0, NOW, TEN_ROWS_PER_SECOND);
        List<Instant> unfinished = List.of(s.timestampAt(300), s.timestampAt(100));
        assertThat(s.minimumTimestamp(unfinished, 600)).contains(NOW.plusSeconds(10));
        // Every handed-out range finished: the next range to hand out holds the minimum.
        assertThat(s.minimumTimestamp(List.of(), 600)).contains(NOW.plusSeconds(60));
        // Nothing distributed yet: the minimum is the table's start.
        assertThat(s.minimumTimestamp(List.of(), 0)).contains(NOW);
        // All handed out: only the unfinished ranges count; then nothing.
        assertThat(s.minimumTimestamp(List.of(s.timestampAt(900)), 1000)).contains(NOW.plusSeconds(90));
        assertThat(s.minimumTimestamp(List.of(), 1000)).isEmpty();
    }

    /**
     * "The option is disabled by default. Enabling or disabling it takes effect from the next table.
     * After disabling the option, the next table uses locator timestamps again."
     */
    @Test
    void shouldApplyAnOptionChangeFromTheNextTable() {
        TableReadPlan first = TableReadPlan.start(TABLE, false, 1000, 0, NOW, TEN_ROWS_PER_SECOND);
        assertThat(first.planned()).isFalse();
        assertThat(first.timestampAt(500)).isEqualTo(TABLE.timestamp());
        // The option is switched on while the first table is read: its plan does not change, and a
        // reread keeps locator timestamps.
        assertThat(first.replan(List.of(new RowRange(500, 1000)), 1000, 0, NOW.plusSeconds(5), TEN_ROWS_PER_SECOND))
                .isEqualTo(first);
        LocatedTable nextTable = new LocatedTable("2026-12-04T00:00:00Z", Instant.parse("2026-12-04T00:00:00Z"));
        TableReadPlan second = TableReadPlan.start(nextTable, true, 1000, 0, NOW.plusSeconds(60), TEN_ROWS_PER_SECOND);
        assertThat(second.timestampAt(500)).isEqualTo(NOW.plusSeconds(110));
        // Switched off during the second table: it stays planned; the third uses the locator again.
        TableReadPlan third = TableReadPlan.start(TABLE, false, 10, 0, NOW, TEN_ROWS_PER_SECOND);
        assertThat(second.planned()).isTrue();
        assertThat(third.timestampAt(5)).isEqualTo(TABLE.timestamp());
    }

    @Test
    void shouldRejectAssignedRowsOutsideThePlanAndForeignBytes() {
        PlannedSchedule s = PlannedSchedule.plan(10, 0, NOW, TEN_ROWS_PER_SECOND);
        assertThatThrownBy(() -> s.timestampAt(11)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("assigned rows must lie in [0, 10] but were 11");
        assertThatThrownBy(() -> PlannedSchedule.fromBytes(new byte[3])).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("planned schedule");
    }
}
