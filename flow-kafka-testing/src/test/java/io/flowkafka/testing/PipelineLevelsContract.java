package io.flowkafka.testing;

import static io.flowkafka.testing.DriverWatermarkTest.MS;
import static io.flowkafka.testing.DriverWatermarkTest.T0;
import static io.flowkafka.testing.DriverWatermarkTest.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.avro.generic.GenericRecord;

/**
 * One body per behaviour of {@link PipelineUnderTest}, run on every level by its subclasses
 * ({@link PipelineLevelsTest}: harness and driver; {@code PipelineLevelsIT}: broker), on the
 * pipeline of {@link DriverWatermarkTest} with computation {@code delay} under test (a non-finite
 * source: on the broker an empty finite source would complete its streams at once).
 */
abstract class PipelineLevelsContract {
    static PipelineUnderTest open(FlowTestLevel level, TestNames names, Properties props) {
        return level.open(DriverWatermarkTest.spec(names.name("wm"), names.topic("in"), false), "delay", props);
    }

    static List<String> reports(List<GenericRecord> payloads) {
        return payloads.stream().map(r -> r.get("kind") + ":" + r.get("key") + ":" + ((Long) r.get("at") - T0) / MS)
                .toList();
    }

    @FlowTestLevels
    void shouldFireTimersOnlyOnceTheWatermarkExceedsTheirTrigger(FlowTestLevel level, TestNames names) {
        try (PipelineUnderTest p = open(level, names, new Properties())) {
            assertThat(p.level()).isEqualTo(level);
            p.pipe("events", Map.of("key", "k", "ts", 0L), T0);
            assertThat(reports(p.awaitPayloads("out", 1))).containsExactly("message:k:0");
            p.advanceWatermark("events", T0 + WAIT);
            // a marker of the same key: on every level, what the watermark fired for k comes before its report
            p.pipe("events", Map.of("key", "k", "ts", 0L), T0 + 2 * WAIT);
            List<GenericRecord> next = p.awaitPayloads("out", 1);
            assertThat(reports(next)).as("a watermark equal to the trigger fires nothing")
                    .containsExactly("message:k:" + 2 * WAIT / MS);
            assertThat(next.get(0).get("watermark")).as("the function sees the input watermark").isEqualTo(T0 + WAIT);
            p.advanceWatermark(T0 + WAIT + 1);
            assertThat(reports(p.awaitPayloads("out", 1))).containsExactly("timer:k:60000");
        }
    }

    @FlowTestLevels
    void shouldRejectAWatermarkThatGoesBack(FlowTestLevel level, TestNames names) {
        try (PipelineUnderTest p = open(level, names, new Properties())) {
            p.advanceWatermark("events", T0 + 100);
            assertThatThrownBy(() -> p.advanceWatermark("events", T0 + 99))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("watermarks never go back: stream 'events' already has the watermark "
                            + (T0 + 100));
        }
    }

    @FlowTestLevels
    void shouldFireEveryTimerAndCompleteWhenTheInputsComplete(FlowTestLevel level, TestNames names) {
        try (PipelineUnderTest p = open(level, names, new Properties())) {
            p.pipe("events", Map.of("key", "k1", "ts", 0L), T0);
            p.pipe("events", Map.of("key", "k2", "ts", 0L), T0 + 10 * WAIT);
            assertThat(p.completedComputations()).doesNotContain("delay");
            p.completeStream("events");
            assertThat(reports(p.awaitPayloads("out", 4))).containsExactlyInAnyOrder("message:k1:0",
                    "message:k2:600000", "timer:k1:60000", "timer:k2:660000");
            p.awaitCompleted("delay");
            assertThat(p.completedComputations()).contains("delay");
            assertThatThrownBy(() -> p.pipe("events", Map.of("key", "k3", "ts", 0L), T0))
                    .isInstanceOf(IllegalStateException.class).hasMessageContaining("was completed");
        }
    }

    @FlowTestLevels
    void shouldLetWatermarksFollowTheDataWhenConfigured(FlowTestLevel level, TestNames names) {
        Properties props = new Properties();
        props.put(FlowTestDriver.PIPE_WATERMARKS_CONFIG, FlowTestDriver.PIPE_WATERMARKS_FOLLOW);
        try (PipelineUnderTest p = open(level, names, props)) {
            p.pipe("events", Map.of("key", "k1", "ts", 0L), T0);
            p.pipe("events", Map.of("key", "k2", "ts", 0L), T0 + WAIT + 1);
            assertThat(reports(p.awaitPayloads("out", 3))).containsExactlyInAnyOrder("message:k1:0",
                    "message:k2:60000", "timer:k1:60000");
        }
    }
}
