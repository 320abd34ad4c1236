package io.flowkafka.connectors.statictable;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import org.junit.jupiter.api.Test;

/** The input system watermark from the outbox partitions' watermarks: their minimum, unknown if one is. */
class InputWatermarkTest {
    @Test
    void shouldBeTheMinimumOverAllPartitionsAndUnknownWhileOneIsUnknown() {
        InputWatermark w = new InputWatermark();
        assertThat(w.current()).as("nothing reported").isNull();
        w.update(0, 2_000, 3);
        w.update(2, 1_000, 3);
        assertThat(w.current()).as("partition 1 unknown").isNull();
        w.update(1, 5_000, 3);
        assertThat(w.current()).isEqualTo(Instant.EPOCH.plusNanos(1_000));
        w.update(2, 500, 3);
        assertThat(w.current()).as("a watermark never goes back").isEqualTo(Instant.EPOCH.plusNanos(1_000));
        w.forget(1);
        assertThat(w.current()).as("released: unknown again").isNull();
    }

    @Test
    void shouldCarryACompletedInput() {
        InputWatermark w = new InputWatermark();
        w.update(0, Long.MAX_VALUE, 1);
        assertThat(w.current()).isEqualTo(Instant.EPOCH.plusNanos(Long.MAX_VALUE));
    }
}
