package io.flowkafka.testing;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowkafka.spec.KeyVisitorStreamSpec;
import java.util.List;
import java.util.Map;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.junit.jupiter.api.Test;

/** The unit harness's {@code visitAll} keeps reference 000's {@code external_names} rules, as the runtime does. */
class ExternalNamesHarnessTest {
    private static List<String> visited(KeyVisitorStreamSpec.Builder visitor) {
        try (ComputationHarness h = ComputationHarness.create(ExternalNamesTest.spec(visitor.build(), false),
                "keeper")) {
            h.message("events", Map.of("key", "s", "cmd", "state", "value", "1"), 0L);
            h.message("events", Map.of("key", "m", "cmd", "managed", "value", "2"), 0L);
            GenericRecord row = new GenericData.Record(ExternalNamesTest.ROW);
            row.put("value", "j-row");
            h.putExternalRow("/joined", h.keyOf("events", Map.of("key", "j", "cmd", "x")), row);
            return h.visitAll("v", 0, 0).stream()
                    .map(r -> r.outputs().get(0).payload().get("key").toString()).toList();
        }
    }

    @Test
    void shouldVisitWhatTheRuntimeVisits() {
        // neither: "all internal states are scanned, but external state and joiners aren't"
        assertThat(visited(KeyVisitorStreamSpec.builder("v"))).containsExactly("s");
        // only external_names: "only the listed external state is scanned"
        assertThat(visited(KeyVisitorStreamSpec.builder("v").externalNames("/managed"))).containsExactly("m");
        // a joiner "is scanned only if explicitly listed"; its keys are visited without state
        assertThat(visited(KeyVisitorStreamSpec.builder("v").names("total").externalNames("/joined")))
                .containsExactly("s", "j");
    }

    @Test
    void shouldKeepTheJoinedRowsAcrossARestart() {
        // a joined table is a topic beside the computation: a restart of the computation finds its rows still there
        try (ComputationHarness h = ComputationHarness.create(ExternalNamesTest.spec(KeyVisitorStreamSpec
                .builder("v").names("total").externalNames("/joined").build(), false), "keeper")) {
            GenericRecord row = new GenericData.Record(ExternalNamesTest.ROW);
            row.put("value", "j-row");
            h.putExternalRow("/joined", h.keyOf("events", Map.of("key", "j", "cmd", "x")), row);
            try (ComputationHarness next = h.restart()) {
                assertThat(next.visitAll("v", 0, 0).stream()
                        .map(r -> r.outputs().get(0).payload().get("key").toString()).toList()).containsExactly("j");
            }
        }
    }
}
