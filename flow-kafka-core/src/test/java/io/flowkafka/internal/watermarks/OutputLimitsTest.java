package io.flowkafka.internal.watermarks;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** Output limits (DESIGN.md): a stream is blocked while its measured backlog exceeds its limit. */
class OutputLimitsTest {
    @Test
    void shouldBlockAStreamWhileItsBacklogExceedsItsLimit() {
        OutputLimits limits = new OutputLimits(Map.of("audit", 3L));
        assertThat(limits.isBlocked("audit")).as("before the first measurement").isFalse();
        limits.backlog("audit", 5);
        assertThat(limits.isBlocked("audit")).isTrue();
        assertThat(limits.backlogOf("audit")).isEqualTo(5);
        limits.backlog("audit", 3);
        assertThat(limits.isBlocked("audit")).as("at the limit: not over it").isFalse();
        limits.backlog("audit", 4);
        assertThat(limits.isBlocked("audit")).isTrue();
        limits.backlog("audit", 0);
        assertThat(limits.isBlocked("audit")).as("drained").isFalse();
        assertThat(limits.backlogOf("audit")).isZero();
    }

    @Test
    void shouldNeverBlockAStreamWithoutALimitUnlessToldTo() {
        OutputLimits limits = new OutputLimits(Map.of("audit", 3L));
        limits.backlog("fired", 1_000_000);
        assertThat(limits.isBlocked("fired")).isFalse();
        limits.setBlocked("fired", true);
        assertThat(limits.isBlocked("fired")).isTrue();
        limits.setBlocked("fired", false);
        assertThat(limits.isBlocked("fired")).isFalse();
    }

    @Test
    void shouldKeepAStreamBlockedByHandWhileItsBacklogIsMeasuredUnderItsLimit() {
        // FlowRuntime.blockOutputStream holds a stream's timers until released, whatever the measurement says
        OutputLimits limits = new OutputLimits(Map.of("audit", 3L));
        limits.setBlocked("audit", true);
        limits.backlog("audit", 0);
        assertThat(limits.isBlocked("audit")).as("held by hand, backlog under the limit").isTrue();
        limits.backlog("audit", 5);
        limits.setBlocked("audit", false);
        assertThat(limits.isBlocked("audit")).as("released by hand, backlog over the limit").isTrue();
        limits.backlog("audit", 1);
        assertThat(limits.isBlocked("audit")).as("released and drained").isFalse();
    }
}
