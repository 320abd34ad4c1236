package io.flowkafka.spec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/**
 * Issue 28.4: the smallest mutations {@link SpecFuzzTest} found that a spec accepted without a word, each failing
 * before its fix:
 * <ol>
 *   <li>a cycle of streams that no {@code streams_dependency} breaks (its watermark waits for itself forever);</li>
 *   <li>a duration longer than a long of nanoseconds ({@code "99999999999999999999d"}), cut to 292 years;</li>
 *   <li>a duration given as an integer over 64 bits, which wrapped ({@code 2^64 + 5} ms became 5 ms);</li>
 *   <li>a key-visitor duration given as a huge number ({@code 1e30} ms), cut to 292 million years;</li>
 *   <li>a key-visitor row count given as a fraction ({@code 2.5}), cut to 2.</li>
 * </ol>
 */
class Issue28SpecFuzzTest {
    private static final String NOOP = SpecMistakesTest.Noop.class.getName();
    private static final String SCHEMA = "{\"type\": \"record\", \"name\": \"E\", \"fields\": [{\"name\": \"user\", "
            + "\"type\": \"string\"}, {\"name\": \"ts\", \"type\": \"long\"}]}";
    private static final String GROUP_BY = "[{\"name\": \"hash\", \"type\": \"uint64\", \"expression\": "
            + "\"farm_hash(user)\"}, {\"name\": \"user\", \"type\": \"string\"}]";

    /** read -> events -> count -> counts -> alert -> alerts, count also reading {@code countInputs}. */
    private static String chain(String countInputs, String countDependency) {
        return """
                {"name": "p",
                 "streams": {"events": {"schema": %1$s}, "counts": {"schema": %1$s}, "alerts": {"schema": %1$s}},
                 "computations": {
                   "read": {"computation_class_name": "Source", "output_stream_ids": ["events"],
                            "source_streams": {"events": {"source_class_name": "KafkaSource",
                                                          "parameters": {"topics": ["in"]}}}},
                   "count": {"computation_class_name": "Transform", "processing_function": "%2$s",
                             "input_stream_ids": %3$s, "output_stream_ids": ["counts"], "group_by_schema": %4$s
                             %5$s},
                   "alert": {"computation_class_name": "Transform", "processing_function": "%2$s",
                             "input_stream_ids": ["counts"], "output_stream_ids": ["alerts"], "group_by_schema": %4$s}}}
                """.formatted(SCHEMA, NOOP, countInputs, GROUP_BY, countDependency);
    }

    @Test
    void shouldRejectACycleOfStreamsThatNoStreamsDependencyBreaks() {
        assertThatThrownBy(() -> PipelineSpecLoader.fromJson(chain("[\"events\", \"alerts\"]", "")).validated())
                .isInstanceOf(InvalidSpecException.class)
                .hasMessageContaining("computation 'count', field 'input_stream_ids'")
                .hasMessageContaining("streams form a cycle: 'counts' -> alert -> 'alerts' -> count -> 'counts'")
                .hasMessageContaining("fix: stop reading 'alerts' in 'count', or break the cycle with streams_dependency");
    }

    @Test
    void shouldRejectACycleThatStreamsDependencyKeeps() {
        assertThatThrownBy(() -> PipelineSpecLoader.fromJson(chain("[\"events\", \"alerts\"]",
                ", \"streams_dependency\": {\"counts\": [\"events\", \"alerts\"]}")).validated())
                .isInstanceOf(InvalidSpecException.class)
                .hasMessageContaining("streams form a cycle");
    }

    @Test
    void shouldRejectAComputationReadingItsOwnOutput() {
        assertThatThrownBy(() -> PipelineSpecLoader.fromJson(chain("[\"events\", \"counts\"]", "")).validated())
                .isInstanceOf(InvalidSpecException.class)
                .hasMessageContaining("streams form a cycle: 'counts' -> count -> 'counts'");
    }

    @Test
    void shouldAcceptACycleThatStreamsDependencyBreaksAsFlowDoes() {
        // Flow's request/response pattern: the output depends only on the inputs outside the loop
        PipelineSpec spec = PipelineSpecLoader.fromJson(chain("[\"events\", \"alerts\"]",
                ", \"streams_dependency\": {\"counts\": [\"events\"]}"));

        assertThat(spec.validate()).filteredOn(p -> p.severity() == SpecProblem.Severity.ERROR).isEmpty();
    }

    @Test
    void shouldRejectADurationLongerThan292Years() {
        assertThatThrownBy(() -> PipelineSpecLoader.fromJson(SpecMistakesTest.spec("", ", \"watermark_strategy\": "
                + "{\"watermark_generator\": {\"out_of_orderness_bound\": \"99999999999999999999d\"}}",
                SpecMistakesTest.GROUP_BY)).validated())
                .isInstanceOf(InvalidSpecException.class)
                .hasMessageContaining("computation 'read', field 'watermark_strategy'")
                .hasMessageContaining("out_of_orderness_bound must be at most 292 years");
    }

    @Test
    void shouldRejectADurationNumberOver64BitsInsteadOfWrappingIt() {
        assertThatThrownBy(() -> PipelineSpecLoader.fromJson(SpecMistakesTest.spec("", ", \"watermark_strategy\": "
                + "{\"watermark_alignment\": {\"group_name\": \"g\", \"drift_bound\": 18446744073709551621}}",
                SpecMistakesTest.GROUP_BY)).validated())
                .isInstanceOf(InvalidSpecException.class)
                .hasMessageContaining("computation 'read', field 'watermark_strategy'")
                .hasMessageContaining("drift_bound must be at most 292 years");
    }

    @Test
    void shouldRejectAKeyVisitorPeriodOf1e30Milliseconds() {
        assertThatThrownBy(() -> PipelineSpecLoader.fromJson(visitor("\"period\": 1e30")).validated())
                .isInstanceOf(InvalidSpecException.class)
                .hasMessageContaining("computation 'count', field 'key_visitor_streams.v'")
                .hasMessageContaining("period must be at most 292 years");
    }

    @Test
    void shouldRejectAFractionalKeyVisitorRowCount() {
        assertThatThrownBy(() -> PipelineSpecLoader.fromJson(visitor("\"max_scan_rows_per_iteration\": 2.5")).validated())
                .isInstanceOf(InvalidSpecException.class)
                .hasMessageContaining("computation 'count', field 'key_visitor_streams.v'")
                .hasMessageContaining("max_scan_rows_per_iteration must be a positive integer but was 2.5");
    }

    private static String visitor(String settings) {
        String spec = SpecMistakesTest.spec("", "", SpecMistakesTest.GROUP_BY);
        return spec.replace("\"input_stream_ids\": [\"events\"],", "\"input_stream_ids\": [\"events\"], "
                + "\"states\": {\"s\": {}}, \"key_visitor_streams\": {\"v\": {\"names\": [\"s\"], " + settings + "}},");
    }
}
