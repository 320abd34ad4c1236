package io.flowkafka.connectors.statictable;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The input system watermark from the partitions' reports, shared through the directory: their minimum, unknown if
 * one is.
 */
class InputWatermarkTest {
    @TempDir
    Path dir;

    @Test
    void shouldBeTheMinimumOverAllPartitionsAndUnknownWhileOneIsUnknown() throws Exception {
        InputWatermark w = new InputWatermark(dir);
        assertThat(w.current()).as("nothing reported").isNull();
        w.update(0, 2_000, 3);
        w.update(2, 1_000, 3);
        assertThat(w.current()).as("partition 1 unknown").isNull();
        w.update(1, 5_000, 3);
        assertThat(w.current()).isEqualTo(Instant.EPOCH.plusNanos(1_000));
        w.update(2, 500, 3);
        assertThat(w.current()).as("a watermark never goes back").isEqualTo(Instant.EPOCH.plusNanos(1_000));
    }

    @Test
    void shouldShareReportsThroughTheDirectoryAndKeepTheHighest() throws Exception {
        InputWatermark a = new InputWatermark(dir);
        InputWatermark b = new InputWatermark(dir);
        a.update(0, 2_000, 2);
        b.update(1, 3_000, 2);
        assertThat(a.current()).as("a knows b's partition").isEqualTo(Instant.EPOCH.plusNanos(2_000));
        assertThat(b.current()).isEqualTo(Instant.EPOCH.plusNanos(2_000));
        InputWatermark next = new InputWatermark(dir); // partition 0's next owner, after a restart
        next.update(0, 1_500, 2);
        assertThat(new InputWatermark(dir).current()).as("a lower report does not lower the file")
                .isEqualTo(Instant.EPOCH.plusNanos(2_000));
    }

    @Test
    void shouldCarryACompletedInput() throws Exception {
        InputWatermark w = new InputWatermark(dir);
        w.update(0, Long.MAX_VALUE, 1);
        assertThat(new InputWatermark(dir).current()).isEqualTo(Instant.EPOCH.plusNanos(Long.MAX_VALUE));
    }

    @Test
    void shouldCountATornFileAsUnknownAndRepairItAtTheNextReport() throws Exception {
        InputWatermark w = new InputWatermark(dir);
        w.update(0, 2_000, 2);
        w.update(1, 3_000, 2);
        Files.writeString(dir.resolve("1"), ""); // a file a power loss left empty
        InputWatermark next = new InputWatermark(dir); // another instance, or after a restart

        assertThat(next.current()).as("partition 1 unknown, no error").isNull();
        next.update(1, 4_000, 2);

        assertThat(new InputWatermark(dir).current()).isEqualTo(Instant.EPOCH.plusNanos(2_000));
    }
}
