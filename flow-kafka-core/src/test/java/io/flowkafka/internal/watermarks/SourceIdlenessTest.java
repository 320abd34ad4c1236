package io.flowkafka.internal.watermarks;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

/** The clock source idleness is measured on: the wall clock less the time sources were paused. */
class SourceIdlenessTest {
    @Test
    void shouldBeTheWallClockWhileNeverPaused() {
        SourceIdleness p = new SourceIdleness();
        assertThat(p.activeMs(1_000)).isEqualTo(1_000);
        assertThat(p.activeMs(5_000)).isEqualTo(5_000);
        assertThat(p.paused()).isFalse();
    }

    @Test
    void shouldStandStillWhilePausedAndGoOnFromThereAfterTheResume() {
        SourceIdleness p = new SourceIdleness();
        p.pause(10_000);
        assertThat(p.paused()).isTrue();
        assertThat(p.activeMs(10_000)).isEqualTo(10_000);
        assertThat(p.activeMs(70_000)).as("a minute paused is no minute of silence").isEqualTo(10_000);
        p.resume(70_000);
        assertThat(p.paused()).isFalse();
        assertThat(p.activeMs(70_500)).isEqualTo(10_500);
    }

    @Test
    void shouldAddUpSeveralPausesAndIgnoreARepeatedPauseOrResume() {
        SourceIdleness p = new SourceIdleness();
        p.pause(1_000);
        p.pause(2_000); // already paused: the pause began at 1 s
        p.resume(3_000);
        p.resume(4_000); // not paused: nothing
        p.pause(10_000);
        p.resume(15_000);
        assertThat(p.activeMs(20_000)).isEqualTo(20_000 - 2_000 - 5_000);
    }

    @Test
    void shouldKeepTheClockStillThroughADrainWhateverResumeSays() {
        SourceIdleness p = new SourceIdleness();
        p.pause(1_000);
        p.drain(2_000); // a drain of a paused runtime
        p.resume(3_000); // e.g. a resume() racing with the drain: the drain keeps the sources paused
        assertThat(p.paused()).isTrue();
        assertThat(p.activeMs(60_000)).isEqualTo(1_000);

        SourceIdleness q = new SourceIdleness();
        q.drain(5_000);
        q.resume(6_000);
        assertThat(q.activeMs(9_000)).as("a drain is never undone").isEqualTo(5_000);
    }

    @Test
    void shouldTellWhichPartitionsHaveRecordsWaitingUntilForgotten() {
        SourceIdleness p = new SourceIdleness();
        TopicPartition a = new TopicPartition("a", 0);
        TopicPartition b = new TopicPartition("a", 1);
        p.recordsWaiting(a, true);
        p.recordsWaiting(b, true);
        p.recordsWaiting(b, false);
        assertThat(p.waiting(a)).isTrue();
        assertThat(p.waiting(b)).isFalse();
        p.forget(List.of(a));
        assertThat(p.waiting(a)).isFalse();
    }

    @Test
    void shouldKeepAPartitionThatWasIdleBeforeThePauseIdleAndOneThatWasNotNotIdle() {
        // how ComputationProcessor uses it: idle = activeMs(now) - lastRecordActiveMs >= idle duration
        long idleMs = 60_000;
        SourceIdleness p = new SourceIdleness();
        long quietSince = p.activeMs(0); // a partition silent since 0
        long busyUntil = p.activeMs(100_000); // one that read a record at 100 s
        p.pause(110_000);
        long atResume = p.activeMs(400_000); // five minutes later
        p.resume(400_000);
        assertThat(atResume - quietSince).as("idle before the pause: still idle").isGreaterThanOrEqualTo(idleMs);
        assertThat(atResume - busyUntil).as("10 s of silence before the pause, none during it").isEqualTo(10_000);
        assertThat(p.activeMs(450_000) - busyUntil).as("idle 50 s after the resume, with 10 s before the pause")
                .isEqualTo(idleMs);
    }
}
