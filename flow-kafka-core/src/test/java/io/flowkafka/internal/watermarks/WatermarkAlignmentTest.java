package io.flowkafka.internal.watermarks;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

/**
 * Flow's {@code watermark_alignment} (flow-catalog §5: "watermark_alignment with group_name,
 * drift_bound (20m)"): a member more than drift_bound ahead of its group's slowest non-idle member
 * is blocked.
 */
class WatermarkAlignmentTest {
    private static final long MIN = 60_000_000_000L;
    private static final TopicPartition VIEWS0 = new TopicPartition("views", 0);
    private static final TopicPartition VIEWS1 = new TopicPartition("views", 1);
    private static final TopicPartition CLICKS0 = new TopicPartition("clicks", 0);
    private static final TopicPartition ORDERS0 = new TopicPartition("orders", 0);

    private final WatermarkAlignment alignment = new WatermarkAlignment(
            Map.of("read_views", "g", "read_clicks", "g", "read_orders", "other"),
            Map.of("g", Duration.ofMinutes(20).toNanos(), "other", Duration.ofMinutes(5).toNanos()),
            Map.of("read_views", 60_000L, "read_clicks", 60_000L, "read_orders", 60_000L), () -> this.now);
    private long now = 1_000;

    {
        alignment.activate(); // as FlowRuntime does; the test driver never does
    }

    @Test
    void shouldBlockAMemberMoreThanTheDriftBoundAheadOfTheSlowest() {
        alignment.reportLocal("read_views", 0, 100 * MIN, false, Set.of(VIEWS0));
        alignment.reportLocal("read_clicks", 0, 120 * MIN, false, Set.of(CLICKS0));
        assertThat(alignment.blocked()).isEmpty(); // exactly the bound ahead: still allowed

        alignment.reportLocal("read_clicks", 0, 121 * MIN, false, Set.of(CLICKS0));
        assertThat(alignment.blocked()).containsExactly(CLICKS0);
        assertThat(alignment.isBlocked("read_clicks", 0)).isTrue();

        alignment.reportLocal("read_views", 0, 101 * MIN, false, Set.of(VIEWS0));
        assertThat(alignment.blocked()).isEmpty();
    }

    @Test
    void shouldTakeTheSlowestOverEveryMemberOfTheGroupOnly() {
        alignment.reportLocal("read_views", 0, 100 * MIN, false, Set.of(VIEWS0));
        alignment.reportLocal("read_views", 1, 200 * MIN, false, Set.of(VIEWS1));
        alignment.reportLocal("read_clicks", 0, 130 * MIN, false, Set.of(CLICKS0));
        alignment.reportLocal("read_orders", 0, 10 * MIN, false, Set.of(ORDERS0)); // another group: far behind, no effect

        assertThat(alignment.groupWatermark("g")).isEqualTo(100 * MIN);
        assertThat(alignment.blocked()).containsExactlyInAnyOrder(VIEWS1, CLICKS0);
    }

    @Test
    void shouldNotLetAnIdleMemberHoldTheGroupBack() {
        alignment.reportLocal("read_views", 0, 100 * MIN, false, Set.of(VIEWS0));
        alignment.reportLocal("read_clicks", 0, 300 * MIN, false, Set.of(CLICKS0));
        assertThat(alignment.blocked()).containsExactly(CLICKS0);

        alignment.reportLocal("read_views", 0, 100 * MIN, true, Set.of(VIEWS0)); // the end of its data: idle

        assertThat(alignment.blocked()).isEmpty();
    }

    @Test
    void shouldHoldTheGroupWhileAMemberHasReadNothingYet() {
        alignment.reportLocal("read_views", 0, Long.MIN_VALUE, false, Set.of(VIEWS0));
        alignment.reportLocal("read_clicks", 0, 5 * MIN, false, Set.of(CLICKS0));

        assertThat(alignment.blocked()).containsExactly(CLICKS0);
    }

    @Test
    void shouldPreferThisInstancesReportsToTheChangelogWhileItRunsTheMember() {
        alignment.reportLocal("read_views", 0, 100 * MIN, false, Set.of(VIEWS0));
        alignment.reportLocal("read_clicks", 0, 200 * MIN, false, Set.of(CLICKS0));
        alignment.reportRemote("read_views", 0, 50 * MIN, false); // a changelog record behind the local task
        assertThat(alignment.groupWatermark("g")).as("this instance's own reports win").isEqualTo(100 * MIN);

        now += WatermarkAlignment.LOCAL_AUTHORITY_MS; // read_views/0 moved to another instance: its changelog counts
        alignment.reportRemote("read_views", 0, 150 * MIN, true);
        assertThat(alignment.groupWatermark("g")).isEqualTo(200 * MIN);
        assertThat(alignment.blocked()).as("read_views/0 idle elsewhere: nothing holds read_clicks back").isEmpty();
    }

    @Test
    void shouldNeverBlockAMemberOfAnotherInstance() {
        alignment.reportLocal("read_views", 0, 100 * MIN, false, Set.of(VIEWS0));
        alignment.reportRemote("read_clicks", 0, 500 * MIN, false); // this instance reads none of it

        assertThat(alignment.blocked()).isEmpty();
        assertThat(alignment.isBlocked("read_clicks", 0)).isFalse();
    }

    @Test
    void shouldHoldTheGroupForAnExpectedMemberNeverHeardFromUntilItsIdleDurationPassed() {
        alignment.expect(Map.of("read_views", 1, "read_clicks", 1));
        alignment.reportLocal("read_clicks", 0, 5 * MIN, false, Set.of(CLICKS0)); // read_views/0 runs elsewhere, unheard

        assertThat(alignment.blocked()).containsExactly(CLICKS0);
        now = 1_000 + 59_999;
        alignment.tick();
        assertThat(alignment.blocked()).containsExactly(CLICKS0);
        now = 1_000 + 60_000;
        alignment.tick();
        assertThat(alignment.blocked()).as("unheard for idle_partitions.duration: no longer holding").isEmpty();
    }

    @Test
    void shouldNeverPauseACompletedMember() {
        alignment.reportLocal("read_views", 0, 100 * MIN, false, Set.of(VIEWS0));
        alignment.reportLocal("read_clicks", 0, Long.MAX_VALUE, true, Set.of(CLICKS0)); // a finite source read to its end

        assertThat(alignment.blocked()).isEmpty();
    }

    @Test
    void shouldBlockNothingUntilActivated() {
        WatermarkAlignment driverSide = new WatermarkAlignment(Map.of("read_views", "g", "read_clicks", "g"),
                Map.of("g", Duration.ofMinutes(20).toNanos()), Map.of("read_views", 60_000L, "read_clicks", 60_000L));
        driverSide.reportLocal("read_views", 0, 100 * MIN, false, Set.of(VIEWS0));
        driverSide.reportLocal("read_clicks", 0, 500 * MIN, false, Set.of(CLICKS0));
        assertThat(driverSide.blocked()).as("the test driver pauses nothing").isEmpty();
        assertThat(driverSide.limit("read_clicks").value()).isEqualTo(Long.MAX_VALUE);

        driverSide.activate();
        assertThat(driverSide.blocked()).containsExactly(CLICKS0);
    }

    @Test
    void shouldApplyAChangelogRecordHeldBackByLocalReportsOnceTheyLapse() {
        alignment.reportLocal("read_views", 0, 100 * MIN, false, Set.of(VIEWS0));
        alignment.reportLocal("read_clicks", 0, 200 * MIN, false, Set.of(CLICKS0));
        // read_views/0 moved to another instance, which read on and then wrote nothing new
        alignment.reportRemote("read_views", 0, 190 * MIN, false);
        assertThat(alignment.blocked()).containsExactly(CLICKS0);

        now += WatermarkAlignment.LOCAL_AUTHORITY_MS;
        alignment.tick();

        assertThat(alignment.groupWatermark("g")).isEqualTo(190 * MIN);
        assertThat(alignment.blocked()).as("the held-back record counts now: no deadlock").isEmpty();
    }

    @Test
    void shouldLetTheChangelogCountAtOnceWhenTheTaskCloses() {
        alignment.reportLocal("read_views", 0, 100 * MIN, false, Set.of(VIEWS0));
        alignment.reportLocal("read_clicks", 0, 200 * MIN, false, Set.of(CLICKS0));
        alignment.reportRemote("read_views", 0, 190 * MIN, false);

        alignment.releaseLocal("read_views", 0);

        assertThat(alignment.groupWatermark("g")).isEqualTo(190 * MIN);
        assertThat(alignment.blocked()).isEmpty();
        alignment.reportRemote("read_views", 0, 195 * MIN, false); // its next owner writes: counts at once
        assertThat(alignment.groupWatermark("g")).isEqualTo(195 * MIN);
    }

    @Test
    void shouldIgnoreAReplayedOlderChangelogRecord() {
        alignment.reportRemote("read_views", 0, 150 * MIN, false);
        alignment.reportRemote("read_views", 0, 120 * MIN, false); // the reader went back over older records
        alignment.reportLocal("read_clicks", 0, 160 * MIN, false, Set.of(CLICKS0));

        assertThat(alignment.groupWatermark("g")).isEqualTo(150 * MIN);
        assertThat(alignment.blocked()).isEmpty();
        alignment.reportRemote("read_views", 0, 150 * MIN, true); // same watermark, now idle: taken
        assertThat(alignment.groupWatermark("g")).isEqualTo(160 * MIN);
    }

    @Test
    void shouldMoveThePauseClockWhileBlockedAndWhenUnblocked() {
        WatermarkAlignment.PauseClock clicks = alignment.pauseClock("read_clicks", 0);
        alignment.reportLocal("read_views", 0, 100 * MIN, false, Set.of(VIEWS0));
        alignment.reportLocal("read_clicks", 0, 200 * MIN, false, Set.of(CLICKS0));
        assertThat(clicks.lastPausedMs()).isEqualTo(1_000);

        now = 5_000;
        alignment.tick();
        assertThat(clicks.lastPausedMs()).as("still paused: now").isEqualTo(5_000);

        now = 7_000;
        alignment.reportLocal("read_views", 0, 190 * MIN, false, Set.of(VIEWS0));
        assertThat(alignment.blocked()).isEmpty();
        assertThat(clicks.lastPausedMs()).as("when it was let go").isEqualTo(7_000);
        now = 9_000;
        alignment.tick();
        assertThat(clicks.lastPausedMs()).isEqualTo(7_000);
    }

    @Test
    void shouldIgnoreComputationsOutsideEveryGroup() {
        alignment.reportLocal("join", 0, 500 * MIN, false, Set.of(VIEWS0));

        assertThat(alignment.describe()).isEmpty();
        assertThat(alignment.aligned("join")).isFalse();
    }
}
