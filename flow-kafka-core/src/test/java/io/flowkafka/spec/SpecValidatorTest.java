package io.flowkafka.spec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flowkafka.api.Message;
import io.flowkafka.api.OutputCollector;
import io.flowkafka.api.RowFunction;
import io.flowkafka.api.RuntimeContext;
import java.util.List;
import java.util.Map;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.junit.jupiter.api.Test;

class SpecValidatorTest {
    private static final Schema EVENT = SchemaBuilder.record("Event").namespace("test").fields()
            .requiredString("user").requiredLong("n").endRecord();
    private static final Schema COUNT = SchemaBuilder.record("Count").namespace("test").fields()
            .requiredString("user").requiredLong("total").endRecord();
    private static final Schema TOTAL = SchemaBuilder.record("Total").namespace("test").fields()
            .requiredLong("total").endRecord();
    private static final Schema CLICK = SchemaBuilder.record("Click").namespace("test").fields()
            .requiredString("uid").endRecord();

    /** A valid process function. */
    public static final class Counter implements RowFunction {
        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
        }
    }

    /** Not a process function. */
    public static final class NotAFunction {
    }

    /** A process function without a no-argument constructor. */
    public static final class NeedsArgument implements RowFunction {
        public NeedsArgument(int ignored) {
        }

        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
        }
    }

    // ---- the valid baseline: read (Source) -> events -> count (Transform) -> counts -> sink ----

    private static ComputationSpec.Builder read() {
        return ComputationSpec.builder("read").kind(ComputationKind.SOURCE)
                .source("events", "KafkaSource", Map.of("topics", "user-events"))
                .outputStreamIds("events");
    }

    private static ComputationSpec.Builder count() {
        return ComputationSpec.builder("count")
                .processingFunction(Counter.class.getName())
                .inputStreamIds("events").outputStreamIds("counts")
                .groupBy("hash", ColumnType.UINT64, "farm_hash(user)")
                .groupBy("user", ColumnType.STRING, null)
                .state("total", TOTAL)
                .sink("out", "KafkaSink", List.of("counts"), Map.of("topic", "counts-out"));
    }

    private static ComputationSpec.Builder transform(String id) {
        return ComputationSpec.builder(id).processingFunction(Counter::new)
                .groupBy("hash", ColumnType.UINT64, "farm_hash(user)");
    }

    private static PipelineSpec.Builder streams() {
        return PipelineSpec.builder("activity").stream("events", EVENT).stream("counts", COUNT);
    }

    private static PipelineSpec spec(ComputationSpec.Builder... computations) {
        return spec(streams(), computations);
    }

    private static PipelineSpec spec(PipelineSpec.Builder pipeline, ComputationSpec.Builder... computations) {
        for (ComputationSpec.Builder c : computations) {
            pipeline.computation(c.build());
        }
        return pipeline.build();
    }

    private static List<SpecProblem> errors(PipelineSpec spec) {
        return spec.validate().stream().filter(p -> p.severity() == SpecProblem.Severity.ERROR).toList();
    }

    /** Asserts that the spec has exactly one error, at this computation and field, with these fragments. */
    private static SpecProblem assertSingleError(PipelineSpec spec, String computation, String field,
            String messageFragment, String fixFragment) {
        List<SpecProblem> errors = errors(spec);
        assertThat(errors).as("errors: %s", errors).hasSize(1);
        return assertProblem(errors.get(0), computation, field, messageFragment, fixFragment);
    }

    private static SpecProblem assertProblem(SpecProblem p, String computation, String field, String messageFragment,
            String fixFragment) {
        assertThat(p.computation()).as("computation of %s", p).isEqualTo(computation);
        assertThat(p.field()).as("field of %s", p).isEqualTo(field);
        assertThat(p.message()).contains(messageFragment);
        assertThat(p.fix()).contains(fixFragment);
        return p;
    }

    private static SpecProblem findError(PipelineSpec spec, String field) {
        List<SpecProblem> errors = errors(spec);
        return errors.stream().filter(p -> p.field().equals(field)).findFirst()
                .orElseThrow(() -> new AssertionError("no error at " + field + " in " + errors));
    }

    // ---- baseline ----

    @Test
    void shouldAcceptValidPipeline() {
        PipelineSpec spec = spec(read(), count());
        assertThat(spec.validate()).isEmpty();
        assertThat(spec.validated()).isSameAs(spec);
    }

    @Test
    void shouldAcceptFunctionSupplierAndUint64ColumnFromLongField() {
        PipelineSpec spec = spec(read(), ComputationSpec.builder("count").processingFunction(Counter::new)
                .inputStreamIds("events").outputStreamIds("counts")
                .groupBy("n", ColumnType.UINT64, null));
        assertThat(spec.validate()).isEmpty();
    }

    // ---- unknown stream ids ----

    @Test
    void shouldRejectUnknownInputStreamAndSuggestClosest() {
        assertSingleError(spec(read(), count().inputStreamIds("evnts")), "count", "input_stream_ids",
                "unknown stream 'evnts'", "did you mean 'events'?");
    }

    @Test
    void shouldRejectUnknownInputStreamWithoutSuggestionWhenNothingIsClose() {
        assertSingleError(spec(read(), count().inputStreamIds("purchases")), "count", "input_stream_ids",
                "unknown stream 'purchases'", "declare 'purchases' in streams");
    }

    @Test
    void shouldNotSuggestIdsThatShareNothingWithShortUnknownId() {
        SpecProblem p = assertSingleError(spec(read(), count().inputStreamIds("x")), "count", "input_stream_ids",
                "unknown stream 'x'", "declare 'x' in streams");
        assertThat(p.fix()).doesNotContain("did you mean");
        assertThat(SpecValidator.editDistance("evnts", "events")).isEqualTo(1);
        assertThat(SpecValidator.closest("cnts", List.of("events", "counts"))).isEqualTo("counts");
    }

    @Test
    void shouldRejectUnknownOutputStreamAsMissingSchema() {
        PipelineSpec spec = spec(read(), count(), transform("audit").inputStreamIds("counts").outputStreamIds("audits"));
        SpecProblem p = assertSingleError(spec, "audit", "output_stream_ids", "stream 'audits'",
                "add 'audits' to streams with an Avro record schema");
        assertThat(p.message()).contains("missing schema");
    }

    @Test
    void shouldSuggestClosestDeclaredStreamForUnknownOutput() {
        PipelineSpec spec = spec(streams().stream("audits", COUNT), read(), count(),
                transform("audit").inputStreamIds("counts").outputStreamIds("audit"));
        List<SpecProblem> errors = errors(spec);
        assertThat(errors).anySatisfy(p -> assertProblem(p, "audit", "output_stream_ids", "missing schema",
                "did you mean 'audits'?"));
    }

    @Test
    void shouldRejectUnknownSourceStream() {
        PipelineSpec spec = spec(ComputationSpec.builder("read").kind(ComputationKind.SOURCE)
                .source("evnts", "KafkaSource", Map.of("topics", "user-events")).outputStreamIds("events"), count());
        assertSingleError(spec, "read", "source_streams.evnts", "stream 'evnts' is written here but missing from streams",
                "did you mean 'events'?");
    }

    @Test
    void shouldRejectUnknownSinkInputStream() {
        PipelineSpec spec = spec(read(), count().sink("more", "KafkaSink", List.of("cunts"), Map.of("topic", "t")));
        assertSingleError(spec, "count", "sinks.more.input_stream_ids", "unknown stream 'cunts'",
                "did you mean 'counts'?");
    }

    @Test
    void shouldRejectUnknownStreamsDependencyKeyAndValue() {
        PipelineSpec spec = spec(read(), count().streamsDependency("cnts", List.of("events"))
                .streamsDependency("counts", List.of("evnts")));
        List<SpecProblem> errors = errors(spec);
        assertThat(errors).hasSize(2);
        assertProblem(errors.get(0), "count", "streams_dependency.cnts", "unknown stream 'cnts'",
                "did you mean 'counts'?");
        assertProblem(errors.get(1), "count", "streams_dependency.counts", "unknown stream 'evnts'",
                "did you mean 'events'?");
    }

    // ---- writers and readers ----

    @Test
    void shouldRejectStreamWithTwoWriters() {
        PipelineSpec spec = spec(read(), count(), transform("copy").inputStreamIds("events").outputStreamIds("counts"));
        assertSingleError(spec, "copy", "output_stream_ids", "stream 'counts' has 2 writers",
                "let one computation write 'counts'");
    }

    @Test
    void shouldRejectStreamWrittenByOutputAndBySource() {
        PipelineSpec spec = spec(read(), count(), ComputationSpec.builder("import").kind(ComputationKind.SOURCE)
                .source("counts", "KafkaSource", Map.of("topics", "old-counts")).outputStreamIds("counts"));
        SpecProblem p = assertSingleError(spec, "import", "output_stream_ids", "stream 'counts' has 2 writers",
                "give the other's output a new stream id");
        assertThat(p.message()).contains("'count' (output_stream_ids)");
    }

    @Test
    void shouldRejectStreamReadButNeverWritten() {
        PipelineSpec spec = spec(streams().stream("clicks", EVENT), read(), count().inputStreamIds("clicks"));
        assertSingleError(spec, "count", "input_stream_ids", "stream 'clicks' is read but never written",
                "add 'clicks' to the output_stream_ids");
    }

    // ---- schemas ----

    @Test
    void shouldRejectOutputStreamDeclaredWithoutSchema() {
        PipelineSpec spec = spec(PipelineSpec.builder("activity").stream("events", EVENT).streamWithoutSchema("counts"),
                read(), count());
        assertSingleError(spec, "count", "streams.counts.schema", "stream 'counts' has no schema",
                "an Avro record schema");
    }

    @Test
    void shouldRejectStreamSchemaThatIsNotRecord() {
        PipelineSpec spec = spec(PipelineSpec.builder("activity").stream("events", EVENT)
                .stream("counts", Schema.create(Schema.Type.STRING)), read(), count());
        assertSingleError(spec, "count", "streams.counts.schema", "schema of type string",
                "wrap the payload in a record schema");
    }

    // ---- group_by_schema ----

    @Test
    void shouldRejectGroupByWhoseFirstColumnIsNotUint64() {
        PipelineSpec spec = spec(read(), ComputationSpec.builder("count").processingFunction(Counter::new)
                .inputStreamIds("events").outputStreamIds("counts").groupBy("user", ColumnType.STRING, null));
        assertSingleError(spec, "count", "group_by_schema[0]", "first group_by_schema column 'user' is string, "
                + "but it must be uint64", "farm_hash(user)");
    }

    @Test
    void shouldRequireGroupByForComputationWithInputs() {
        PipelineSpec spec = spec(read(), ComputationSpec.builder("count").processingFunction(Counter::new)
                .inputStreamIds("events").outputStreamIds("counts"));
        assertSingleError(spec, "count", "group_by_schema", "a computation with inputs needs group_by_schema",
                "add a first uint64 column");
    }

    @Test
    void shouldRejectGroupByInSourceComputation() {
        PipelineSpec spec = spec(read().groupBy("hash", ColumnType.UINT64, "farm_hash(user)"), count());
        assertSingleError(spec, "read", "group_by_schema", "a Source computation has no group_by_schema",
                "remove group_by_schema");
    }

    @Test
    void shouldRejectGroupByExpressionThatDoesNotParseOnEveryInputStream() {
        PipelineSpec spec = spec(streams().stream("clicks", CLICK), read(),
                ComputationSpec.builder("clicks").kind(ComputationKind.SOURCE)
                        .source("clicks", "KafkaSource", Map.of("topics", List.of("user-clicks"))).outputStreamIds("clicks"),
                count().inputStreamIds("clicks"));
        List<SpecProblem> errors = errors(spec);
        assertThat(errors).hasSize(2);
        assertProblem(errors.get(0), "count", "group_by_schema[0]",
                "cannot be computed from input stream 'clicks'", "add them to the schema of 'clicks'");
        assertThat(errors.get(0).message()).contains("unknown column 'user'").contains("[uid]");
        assertProblem(errors.get(1), "count", "group_by_schema[1]", "column 'user' cannot be computed from input "
                + "stream 'clicks'", "change the expression");
    }

    @Test
    void shouldRejectGroupByExpressionWithBadSyntax() {
        PipelineSpec spec = spec(read(), ComputationSpec.builder("count").processingFunction(Counter::new)
                .inputStreamIds("events").outputStreamIds("counts").groupBy("hash", ColumnType.UINT64, "farm_hash(user"));
        assertSingleError(spec, "count", "group_by_schema[0]", "bad syntax", "farm_hash(user");
    }

    @Test
    void shouldRejectGroupByColumnWhoseTypeDisagreesWithExpression() {
        PipelineSpec spec = spec(read(), count().groupBy("user_hash", ColumnType.STRING, "farm_hash(user)"));
        assertSingleError(spec, "count", "group_by_schema[2]", "column 'user_hash' is declared string but its "
                + "expression 'farm_hash(user)' yields uint64", "declare the column as uint64");
    }

    @Test
    void shouldRejectDuplicateGroupByColumnNames() {
        PipelineSpec spec = spec(read(), count().groupBy("user", ColumnType.STRING, null));
        assertSingleError(spec, "count", "group_by_schema[2]", "column 'user' is declared more than once",
                "distinct name");
    }

    // ---- inputs and sources ----

    @Test
    void shouldRejectComputationWithBothInputsAndSources() {
        PipelineSpec spec = spec(streams().stream("extra", EVENT), read(),
                count().source("extra", "KafkaSource", Map.of("topics", "extra")));
        assertSingleError(spec, "count", "source_streams", "has both input_stream_ids and source_streams",
                "move the sources to a Source computation");
    }

    @Test
    void shouldRejectComputationWithNeitherInputsNorSources() {
        PipelineSpec spec = spec(streams().stream("ticks", EVENT), read(), count(),
                ComputationSpec.builder("idle").processingFunction(Counter::new).outputStreamIds("ticks"));
        assertSingleError(spec, "idle", "input_stream_ids", "has neither input_stream_ids nor source_streams",
                "or declare key_visitor_streams");
    }

    @Test
    void shouldAcceptVisitorOnlyComputation() {
        PipelineSpec spec = spec(read(), count(), ComputationSpec.builder("sweep").processingFunction(Counter::new)
                .groupBy("hash", ColumnType.UINT64, null).state("total", TOTAL)
                .keyVisitorStream("ttl", Map.of("names", List.of("total"))));
        assertThat(spec.validate()).isEmpty();
    }

    // ---- kinds ----

    @Test
    void shouldRejectSwiftMapWithSources() {
        PipelineSpec spec = spec(streams().stream("raw", EVENT), read(), count(),
                ComputationSpec.builder("fast").kind(ComputationKind.SWIFT_MAP).processingFunction(Counter::new)
                        .source("raw", "KafkaSource", Map.of("topics", "raw")));
        assertSingleError(spec, "fast", "source_streams", "a SwiftMap computation cannot have source_streams",
                "read the source in a Source computation");
    }

    @Test
    void shouldRejectSwiftMapWithSinks() {
        PipelineSpec spec = spec(streams().stream("fast", COUNT), read(), count(),
                transform("fast").kind(ComputationKind.SWIFT_MAP).inputStreamIds("events").outputStreamIds("fast")
                        .sink("s", "KafkaSink", List.of("fast"), Map.of("topic", "t")));
        assertSingleError(spec, "fast", "sinks", "a SwiftMap computation cannot have sinks",
                "attach the sink to a Transform computation");
    }

    @Test
    void shouldRejectSwiftMapWithTimers() {
        PipelineSpec spec = spec(streams().stream("fast", COUNT), read(), count(),
                transform("fast").kind(ComputationKind.SWIFT_MAP).inputStreamIds("events").outputStreamIds("fast")
                        .timer("t", Map.of()));
        assertSingleError(spec, "fast", "timers", "timers only in Transform computations: SwiftMap computation 'fast'",
                "make 'fast' a Transform computation");
    }

    @Test
    void shouldRejectWatermarkAlignmentOnAComputationWithoutSources() {
        PipelineSpec spec = spec(read(), count().watermarkStrategy(WatermarkStrategy.DEFAULT.withAlignment("g",
                java.time.Duration.ofMinutes(5))));
        assertSingleError(spec, "count", "watermark_strategy.watermark_alignment",
                "computation 'count' aligns its watermark with group 'g' but reads no source_streams",
                "set it on the computations that read the sources");
    }

    @Test
    void shouldRejectTwoDriftBoundsInOneAlignmentGroup() {
        PipelineSpec spec = spec(streams().stream("clicks", EVENT),
                read().watermarkStrategy(WatermarkStrategy.DEFAULT.withAlignment("g", java.time.Duration.ofMinutes(5))),
                ComputationSpec.builder("read_clicks").kind(ComputationKind.SOURCE)
                        .source("clicks", "KafkaSource", Map.of("topics", "user-clicks")).outputStreamIds("clicks")
                        .watermarkStrategy(WatermarkStrategy.DEFAULT.withAlignment("g", java.time.Duration.ofMinutes(20))),
                count());
        assertSingleError(spec, "read_clicks", "watermark_strategy.watermark_alignment.drift_bound",
                "alignment group 'g' has drift_bound 20m in 'read_clicks' but 5m in 'read'",
                "give every computation of group 'g' the same drift_bound");
    }

    @Test
    void shouldRejectTimersInSourceComputation() {
        PipelineSpec spec = spec(read().timer("t", Map.of()), count());
        assertSingleError(spec, "read", "timers", "timers only in Transform computations: Source computation 'read'",
                "remove the timers");
    }

    @Test
    void shouldRejectSourceComputationWithoutSource() {
        PipelineSpec spec = spec(read(), count(), ComputationSpec.builder("empty").kind(ComputationKind.SOURCE)
                .processingFunction(Counter::new));
        assertSingleError(spec, "empty", "source_streams", "a Source computation needs exactly one source, but "
                + "'empty' has 0", "add one entry to source_streams");
    }

    @Test
    void shouldRejectSourceComputationWithTwoSources() {
        PipelineSpec spec = spec(streams().stream("more", EVENT),
                read().source("more", "KafkaSource", Map.of("topics", "more")), count());
        assertSingleError(spec, "read", "source_streams", "needs exactly one source, but 'read' has 2",
                "one Source computation each");
    }

    @Test
    void shouldRejectTransformOrderedSourceWithInputs() {
        PipelineSpec spec = spec(streams().stream("ordered", EVENT), read(), count(),
                ComputationSpec.builder("ordered").kind(ComputationKind.TRANSFORM_ORDERED_SOURCE)
                        .source("ordered", "KafkaSource", Map.of("topics", "o")).outputStreamIds("ordered")
                        .inputStreamIds("counts"));
        assertSingleError(spec, "ordered", "input_stream_ids",
                "a TransformOrderedSource computation cannot have input_stream_ids", "remove input_stream_ids");
    }

    @Test
    void shouldRejectATransformOrderedSourceWithStateReadingSeveralTopics() {
        // catalog: TransformOrderedSource has "state keyed by source partition"; a task reads partition p of every
        // topic of its source, so two topics would share one state row per partition
        assertThat(errors(spec(streams().stream("ordered", EVENT), read(), count(), orderedWithState("o1", "o2"))))
                .anySatisfy(p -> assertProblem(p, "ordered", "source_streams.ordered.parameters.topics",
                        "keeps state per source partition, but its source reads 2 topics [o1, o2]",
                        "read one topic per TransformOrderedSource computation"));
        assertThat(errors(spec(streams().stream("ordered", EVENT), read(), count(), orderedWithState("o1"))))
                .noneSatisfy(p -> assertThat(p.field()).startsWith("source_streams"));
    }

    /** A TransformOrderedSource {@code ordered} with state {@code total}, reading {@code topics}. */
    private static ComputationSpec.Builder orderedWithState(String... topics) {
        return ComputationSpec.builder("ordered").kind(ComputationKind.TRANSFORM_ORDERED_SOURCE)
                .source("ordered", "KafkaSource", Map.of("topics", List.of(topics))).outputStreamIds("ordered")
                .processingFunction(Counter::new).state("total", TOTAL);
    }

    // ---- processing function ----

    @Test
    void shouldRejectTransformWithoutProcessingFunction() {
        PipelineSpec spec = spec(read(), ComputationSpec.builder("count").inputStreamIds("events")
                .outputStreamIds("counts").groupBy("hash", ColumnType.UINT64, "farm_hash(user)"));
        assertSingleError(spec, "count", "processing_function", "Transform computation 'count' has no "
                + "processing_function", "RowFunction or BatchFunction");
    }

    @Test
    void shouldRejectSourceWithoutFunctionAndTwoOutputs() {
        PipelineSpec spec = spec(streams().stream("copy", EVENT), read().outputStreamIds("copy"), count());
        assertSingleError(spec, "read", "output_stream_ids", "forwards its source messages to its single output, "
                + "but 'read' has 2 output streams", "exactly one entry in output_stream_ids");
    }

    @Test
    void shouldRejectProcessingFunctionThatCannotBeLoaded() {
        PipelineSpec spec = spec(read(), count().processingFunction("com.acme.Missing"));
        assertSingleError(spec, "count", "processing_function", "class 'com.acme.Missing' cannot be loaded",
                "put its jar on the classpath");
    }

    @Test
    void shouldRejectProcessingFunctionThatIsNotAFunction() {
        PipelineSpec spec = spec(read(), count().processingFunction(NotAFunction.class.getName()));
        assertSingleError(spec, "count", "processing_function",
                "does not implement io.flowkafka.api.RowFunction or io.flowkafka.api.BatchFunction",
                "implements io.flowkafka.api.RowFunction");
    }

    @Test
    void shouldRejectProcessingFunctionWithoutNoArgConstructor() {
        PipelineSpec spec = spec(read(), count().processingFunction(NeedsArgument.class.getName()));
        assertSingleError(spec, "count", "processing_function", "has no public no-argument constructor",
                "public no-argument constructor");
    }

    // ---- sinks and connectors ----

    @Test
    void shouldRejectSinkReadingStreamThatIsNotOwnOutput() {
        PipelineSpec spec = spec(read(), count().sink("raw", "KafkaSink", List.of("events"), Map.of("topic", "raw")));
        assertSingleError(spec, "count", "sinks.raw.input_stream_ids", "sink 'raw' reads 'events', which is not an "
                + "output of its computation 'count'", "attach the sink to computation 'read'");
    }

    /** Docs/code audit: with both, topic was dropped without a word. */
    @Test
    void shouldRejectKafkaSourceWithBothTopicAndTopics() {
        PipelineSpec spec = spec(ComputationSpec.builder("read").kind(ComputationKind.SOURCE)
                .source("events", "KafkaSource", Map.of("topic", "a", "topics", List.of("b"))).outputStreamIds("events"),
                count());
        assertSingleError(spec, "read", "source_streams.events.parameters.topic",
                "KafkaSource of stream 'events' sets both topic and topics", "list every topic in parameters.topics");
    }

    @Test
    void shouldRejectKafkaSourceWithoutTopics() {
        PipelineSpec spec = spec(ComputationSpec.builder("read").kind(ComputationKind.SOURCE)
                .source("events", "KafkaSource", Map.of("format", "json")).outputStreamIds("events"), count());
        assertSingleError(spec, "read", "source_streams.events.parameters.topics",
                "KafkaSource of stream 'events' has no 'topics' parameter", "set parameters.topics");
    }

    // ---- KafkaSource parameters ----

    /** A Serde<GenericRecord> that a value_serde may name. */
    public static final class RecordSerde implements org.apache.kafka.common.serialization.Serde<
            org.apache.avro.generic.GenericRecord> {
        @Override
        public org.apache.kafka.common.serialization.Serializer<org.apache.avro.generic.GenericRecord> serializer() {
            return (topic, data) -> new byte[0];
        }

        @Override
        public org.apache.kafka.common.serialization.Deserializer<org.apache.avro.generic.GenericRecord> deserializer() {
            return (topic, data) -> null;
        }
    }

    private static PipelineSpec withSource(Map<String, Object> parameters) {
        return spec(ComputationSpec.builder("read").kind(ComputationKind.SOURCE)
                .source("events", "KafkaSource", parameters).outputStreamIds("events"), count());
    }

    private static List<SpecProblem> warnings(PipelineSpec spec) {
        return spec.validate().stream().filter(p -> p.severity() == SpecProblem.Severity.WARNING).toList();
    }

    @Test
    void shouldAcceptEveryKafkaSourceParameter() {
        PipelineSpec spec = withSource(Map.ofEntries(Map.entry("topics", List.of("a", "b")),
                Map.entry("value_serde", RecordSerde.class.getName()),
                Map.entry("serde_config", Map.of("schema.registry.url", "mock://x")), Map.entry("key_column", "user"),
                Map.entry("event_timestamp_column", "n"), Map.entry("event_timestamp_unit", "us"),
                Map.entry("starting_position", "latest"), Map.entry("finite", true), Map.entry("group_id", "legacy"),
                Map.entry("use_consumer_group_offset", "true"), Map.entry("partition_filter", List.of(0L, "2-3"))));

        assertThat(spec.validate()).isEmpty();
    }

    @Test
    void shouldRejectABadPartitionFilter() {
        assertSingleError(withSource(Map.of("topics", "t", "partition_filter", List.of(1L, "5-2"))), "read",
                "source_streams.events.parameters.partition_filter", "range \"5-2\" ends before it starts",
                "e.g. [0, 1, \"4-7\"]");
    }

    @Test
    void shouldRejectUseConsumerGroupOffsetWithoutGroupId() {
        assertSingleError(withSource(Map.of("topics", "t", "use_consumer_group_offset", true)), "read",
                "source_streams.events.parameters.use_consumer_group_offset", "no group_id names the group",
                "set group_id");
    }

    @Test
    void shouldWarnThatGroupIdAloneIsIgnored() {
        PipelineSpec spec = withSource(Map.of("topics", "t", "group_id", "legacy"));

        assertThat(errors(spec)).isEmpty();
        assertThat(warnings(spec)).singleElement().satisfies(w -> assertProblem(w, "read",
                "source_streams.events.parameters.group_id", "group_id 'legacy' is ignored: Kafka Streams reads with "
                        + "one consumer group per pipeline", "set use_consumer_group_offset: true"));
    }

    /** Spec audit: the unit applies to a timestamp column only; the record timestamp is always in milliseconds. */
    @Test
    void shouldWarnThatATimestampUnitWithoutAColumnIsIgnored() {
        PipelineSpec spec = withSource(Map.of("topics", "t", "event_timestamp_unit", "s"));

        assertThat(errors(spec)).isEmpty();
        assertThat(warnings(spec)).singleElement().satisfies(w -> assertProblem(w, "read",
                "source_streams.events.parameters.event_timestamp_unit", "event_timestamp_unit of stream 'events' is "
                        + "ignored", "set event_timestamp_column"));
        assertThat(withSource(Map.of("topics", "t", "event_timestamp_unit", "s", "event_timestamp_column", "n"))
                .validate()).as("with the column it reads").isEmpty();
    }

    /**
     * Docs/code audit: a misspelt parameter was a warning, and the setting it meant silently kept its default (every
     * partition read). A misspelling is an error; a name like no parameter (a Flow source's own) stays a warning.
     */
    @Test
    void shouldRejectAMisspeltSourceParameterAndWarnAboutAnUnknownOne() {
        PipelineSpec spec = withSource(Map.of("topics", "t", "partiton_filter", List.of(0L), "yt_cluster", "hahn"));

        assertThat(errors(spec)).singleElement().satisfies(e -> assertProblem(e, "read",
                "source_streams.events.parameters.partiton_filter", "unknown KafkaSource parameter 'partiton_filter'",
                "did you mean 'partition_filter'?"));
        assertThat(warnings(spec)).singleElement().satisfies(w -> assertProblem(w, "read",
                "source_streams.events.parameters.yt_cluster", "unknown KafkaSource parameter 'yt_cluster' is ignored",
                "use one of"));
    }

    @Test
    void shouldRejectMisspeltTimerAndKeyVisitorParameters() {
        PipelineSpec spec = spec(read(), count().timer("t", Map.of("time_typ", "event_time"))
                .keyVisitorStream("scan", Map.of("priod", "1h")));

        assertThat(errors(spec)).extracting(SpecProblem::field).containsExactlyInAnyOrder("timers.t.time_typ",
                "key_visitor_streams.scan.priod");
        assertThat(errors(spec)).extracting(SpecProblem::fix).anyMatch(f -> f.startsWith("did you mean 'time_type'?"))
                .anyMatch(f -> f.startsWith("did you mean 'period'?"));
    }

    @Test
    void shouldRejectBadValuesOfKnownSourceParameters() {
        PipelineSpec spec = withSource(Map.of("topics", "t", "format", "protobuf", "finite", "yes",
                "starting_position", "newest", "key_column", "usr"));

        assertThat(errors(spec)).hasSize(4);
        assertProblem(findError(spec, "source_streams.events.parameters.format"), "read",
                "source_streams.events.parameters.format", "unknown format 'protobuf'", "one of [json, avro]");
        assertProblem(findError(spec, "source_streams.events.parameters.finite"), "read",
                "source_streams.events.parameters.finite", "finite must be true or false but was 'yes'", "true or false");
        assertProblem(findError(spec, "source_streams.events.parameters.starting_position"), "read",
                "source_streams.events.parameters.starting_position", "unknown starting_position 'newest'", "earliest");
        assertProblem(findError(spec, "source_streams.events.parameters.key_column"), "read",
                "source_streams.events.parameters.key_column", "key_column 'usr' is not a field of stream 'events'",
                "[user, n]");
    }

    @Test
    void shouldRejectAKeyColumnThatCannotTakeTheKeyString() {
        // the record key goes into key_column as a string: a long field would fail every record, far from the spec
        assertSingleError(withSource(Map.of("topics", "t", "key_column", "n")), "read",
                "source_streams.events.parameters.key_column", "key_column 'n' of stream 'events' is a long, but the "
                        + "record key goes into it as a string", "name a string field of stream 'events'");
        assertThat(errors(withSource(Map.of("topics", "t", "key_column", "user")))).isEmpty();
    }

    @Test
    void shouldRejectAValueSerdeThatIsNotARecordSerde() {
        assertSingleError(withSource(Map.of("topics", "t", "value_serde",
                        org.apache.kafka.common.serialization.Serdes.StringSerde.class.getName())), "read",
                "source_streams.events.parameters.value_serde", "is a Serde<java.lang.String>, not a "
                        + "Serde<GenericRecord>", "ConfluentAvroSerde");
        assertSingleError(withSource(Map.of("topics", "t", "value_serde", "com.example.Missing")), "read",
                "source_streams.events.parameters.value_serde", "value_serde class 'com.example.Missing' of source "
                        + "'events' cannot be loaded", "add io.flowkafka:flow-kafka-connectors to the class path");
    }

    @Test
    void shouldRejectFormatTogetherWithValueSerde() {
        assertSingleError(withSource(Map.of("topics", "t", "format", "avro", "value_serde",
                        RecordSerde.class.getName())), "read", "source_streams.events.parameters.format",
                "format and value_serde are both set", "remove format");
    }

    @Test
    void shouldRejectPayloadColumnTogetherWithValueSerdeOnASink() {
        PipelineSpec spec = spec(read(), count().sink("serde", "KafkaSink", List.of("counts"), Map.of("topic", "c",
                "payload_column", "user", "value_serde", RecordSerde.class.getName())));

        assertSingleError(spec, "count", "sinks.serde.parameters.payload_column", "payload_column and value_serde are "
                + "both set", "remove payload_column");
    }

    @Test
    void shouldRejectAKafkaSinkFormatOrTimestampItWouldReadAsTheDefault() {
        // the router tests format == "avro" and timestamp == "system": "Avro" would write JSON, "processing" event time
        assertSingleError(spec(read(), count().sink("a", "KafkaSink", List.of("counts"), Map.of("topic", "c",
                "format", "Avro"))), "count", "sinks.a.parameters.format", "unknown format 'Avro'", "[json, avro]");
        assertSingleError(spec(read(), count().sink("t", "KafkaSink", List.of("counts"), Map.of("topic", "c",
                "timestamp", "processing"))), "count", "sinks.t.parameters.timestamp", "unknown timestamp 'processing'",
                "[event, system]");
    }

    @Test
    void shouldRejectAnUnknownKafkaSinkParameterWithTheClosestName() {
        assertSingleError(spec(read(), count().sink("k", "KafkaSink", List.of("counts"), Map.of("topic", "c",
                "key_colum", "user"))), "count", "sinks.k.parameters.key_colum", "unknown KafkaSink parameter",
                "did you mean 'key_column'?");
    }

    @Test
    void shouldRejectASinkKeyOrPayloadColumnMissingFromItsInputOrNotAScalar() {
        assertSingleError(spec(read(), count().sink("k", "KafkaSink", List.of("counts"), Map.of("topic", "c",
                "key_column", "usr"))), "count", "sinks.k.parameters.key_column", "'usr' of sink 'k' is not a column "
                + "of its input stream 'counts'", "did you mean 'user'?");
        Schema nested = SchemaBuilder.record("Nested").namespace("test").fields().requiredString("user")
                .requiredLong("total").name("detail").type(TOTAL).noDefault().endRecord();
        PipelineSpec spec = spec(PipelineSpec.builder("activity").stream("events", EVENT).stream("counts", nested),
                read(), count().sink("p", "KafkaSink", List.of("counts"), Map.of("topic", "c",
                        "payload_column", "detail")));
        assertSingleError(spec, "count", "sinks.p.parameters.payload_column", "is a record in stream 'counts', but it "
                + "must be a string, number, boolean or bytes column", "remove payload_column");
    }

    @Test
    void shouldWarnAboutSerdeConfigWithoutValueSerde() {
        PipelineSpec spec = spec(read(), count().sink("cfg", "KafkaSink", List.of("counts"), Map.of("topic", "c",
                "serde_config", Map.of("schema.registry.url", "mock://x"))));

        assertThat(errors(spec)).isEmpty();
        assertThat(warnings(spec)).singleElement().satisfies(w -> assertProblem(w, "count",
                "sinks.cfg.parameters.serde_config", "serde_config is ignored without value_serde", "set value_serde"));
    }

    @Test
    void shouldRejectKafkaSinkWithoutTopic() {
        PipelineSpec spec = spec(read(), count().sink("noTopic", "KafkaSink", List.of("counts"), Map.of()));
        assertSingleError(spec, "count", "sinks.noTopic.parameters.topic", "KafkaSink 'noTopic' has no 'topic' "
                + "parameter", "set sinks.noTopic.parameters.topic");
    }

    @Test
    void shouldRejectUnknownSourceClassName() {
        PipelineSpec spec = spec(ComputationSpec.builder("read").kind(ComputationKind.SOURCE)
                .source("events", "TKafkaSource", Map.of("topics", "t")).outputStreamIds("events"), count());
        assertSingleError(spec, "read", "source_streams.events.source_class_name",
                "unknown source_class_name 'TKafkaSource'", "use one of the known sources: KafkaSource");
    }

    @Test
    void shouldRejectUnknownSinkClassName() {
        PipelineSpec spec = spec(read(), count().sink("http", "HttpSink", List.of("counts"), Map.of()));
        assertSingleError(spec, "count", "sinks.http.sink_class_name", "unknown sink_class_name 'HttpSink'",
                "use one of the known sinks: KafkaSink");
    }

    // ---- streams_dependency, key visitors, timers ----

    @Test
    void shouldRejectStreamsDependencyKeyThatIsNotOutputOrTimer() {
        PipelineSpec spec = spec(read(), count().streamsDependency("events", List.of("events")));
        assertSingleError(spec, "count", "streams_dependency.events", "stream 'events' is not an output or timer "
                + "stream of 'count'", "use one of [counts]");
    }

    @Test
    void shouldAcceptStreamsDependencyOnTimersAndInputs() {
        PipelineSpec spec = spec(read(), count().timer("flush", Map.of())
                .streamsDependency("counts", List.of("events", "flush")).streamsDependency("flush", List.of("events")));
        assertThat(spec.validate()).isEmpty();
    }

    @Test
    void shouldRejectKeyVisitorNamesOfUndeclaredStates() {
        PipelineSpec spec = spec(read(), count().keyVisitorStream("ttl", Map.of("names", List.of("totl"))));
        assertSingleError(spec, "count", "key_visitor_streams.ttl.names", "visits state 'totl', which computation "
                + "'count' does not declare", "did you mean 'total'?");
    }

    @Test
    void shouldRejectDuplicateTimerStreamIds() {
        PipelineSpec spec = spec(read(), count().timer("flush", Map.of()).timer("flush", Map.of("time_type", "event_time")));
        assertSingleError(spec, "count", "timers", "timer stream 'flush' is listed more than once",
                "distinct ids");
    }

    // ---- names, warnings, several problems ----

    @Test
    void shouldRejectIdsThatCannotBeTopicNames() {
        PipelineSpec spec = spec(PipelineSpec.builder("my pipeline").stream("events", EVENT).stream("counts", COUNT),
                read(), count());
        assertSingleError(spec, null, "name", "pipeline name 'my pipeline' is not a legal Kafka topic prefix",
                "use only letters");
    }

    @Test
    void shouldWarnAboutDeclaredButUnusedStream() {
        PipelineSpec spec = spec(streams().stream("orphan", EVENT), read(), count());
        assertThat(errors(spec)).isEmpty();
        assertThat(spec.validate()).singleElement().satisfies(p -> {
            assertThat(p.severity()).isEqualTo(SpecProblem.Severity.WARNING);
            assertThat(p.field()).isEqualTo("streams.orphan");
            assertThat(p.message()).contains("declared but no computation writes or reads it");
        });
        assertThat(spec.validated()).isSameAs(spec);
    }

    @Test
    void shouldReportSeveralErrorsAtOnceErrorsFirst() {
        PipelineSpec.Builder pipeline = streams().stream("orphan", EVENT)
                .warning(SpecProblem.warning("count", "colour", "unknown field 'colour' is ignored", "remove it"));
        PipelineSpec spec = spec(pipeline,
                read().timer("t", Map.of()),
                count().inputStreamIds("evnts").sink("http", "HttpSink", List.of("counts"), Map.of()),
                ComputationSpec.builder("idle").processingFunction("com.acme.Missing"));
        List<SpecProblem> problems = spec.validate();
        assertThat(problems).extracting(SpecProblem::field).containsExactly(
                "timers",
                "input_stream_ids",
                "sinks.http.sink_class_name",
                "input_stream_ids",
                "processing_function",
                "colour",
                "streams.orphan");
        assertThat(problems).extracting(SpecProblem::severity).containsExactly(
                SpecProblem.Severity.ERROR, SpecProblem.Severity.ERROR, SpecProblem.Severity.ERROR,
                SpecProblem.Severity.ERROR, SpecProblem.Severity.ERROR,
                SpecProblem.Severity.WARNING, SpecProblem.Severity.WARNING);
        assertThat(problems).extracting(SpecProblem::computation)
                .containsExactly("read", "count", "count", "idle", "idle", "count", null);
        assertThatThrownBy(spec::validated)
                .isInstanceOf(InvalidSpecException.class)
                .hasMessageContaining("pipeline 'activity' has 5 spec error(s)")
                .hasMessageContaining("computation 'read', field 'timers': timers only in Transform computations")
                .hasMessageContaining("unknown stream 'evnts'; fix: did you mean 'events'?")
                .hasMessageContaining("unknown sink_class_name 'HttpSink'")
                .hasMessageContaining("has neither input_stream_ids nor source_streams")
                .hasMessageContaining("class 'com.acme.Missing' cannot be loaded")
                .satisfies(e -> assertThat(((InvalidSpecException) e).problems()).hasSize(5));
    }

    @Test
    void shouldFindErrorsOfOneComputationWithoutStoppingAtTheFirst() {
        PipelineSpec spec = spec(read(), ComputationSpec.builder("count").kind(ComputationKind.SWIFT_MAP)
                .inputStreamIds("events").outputStreamIds("counts")
                .groupBy("user", ColumnType.STRING, null)
                .timer("t", Map.of())
                .sink("s", "KafkaSink", List.of("counts"), Map.of("topic", "x")));
        assertThat(findError(spec, "group_by_schema[0]").message()).contains("must be uint64");
        assertThat(findError(spec, "timers").message()).contains("timers only in Transform computations");
        assertThat(findError(spec, "sinks").message()).contains("cannot have sinks");
        assertThat(findError(spec, "processing_function").message()).contains("SwiftMap computation 'count'");
        assertThat(errors(spec)).hasSize(4);
    }

    // ---- timers (reference 003: time_type, streams, streams_with_delays, deduplicate_equal_timestamps) ----

    @Test
    void shouldAcceptTimerStreamsWithFlowSettings() {
        PipelineSpec spec = spec(read(), count()
                .timer("timeout", Map.of("time_type", "event_time", "streams", List.of("events")))
                .timer("lagged", Map.of("streams_with_delays", Map.of("events", "5m"), "deduplicate_equal_timestamps", false))
                .timer("wall", Map.of("time_type", "real_time")));
        assertThat(errors(spec)).isEmpty();
        ComputationSpec c = spec.computations().get("count");
        assertThat(c.timers().get(0).timeType()).isEqualTo(TimeType.EVENT_TIME);
        assertThat(c.timers().get(1).watchedStreams()).containsEntry("events", java.time.Duration.ofMinutes(5));
        assertThat(c.timers().get(1).deduplicateEqualTimestamps()).isFalse();
        assertThat(c.timers().get(2).timeType()).isEqualTo(TimeType.REAL_TIME);
        assertThat(c.timers().get(2).watchedStreams()).as("default: every input").isNull();
    }

    @Test
    void shouldWarnThatARealTimeTimerIgnoresTheStreamsItWouldWaitOn() {
        // reference 003: real_time is "compared with real astronomical time"
        PipelineSpec spec = spec(read(), count()
                .timer("wall", Map.of("time_type", "real_time", "streams_with_delays", Map.of("events", "5m"))));
        assertThat(errors(spec)).isEmpty();
        assertThat(warnings(spec)).singleElement().satisfies(w -> assertProblem(w, "count",
                "timers.wall.streams_with_delays", "is real_time: it fires by the wall clock, and streams_with_delays "
                        + "is ignored", "use event_time or system_time"));
    }

    @Test
    void shouldRejectUnknownTimeType() {
        PipelineSpec spec = spec(read(), count().timer("t", Map.of("time_type", "wall_time")));
        assertSingleError(spec, "count", "timers.t.time_type", "unknown time_type 'wall_time'", "event_time, system_time or real_time");
    }

    @Test
    void shouldRejectTimerWaitingOnAStreamThatIsNotAnInput() {
        PipelineSpec spec = spec(read(), count().timer("t", Map.of("streams", List.of("counts"))));
        assertSingleError(spec, "count", "timers.t.streams", "waits on stream 'counts', which is not an input of 'count'",
                "list only input streams [events]");
    }

    @Test
    void shouldTakeATimersStreamsDependencyAsTheStreamsItWaitsOn() {
        // "streams_dependency defaults: a timer depends on all input and source streams"; its entry narrows them
        PipelineSpec spec = spec(read(), count().timer("t", Map.of()).streamsDependency("t", List.of("events")));
        assertThat(errors(spec)).isEmpty();
        ComputationSpec c = spec.computations().get("count");
        assertThat(c.timerWatchedStreams(c.timers().get(0))).containsExactly(Map.entry("events", java.time.Duration.ZERO));
    }

    @Test
    void shouldRejectATimerDependingOnAStreamItsWatermarkCannotFollow() {
        PipelineSpec spec = spec(read(), count().timer("t", Map.of()).timer("u", Map.of())
                .streamsDependency("t", List.of("u")));
        assertSingleError(spec, "count", "streams_dependency.t", "timer stream 't' depends on 'u': a timer's watermark "
                + "follows only input and source streams", "list only input or source streams [events]");
    }

    @Test
    void shouldRejectATimerNamingTheStreamsItWaitsOnTwice() {
        PipelineSpec spec = spec(read(), count().timer("t", Map.of("streams", List.of("events")))
                .streamsDependency("t", List.of("events")));
        assertSingleError(spec, "count", "streams_dependency.t", "names the streams it waits on twice", "keep one");
    }

    @Test
    void shouldRejectAStateSchemaThatIsNotARecord() {
        // before: accepted, then every call failed in newRecord() with Avro's "Not a record schema"
        assertSingleError(spec(read(), count().state("seen", Schema.create(Schema.Type.LONG))), "count",
                "states.seen.schema", "state 'seen' has a schema of type long, but a state's value must be an Avro "
                        + "record", "declare the state without a schema and read it with getState(name, serde)");
    }

    @Test
    void shouldNameTheComputationAndFieldOfANullSchemaOrParameterInTheJavaBuilder() {
        // before: NullPointerException "schema" / "value", naming neither
        Schema notYetInitialised = null;
        assertThatThrownBy(() -> streams().computation("count", c -> c.state("total", notYetInitialised)))
                .isInstanceOf(InvalidSpecException.class)
                .hasMessageContaining("computation 'count', field 'states.total.schema'")
                .hasMessageContaining("is null");
        String unset = System.getenv("FLOW_KAFKA_TEST_SURELY_UNSET_VARIABLE");
        assertThatThrownBy(() -> streams().computation("count", c -> c.parameter("ttl", unset)))
                .isInstanceOf(InvalidSpecException.class)
                .hasMessageContaining("computation 'count', field 'parameters.ttl'")
                .hasMessageContaining("an unset environment variable");
    }

    @Test
    void shouldRejectAnEventTimeTimerWaitingOnNoStream() {
        // reference 003: event_time is "compared with EventWatermark across all input streams (or the streams listed
        // in streams)"; with none listed, or no input at all, its watermark never moves and it never fires
        assertSingleError(spec(read(), count().timer("t", Map.of("streams", List.of()))), "count", "timers.t.streams",
                "timer stream 't' waits on no stream (its streams list is empty)", "list the input or source streams "
                        + "it waits on [events]");
        ComputationSpec.Builder sweep = ComputationSpec.builder("sweep").processingFunction(Counter::new)
                .groupBy("hash", ColumnType.UINT64, "farm_hash(user)").groupBy("user", ColumnType.STRING, null)
                .state("total", TOTAL).keyVisitorStream("scan", Map.of()).timer("t", Map.of());
        assertThat(errors(spec(read(), count(), sweep))).anySatisfy(p -> assertProblem(p, "sweep", "timers.t",
                "computation 'sweep' has no input or source stream", "set time_type: real_time"));
        assertThat(errors(spec(read(), count().timer("t", Map.of("streams", List.of(), "time_type", "real_time")))))
                .as("a real_time timer fires by the wall clock").isEmpty();
        assertThat(errors(spec(read(), count().timer("t", Map.of("streams", List.of(), "time_type", "system_time")))))
                .as("a system_time timer waiting on no stream follows the clock").isEmpty();
    }

    @Test
    void shouldRejectATimerDependingOnNoStream() {
        PipelineSpec spec = spec(read(), count().timer("t", Map.of()).streamsDependency("t", List.of()));
        assertSingleError(spec, "count", "streams_dependency.t", "depends on no stream", "remove streams_dependency.t");
    }

    @Test
    void shouldRejectMalformedDelay() {
        PipelineSpec spec = spec(read(), count().timer("t", Map.of("streams_with_delays", Map.of("events", "later"))));
        assertSingleError(spec, "count", "timers.t", "timers.t.streams_with_delays.events must be a duration",
                "durations like");
    }

    @Test
    void shouldRejectTimersInSwiftMap() {
        PipelineSpec spec = spec(read(), count(), transform("swift").kind(ComputationKind.SWIFT_MAP)
                .inputStreamIds("counts").timer("t", Map.of()));
        assertThat(errors(spec)).anySatisfy(p -> assertProblem(p, "swift", "timers",
                "timers only in Transform computations: SwiftMap computation 'swift'", "Transform"));
    }

    // ---- processing_mode (reference 002: "You set the processing_mode parameter at the TTransformComputation level") ----

    /** A valid BatchFunction. */
    public static final class Batcher implements io.flowkafka.api.BatchFunction {
        @Override
        public void onMessages(List<Message> messages, OutputCollector output, RuntimeContext context) {
        }
    }

    private static ComputationSpec.Builder swift() {
        return transform("fast").kind(ComputationKind.SWIFT_MAP).processingFunction(Batcher::new)
                .inputStreamIds("events").outputStreamIds("fast");
    }

    @Test
    void shouldAcceptAtLeastOnceConsistentOnTransform() {
        assertThat(spec(read(), count().processingMode(ProcessingMode.AT_LEAST_ONCE_CONSISTENT)).validate()).isEmpty();
    }

    @Test
    void shouldRejectAtLeastOnceConsistentOnSwiftMap() {
        PipelineSpec spec = spec(streams().stream("fast", COUNT), read(), count(),
                swift().processingMode(ProcessingMode.AT_LEAST_ONCE_CONSISTENT));
        SpecProblem p = assertSingleError(spec, "fast", "processing_mode",
                "processing_mode at_least_once_consistent is set on SwiftMap computation 'fast', but it applies only "
                        + "to Transform computations (Flow sets it at the TTransformComputation level)",
                "remove processing_mode from 'fast'");
        assertThat(p.message()).contains("materializes nothing");
        assertThat(p.fix()).contains("parameters.allow_batching_with_relaxed_guarantees: true");
    }

    @Test
    void shouldRejectAtLeastOnceConsistentOnSourceComputations() {
        PipelineSpec spec = spec(read().processingMode(ProcessingMode.AT_LEAST_ONCE_CONSISTENT), count());
        SpecProblem p = assertSingleError(spec, "read", "processing_mode", "set on Source computation 'read'",
                "or set it on the Transform computations that read its output");
        assertThat(p.message()).contains("deduplicated by committed offsets");

        PipelineSpec ordered = spec(read().kind(ComputationKind.TRANSFORM_ORDERED_SOURCE)
                .processingMode(ProcessingMode.AT_LEAST_ONCE_CONSISTENT), count());
        assertThat(findError(ordered, "processing_mode").message())
                .contains("set on TransformOrderedSource computation 'read'");
    }

    @Test
    void shouldRejectProcessingModeInsideParameters() {
        PipelineSpec spec = spec(read(), count().parameter("processing_mode", "at_least_once_consistent"));
        assertSingleError(spec, "count", "parameters.processing_mode",
                "processing_mode is a field of the computation, not a parameter",
                "move it out of parameters, beside them: \"processing_mode\": \"at_least_once_consistent\"");
    }

    // ---- SwiftMap batching (reference 002: "in the parameters block of a TSwiftMapComputation computation") ----

    @Test
    void shouldAcceptBatchingSwiftMapWithBatchFunction() {
        PipelineSpec spec = spec(streams().stream("fast", COUNT), read(), count(),
                swift().allowBatchingWithRelaxedGuarantees(true).maxBatchSize(50)
                        .maxBatchDelay(java.time.Duration.ofMillis(20)));
        assertThat(spec.validate()).isEmpty();
        ComputationSpec fast = spec.computations().get("fast");
        assertThat(fast.allowBatchingWithRelaxedGuarantees()).isTrue();
        assertThat(fast.maxBatchSize()).isEqualTo(50);
        assertThat(fast.maxBatchDelay()).isEqualTo(java.time.Duration.ofMillis(20));
        assertThat(spec.computations().get("count").allowBatchingWithRelaxedGuarantees()).as("default").isFalse();
        assertThat(spec.computations().get("count").maxBatchSize()).isEqualTo(ComputationSpec.DEFAULT_MAX_BATCH_SIZE);
    }

    @Test
    void shouldAcceptFlowSpellingsOfTheBatchingFlag() {
        for (Object v : List.of(true, "true", "%true", false, "%false")) {
            PipelineSpec spec = spec(streams().stream("fast", COUNT), read(), count(),
                    swift().parameter(ComputationSpec.ALLOW_BATCHING_PARAMETER, v));
            assertThat(errors(spec)).as("value %s", v).isEmpty();
            assertThat(spec.computations().get("fast").allowBatchingWithRelaxedGuarantees())
                    .isEqualTo(v.toString().endsWith("true"));
        }
    }

    @Test
    void shouldRejectBatchingFlagOnTransform() {
        PipelineSpec spec = spec(read(), count().allowBatchingWithRelaxedGuarantees(true));
        assertSingleError(spec, "count", "parameters.allow_batching_with_relaxed_guarantees",
                "allow_batching_with_relaxed_guarantees applies only to SwiftMap computations (Flow: "
                        + "TSwiftMapComputation), but 'count' is a Transform computation",
                "remove it from the parameters of 'count'");
    }

    @Test
    void shouldRejectBatchingFlagOnSourceComputation() {
        PipelineSpec spec = spec(read().parameter(ComputationSpec.ALLOW_BATCHING_PARAMETER, false), count());
        assertSingleError(spec, "read", "parameters.allow_batching_with_relaxed_guarantees",
                "but 'read' is a Source computation", "let a SwiftMap computation with this parameter do the batching");
    }

    @Test
    void shouldLeaveBatchSizeParametersOfOtherKindsToTheirFunctions() {
        PipelineSpec spec = spec(read(), count().parameter("max_batch_size", "whatever"));
        assertThat(spec.validate()).isEmpty();
    }

    @Test
    void shouldRejectBatchingFlagThatIsNotABoolean() {
        PipelineSpec spec = spec(streams().stream("fast", COUNT), read(), count(),
                swift().parameter(ComputationSpec.ALLOW_BATCHING_PARAMETER, "yes"));
        assertSingleError(spec, "fast", "parameters.allow_batching_with_relaxed_guarantees",
                "must be true or false but was 'yes'", "set it to true");
    }

    @Test
    void shouldRejectBadBatchBounds() {
        PipelineSpec spec = spec(streams().stream("fast", COUNT), read(), count(),
                swift().allowBatchingWithRelaxedGuarantees(true).parameter("max_batch_size", 0)
                        .parameter("max_batch_delay", "soon"));
        assertProblem(findError(spec, "parameters.max_batch_size"), "fast", "parameters.max_batch_size",
                "parameters.max_batch_size must be an integer in [1, 100000] but was '0'", "e.g. 1000");
        assertProblem(findError(spec, "parameters.max_batch_delay"), "fast", "parameters.max_batch_delay",
                "parameters.max_batch_delay must be a duration", "e.g. \"100ms\"");
        assertThat(errors(spec)).hasSize(2);
        assertThatThrownBy(() -> ComputationSpec.builder("x").maxBatchSize(100_001))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("max_batch_size must be in [1, 100000]");
        assertThatThrownBy(() -> ComputationSpec.builder("x").maxBatchDelay(java.time.Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("at least 1ms");
    }

    @Test
    void shouldRejectBatchingWithRowFunction() {
        PipelineSpec byClass = spec(streams().stream("fast", COUNT), read(), count(),
                ComputationSpec.builder("fast").kind(ComputationKind.SWIFT_MAP)
                        .processingFunction(Counter.class.getName()).groupBy("hash", ColumnType.UINT64, "farm_hash(user)")
                        .inputStreamIds("events").outputStreamIds("fast").allowBatchingWithRelaxedGuarantees(true));
        assertSingleError(byClass, "fast", "parameters.allow_batching_with_relaxed_guarantees",
                "SwiftMap 'fast' batches its inputs, but its processing_function '" + Counter.class.getName()
                        + "' is a RowFunction", "implement io.flowkafka.api.BatchFunction");

        PipelineSpec bySupplier = spec(streams().stream("fast", COUNT), read(), count(),
                transform("fast").kind(ComputationKind.SWIFT_MAP).inputStreamIds("events").outputStreamIds("fast")
                        .allowBatchingWithRelaxedGuarantees(true));
        assertSingleError(bySupplier, "fast", "parameters.allow_batching_with_relaxed_guarantees",
                "is a " + Counter.class.getName() + " (a RowFunction)", "or remove allow_batching_with_relaxed_guarantees");
    }

    @Test
    void shouldWarnAboutBatchBoundsWithoutTheFlag() {
        PipelineSpec spec = spec(streams().stream("fast", COUNT), read(), count(), swift().maxBatchSize(10));
        assertThat(errors(spec)).isEmpty();
        assertThat(spec.validate()).singleElement().satisfies(p -> {
            assertThat(p.severity()).isEqualTo(SpecProblem.Severity.WARNING);
            assertProblem(p, "fast", "parameters", "have no effect on SwiftMap 'fast' unless "
                    + "allow_batching_with_relaxed_guarantees is true", "set parameters.allow_batching_with_relaxed_guarantees: true");
        });
    }

    // ---- keyed sources: a Transform reading a key-partitioned source directly (flow-kafka extension) ----

    private static ComputationSpec.Builder keyedCount(Map<String, Object> sourceParameters) {
        return ComputationSpec.builder("count").processingFunction(Counter::new).outputStreamIds("counts")
                .source("events", "KafkaSource", sourceParameters)
                .groupBy("hash", ColumnType.UINT64, "farm_hash(user)").groupBy("user", ColumnType.STRING, null)
                .state("total", TOTAL);
    }

    @Test
    void shouldAcceptATransformReadingAKeyPartitionedSource() {
        assertThat(errors(spec(keyedCount(Map.of("topics", "user-events", "key_partitioned", true))))).isEmpty();
    }

    @Test
    void shouldRejectATransformReadingASourceNotDeclaredKeyPartitioned() {
        assertSingleError(spec(keyedCount(Map.of("topics", "user-events"))), "count",
                "source_streams.events.parameters.key_partitioned",
                "Transform computation 'count' reads source 'events' directly, which needs a topic partitioned by the "
                        + "group-by key", "set source_streams.events.parameters.key_partitioned: true; otherwise make "
                        + "'count' a Source computation");
    }

    @Test
    void shouldRejectKeyPartitionedOnASourceComputation() {
        assertSingleError(spec(ComputationSpec.builder("read").kind(ComputationKind.SOURCE)
                        .source("events", "KafkaSource", Map.of("topics", "user-events", "key_partitioned", true))
                        .outputStreamIds("events"), count()), "read", "source_streams.events.parameters.key_partitioned",
                "only a Transform computation reads a source by key", "or remove key_partitioned");
    }

    @Test
    void shouldRejectAKeyedSourceWithoutGroupBy() {
        assertSingleError(spec(ComputationSpec.builder("count").processingFunction(Counter::new).outputStreamIds("counts")
                        .source("events", "KafkaSource", Map.of("topics", "user-events", "key_partitioned", true))),
                "count", "group_by_schema", "a Transform computation reading a source directly needs group_by_schema",
                "add a first uint64 column");
    }

    @Test
    void shouldRejectAKeyedSourceOfTwoTopics() {
        assertSingleError(spec(keyedCount(Map.of("topics", List.of("a", "b"), "key_partitioned", true))), "count",
                "source_streams.events.parameters.topics", "a key-partitioned source read by a Transform computation "
                        + "has one topic", "list one topic");
    }

    @Test
    void shouldRejectAKeyedSourceKeyItsRecordsCannotCompute() {
        assertSingleError(spec(keyedCount(Map.of("topics", "user-events", "key_partitioned", true))
                        .groupBy("region", ColumnType.STRING, null)), "count", "group_by_schema[2]",
                "column 'region' cannot be computed from input stream 'events'", "add them to the schema of 'events'");
    }

    @Test
    void shouldRejectKeyVisitorsOnAKeyedSource() {
        List<SpecProblem> errors = errors(spec(keyedCount(Map.of("topics", "user-events", "key_partitioned", true))
                .keyVisitorStream("scan", Map.of())));
        assertThat(errors).anySatisfy(p -> assertProblem(p, "count", "key_visitor_streams",
                "key_visitor_streams need a computation reading internal streams", "visit keys in a Transform "
                        + "computation reading its output"));
    }
}
