package io.flowkafka.spec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Issue 23.5: YAML specs, with the same Flow field names and rules as JSON. */
class PipelineSpecLoaderYamlTest {

    private static final String YAML = """
            # the SpecMistakesTest spec, in YAML
            name: p
            streams:
              events:
                schema:
                  type: record
                  name: E
                  namespace: test
                  fields:
                    - {name: user, type: string}
                    - {name: ts, type: long}
            computations:
              read:
                computation_class_name: Source
                output_stream_ids: [events]
                source_streams:
                  events:
                    source_class_name: KafkaSource
                    parameters: {topics: [in]}
              count:
                computation_class_name: Transform
                processing_function: %s
                input_stream_ids: [events]
                group_by_schema:
                  - {name: hash, type: uint64, expression: farm_hash(user)}
                  - {name: user, type: string}
            """.formatted(SpecMistakesTest.Noop.class.getName());

    @Test
    void shouldLoadTheSameSpecFromYamlAsFromJson() {
        PipelineSpec yaml = PipelineSpecLoader.fromYaml(YAML);

        assertThat(yaml).isEqualTo(PipelineSpecLoader.fromJson(SpecMistakesTest.spec("", "", SpecMistakesTest.GROUP_BY)));
        assertThat(yaml.validate()).isEmpty();
    }

    @Test
    void shouldPickYamlByFileExtension(@TempDir Path dir) throws Exception {
        for (String name : new String[] {"p.yaml", "p.YML"}) {
            Path file = dir.resolve(name);
            Files.writeString(file, YAML);
            assertThat(PipelineSpecLoader.fromFile(file)).isEqualTo(PipelineSpecLoader.fromYaml(YAML));
        }
    }

    @Test
    void shouldGiveFileLineAndColumnOfAYamlSyntaxError(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("broken.yaml");
        // line 2, column 16 (the second ':'): a second key on the line of a key
        Files.writeString(file, "name: p\nstreams: events: {}\ncomputations: {}\n");

        InvalidSpecException e = catchThrowableOfType(() -> PipelineSpecLoader.fromFile(file),
                InvalidSpecException.class);

        assertThat(e.problems()).singleElement().satisfies(p -> {
            assertThat(p.field()).isEqualTo("yaml");
            assertThat(p.message()).startsWith(file + ", line 2, column 16: not valid YAML: mapping values are not allowed here").contains(": not valid YAML: ")
                    .doesNotContain("\n");
        });
        assertThat(e.getMessage()).contains(file.toString(), "line 2, column 16");
    }

    @Test
    void shouldSayWhatIsWrongInOneLineWhenSnakeYamlGivesAContext() {
        InvalidSpecException e = catchThrowableOfType(() -> PipelineSpecLoader.fromYaml(
                "name: p\ncomputations:\n  - a\n  b: c\n"), InvalidSpecException.class);

        assertThat(e.problems()).singleElement().satisfies(p -> assertThat(p.message())
                .startsWith("the pipeline spec, line 4, column 3: not valid YAML: expected <block end>, but found")
                .contains("(while parsing a block collection)").doesNotContain("\n"));
    }

    @Test
    void shouldGiveFileLineAndColumnOfAJsonSyntaxError(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("broken.json");
        Files.writeString(file, "{\"name\": \"p\",\n  \"streams\": {,\n}");

        InvalidSpecException e = catchThrowableOfType(() -> PipelineSpecLoader.fromFile(file),
                InvalidSpecException.class);

        assertThat(e.problems()).singleElement().satisfies(p ->
                assertThat(p.message()).startsWith(file + ", line 2, column 15: not valid JSON: "
                        + "Unexpected character (',' (code 44)): was expecting double-quote to start field name").doesNotContain("\n"));
    }

    @Test
    void shouldWarnAboutAnUnknownYamlFieldWithTheKnownOnes() {
        PipelineSpec spec = PipelineSpecLoader.fromYaml(YAML.replace("input_stream_ids: [events]",
                "input_stream_ids: [events]\n    input_streams_ids: [events]"));

        assertThat(spec.warnings()).singleElement().satisfies(w -> {
            assertThat(w.severity()).isEqualTo(SpecProblem.Severity.WARNING);
            assertThat(w.computation()).isEqualTo("count");
            assertThat(w.field()).isEqualTo("input_streams_ids");
            assertThat(w.fix()).contains("did you mean 'input_stream_ids'?");
        });
    }

    @Test
    void shouldKeepYamlScalarTypesAndRejectANumberForAString() {
        InvalidSpecException e = catchThrowableOfType(() -> PipelineSpecLoader.fromYaml(
                YAML.replace("processing_function: " + SpecMistakesTest.Noop.class.getName(), "processing_function: 5")),
                InvalidSpecException.class);

        assertThat(e.problems()).singleElement().satisfies(p -> {
            assertThat(p.computation()).isEqualTo("count");
            assertThat(p.message()).contains("processing_function must be a string but is a number (5)");
        });
    }

    @Test
    void shouldRejectAnEmptyYamlSpec() {
        InvalidSpecException e = catchThrowableOfType(() -> PipelineSpecLoader.fromYaml("# nothing\n"),
                InvalidSpecException.class);

        assertThat(e.problems()).singleElement().satisfies(p -> assertThat(p.message()).contains("is empty"));
    }

    @Test
    void shouldCollectAllWarningsInOneList() {
        // one warning found by the loader (unknown field), one by validation (unknown KafkaSource parameter)
        PipelineSpec spec = PipelineSpecLoader.fromYaml(YAML
                .replace("parameters: {topics: [in]}", "parameters: {topics: [in], consumer_path: //home/q}")
                .replace("input_stream_ids: [events]", "input_stream_ids: [events]\n    input_streams_ids: [events]"));

        assertThat(spec.allWarnings()).extracting(SpecProblem::field)
                .containsExactly("input_streams_ids", "source_streams.events.parameters.consumer_path");
    }
}
