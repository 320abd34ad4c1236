package io.flowkafka.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.flowkafka.api.Message;
import io.flowkafka.api.OutputCollector;
import io.flowkafka.api.RowFunction;
import io.flowkafka.api.RuntimeContext;
import io.flowkafka.spec.InvalidSpecException;
import io.flowkafka.spec.SpecProblem;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link FlowTestDriver#create(Path)}: a YAML spec file, its warnings, and {@code flow.spec.warnings=fail}. */
class FlowTestDriverSpecFileTest {

    /** Copies each event to stream 'out'. */
    public static final class Echo implements RowFunction {
        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
            output.addMessage(context.createMessageBuilder("out")
                    .set("user", message.getPayload().get("user").toString())
                    .set("ts", message.getPayload().get("ts")).build());
        }
    }

    private static final String SPEC = """
            name: echo
            streams:
              events: {schema: {type: record, name: E, namespace: test, fields: [{name: user, type: string}, {name: ts, type: long}]}}
              out: {schema: {type: record, name: O, namespace: test, fields: [{name: user, type: string}, {name: ts, type: long}]}}
            computations:
              read:
                computation_class_name: Source
                output_stream_ids: [events]
                source_streams:
                  events: {source_class_name: KafkaSource, parameters: {topics: in, consumer_path: //home/q}}
              echo:
                computation_class_name: Transform
                processing_function: %s
                input_stream_ids: [events]
                output_stream_ids: [out]
                group_by_schema:
                  - {name: hash, type: uint64, expression: farm_hash(user)}
                  - {name: user, type: string}
                sinks:
                  out_topic: {sink_class_name: KafkaSink, input_stream_ids: [out], parameters: {topic: out}}
            """.formatted(Echo.class.getName());

    @Test
    void shouldRunASpecFileAndReportWhatItIgnores(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("echo.yaml");
        Files.writeString(file, SPEC);

        try (FlowTestDriver driver = FlowTestDriver.create(file)) {
            assertThat(driver.specWarnings()).singleElement().satisfies(w -> {
                assertThat(w.computation()).isEqualTo("read");
                assertThat(w.field()).isEqualTo("source_streams.events.parameters.consumer_path");
                assertThat(w.message()).contains("is ignored");
            });
            driver.pipeSource("in", "alice", "{\"user\": \"alice\", \"ts\": 5}");
            assertThat(driver.readSinkJson("out")).containsExactly("{\"user\":\"alice\",\"ts\":5}");
        }
    }

    @Test
    void shouldRejectTheIgnoredFieldWithSpecWarningsFail(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("echo.yaml");
        Files.writeString(file, SPEC);
        Properties props = new Properties();
        props.put("flow.spec.warnings", "fail");

        InvalidSpecException e = catchThrowableOfType(() -> FlowTestDriver.create(file, props),
                InvalidSpecException.class);

        assertThat(e.problems()).extracting(SpecProblem::field)
                .containsExactly("source_streams.events.parameters.consumer_path");
        assertThat(e.getMessage()).contains("rejected because flow.spec.warnings=fail");
    }

    @Test
    void shouldRejectAMisspelledParameterWhateverTheWarningsSetting(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("echo.yaml");
        Files.writeString(file, SPEC.replace("consumer_path: //home/q", "event_timestamp_colum: ts"));

        InvalidSpecException e = catchThrowableOfType(() -> FlowTestDriver.create(file), InvalidSpecException.class);

        assertThat(e.problems()).singleElement().satisfies(p -> {
            assertThat(p.field()).isEqualTo("source_streams.events.parameters.event_timestamp_colum");
            assertThat(p.fix()).contains("did you mean 'event_timestamp_column'?");
        });
    }
}
