package io.flowkafka.testing;

import static io.flowkafka.testing.DriverWatermarkTest.T0;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flowkafka.runtime.FlowConfig;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.Test;

/** {@link PipelineLevelsContract} on the harness and the driver, and what only those levels do. */
@FlowTestLevels({FlowTestLevel.HARNESS, FlowTestLevel.DRIVER})
class PipelineLevelsTest extends PipelineLevelsContract {
    private final TestNames names = TestNames.of(PipelineLevelsTest.class, "plain");

    @Test
    void shouldRestrictTheMethodsLevelsToTheClasses() throws NoSuchMethodException {
        var method = PipelineLevelsContract.class.getDeclaredMethod("shouldRejectAWatermarkThatGoesBack",
                FlowTestLevel.class, TestNames.class);
        assertThat(FlowTestLevelsExtension.levels(method, PipelineLevelsTest.class))
                .containsExactly(FlowTestLevel.HARNESS, FlowTestLevel.DRIVER);
        assertThat(FlowTestLevelsExtension.levels(method, PipelineLevelsContract.class))
                .as("no class restriction: the method's levels").containsExactly(FlowTestLevel.values());
    }

    @Test
    void shouldTellWhenATestDoesNotFitTheHarness() {
        try (PipelineUnderTest p = open(FlowTestLevel.HARNESS, names, new Properties())) {
            assertThatThrownBy(() -> p.pipe("out", Map.of(), T0)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("stream 'out' is not an internal input of computation 'delay'")
                    .hasMessageContaining("leave HARNESS out of @FlowTestLevels");
            assertThatThrownBy(() -> p.readPayloads("watched")).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("stream 'watched' is not an output of computation 'delay'");
            assertThatThrownBy(() -> p.awaitPayloads("out", 1)).isInstanceOf(AssertionError.class)
                    .hasMessageContaining("expected at least 1 payload(s) of stream 'out' but the HARNESS level has 0");
        }
        assertThatThrownBy(() -> FlowTestLevel.HARNESS.open(DriverWatermarkTest.spec()))
                .isInstanceOf(UnsupportedOperationException.class).hasMessageContaining("open(spec, computationId)");
    }

    @Test
    void shouldRefuseWhatTheRuntimeRefusesOnTheHarnessAsOnTheDriver() {
        Properties props = new Properties();
        props.put("flow.dead.leter.enabled", "false"); // misspelt
        for (FlowTestLevel level : List.of(FlowTestLevel.HARNESS, FlowTestLevel.DRIVER)) {
            assertThatThrownBy(() -> open(level, names, props).close()).as(level.name())
                    .hasMessageContaining("flow.dead.leter.enabled is not a flow-kafka setting");
        }
    }

    @Test
    void shouldFailACallWithDeadLettersOffOnTheHarnessAsOnTheDriver() {
        Properties props = new Properties();
        props.put(FlowConfig.DEAD_LETTER_ENABLED_CONFIG, "false");
        for (FlowTestLevel level : List.of(FlowTestLevel.HARNESS, FlowTestLevel.DRIVER)) {
            try (PipelineUnderTest p = open(level, names, props)) {
                assertThatThrownBy(() -> p.pipe("events", Map.of("key", "boom", "ts", 0L), T0)).as(level.name())
                        .hasStackTraceContaining("the reporter refuses key boom");
            }
        }
    }

    @Test
    void shouldBoundTheDriversWaitByDriverTime() {
        Properties props = new Properties();
        props.put(FlowTestLevel.AWAIT_BOUND_MS_CONFIG, "1000");
        try (PipelineUnderTest p = open(FlowTestLevel.DRIVER, names, props)) {
            assertThatThrownBy(() -> p.awaitPayloads("out", 1)).isInstanceOf(AssertionError.class)
                    .hasMessageContaining("not true within 1000ms of driver wall-clock time (5 watermark steps)");
            assertThatThrownBy(() -> p.advanceWatermark("raw", T0)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("completeSource");
        }
    }
}
