package io.flowkafka.testing;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowkafka.spec.ComputationKind;
import io.flowkafka.spec.ExternalStateManagerSpec;
import io.flowkafka.spec.PipelineSpec;
import java.util.Map;
import java.util.Properties;

/**
 * A manager's table read back at every level ({@link ExternalStateLevelsTest}: harness and driver;
 * {@code ExternalStateLevelsIT}: broker), with computation {@code loader} under test.
 */
abstract class ExternalStateLevelsContract {
    static PipelineUnderTest open(FlowTestLevel level, TestNames names) {
        PipelineSpec spec = PipelineSpec.builder(names.name("ext")).stream("refs_raw", ExternalStateTest.REF)
                .stream("refs", ExternalStateTest.REF).stream("loaded", ExternalStateTest.REF)
                .computation("read_refs", c -> c.kind(ComputationKind.SOURCE)
                        .source("refs_raw", "KafkaSource", Map.of("topics", names.topic("refs")))
                        .outputStreamIds("refs"))
                .computation("loader", c -> ExternalStateTest.keyed(c.inputStreamIds("refs"))
                        .processingFunction(ExternalStateTest.Loader::new).outputStreamIds("loaded")
                        .externalStateManager(ExternalStateManagerSpec.of("/reference_state", ExternalStateTest.ROW)))
                .build();
        return level.open(spec, "loader", new Properties());
    }

    @FlowTestLevels
    void shouldReadTheRowsAManagerCommitted(FlowTestLevel level, TestNames names) {
        try (PipelineUnderTest p = open(level, names)) {
            p.pipe("refs", Map.of("key", "a", "value", "alpha"), 0L);
            p.pipe("refs", Map.of("key", "b", "value", "beta"), 0L);
            p.pipe("refs", Map.of("key", "b", "value", ""), 0L);
            assertThat(p.awaitPayloads("loaded", 3)).hasSize(3);
            assertThat(p.externalRowForPayload("loader", "/reference_state", "refs", Map.of("key", "a")))
                    .hasValueSatisfying(r -> assertThat(r.get("value").toString()).isEqualTo("alpha"));
            assertThat(p.externalRowForPayload("loader", "/reference_state", "refs", Map.of("key", "b")))
                    .as("cleared").isEmpty();
        }
    }
}
