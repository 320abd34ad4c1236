package io.flowkafka.spec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.flowkafka.api.Message;
import io.flowkafka.api.OutputCollector;
import io.flowkafka.api.RowFunction;
import io.flowkafka.api.RuntimeContext;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.apache.avro.Schema;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PipelineSpecLoaderTest {

    /** The process function named by the test specs. */
    public static final class Noop implements RowFunction {
        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
        }
    }

    private static final String EVENT_SCHEMA = "{\"type\": \"record\", \"name\": \"E\", \"fields\": "
            + "[{\"name\": \"user\", \"type\": \"string\"}]}";

    @Test
    void shouldLoadThreeComputationPipelineFromResource() {
        PipelineSpec spec = PipelineSpecLoader.fromResource("specs/activity-pipeline.json");

        assertThat(spec.name()).isEqualTo("activity");
        assertThat(spec.warnings()).isEmpty();
        assertThat(spec.validate()).isEmpty();
        assertThat(spec.streams()).containsOnlyKeys("events", "counts", "alerts");
        assertThat(spec.streams().get("counts").schema().getFullName()).isEqualTo("test.Count");
        assertThat(spec.streams().get("events").schema().getField("region").schema().getType())
                .isEqualTo(Schema.Type.UNION);
        assertThat(spec.computations()).containsOnlyKeys("read", "count", "alert");

        ComputationSpec read = spec.computations().get("read");
        assertThat(read.kind()).isEqualTo(ComputationKind.SOURCE);
        assertThat(read.processingFunction()).isNull();
        assertThat(read.outputStreamIds()).containsExactly("events");
        assertThat(read.sourceStreams()).singleElement().satisfies(s -> {
            assertThat(s.streamId()).isEqualTo("events");
            assertThat(s.sourceClassName()).isEqualTo("KafkaSource");
            assertThat(s.parameters()).containsEntry("topics", List.of("user-events", "user-events-eu"))
                    .containsEntry("format", "json");
        });

        ComputationSpec count = spec.computations().get("count");
        assertThat(count.kind()).isEqualTo(ComputationKind.TRANSFORM);
        assertThat(count.processingFunction()).isEqualTo(Noop.class.getName());
        assertThat(count.inputStreamIds()).containsExactly("events");
        assertThat(count.groupBySchema()).containsExactly(
                GroupByColumn.of("hash", ColumnType.UINT64, "farm_hash(user)"),
                GroupByColumn.of("user", ColumnType.STRING));
        assertThat(count.states()).containsOnlyKeys("total", "blob");
        assertThat(count.states().get("total").schema().getFullName()).isEqualTo("test.Total");
        assertThat(count.states().get("blob").schema()).isNull();
        assertThat(count.timers()).singleElement().satisfies(t -> {
            assertThat(t.id()).isEqualTo("flush");
            assertThat(t.parameters()).containsEntry("time_type", "event_time").containsEntry("streams", List.of("events"));
        });
        assertThat(count.keyVisitorStreams()).containsOnlyKeys("ttl");
        assertThat(count.keyVisitorStreams().get("ttl").parameters()).containsEntry("names", List.of("total"));
        assertThat(count.streamsDependency()).containsEntry("counts", List.of("events", "flush"));
        assertThat(count.sinks()).singleElement().satisfies(s -> {
            assertThat(s.id()).isEqualTo("to_kafka");
            assertThat(s.sinkClassName()).isEqualTo("KafkaSink");
            assertThat(s.inputStreamIds()).containsExactly("counts");
            assertThat(s.parameters()).containsEntry("topic", "user-counts").containsEntry("key_column", "user");
        });
        assertThat(count.processingMode()).isEqualTo(ProcessingMode.AT_LEAST_ONCE_CONSISTENT);
        assertThat(count.parameters())
                .containsEntry("threshold", 10L)
                .containsEntry("ratio", 0.5d)
                .containsEntry("enabled", true)
                .containsEntry("labels", List.of("a", "b"))
                .containsEntry("limits", Map.of("max", 3L));
        assertThat(count.desiredPartitionCount()).isEqualTo(8);

        ComputationSpec alert = spec.computations().get("alert");
        assertThat(alert.kind()).isEqualTo(ComputationKind.SWIFT_MAP);
        assertThat(alert.inputStreamIds()).containsExactly("counts");
        assertThat(alert.desiredPartitionCount()).isEqualTo(ComputationSpec.DEFAULT_PARTITION_COUNT);
        assertThat(alert.processingMode()).isEqualTo(ProcessingMode.EXACTLY_ONCE);
    }

    @Test
    void shouldLoadFromFile(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("spec.json");
        Files.writeString(file, "{\"name\": \"p\", \"streams\": {\"e\": {\"schema\": " + EVENT_SCHEMA + "}},"
                + " \"computations\": {\"read\": {\"computation_class_name\": \"Source\", \"source_streams\":"
                + " {\"e\": {\"source_class_name\": \"KafkaSource\", \"parameters\": {\"topics\": \"t\"}}},"
                + " \"output_stream_ids\": [\"e\"]}}}");
        PipelineSpec spec = PipelineSpecLoader.fromFile(file);
        assertThat(spec.computations().get("read").kind()).isEqualTo(ComputationKind.SOURCE);
        assertThat(spec.validate()).isEmpty();
    }

    @Test
    void shouldFailClearlyForMissingFileAndResource(@TempDir Path dir) {
        assertThatThrownBy(() -> PipelineSpecLoader.fromFile(dir.resolve("absent.json")))
                .isInstanceOf(UncheckedIOException.class)
                .hasMessageContaining("cannot read pipeline spec file")
                .hasMessageContaining("absent.json");
        assertThatThrownBy(() -> PipelineSpecLoader.fromResource("/specs/absent.json"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'/specs/absent.json' is not on the classpath");
    }

    @Test
    void shouldAcceptTimerStreamsAliasBesideTimers() {
        PipelineSpec spec = PipelineSpecLoader.fromJson(computation(
                "\"timers\": {\"a\": {}}, \"timer_streams\": {\"b\": {\"time_type\": \"system\"}}"));
        ComputationSpec c = spec.computations().get("c");
        assertThat(c.timers()).extracting(TimerStreamSpec::id).containsExactly("a", "b");
        assertThat(c.timers().get(1).parameters()).containsEntry("time_type", "system");
        assertThat(spec.warnings()).isEmpty();
    }

    @Test
    void shouldReportTimerDeclaredUnderBothNamesAsDuplicate() {
        PipelineSpec spec = PipelineSpecLoader.fromJson(computation(
                "\"timers\": {\"a\": {}}, \"timer_streams\": {\"a\": {}}"));
        assertThat(spec.validate()).anySatisfy(p -> {
            assertThat(p.field()).isEqualTo("timers");
            assertThat(p.message()).contains("timer stream 'a' is listed more than once");
        });
    }

    @Test
    void shouldWarnAboutUnknownFieldsAtEveryLevel() {
        String json = "{\"name\": \"p\", \"owner\": \"me\","
                + " \"streams\": {\"e\": {\"schema\": " + EVENT_SCHEMA + ", \"retention\": 3}},"
                + " \"computations\": {\"c\": {\"processing_function\": \"" + Noop.class.getName() + "\","
                + " \"input_stream_id\": [\"e\"], \"input_ordering\": {},"
                + " \"source_streams\": {\"e\": {\"source_class_name\": \"KafkaSource\", \"paramters\": {}}},"
                + " \"sinks\": {\"s\": {\"sink_class_name\": \"KafkaSink\", \"topic\": \"x\"}},"
                + " \"group_by_schema\": [{\"name\": \"hash\", \"type\": \"uint64\", \"expresion\": \"farm_hash(user)\","
                + " \"sort_order\": \"ascending\"}]}}}";
        PipelineSpec spec = PipelineSpecLoader.fromJson(json);
        List<SpecProblem> w = spec.warnings();
        assertThat(w).allSatisfy(p -> assertThat(p.severity()).isEqualTo(SpecProblem.Severity.WARNING));
        assertThat(w).extracting(SpecProblem::field).containsExactly(
                "owner", "streams.e.retention", "input_stream_id", "input_ordering",
                "source_streams.e.paramters", "sinks.s.topic", "group_by_schema[0].expresion");
        assertThat(w).extracting(SpecProblem::computation).containsExactly(null, null, "c", "c", "c", "c", "c");
        assertThat(w.get(0).message()).contains("unknown field 'owner' is ignored");
        assertThat(w.get(0).fix()).contains("known fields: name, streams, computations");
        assertThat(w.get(2).fix()).contains("did you mean 'input_stream_ids'?");
        assertThat(w.get(3).message()).contains("'input_ordering' is not supported by flow-kafka yet");
        assertThat(w.get(4).fix()).contains("did you mean 'parameters'?");
        assertThat(w.get(6).fix()).contains("did you mean 'expression'?");
        // warnings are reported by validate() too, after the errors
        assertThat(spec.validate()).endsWith(w.toArray(SpecProblem[]::new));
    }

    /** An accepted field is never silently ignored: flow-kafka does not enforce {@code required}, so it says so. */
    @Test
    void shouldWarnThatRequiredKeyColumnsAreNotEnforced() {
        String json = "{\"name\": \"p\", \"streams\": {\"e\": {\"schema\": " + EVENT_SCHEMA + "}},"
                + " \"computations\": {\"c\": {\"processing_function\": \"" + Noop.class.getName() + "\","
                + " \"input_stream_ids\": [\"e\"],"
                + " \"group_by_schema\": [{\"name\": \"hash\", \"type\": \"uint64\", \"expression\": \"farm_hash(user)\","
                + " \"required\": true}]}}}";
        PipelineSpec spec = PipelineSpecLoader.fromJson(json);
        assertThat(spec.warnings()).singleElement().satisfies(p -> {
            assertThat(p.computation()).isEqualTo("c");
            assertThat(p.field()).isEqualTo("group_by_schema[0].required");
            assertThat(p.message()).contains("'required' is not enforced");
        });
    }

    @Test
    void shouldWarnAboutNullParameterValues() {
        PipelineSpec spec = PipelineSpecLoader.fromJson(computation("\"parameters\": {\"a\": null, \"b\": 1}"));
        assertThat(spec.computations().get("c").parameters()).containsOnlyKeys("b");
        assertThat(spec.warnings()).singleElement().satisfies(p -> {
            assertThat(p.field()).isEqualTo("parameters.a");
            assertThat(p.message()).contains("'a' is null and is ignored");
        });
    }

    @Test
    void shouldMergeProcessingFunctionParameters() {
        PipelineSpec spec = PipelineSpecLoader.fromJson(computation(
                "\"parameters\": {\"a\": 1}, \"processing_function_parameters\": {\"b\": \"x\"}"));
        assertThat(spec.computations().get("c").parameters()).containsEntry("a", 1L).containsEntry("b", "x");
    }

    @Test
    void shouldRejectMalformedJsonWithPosition() {
        InvalidSpecException e = catchThrowableOfType(InvalidSpecException.class,
                () -> PipelineSpecLoader.fromJson("{\"name\": \"p\",\n \"streams\": {]}"));
        assertThat(e.problems()).singleElement().satisfies(p -> {
            assertThat(p.field()).isEqualTo("json");
            assertThat(p.message()).isEqualTo("the pipeline spec, line 2, column 14: not valid JSON: Unexpected close "
                    + "marker ']': expected '}' (for Object starting at line 2, column 13)");
        });
    }

    @Test
    void shouldRejectDuplicateKeys() {
        InvalidSpecException e = catchThrowableOfType(InvalidSpecException.class,
                () -> PipelineSpecLoader.fromJson("{\"name\": \"p\", \"name\": \"q\", \"computations\": {}}"));
        assertThat(e.problems()).singleElement().satisfies(p -> assertThat(p.message()).contains("Duplicate field 'name'"));
    }

    @Test
    void shouldRejectNonObjectSpec() {
        assertThatThrownBy(() -> PipelineSpecLoader.fromJson("[1, 2]"))
                .isInstanceOf(InvalidSpecException.class)
                .hasMessageContaining("must be a JSON object but is an array");
        assertThatThrownBy(() -> PipelineSpecLoader.fromJson(""))
                .isInstanceOf(InvalidSpecException.class)
                .hasMessageContaining("must be a JSON object but is empty");
    }

    @Test
    void shouldRejectAtMostOnceStrategyBothBesideAndInsideASinksParameters() {
        // Flow writes it beside the parameters; given twice, one would silently replace the other
        String json = "{\"name\": \"p\", \"streams\": {}, \"computations\": {\"c\": {\"computation_class_name\": \"M\","
                + " \"sinks\": {\"s\": {\"sink_class_name\": \"TKafkaSink\", \"input_stream_ids\": [\"e\"],"
                + " \"at_most_once_strategy\": {\"enabled\": true},"
                + " \"parameters\": {\"topic\": \"t\", \"at_most_once_strategy\": {\"enabled\": false}}}}}}}";
        InvalidSpecException e = catchThrowableOfType(InvalidSpecException.class, () -> PipelineSpecLoader.fromJson(json));
        assertThat(e.problems()).anySatisfy(p -> {
            assertThat(p.field()).isEqualTo("sinks.s.at_most_once_strategy");
            assertThat(p.message()).contains("both beside and inside its parameters");
        });
    }

    @Test
    void shouldReportEveryStructuralErrorAtOnce() {
        String json = "{\"streams\": {\"e\": {\"schema\": {\"type\": \"record\", \"name\": \"E\", \"fields\": 3}},"
                + " \"f\": {\"schema\": 5}},"
                + " \"computations\": {"
                + "  \"c\": {\"computation_class_name\": \"Mapper\", \"input_stream_ids\": \"e\","
                + "   \"group_by_schema\": [{\"name\": \"hash\", \"type\": \"uint128\"}, {\"type\": \"string\"}],"
                + "   \"processing_mode\": \"best_effort\", \"desired_partition_count\": 0,"
                + "   \"sinks\": {\"s\": {\"input_stream_ids\": [\"e\", 7]}},"
                + "   \"parameters\": [1]},"
                + "  \"d\": 42}}";
        InvalidSpecException e = catchThrowableOfType(InvalidSpecException.class, () -> PipelineSpecLoader.fromJson(json));
        assertThat(e.getMessage()).startsWith("pipeline '<unnamed>' has 13 spec error(s)");
        assertThat(e.problems()).extracting(p -> p.computation() + " " + p.field()).containsExactly(
                "null name",
                "null streams.e.schema",
                "null streams.f.schema",
                "c computation_class_name",
                "c input_stream_ids",
                "c sinks.s.sink_class_name",
                "c sinks.s.input_stream_ids[1]",
                "c group_by_schema[0].type",
                "c group_by_schema[1].name",
                "c processing_mode",
                "c parameters",
                "c desired_partition_count",
                "d computations.d");
        assertThat(e.problems()).allSatisfy(p -> assertThat(p.severity()).isEqualTo(SpecProblem.Severity.ERROR));
        assertThat(e.getMessage())
                .contains("the pipeline spec has no name")
                .contains("bad Avro schema")
                .contains("streams.f.schema must be an Avro schema")
                .contains("unknown computation kind 'Mapper'")
                .contains("input_stream_ids must be a list of stream ids but is a string (\"e\")")
                .contains("unknown column type 'uint128'")
                .contains("unknown processing_mode 'best_effort'")
                .contains("desired_partition_count must be a positive integer but was 0")
                .contains("parameters must be an object but is an array");
    }

    @Test
    void shouldReadBatchingParametersFromTheParametersBlock() {
        PipelineSpec spec = PipelineSpecLoader.fromJson(computation("\"computation_class_name\": \"SwiftMap\","
                + " \"parameters\": {\"allow_batching_with_relaxed_guarantees\": true, \"max_batch_size\": 20,"
                + " \"max_batch_delay\": \"50ms\"}"));
        ComputationSpec c = spec.computations().get("c");
        assertThat(c.allowBatchingWithRelaxedGuarantees()).isTrue();
        assertThat(c.maxBatchSize()).isEqualTo(20);
        assertThat(c.maxBatchDelay()).isEqualTo(java.time.Duration.ofMillis(50));
        assertThat(spec.warnings()).isEmpty();
    }

    @Test
    void shouldRejectBatchingParametersBesideTheParametersBlock() {
        InvalidSpecException e = catchThrowableOfType(InvalidSpecException.class, () -> PipelineSpecLoader.fromJson(
                computation("\"computation_class_name\": \"SwiftMap\", \"allow_batching_with_relaxed_guarantees\": true,"
                        + " \"max_batch_size\": 20")));
        assertThat(e.problems()).extracting(p -> p.computation() + " " + p.field())
                .containsExactly("c allow_batching_with_relaxed_guarantees", "c max_batch_size");
        assertThat(e.problems().get(0).message()).contains("allow_batching_with_relaxed_guarantees is a parameter");
        assertThat(e.problems().get(0).fix())
                .isEqualTo("move it into parameters: \"parameters\": {\"allow_batching_with_relaxed_guarantees\": true}");
    }

    @Test
    void shouldRejectProcessingModeForTheWholePipeline() {
        String json = computation("\"processing_mode\": \"exactly_once\"").replaceFirst("\\{\"name\": \"p\",",
                "{\"name\": \"p\", \"processing_mode\": \"at_least_once_consistent\",");
        InvalidSpecException e = catchThrowableOfType(InvalidSpecException.class, () -> PipelineSpecLoader.fromJson(json));
        assertThat(e.problems()).singleElement().satisfies(p -> {
            assertThat(p.computation()).isNull();
            assertThat(p.field()).isEqualTo("processing_mode");
            assertThat(p.message()).contains("processing_mode is set per computation, not for the whole pipeline");
            assertThat(p.fix()).contains("move it into each Transform computation")
                    .contains("\"processing_mode\": \"at_least_once_consistent\"");
        });
    }

    /** A pipeline with one Transform computation {@code c} reading {@code e}, plus {@code extra} fields. */
    private static String computation(String extra) {
        return "{\"name\": \"p\", \"streams\": {\"e\": {\"schema\": " + EVENT_SCHEMA + "}},"
                + " \"computations\": {"
                + "  \"read\": {\"computation_class_name\": \"Source\", \"source_streams\": {\"e\":"
                + "   {\"source_class_name\": \"KafkaSource\", \"parameters\": {\"topics\": [\"t\"]}}}, \"output_stream_ids\": [\"e\"]},"
                + "  \"c\": {\"processing_function\": \"" + Noop.class.getName() + "\", \"input_stream_ids\": [\"e\"],"
                + "   \"group_by_schema\": [{\"name\": \"hash\", \"type\": \"uint64\", \"expression\": \"farm_hash(user)\"}],"
                + extra + "}}}";
    }

    @Test
    void shouldReadWatermarkStrategyWithFlowFieldNames() {
        String json = "{\"name\": \"p\", \"streams\": {\"e\": {\"schema\": " + EVENT_SCHEMA + "}, \"o\": {\"schema\": "
                + EVENT_SCHEMA + "}}, \"computations\": {\"c\": {\"computation_class_name\": \"Source\","
                + " \"output_stream_ids\": [\"o\"],"
                + " \"source_streams\": {\"e\": {\"source_class_name\": \"KafkaSource\", \"parameters\": {\"topics\": \"t\"}}},"
                + " \"watermark_strategy\": {\"event_timestamp_assigner\": {\"column\": \"ts\"},"
                + " \"watermark_generator\": {\"out_of_orderness_bound\": \"30s\","
                + " \"idle_partitions\": {\"duration\": 500, \"max_ratio\": 0.5}}}}}}";
        WatermarkStrategy ws = PipelineSpecLoader.fromJson(json).computations().get("c").watermarkStrategy();
        assertThat(ws.timestampColumn()).isEqualTo("ts");
        assertThat(ws.outOfOrdernessBound()).isEqualTo(java.time.Duration.ofSeconds(30));
        assertThat(ws.idleDuration()).isEqualTo(java.time.Duration.ofMillis(500));
        assertThat(ws.idleMaxRatio()).isEqualTo(0.5);
        assertThat(ws.maxIdlePartitions(5)).isEqualTo(3);
        assertThat(WatermarkStrategy.DEFAULT.maxIdlePartitions(4)).as("ceil(0.4*4)=2").isEqualTo(2);
        assertThat(WatermarkStrategy.DEFAULT.maxIdlePartitions(1)).as("never all of them").isZero();
    }

    @Test
    void shouldReadWatermarkAlignmentWithFlowFieldNamesAndDefaultDriftBound() {
        String json = sourceWithStrategy("{\"watermark_alignment\": {\"group_name\": \"views-and-clicks\", \"drift_bound\": \"5m\"}}");
        WatermarkStrategy ws = PipelineSpecLoader.fromJson(json).computations().get("c").watermarkStrategy();
        assertThat(ws.alignmentGroup()).isEqualTo("views-and-clicks");
        assertThat(ws.driftBound()).isEqualTo(java.time.Duration.ofMinutes(5));

        WatermarkStrategy byDefault = PipelineSpecLoader.fromJson(sourceWithStrategy(
                "{\"watermark_alignment\": {\"group_name\": \"g\"}}")).computations().get("c").watermarkStrategy();
        assertThat(byDefault.driftBound()).as("Flow's default drift_bound").isEqualTo(java.time.Duration.ofMinutes(20));
        assertThat(WatermarkStrategy.DEFAULT.alignmentGroup()).as("no alignment unless asked").isNull();
    }

    @Test
    void shouldRejectWatermarkAlignmentWithoutAGroupName() {
        assertThatThrownBy(() -> PipelineSpecLoader.fromJson(sourceWithStrategy(
                "{\"watermark_alignment\": {\"drift_bound\": \"5m\"}}")))
                .isInstanceOf(InvalidSpecException.class)
                .hasMessageContaining("watermark_strategy.watermark_alignment.group_name")
                .hasMessageContaining("watermark_alignment needs a group_name");
    }

    @Test
    void shouldReportABadDriftBoundOrGroupNameAtItsField() {
        assertThatThrownBy(() -> PipelineSpecLoader.fromJson(sourceWithStrategy(
                "{\"watermark_alignment\": {\"group_name\": \"g\", \"drift_bound\": \"0s\"}}")))
                .isInstanceOf(InvalidSpecException.class)
                .hasMessageContaining("watermark_strategy.watermark_alignment.drift_bound")
                .hasMessageContaining("drift_bound must be > 0");
        assertThatThrownBy(() -> PipelineSpecLoader.fromJson(sourceWithStrategy(
                "{\"watermark_alignment\": {\"group_name\": 7}}")))
                .isInstanceOf(InvalidSpecException.class)
                .hasMessageContaining("watermark_strategy.watermark_alignment.group_name")
                .hasMessageContaining("a non-empty string");
        assertThatThrownBy(() -> PipelineSpecLoader.fromJson(sourceWithStrategy("{\"watermark_alignment\": \"g\"}")))
                .isInstanceOf(InvalidSpecException.class)
                .hasMessageContaining("watermark_strategy.watermark_alignment");
    }

    /** The errors a spec is rejected with; fails when it loads. */
    private static List<SpecProblem> errorsOf(String json) {
        InvalidSpecException e = catchThrowableOfType(InvalidSpecException.class, () -> PipelineSpecLoader.fromJson(json));
        assertThat(e).as("the spec is rejected").isNotNull();
        return e.problems();
    }

    private static String sourceWithStrategy(String strategy) {
        return "{\"name\": \"p\", \"streams\": {\"e\": {\"schema\": " + EVENT_SCHEMA + "}, \"o\": {\"schema\": "
                + EVENT_SCHEMA + "}}, \"computations\": {\"c\": {\"computation_class_name\": \"Source\","
                + " \"output_stream_ids\": [\"o\"],"
                + " \"source_streams\": {\"e\": {\"source_class_name\": \"KafkaSource\", \"parameters\": {\"topics\": \"t\"}}},"
                + " \"watermark_strategy\": " + strategy + "}}}";
    }

    @Test
    void shouldRejectLateDataPartitionsAsNotSupported() {
        assertThat(errorsOf(sourceWithStrategy(
                "{\"watermark_generator\": {\"late_data_partitions\": {\"value\": 90, \"delay\": \"1m\"}}}")))
                .singleElement().satisfies(p -> {
            assertThat(p.computation()).isEqualTo("c");
            assertThat(p.field()).isEqualTo("watermark_strategy.watermark_generator.late_data_partitions");
            assertThat(p.message()).contains("not supported by flow-kafka");
            assertThat(p.fix()).contains("remove late_data_partitions");
        });
        assertThat(PipelineSpecLoader.fromJson(sourceWithStrategy(
                "{\"watermark_generator\": {\"late_data_partitions\": null}}")).warnings())
                .as("null: absent, as Flow's default (no partition hidden)").isEmpty();
    }

    @Test
    void shouldRejectAWatermarkStrategyOnAComputationWithoutSources() {
        assertThat(errorsOf(computation(
                "\"watermark_strategy\": {\"watermark_generator\": {\"out_of_orderness_bound\": \"5m\"}}")))
                .singleElement().satisfies(p -> {
            assertThat(p.computation()).isEqualTo("c");
            assertThat(p.field()).isEqualTo("watermark_strategy");
            assertThat(p.message()).contains("reads no source_streams");
            assertThat(p.fix()).contains("move it to the computation reading the source");
        });
    }

    @Test
    void shouldRejectWatermarkStrategyPartsOfTheWrongType() {
        assertThat(errorsOf(sourceWithStrategy("{\"event_timestamp_assigner\": \"ts\", \"watermark_generator\": "
                + "{\"idle_partitions\": {\"max_ratio\": \"half\"}}}")))
                .extracting(SpecProblem::field).containsExactly(
                "watermark_strategy.event_timestamp_assigner",
                "watermark_strategy.watermark_generator.idle_partitions.max_ratio");
        assertThatThrownBy(() -> PipelineSpecLoader.fromJson(sourceWithStrategy(
                "{\"watermark_generator\": {\"idle_partitions\": 0.5}}")))
                .isInstanceOf(InvalidSpecException.class)
                .hasMessageContaining("watermark_strategy.watermark_generator.idle_partitions must be an object");
        assertThatThrownBy(() -> PipelineSpecLoader.fromJson(sourceWithStrategy("{\"watermark_generator\": \"1m\"}")))
                .isInstanceOf(InvalidSpecException.class)
                .hasMessageContaining("watermark_strategy.watermark_generator must be an object");
    }

    @Test
    void shouldAcceptOnlyAnAscendingSortOrderOfGroupByColumns() {
        String descending = computation("\"parameters\": {}").replace("\"expression\": \"farm_hash(user)\"}",
                "\"expression\": \"farm_hash(user)\", \"sort_order\": \"descending\"}");
        assertThat(errorsOf(descending)).singleElement().satisfies(p -> {
            assertThat(p.computation()).isEqualTo("c");
            assertThat(p.field()).isEqualTo("group_by_schema[0].sort_order");
            assertThat(p.message()).contains("descending").contains("not supported");
            assertThat(p.fix()).contains("\"ascending\"");
        });
        assertThat(PipelineSpecLoader.fromJson(descending.replace("descending", "ascending")).warnings()).isEmpty();
    }

    @Test
    void shouldReportABadWatermarkDurationWithTheField() {
        String json = "{\"name\": \"p\", \"streams\": {\"e\": {\"schema\": " + EVENT_SCHEMA + "}, \"o\": {\"schema\": "
                + EVENT_SCHEMA + "}}, \"computations\": {\"c\": {\"computation_class_name\": \"Source\","
                + " \"output_stream_ids\": [\"o\"],"
                + " \"source_streams\": {\"e\": {\"source_class_name\": \"KafkaSource\", \"parameters\": {\"topics\": \"t\"}}},"
                + " \"watermark_strategy\": {\"watermark_generator\": {\"out_of_orderness_bound\": \"soon\"}}}}}";
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> PipelineSpecLoader.fromJson(json))
                .isInstanceOf(InvalidSpecException.class)
                .hasMessageContaining("watermark_strategy.watermark_generator.out_of_orderness_bound must be a duration")
                .hasMessageContaining("soon");
    }
}
