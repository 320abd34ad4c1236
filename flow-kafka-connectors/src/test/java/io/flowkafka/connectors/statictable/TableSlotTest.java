package io.flowkafka.connectors.statictable;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/** {@link TableSlot} and {@link ArrivalOrderSinkParameters}: reference 001, "Writing to static tables in arrival order". */
class TableSlotTest {
    static final Duration PERIOD = Duration.ofMinutes(5);
    static final Instant T = Instant.parse("2026-12-03T10:00:00Z");
    static final ArrivalOrderSinkParameters LIMITS = new ArrivalOrderSinkParameters(PERIOD, Duration.ofDays(1), 3L,
            1000L);

    /** "The sink creates a continuous sequence of tables with a fixed table_period step." */
    @Test
    void shouldStepTheSequenceByOnePeriod() {
        TableSlot first = TableSlot.first(Instant.parse("2026-12-03T10:03:17.5Z"), PERIOD);
        assertThat(first.start()).isEqualTo(T);
        assertThat(first.next(PERIOD).start()).isEqualTo(T.plus(PERIOD));
        assertThat(TableSlot.after(T, PERIOD).start()).isEqualTo(T.plus(PERIOD));
    }

    /** "A non-empty current slot is closed either at the time boundary or when max_row_count/max_data_weight is reached." */
    @Test
    void shouldCloseANonEmptySlotAtTheTimeBoundaryOrAtALimit() {
        TableSlot one = new TableSlot(T, 0, 0).withMessage(10);
        assertThat(one.decide(LIMITS, T.plus(PERIOD).minusNanos(1), null)).isEqualTo(SlotClose.NONE);
        assertThat(one.decide(LIMITS, T.plus(PERIOD), null)).isEqualTo(SlotClose.BY_TIME);
        TableSlot three = one.withMessage(10).withMessage(10);
        assertThat(three.decide(LIMITS, T, null)).isEqualTo(SlotClose.BY_LIMIT);
        TableSlot heavy = new TableSlot(T, 0, 0).withMessage(1000);
        assertThat(heavy.decide(LIMITS, T, null)).isEqualTo(SlotClose.BY_LIMIT);
        assertThat(new TableSlot(T, 0, 0).withMessage(999).decide(LIMITS, T, null)).isEqualTo(SlotClose.NONE);
    }

    /**
     * "closing by limit also shifts the next logical timestamp by one period, so the sequence can run
     * ahead of the wall clock. While the sequence is ahead of the wall clock, closing by time doesn't
     * happen ... The size of the delay is proportional to the burst: the number of slots closed by
     * limit multiplied by table_period."
     */
    @Test
    void shouldRunAheadAfterLimitClosesAndNotCloseByTimeUntilTheWallClockCatchesUp() {
        Instant wall = T.plusSeconds(10);
        TableSlot slot = new TableSlot(T, 0, 0);
        int closedByLimit = 0;
        for (int i = 0; i < 4; i++) { // a burst of 4 full slots within 10 seconds
            slot = slot.withMessage(1).withMessage(1).withMessage(1);
            assertThat(slot.decide(LIMITS, wall, null)).isEqualTo(SlotClose.BY_LIMIT);
            slot = slot.next(PERIOD);
            closedByLimit++;
        }
        assertThat(slot.start()).isEqualTo(T.plus(PERIOD.multipliedBy(closedByLimit)));
        assertThat(slot.aheadOf(wall)).isTrue();
        TableSlot partial = slot.withMessage(1);
        // Without the burst this batch would close at T + PERIOD; now it waits closedByLimit periods longer.
        assertThat(partial.decide(LIMITS, T.plus(PERIOD), null)).isEqualTo(SlotClose.NONE);
        assertThat(partial.decide(LIMITS, partial.start(), null)).isEqualTo(SlotClose.NONE);
        assertThat(partial.decide(LIMITS, T.plus(PERIOD.multipliedBy(closedByLimit + 1)), null))
                .isEqualTo(SlotClose.BY_TIME);
    }

    /**
     * "An empty slot T is created strictly in order, only if T <= wall clock and the known non-zero
     * system watermark of the input stream is strictly greater than T + table_period. A watermark
     * equal to the boundary is therefore not enough, and empty tables aren't created in the future."
     */
    @Test
    void shouldCreateAnEmptySlotOnlyUnderTheEmptySlotRule() {
        TableSlot empty = new TableSlot(T, 0, 0);
        Instant boundary = T.plus(PERIOD);
        Instant wall = boundary.plusSeconds(60);
        assertThat(empty.decide(LIMITS, wall, boundary.plusNanos(1))).isEqualTo(SlotClose.EMPTY);
        assertThat(empty.decide(LIMITS, wall, boundary)).as("equal to the boundary").isEqualTo(SlotClose.NONE);
        assertThat(empty.decide(LIMITS, wall, null)).as("unknown watermark").isEqualTo(SlotClose.NONE);
        assertThat(empty.decide(LIMITS, wall, Instant.EPOCH)).as("zero watermark").isEqualTo(SlotClose.NONE);
        // T <= wall clock: T itself is enough, a wall clock before T is not (no empty table in the future).
        assertThat(empty.decide(LIMITS, T, boundary.plusSeconds(1))).isEqualTo(SlotClose.EMPTY);
        assertThat(empty.decide(LIMITS, T.minusNanos(1), boundary.plusSeconds(1))).isEqualTo(SlotClose.NONE);
    }

    /** "The mandatory table_ttl parameter" ... "A spec with a table_ttl / table_period ratio greater than 40000 is rejected". */
    @Test
    void shouldRequireTableTtlAndRejectARatioAbove40000() {
        assertThatThrownBy(() -> new ArrivalOrderSinkParameters(PERIOD, null, null, null))
                .isInstanceOf(NullPointerException.class).hasMessageContaining("table_ttl is mandatory");
        Duration second = Duration.ofSeconds(1);
        assertThat(new ArrivalOrderSinkParameters(second, Duration.ofSeconds(40_000), null, null).tableTtl())
                .isEqualTo(Duration.ofSeconds(40_000));
        assertThatThrownBy(() -> new ArrivalOrderSinkParameters(second, Duration.ofSeconds(40_000).plusNanos(1), null,
                null)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("table_ttl / table_period must be <= 40000");
        assertThatThrownBy(() -> new ArrivalOrderSinkParameters(Duration.ZERO, second, null, null))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("table_period must be > 0");
        assertThatThrownBy(() -> new ArrivalOrderSinkParameters(second, second, 0L, null))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("max_row_count must be > 0");
    }

    /**
     * "the Cypress expiration_time set on each table is max(table_timestamp, table-creation time) +
     * table_ttl ... a catch-up table whose table_timestamp already lies further in the past than
     * table_ttl is clamped to expire table_ttl after it's created instead of expiring immediately."
     */
    @Test
    void shouldExpireATableTtlAfterTheLaterOfItsTimestampAndCreation() {
        Duration ttl = LIMITS.tableTtl();
        Instant created = T.plusSeconds(30);
        assertThat(LIMITS.expirationOf(T, created)).isEqualTo(created.plus(ttl));
        Instant catchUp = T.minus(Duration.ofDays(3));
        assertThat(LIMITS.expirationOf(catchUp, created)).isEqualTo(created.plus(ttl));
        Instant ahead = T.plus(PERIOD.multipliedBy(4));
        assertThat(LIMITS.expirationOf(ahead, created)).isEqualTo(ahead.plus(ttl));
    }
}
