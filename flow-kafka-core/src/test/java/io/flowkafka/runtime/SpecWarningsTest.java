package io.flowkafka.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.flowkafka.spec.InvalidSpecException;
import io.flowkafka.spec.PipelineSpec;
import io.flowkafka.spec.PipelineSpecLoader;
import io.flowkafka.spec.SpecProblem;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.streams.StreamsConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 23.7: every spec warning (from loading and from validation) is logged once at create, and
 * {@code flow.spec.warnings=fail} rejects them.
 */
class SpecWarningsTest {

    /** A Flow source's own parameter (loaded fine, ignored: no KafkaSource parameter is like it), and a misnested bound. */
    private static final String SPEC = """
            name: typos
            streams:
              events:
                schema: {type: record, name: E, namespace: test, fields: [{name: user, type: string}, {name: ts, type: long}]}
            computations:
              read:
                computation_class_name: Source
                output_stream_ids: [events]
                source_streams:
                  events: {source_class_name: KafkaSource, parameters: {topics: [in], consumer_path: //home/q}}
                watermark_strategy:
                  out_of_orderness_bound: 5m
              count:
                computation_class_name: Transform
                processing_function: %s
                input_stream_ids: [events]
                group_by_schema:
                  - {name: hash, type: uint64, expression: farm_hash(user)}
                  - {name: user, type: string}
            """.formatted(FlowRuntimeGuaranteeTest.Noop.class.getName());

    private static Properties props() {
        Properties p = new Properties();
        p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "localhost:9");
        p.put(StreamsConfig.STATE_DIR_CONFIG, System.getProperty("java.io.tmpdir") + "/spec-warnings-test");
        return p;
    }

    @Test
    void shouldLogEveryWarningOnceAtCreate() {
        PipelineSpec spec = PipelineSpecLoader.fromYaml(SPEC);
        String log;
        FlowRuntime runtime;
        PrintStream err = System.err;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
        try {
            runtime = FlowRuntime.create(spec, props());
        } finally {
            System.setErr(err);
        }
        log = captured.toString(StandardCharsets.UTF_8);
        try (runtime) {
            assertThat(runtime.specWarnings()).extracting(SpecProblem::field).containsExactly(
                    "watermark_strategy.out_of_orderness_bound",
                    "source_streams.events.parameters.consumer_path");
            assertThat(runtime.specWarnings()).isEqualTo(spec.allWarnings());
            assertThat(log).contains("WARN")
                    .contains("pipeline 'typos': spec warning: computation 'read', field "
                            + "'source_streams.events.parameters.consumer_path': unknown KafkaSource parameter "
                            + "'consumer_path' is ignored; fix: use one of [")
                    .contains("field 'watermark_strategy.out_of_orderness_bound': unknown field "
                            + "'out_of_orderness_bound' is ignored")
                    .contains("set flow.spec.warnings=fail to reject them");
            assertThat(log.lines().filter(l -> l.contains("consumer_path'"))).hasSize(1); // logged once
        }
    }

    @Test
    void shouldRejectWarningsWithSpecWarningsFail() {
        Properties p = props();
        p.put(FlowConfig.SPEC_WARNINGS_CONFIG, "fail");

        InvalidSpecException e = catchThrowableOfType(() -> FlowRuntime.create(PipelineSpecLoader.fromYaml(SPEC), p),
                InvalidSpecException.class);

        assertThat(e.problems()).extracting(SpecProblem::field).containsExactly(
                "watermark_strategy.out_of_orderness_bound", "source_streams.events.parameters.consumer_path");
        assertThat(e.getMessage()).startsWith("pipeline 'typos' has 2 spec warning(s), rejected because "
                + "flow.spec.warnings=fail:")
                .contains("unknown KafkaSource parameter 'consumer_path' is ignored")
                .endsWith("fix them, or set flow.spec.warnings=log to only log them");
    }

    @Test
    void shouldStartASpecWithoutWarningsInFailMode() {
        Properties p = props();
        p.put(FlowConfig.SPEC_WARNINGS_CONFIG, "fail");
        String clean = SPEC.replace(", consumer_path: //home/q", "")
                .replace("    watermark_strategy:\n      out_of_orderness_bound: 5m\n", "");

        try (FlowRuntime runtime = FlowRuntime.create(PipelineSpecLoader.fromYaml(clean), p)) {
            assertThat(runtime.specWarnings()).isEmpty();
        }
    }

    @Test
    void shouldCreateFromASpecFile(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("typos.yaml");
        Files.writeString(file, SPEC);

        try (FlowRuntime runtime = FlowRuntime.create(file, props())) {
            assertThat(runtime.spec()).isEqualTo(PipelineSpecLoader.fromYaml(SPEC));
            assertThat(runtime.specWarnings()).hasSize(2);
        }
    }

    @Test
    void shouldRejectAnUnknownSpecWarningsValue() {
        Properties p = props();
        p.put(FlowConfig.SPEC_WARNINGS_CONFIG, "ignore");

        assertThat(catchThrowableOfType(() -> new FlowConfig(p), ConfigException.class))
                .hasMessageContaining("flow.spec.warnings");
    }
}
