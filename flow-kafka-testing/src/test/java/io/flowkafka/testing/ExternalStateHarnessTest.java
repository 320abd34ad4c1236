package io.flowkafka.testing;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowkafka.spec.ExternalStateJoinerSpec;
import io.flowkafka.spec.PipelineSpec;
import java.util.Map;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.junit.jupiter.api.Test;

/** External state in the unit harness: a manager's rows are committed with the call, a joiner's rows are seeded. */
class ExternalStateHarnessTest {
    private static final PipelineSpec SPEC = ExternalStateTest.joined(ExternalStateJoinerSpec.of("/reference_state"));

    private static GenericRecord row(String value) {
        GenericRecord r = new GenericData.Record(ExternalStateTest.ROW);
        r.put("value", value);
        return r;
    }

    @Test
    void aManagersWritesAreCommittedWithTheCall() {
        try (ComputationHarness h = ComputationHarness.create(SPEC, "loader")) {
            h.message("refs", Map.of("key", "a", "value", "alpha"), 0L);
            assertThat(h.externalRow("/reference_state", h.keyOf("refs", Map.of("key", "a"))))
                    .hasValueSatisfying(r -> assertThat(r.get("value").toString()).isEqualTo("alpha"));
        }
    }

    @Test
    void aJoinerReadsTheSeededRowAndCannotWrite() {
        try (ComputationHarness h = ComputationHarness.create(SPEC, "enricher")) {
            h.putExternalRow("/reference_state", h.keyOf("events", Map.of("key", "a")), row("seeded"));
            HarnessResult r = h.message("events", Map.of("key", "a"), 0L);
            assertThat(r.outputs()).singleElement()
                    .satisfies(o -> assertThat(o.payload().get("value").toString()).isEqualTo("seeded"));
            assertThat(h.message("events", Map.of("key", "b"), 0L).outputs()).singleElement()
                    .satisfies(o -> assertThat(o.payload().get("value").toString()).isEqualTo("missing"));
        }
    }
}
