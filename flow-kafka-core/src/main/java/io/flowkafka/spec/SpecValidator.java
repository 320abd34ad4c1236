package io.flowkafka.spec;

import io.flowkafka.api.BatchFunction;
import io.flowkafka.api.RowFunction;
import io.flowkafka.internal.config.NearestName;
import io.flowkafka.internal.key.KeyExpression;
import io.flowkafka.internal.outbox.Sinks;
import io.flowkafka.internal.source.KafkaSourceParameters;
import io.flowkafka.internal.source.PunctuatedSources;
import io.flowkafka.internal.source.ServiceLogSource;
import io.flowkafka.internal.source.Sources;
import io.flowkafka.spi.SinkProvider;
import io.flowkafka.spi.SourceProvider;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.apache.avro.Schema;
import org.jspecify.annotations.Nullable;

/**
 * Checks a {@link PipelineSpec} against Flow's rules and reports every problem at once.
 *
 * <p>Each problem names the computation (null for pipeline-level problems), the field with Flow's
 * name (a dotted path inside map entries, e.g. {@code sinks.out.input_stream_ids},
 * {@code group_by_schema[0]}) and a concrete fix. Errors come first, then the spec's own warnings
 * (from loading), then the warnings found here.
 *
 * <p>Stream rules: a stream has exactly one writer (a computation's {@code output_stream_ids} or
 * {@code source_streams}; a Source computation may list its source stream as its output too); every
 * written stream is declared in {@code streams} with an Avro record schema; every read stream is
 * written; streams form no cycle that {@code streams_dependency} does not break ({@link StreamCycles}). Unknown
 * ids get a "did you mean" for a declared id within edit distance 2.
 *
 * <p>The rules of external state (managers, joiners, state joiners, {@code external_names}) are in
 * {@link ExternalStateRules}, stream cycles in {@link StreamCycles}. The class is over 700 lines because each of
 * Flow's per-field rules is a few lines with its own sentence and fix; they share the writers index and the
 * problem lists, and a split by field would scatter one rule set.
 */
final class SpecValidator {
    private static final Pattern LEGAL_NAME = Pattern.compile("[a-zA-Z0-9._-]+");

    private final PipelineSpec spec;
    private final List<SpecProblem> errors = new ArrayList<>();
    private final List<SpecProblem> warnings = new ArrayList<>();
    /** stream id -> (writer computation id -> the field it is written by). */
    private final Map<String, Map<String, String>> writers = new LinkedHashMap<>();
    private final Set<String> readStreams = new HashSet<>();
    /** External sinks (those of a SinkProvider) by id: the computation that first declared each. */
    private final Map<String, String> externalSinks = new LinkedHashMap<>();
    /** The parameters of the core's KafkaSink, each read by the output router. */
    private static final List<String> KAFKA_SINK_PARAMETERS = SinkProvider.RECORD_PARAMETERS;
    private final Set<String> knownStreams = new LinkedHashSet<>();

    private SpecValidator(PipelineSpec spec) {
        this.spec = spec;
    }

    /** Every error, then every warning, of {@code spec}; empty when it is valid. */
    static List<SpecProblem> validate(PipelineSpec spec) {
        SpecValidator v = new SpecValidator(spec);
        v.run();
        List<SpecProblem> all = new ArrayList<>(v.errors);
        all.addAll(spec.warnings());
        all.addAll(v.warnings);
        return List.copyOf(all);
    }

    private void run() {
        indexStreams();
        checkNames();
        checkStreams();
        for (ComputationSpec c : spec.computations().values()) {
            checkComputation(c);
        }
        checkAlignmentGroups();
        errors.addAll(StreamCycles.check(spec));
        for (SpecProblem p : ExternalStateRules.check(spec)) {
            (p.severity() == SpecProblem.Severity.ERROR ? errors : warnings).add(p);
        }
    }

    private static String human(java.time.Duration d) {
        long ms = d.toMillis();
        return ms % 60_000 == 0 ? ms / 60_000 + "m" : ms % 1000 == 0 ? ms / 1000 + "s" : ms + "ms";
    }

    /** The computations of one {@code watermark_alignment} group agree on its {@code drift_bound}. */
    private void checkAlignmentGroups() {
        Map<String, ComputationSpec> first = new LinkedHashMap<>();
        for (ComputationSpec c : spec.computations().values()) {
            String group = c.watermarkStrategy().alignmentGroup();
            if (group == null) {
                continue;
            }
            ComputationSpec other = first.putIfAbsent(group, c);
            if (other != null && !other.watermarkStrategy().driftBound().equals(c.watermarkStrategy().driftBound())) {
                error(c.id(), "watermark_strategy.watermark_alignment.drift_bound", "alignment group '" + group
                        + "' has drift_bound " + human(c.watermarkStrategy().driftBound()) + " in '" + c.id()
                        + "' but " + human(other.watermarkStrategy().driftBound()) + " in '" + other.id() + "' (20m when "
                        + "not set)",
                        "give every computation of group '" + group + "' the same drift_bound");
            }
        }
    }

    private void indexStreams() {
        knownStreams.addAll(spec.streams().keySet());
        for (ComputationSpec c : spec.computations().values()) {
            for (String out : c.outputStreamIds()) {
                writers.computeIfAbsent(out, k -> new LinkedHashMap<>()).putIfAbsent(c.id(), "output_stream_ids");
            }
            for (SourceSpec s : c.sourceStreams()) {
                writers.computeIfAbsent(s.streamId(), k -> new LinkedHashMap<>())
                        .putIfAbsent(c.id(), "source_streams." + s.streamId());
            }
            readStreams.addAll(c.inputStreamIds());
            c.sinks().forEach(s -> readStreams.addAll(s.inputStreamIds()));
            c.streamsDependency().values().forEach(readStreams::addAll);
        }
        knownStreams.addAll(writers.keySet());
    }

    private void checkNames() {
        if (!LEGAL_NAME.matcher(spec.name()).matches()) {
            error(null, "name", "pipeline name '" + spec.name() + "' is not a legal Kafka topic prefix",
                    "use only letters, digits, '.', '_' and '-'");
        }
        for (String id : spec.streams().keySet()) {
            if (!LEGAL_NAME.matcher(id).matches()) {
                error(null, "streams." + id, "stream id '" + id + "' cannot be part of a Kafka topic name",
                        "use only letters, digits, '.', '_' and '-'");
            }
        }
        for (String id : spec.computations().keySet()) {
            if (!LEGAL_NAME.matcher(id).matches()) {
                error(id, "computations." + id, "computation id '" + id
                        + "' cannot be part of a Kafka Streams processor, store or topic name",
                        "use only letters, digits, '.', '_' and '-'");
            }
        }
    }

    private void checkStreams() {
        for (StreamSpec s : spec.streams().values()) {
            Map<String, String> w = writers.getOrDefault(s.id(), Map.of());
            String owner = w.isEmpty() ? null : w.keySet().iterator().next();
            Schema schema = s.schema();
            if (schema == null) {
                error(owner, "streams." + s.id() + ".schema", "stream '" + s.id() + "' has no schema",
                        "add a schema to streams." + s.id() + ": an Avro record schema of its payloads");
            } else if (schema.getType() != Schema.Type.RECORD) {
                error(owner, "streams." + s.id() + ".schema", "stream '" + s.id() + "' has a schema of type "
                        + schema.getType().getName() + ", but payloads must be Avro records",
                        "wrap the payload in a record schema: {\"type\": \"record\", \"name\": ..., \"fields\": [...]}");
            }
            if (w.isEmpty() && !readStreams.contains(s.id())) {
                warnings.add(SpecProblem.warning(null, "streams." + s.id(), "stream '" + s.id()
                        + "' is declared but no computation writes or reads it",
                        "remove it from streams, or add it to a computation's output_stream_ids"));
            }
        }
        for (Map.Entry<String, Map<String, String>> e : writers.entrySet()) {
            if (e.getValue().size() > 1) {
                List<Map.Entry<String, String>> ws = new ArrayList<>(e.getValue().entrySet());
                String list = ws.stream().map(x -> "'" + x.getKey() + "' (" + x.getValue() + ")")
                        .collect(Collectors.joining(", "));
                Map.Entry<String, String> second = ws.get(1);
                error(second.getKey(), second.getValue(), "stream '" + e.getKey() + "' has " + ws.size()
                        + " writers: computations " + list + "; a stream has exactly one writer",
                        "let one computation write '" + e.getKey() + "' and give the other's output a new stream id");
            }
        }
    }

    private void checkComputation(ComputationSpec c) {
        String id = c.id();
        ComputationKind kind = c.kind();
        boolean sourceKind = kind == ComputationKind.SOURCE || kind == ComputationKind.TRANSFORM_ORDERED_SOURCE;
        Set<String> outputs = new LinkedHashSet<>(c.outputStreamIds());
        Set<String> sources = new LinkedHashSet<>();
        c.sourceStreams().forEach(s -> sources.add(s.streamId()));
        Set<String> timers = new LinkedHashSet<>();
        c.timers().forEach(t -> timers.add(t.id()));

        checkDuplicates(id, "input_stream_ids", c.inputStreamIds(), "stream");
        checkDuplicates(id, "output_stream_ids", c.outputStreamIds(), "stream");
        checkDuplicates(id, "timers", c.timers().stream().map(TimerStreamSpec::id).toList(), "timer stream");
        checkDuplicates(id, "sinks", c.sinks().stream().map(SinkSpec::id).toList(), "sink");
        checkDuplicates(id, "source_streams", c.sourceStreams().stream().map(SourceSpec::streamId).toList(),
                "source stream");

        if (looksLikeASourceWithoutItsKind(c)) {
            // Transform is the default kind: the group-by, keyed-read and processing-function errors would all
            // follow from this one omission, and none would say so
            error(id, "computation_class_name", "computation '" + id + "' reads source_streams " + sources
                    + " but is a Transform (the default when computation_class_name is absent), which needs "
                    + "group_by_schema and a processing_function to read sources by key",
                    "to read the sources into " + c.outputStreamIds() + ", set computation_class_name: Source (Java: "
                            + ".kind(ComputationKind.SOURCE))");
            return;
        }
        checkInputs(c);
        checkWrittenStreamsDeclared(c);
        checkShape(c, sourceKind);
        checkGroupBy(c, sourceKind);
        checkProcessingFunction(c, sourceKind);
        checkSources(c);
        checkSinks(c, outputs);
        checkDependencies(c, outputs, sources, timers);
        checkKeyVisitors(c);
        checkTimers(c);
        checkStateSchemas(c);
        checkProcessingMode(c);
        checkBatching(c);
        checkTimestampColumn(c);
        if (c.desiredPartitionCount() < 1) {
            error(id, "desired_partition_count", "desired_partition_count must be >= 1 but was "
                    + c.desiredPartitionCount(), "set desired_partition_count to a positive number of partitions");
        }
    }

    /**
     * {@code watermark_strategy.event_timestamp_assigner.column} names a numeric field of every
     * source stream of the computation: checked here, not per record.
     */
    private void checkTimestampColumn(ComputationSpec c) {
        String column = c.watermarkStrategy().timestampColumn();
        if (column == null) {
            return;
        }
        String field = "watermark_strategy.event_timestamp_assigner.column";
        for (SourceSpec source : c.sourceStreams()) {
            if (ServiceLogSource.is(source) || PunctuatedSources.is(source)) {
                error(c.id(), field, source.sourceClassName() + " source '" + source.streamId() + "' gives its rows "
                        + "their timestamps itself, so an event timestamp column would not be read",
                        "remove watermark_strategy.event_timestamp_assigner (" + source.sourceClassName()
                                + " documents where its timestamps come from)");
                continue;
            }
            StreamSpec stream = spec.streams().get(source.streamId());
            if (stream == null || stream.schema() == null || stream.schema().getType() != Schema.Type.RECORD) {
                continue; // reported elsewhere
            }
            Schema schema = stream.schema();
            Schema.Field f = schema.getField(column);
            if (f == null) {
                String suggestion = closest(column, schema.getFields().stream().map(Schema.Field::name).toList());
                error(c.id(), field, "event timestamp column '" + column + "' is not a field of source stream '"
                        + source.streamId() + "'", (suggestion == null ? "" : "did you mean '" + suggestion + "'? ")
                        + "name a long field of stream '" + source.streamId() + "'"
                        + KafkaSourceParameters.numericFields(schema));
            } else if (!KafkaSourceParameters.isNumeric(f.schema())) {
                error(c.id(), field, "event timestamp column '" + column + "' of source stream '" + source.streamId()
                        + "' is " + KafkaSourceParameters.describe(f.schema()) + ", but an event timestamp is a number; "
                        + "every record would fail", "name a long field of stream '" + source.streamId() + "'"
                        + KafkaSourceParameters.numericFields(schema) + ", or change the field's type to long");
            }
        }
    }

    /**
     * Flow: "You set the processing_mode parameter at the TTransformComputation level in the spec";
     * what it relaxes is the input dedup of internal streams by message id, which only a Transform
     * computation has (sources dedup by offsets, a SwiftMap materializes nothing).
     */
    private void checkProcessingMode(ComputationSpec c) {
        String id = c.id();
        ComputationKind kind = c.kind();
        if (c.processingMode() == ProcessingMode.AT_LEAST_ONCE_CONSISTENT && kind != ComputationKind.TRANSFORM) {
            String why = kind == ComputationKind.SWIFT_MAP
                    ? "a SwiftMap computation materializes nothing, so it has no input dedup to turn off"
                    : "a " + kind.shortName() + " computation reads a source, which is deduplicated by committed "
                            + "offsets at no extra cost";
            error(id, "processing_mode", "processing_mode at_least_once_consistent is set on " + kind.shortName()
                    + " computation '" + id + "', but it applies only to Transform computations (Flow sets it at the "
                    + "TTransformComputation level): " + why, kind == ComputationKind.SWIFT_MAP
                    ? "remove processing_mode from '" + id + "'; to trade guarantees for batching in a SwiftMap, set "
                            + "parameters." + ComputationSpec.ALLOW_BATCHING_PARAMETER + ": true instead"
                    : "remove processing_mode from '" + id + "', or set it on the Transform computations that read "
                            + "its output");
        }
        Object misplaced = c.parameters().get("processing_mode");
        if (misplaced != null) {
            error(id, "parameters.processing_mode", "processing_mode is a field of the computation, not a parameter: "
                    + "inside parameters it reaches only the process function and changes no guarantee",
                    "move it out of parameters, beside them: \"processing_mode\": \"" + misplaced + "\"");
        }
    }

    /**
     * Flow: "You set the allow_batching_with_relaxed_guarantees parameter in the parameters block of
     * a TSwiftMapComputation computation. The default value is %false."
     */
    private void checkBatching(ComputationSpec c) {
        String id = c.id();
        Map<String, Object> p = c.parameters();
        String allowField = "parameters." + ComputationSpec.ALLOW_BATCHING_PARAMETER;
        if (c.kind() != ComputationKind.SWIFT_MAP) {
            // max_batch_size and max_batch_delay are the function's own parameters outside a SwiftMap
            if (p.containsKey(ComputationSpec.ALLOW_BATCHING_PARAMETER)) {
                error(id, allowField, ComputationSpec.ALLOW_BATCHING_PARAMETER + " applies only to SwiftMap "
                        + "computations (Flow: TSwiftMapComputation), but '" + id + "' is a " + c.kind().shortName()
                        + " computation", "remove it from the parameters of '" + id + "'; to batch, let a SwiftMap "
                        + "computation with this parameter do the batching, e.g. one reading the same input streams");
            }
            return;
        }
        boolean allow;
        try {
            allow = c.allowBatchingWithRelaxedGuarantees();
        } catch (IllegalArgumentException e) {
            error(id, allowField, e.getMessage(), "set it to true, or to false (the default) or remove it");
            return;
        }
        boolean tuned = false;
        try {
            c.maxBatchSize();
            tuned |= p.containsKey(ComputationSpec.MAX_BATCH_SIZE_PARAMETER);
        } catch (IllegalArgumentException e) {
            error(id, "parameters." + ComputationSpec.MAX_BATCH_SIZE_PARAMETER, e.getMessage(), "set it to the most "
                    + "messages a batch may hold, e.g. " + ComputationSpec.DEFAULT_MAX_BATCH_SIZE);
        }
        try {
            c.maxBatchDelay();
            tuned |= p.containsKey(ComputationSpec.MAX_BATCH_DELAY_PARAMETER);
        } catch (IllegalArgumentException e) {
            error(id, "parameters." + ComputationSpec.MAX_BATCH_DELAY_PARAMETER, e.getMessage(), "set it to how long "
                    + "the oldest buffered message may wait, e.g. \"100ms\"");
        }
        if (!allow) {
            if (tuned) {
                warning(id, "parameters", "max_batch_size and max_batch_delay have no effect on SwiftMap '" + id
                        + "' unless " + ComputationSpec.ALLOW_BATCHING_PARAMETER + " is true",
                        "set " + allowField + ": true, or remove them");
            }
            return;
        }
        String notBatch = batchFunctionProblem(c);
        if (notBatch != null) {
            error(id, allowField, "SwiftMap '" + id + "' batches its inputs, but its processing_function " + notBatch
                    + ", which is called with one message at a time", "implement io.flowkafka.api.BatchFunction "
                    + "(onMessages gets the batch), or remove " + ComputationSpec.ALLOW_BATCHING_PARAMETER);
        }
    }

    /** Why the computation's function is not a BatchFunction, or null if it is (or cannot be told). */
    private static @Nullable String batchFunctionProblem(ComputationSpec c) {
        if (c.functionSupplier() != null) {
            Object f;
            try {
                f = c.functionSupplier().get(); // like Kafka's ApiUtils.checkSupplier: the instance is dropped
            } catch (RuntimeException e) {
                return null; // the task reports it when it creates the function
            }
            return f == null || f instanceof BatchFunction ? null : "is a " + f.getClass().getName() + " (a RowFunction)";
        }
        if (c.processingFunction() == null) {
            return null;
        }
        try {
            Class<?> cls = Class.forName(c.processingFunction(), false, classLoader());
            return BatchFunction.class.isAssignableFrom(cls) || !RowFunction.class.isAssignableFrom(cls) ? null
                    : "'" + c.processingFunction() + "' is a RowFunction";
        } catch (ClassNotFoundException | LinkageError e) {
            return null; // reported by checkProcessingFunction
        }
    }

    private void checkDuplicates(String computation, String field, List<String> ids, String what) {
        Set<String> seen = new HashSet<>();
        Set<String> reported = new HashSet<>();
        for (String s : ids) {
            if (!seen.add(s) && reported.add(s)) {
                error(computation, field, what + " '" + s + "' is listed more than once in " + field,
                        "keep one entry for '" + s + "' and give the others distinct ids");
            }
        }
    }

    private void checkInputs(ComputationSpec c) {
        for (String in : new LinkedHashSet<>(c.inputStreamIds())) {
            if (!knownStreams.contains(in)) {
                unknownStream(c.id(), "input_stream_ids", in, knownStreams,
                        "declare '" + in + "' in streams and write it from a computation's output_stream_ids");
            } else if (!writers.containsKey(in)) {
                error(c.id(), "input_stream_ids", "stream '" + in + "' is read but never written",
                        "add '" + in + "' to the output_stream_ids (or source_streams) of the computation that produces "
                                + "it, or stop reading it");
            }
        }
    }

    private void checkWrittenStreamsDeclared(ComputationSpec c) {
        for (String out : new LinkedHashSet<>(c.outputStreamIds())) {
            missingSchema(c.id(), "output_stream_ids", out);
        }
        for (SourceSpec s : c.sourceStreams()) {
            missingSchema(c.id(), "source_streams." + s.streamId(), s.streamId());
        }
    }

    private void missingSchema(String computation, String field, String stream) {
        if (spec.streams().containsKey(stream)) {
            return;
        }
        String suggestion = closest(stream, spec.streams().keySet());
        error(computation, field, "stream '" + stream + "' is written here but missing from streams, so it has no "
                + "schema (missing schema)", (suggestion == null ? "" : "did you mean '" + suggestion + "'? otherwise ")
                + "add '" + stream + "' to streams with an Avro record schema");
    }

    private void checkShape(ComputationSpec c, boolean sourceKind) {
        String id = c.id();
        boolean hasInputs = !c.inputStreamIds().isEmpty();
        boolean hasSources = !c.sourceStreams().isEmpty();
        String kindName = c.kind().shortName();
        if (sourceKind) {
            if (c.sourceStreams().size() != 1) {
                error(id, "source_streams", "a " + kindName + " computation needs exactly one source, but '" + id
                        + "' has " + c.sourceStreams().size(), c.sourceStreams().isEmpty()
                        ? "add one entry to source_streams, e.g. {\"<stream>\": {\"source_class_name\": \"KafkaSource\", "
                                + "\"parameters\": {\"topics\": [\"<topic>\"]}}}"
                        : "split the sources into one " + kindName + " computation each");
            }
            if (hasInputs) {
                error(id, "input_stream_ids", "a " + kindName + " computation cannot have input_stream_ids, but '"
                        + id + "' reads " + c.inputStreamIds(),
                        "remove input_stream_ids, or make '" + id + "' a Transform computation without source_streams");
            }
            if (c.kind() == ComputationKind.TRANSFORM_ORDERED_SOURCE && !c.keyVisitorStreams().isEmpty()) {
                error(id, "key_visitor_streams", "a TransformOrderedSource computation cannot have key_visitor_streams",
                        "remove key_visitor_streams, or visit keys in a Transform computation reading its output");
            }
            if (c.kind() == ComputationKind.TRANSFORM_ORDERED_SOURCE && !c.states().isEmpty()
                    && c.sourceStreams().size() == 1) {
                List<String> topics = sourceTopics(c.sourceStreams().get(0));
                if (topics.size() > 1) {
                    // catalog: "state keyed by source partition"; a task reads partition p of every topic
                    error(id, "source_streams." + c.sourceStreams().get(0).streamId() + ".parameters.topics",
                            "TransformOrderedSource computation '" + id + "' keeps state per source partition, but "
                                    + "its source reads " + topics.size() + " topics " + topics + ": partition p of "
                                    + "each would share one state row",
                            "read one topic per TransformOrderedSource computation");
                }
            }
        } else if (c.kind() == ComputationKind.SWIFT_MAP) {
            if (hasSources) {
                error(id, "source_streams", "a SwiftMap computation cannot have source_streams",
                        "read the source in a Source computation and let '" + id + "' read its output");
            }
            if (!hasInputs && !hasSources && c.keyVisitorStreams().isEmpty()) {
                neitherInputsNorSources(id);
            }
        } else if (hasInputs && hasSources) {
            error(id, "source_streams", "computation '" + id + "' has both input_stream_ids and source_streams",
                    "move the sources to a Source computation and add its output to the input_stream_ids of '" + id + "'");
        } else if (c.readsKeyedSource()) {
            checkKeyedSource(c);
        } else if (!hasInputs && !hasSources && c.keyVisitorStreams().isEmpty()) {
            neitherInputsNorSources(id);
        }
        if (c.kind() == ComputationKind.SWIFT_MAP && !c.sinks().isEmpty()) {
            error(id, "sinks", "a SwiftMap computation cannot have sinks",
                    "write the output to a stream and attach the sink to a Transform computation reading it");
        }
        if (c.kind() != ComputationKind.TRANSFORM && !c.timers().isEmpty()) {
            error(id, "timers", "timers only in Transform computations: " + kindName + " computation '" + id
                    + "' declares timers " + c.timers().stream().map(TimerStreamSpec::id).toList(),
                    "remove the timers, or make '" + id + "' a Transform computation");
        }
        if (c.watermarkStrategy().alignmentGroup() != null && !hasSources) {
            error(id, "watermark_strategy.watermark_alignment", "computation '" + id + "' aligns its watermark with group '"
                    + c.watermarkStrategy().alignmentGroup() + "' but reads no source_streams: alignment paces the "
                    + "reading of source partitions", "remove watermark_alignment from '" + id + "', or set it on the "
                    + "computations that read the sources");
        }
        if (c.watermarkStrategy().alignmentGroup() != null) {
            for (SourceSpec source : c.sourceStreams()) {
                if (ServiceLogSource.is(source) || PunctuatedSources.is(source)) {
                    error(id, "watermark_strategy.watermark_alignment", source.sourceClassName() + " source '"
                            + source.streamId() + "' is read by the task itself, not from Kafka partitions, so "
                            + "watermark alignment cannot pace it (it would hold the other members back, never be "
                            + "held itself)", "remove watermark_alignment from '" + id + "', or align only "
                            + "computations that read topics");
                }
            }
        }
    }

    /**
     * A Transform reading sources directly (flow-kafka's keyed sources): sources their provider
     * lets be read by key (a KafkaSource of one topic, declared {@code key_partitioned}); no key
     * visitors (they need the range-partitioned layout of internal streams). Co-partitioning of
     * several sources is checked at start.
     */
    private void checkKeyedSource(ComputationSpec c) {
        String id = c.id();
        for (SourceSpec source : c.sourceStreams()) {
            SourceProvider provider = Sources.provider(source.sourceClassName());
            if (provider == null) {
                continue; // reported by checkSources
            }
            for (SourceProvider.Problem p : provider.validateKeyedRead(c, source)) {
                problem(p.severity() == SpecProblem.Severity.ERROR, id, "source_streams." + source.streamId() + "."
                        + p.field(), p.message(), p.fix());
            }
        }
        if (!c.keyVisitorStreams().isEmpty()) {
            error(id, "key_visitor_streams", "key_visitor_streams need a computation reading internal streams "
                    + "(range-partitioned by key hash), but '" + id + "' reads sources directly",
                    "read the source in a Source computation and visit keys in a Transform computation reading its "
                            + "output, or remove key_visitor_streams");
        }
    }

    /** A Transform reading sources with no key, no function and no inputs: a Source whose kind was left out. */
    private static boolean looksLikeASourceWithoutItsKind(ComputationSpec c) {
        return c.kind() == ComputationKind.TRANSFORM && !c.sourceStreams().isEmpty() && c.inputStreamIds().isEmpty()
                && c.groupBySchema().isEmpty() && c.processingFunction() == null && c.functionSupplier() == null;
    }

    private void neitherInputsNorSources(String id) {
        error(id, "input_stream_ids", "computation '" + id + "' has neither input_stream_ids nor source_streams",
                "read streams with input_stream_ids, add a source in source_streams, or declare key_visitor_streams");
    }

    private void checkGroupBy(ComputationSpec c, boolean sourceKind) {
        String id = c.id();
        List<GroupByColumn> columns = c.groupBySchema();
        if (sourceKind) {
            if (!columns.isEmpty()) {
                error(id, "group_by_schema", "a " + c.kind().shortName() + " computation has no group_by_schema "
                        + "(it is keyed by source partition), but '" + id + "' declares "
                        + columns.stream().map(GroupByColumn::name).toList(),
                        "remove group_by_schema; the computations reading its outputs declare their own");
            }
            return;
        }
        // the streams the key is computed from: the inputs, or the sources a Transform reads directly
        Set<String> keyed = new LinkedHashSet<>(c.inputStreamIds());
        if (c.readsKeyedSource()) {
            c.sourceStreams().forEach(s -> keyed.add(s.streamId()));
        }
        boolean hasInputs = !keyed.isEmpty();
        if (hasInputs && columns.isEmpty()) {
            error(id, "group_by_schema", c.readsKeyedSource()
                    ? "a Transform computation reading a source directly needs group_by_schema (the key of its state, "
                            + "timers and task)"
                    : "a computation with inputs needs group_by_schema",
                    "add a first uint64 column, e.g. {\"name\": \"hash\", \"type\": \"uint64\", "
                            + "\"expression\": \"farm_hash(<key field>)\"}, followed by the key columns");
            return;
        }
        if (hasInputs && columns.get(0).type() != ColumnType.UINT64) {
            GroupByColumn first = columns.get(0);
            error(id, "group_by_schema[0]", "the first group_by_schema column '" + first.name() + "' is "
                    + first.type().specName() + ", but it must be uint64 (the key hash that partitions the computation)",
                    firstColumnFix(first));
        }
        Set<String> names = new HashSet<>();
        for (int i = 0; i < columns.size(); i++) {
            GroupByColumn col = columns.get(i);
            if (!names.add(col.name())) {
                error(id, "group_by_schema[" + i + "]", "group_by_schema column '" + col.name()
                        + "' is declared more than once", "give each group_by_schema column a distinct name");
            }
        }
        for (int i = 0; i < columns.size(); i++) {
            GroupByColumn col = columns.get(i);
            String field = "group_by_schema[" + i + "]";
            String expression = col.expression() == null ? col.name() : col.expression();
            for (String in : keyed) {
                StreamSpec stream = spec.streams().get(in);
                if (stream == null || stream.schema() == null || stream.schema().getType() != Schema.Type.RECORD) {
                    continue; // reported elsewhere
                }
                KeyExpression e;
                try {
                    e = KeyExpression.forColumn(col, stream.schema());
                } catch (IllegalArgumentException ex) {
                    error(id, field, "column '" + col.name() + "' cannot be computed from input stream '" + in + "': "
                            + ex.getMessage(), "every input stream's schema must have the fields the expression '"
                            + expression + "' reads: add them to the schema of '" + in + "' or change the expression");
                    continue;
                }
                if (!compatible(col.type(), e.resultType())) {
                    error(id, field, "column '" + col.name() + "' is declared " + col.type().specName()
                            + " but its expression '" + expression + "' yields " + e.resultType().specName()
                            + " on input stream '" + in + "'", "declare the column as " + e.resultType().specName()
                            + ", or change the expression to yield " + col.type().specName());
                }
            }
        }
    }

    /**
     * The fix for a first group-by column that is not uint64: a column that already is the hash (named
     * {@code hash}, or computed by a hash function) just needs type uint64; another one is a key
     * column, to be hashed by a new first column.
     */
    private static String firstColumnFix(GroupByColumn first) {
        String expression = first.expression() == null ? "" : first.expression().trim();
        boolean isHash = first.name().equalsIgnoreCase("hash") || expression.contains("hash(");
        if (isHash) {
            return "declare column '" + first.name() + "' as \"type\": \"uint64\""
                    + (expression.isEmpty() ? " and compute it, e.g. \"expression\": \"farm_hash(<key field>)\""
                            : " (its expression '" + expression + "' is the key hash)");
        }
        return "insert a first column {\"name\": \"hash\", \"type\": \"uint64\", \"expression\": \"farm_hash("
                + first.name() + ")\"}";
    }

    /** Avro has no unsigned type, so a long field may fill a uint64 column (e.g. a precomputed hash). */
    private static boolean compatible(ColumnType declared, ColumnType actual) {
        return declared == actual || declared == ColumnType.UINT64 && actual == ColumnType.INT64;
    }

    private void checkProcessingFunction(ComputationSpec c, boolean sourceKind) {
        String id = c.id();
        String className = c.processingFunction();
        if (className == null && c.functionSupplier() == null) {
            if (!sourceKind) {
                error(id, "processing_function", c.kind().shortName() + " computation '" + id
                        + "' has no processing_function", "set processing_function to the class name of a RowFunction "
                        + "or BatchFunction (public, with a public no-argument constructor), or pass a supplier to "
                        + "ComputationSpec.Builder.processingFunction");
            } else if (c.outputStreamIds().size() != 1) {
                error(id, "output_stream_ids", "a " + c.kind().shortName() + " computation without processing_function "
                        + "forwards its source messages to its single output, but '" + id + "' has "
                        + c.outputStreamIds().size() + " output streams",
                        "declare exactly one entry in output_stream_ids, or set processing_function");
            }
            return;
        }
        if (className != null) {
            String problem = checkFunctionClass(className);
            if (problem != null) {
                error(id, "processing_function", "processing_function class '" + className + "' " + problem,
                        "name a public class that implements io.flowkafka.api.RowFunction or "
                                + "io.flowkafka.api.BatchFunction and has a public no-argument constructor "
                                + "(nested classes are written Outer$Inner), and put its jar on the classpath");
            }
        }
    }

    private static @Nullable String checkFunctionClass(String className) {
        Class<?> cls;
        try {
            cls = Class.forName(className, false, classLoader());
        } catch (ClassNotFoundException | LinkageError e) {
            return "cannot be loaded (" + e + ")";
        }
        if (!RowFunction.class.isAssignableFrom(cls) && !BatchFunction.class.isAssignableFrom(cls)) {
            return "does not implement io.flowkafka.api.RowFunction or io.flowkafka.api.BatchFunction";
        }
        if (cls.isInterface() || Modifier.isAbstract(cls.getModifiers())) {
            return "is abstract and cannot be instantiated";
        }
        if (!Modifier.isPublic(cls.getModifiers())) {
            return "is not public";
        }
        if (cls.isMemberClass() && !Modifier.isStatic(cls.getModifiers())) {
            return "is an inner (non-static) class and has no public no-argument constructor";
        }
        try {
            cls.getConstructor();
        } catch (NoSuchMethodException e) {
            return "has no public no-argument constructor";
        }
        return null;
    }

    private static ClassLoader classLoader() {
        ClassLoader context = Thread.currentThread().getContextClassLoader();
        return context != null ? context : SpecValidator.class.getClassLoader();
    }

    private void checkSources(ComputationSpec c) {
        List<String> knownSources = Sources.knownSourceClassNames();
        for (SourceSpec s : c.sourceStreams()) {
            String field = "source_streams." + s.streamId();
            SourceProvider provider = Sources.provider(s.sourceClassName());
            if (provider == null) {
                String suggestion = closestIgnoringPrefix(s.sourceClassName(), knownSources);
                error(c.id(), field + ".source_class_name", "unknown source_class_name '" + s.sourceClassName()
                        + "' for stream '" + s.streamId() + "'", (suggestion == null ? "" : "did you mean '" + suggestion
                        + "'? ") + "use one of the known sources: " + String.join(", ", knownSources));
                continue;
            }
            for (SourceProvider.Problem p : provider.validate(c, s, spec.streams().get(s.streamId()))) {
                problem(p.severity() == SpecProblem.Severity.ERROR, c.id(), field + "." + p.field(), p.message(),
                        p.fix());
            }
            List<String> known = provider.parameterNames(s).stream().sorted().toList();
            for (String name : s.parameters().keySet()) {
                if (!known.contains(name)) {
                    String suggestion = closest(name, known);
                    // a misspelling is a mistake (the setting it meant would silently keep its default); a name like
                    // none is a warning: a Flow spec may carry parameters of its own sources
                    problem(suggestion != null, c.id(), field + ".parameters." + name, "unknown " + s.sourceClassName()
                            + " parameter '" + name + "'" + (suggestion != null ? "" : " is ignored"),
                            (suggestion == null ? "" : "did you mean '" + suggestion + "'? ") + "use one of " + known);
                }
            }
        }
    }

    private void checkSinks(ComputationSpec c, Set<String> outputs) {
        for (SinkSpec sink : c.sinks()) {
            String field = "sinks." + sink.id();
            if (sink.inputStreamIds().isEmpty()) {
                error(c.id(), field + ".input_stream_ids", "sink '" + sink.id() + "' reads no stream",
                        "list the output streams it writes out in sinks." + sink.id() + ".input_stream_ids");
            }
            for (String in : new LinkedHashSet<>(sink.inputStreamIds())) {
                if (!knownStreams.contains(in)) {
                    unknownStream(c.id(), field + ".input_stream_ids", in, outputs.isEmpty() ? knownStreams : outputs,
                            "list one of the output_stream_ids of '" + c.id() + "' " + outputs);
                } else if (!outputs.contains(in)) {
                    Map<String, String> w = writers.getOrDefault(in, Map.of());
                    error(c.id(), field + ".input_stream_ids", "sink '" + sink.id() + "' reads '" + in
                            + "', which is not an output of its computation '" + c.id() + "'",
                            "add '" + in + "' to the output_stream_ids of '" + c.id() + "'"
                                    + (w.isEmpty() ? "" : ", or attach the sink to computation '"
                                    + w.keySet().iterator().next() + "' that writes it"));
                }
            }
            List<String> known = Sinks.knownSinkClassNames();
            SinkProvider provider = Sinks.provider(sink.sinkClassName());
            boolean atMostOnce = false;
            try {
                atMostOnce = AtMostOnceStrategy.of(sink).enabled();
            } catch (IllegalArgumentException e) {
                error(c.id(), field + ".at_most_once_strategy", e.getMessage(),
                        "write it as {\"enabled\": true, \"total_queue_bytes_limit\": 104857600, "
                                + "\"suspend_destruction_duration\": \"1m\"}");
            }
            if (!known.contains(sink.sinkClassName())) {
                String suggestion = closestIgnoringPrefix(sink.sinkClassName(), known);
                error(c.id(), field + ".sink_class_name", "unknown sink_class_name '" + sink.sinkClassName()
                        + "' for sink '" + sink.id() + "'", (suggestion == null ? "" : "did you mean '" + suggestion
                        + "'? ") + "use one of the known sinks: " + String.join(", ", known)
                        + (known.contains("TKafkaSink") ? "" : " (async sinks such as TKafkaSink come with "
                                + "io.flowkafka:flow-kafka-connectors: add it to the class path)"));
            } else if (provider != null) {
                String first = externalSinks.putIfAbsent(sink.id(), c.id());
                if (first != null && !first.equals(c.id())) {
                    error(c.id(), field, "sink id '" + sink.id() + "' is also used by computation '" + first
                            + "'; an external sink's id names its delivery group, transactional ids and progress markers,"
                            + " so it must be unique in the pipeline", "rename one of the two sinks");
                }
                Map<String, Schema> inputSchemas = new LinkedHashMap<>();
                for (String in : sink.inputStreamIds()) {
                    StreamSpec stream = spec.streams().get(in);
                    if (stream != null && stream.schema() != null) {
                        inputSchemas.put(in, stream.schema());
                    }
                }
                for (SinkProvider.Problem p : provider.validate(c, sink, inputSchemas)) {
                    error(c.id(), field + "." + p.field(), p.message(), p.fix());
                }
                if (atMostOnce && !provider.supportsAtMostOnce(sink)) {
                    error(c.id(), field + ".at_most_once_strategy", sink.sinkClassName() + " '" + sink.id()
                            + "' does not support at_most_once_strategy",
                            "remove at_most_once_strategy from sink '" + sink.id() + "' or set its enabled to false");
                }
            } else if (sink.sinkClassName().equals("KafkaSink")) {
                Object topic = sink.parameters().get("topic");
                if (!(topic instanceof String t) || t.isBlank()) {
                    error(c.id(), field + ".parameters.topic", "KafkaSink '" + sink.id() + "' "
                            + (topic == null ? "has no 'topic' parameter" : "has an invalid 'topic' parameter " + topic),
                            "set sinks." + sink.id() + ".parameters.topic to the name of the Kafka topic to write");
                }
                // the providers check their own sinks' parameters; KafkaSink has no provider
                oneOf(c.id(), field, sink, "format", List.of("json", "avro"), "the record value's encoding");
                oneOf(c.id(), field, sink, "timestamp", List.of("event", "system"),
                        "the record timestamp: the message's event time (default) or its system time");
                for (String name : sink.parameters().keySet()) {
                    if (!KAFKA_SINK_PARAMETERS.contains(name)) {
                        String suggestion = closest(name, KAFKA_SINK_PARAMETERS);
                        error(c.id(), field + ".parameters." + name, "unknown KafkaSink parameter '" + name + "' for sink '"
                                + sink.id() + "'", (suggestion == null ? "" : "did you mean '" + suggestion + "'? ")
                                + "use one of " + KAFKA_SINK_PARAMETERS);
                    }
                }
                if (atMostOnce) {
                    error(c.id(), field + ".at_most_once_strategy", "KafkaSink '" + sink.id() + "' is synchronous "
                            + "(written inside the epoch transaction) and has no at_most_once_strategy",
                            "remove at_most_once_strategy, or use an async sink such as TKafkaSink");
                }
            }
            if (known.contains(sink.sinkClassName())) {
                // the record a sink writes (sync, or async through the outbox) is encoded by core from these parameters
                checkSinkEncoding(c.id(), field, sink);
            }
        }
    }

    private void checkSinkEncoding(String computation, String field, SinkSpec sink) {
        Map<String, Object> p = sink.parameters();
        for (String column : List.of("key_column", "payload_column")) {
            if (p.containsKey(column)) {
                checkSinkColumn(computation, field + ".parameters." + column, sink, column, p.get(column));
            }
        }
        for (KafkaSourceParameters.Problem problem : KafkaSourceParameters.serdeProblems(p, "sink '" + sink.id() + "'")) {
            problem(problem.error(), computation, field + "." + problem.field(), problem.message(), problem.fix());
        }
        Object serde = p.get("value_serde");
        if (serde != null) {
            for (String other : List.of("format", "payload_column")) {
                if (p.containsKey(other)) {
                    error(computation, field + ".parameters." + other, other + " and value_serde are both set, but "
                            + "they are alternative ways to write the record value",
                            "remove " + other + " to write values with value_serde " + serde + ", or remove value_serde");
                }
            }
        } else if (p.containsKey("payload_column") && p.containsKey("format")) {
            error(computation, field + ".parameters.format", "format and payload_column are both set, but the record "
                    + "value is then the column's bytes, not the message in format " + p.get("format"),
                    "remove format to write the column's bytes, or remove payload_column to write the whole message");
        }
    }

    private void oneOf(String computation, String field, SinkSpec sink, String name, List<String> allowed,
            String meaning) {
        Object v = sink.parameters().get(name);
        if (v != null && !allowed.contains(v.toString())) {
            error(computation, field + ".parameters." + name, "unknown " + name + " '" + v + "' for sink '" + sink.id()
                    + "'", "set " + name + " (" + meaning + ") to one of " + allowed + ", spelled in lower case");
        }
    }

    /**
     * A sink's key_column or payload_column names a column of each input stream whose value becomes bytes: a string,
     * number, boolean or bytes (nullable); anything else would send every message to the dead letters.
     */
    private void checkSinkColumn(String computation, String field, SinkSpec sink, String param, @Nullable Object v) {
        if (!(v instanceof String column) || column.isBlank()) {
            error(computation, field, param + " of sink '" + sink.id() + "' must be a column name but was " + v,
                    "set " + param + " to a column of the sink's input stream");
            return;
        }
        for (String in : sink.inputStreamIds()) {
            StreamSpec stream = spec.streams().get(in);
            if (stream == null || stream.schema() == null || stream.schema().getType() != Schema.Type.RECORD) {
                continue; // reported elsewhere
            }
            Schema.Field f = stream.schema().getField(column);
            List<String> names = stream.schema().getFields().stream().map(Schema.Field::name).toList();
            if (f == null) {
                String suggestion = closest(column, names);
                error(computation, field, param + " '" + column + "' of sink '" + sink.id() + "' is not a column of its "
                        + "input stream '" + in + "'", (suggestion == null ? "" : "did you mean '" + suggestion + "'? ")
                        + "use one of " + names);
            } else if (!bytesColumn(f.schema())) {
                error(computation, field, param + " '" + column + "' of sink '" + sink.id() + "' is "
                        + KafkaSourceParameters.describe(f.schema()) + " in stream '" + in + "', but it must be a string, "
                        + "number, boolean or bytes column: every message would go to the dead letters",
                        "name such a column, or remove " + param);
            }
        }
    }

    private static boolean bytesColumn(Schema schema) {
        if (schema.getType() == Schema.Type.UNION) {
            List<Schema> branches = schema.getTypes().stream().filter(b -> b.getType() != Schema.Type.NULL).toList();
            return !branches.isEmpty() && branches.stream().allMatch(SpecValidator::bytesColumn);
        }
        return switch (schema.getType()) {
            case STRING, BYTES, INT, LONG, FLOAT, DOUBLE, BOOLEAN -> true;
            default -> false;
        };
    }

    /** A state's Avro schema is a record: its rows are built with {@code newRecord()} and checked field by field. */
    private void checkStateSchemas(ComputationSpec c) {
        for (StateSpec state : c.states().values()) {
            Schema schema = state.schema();
            if (schema != null && schema.getType() != Schema.Type.RECORD) {
                error(c.id(), "states." + state.name() + ".schema", "state '" + state.name() + "' has a schema of "
                        + "type " + schema.getType().getName() + ", but a state's value must be an Avro record",
                        "wrap the value in a record schema ({\"type\": \"record\", \"name\": ..., \"fields\": "
                        + "[{\"name\": \"value\", \"type\": \"" + schema.getType().getName() + "\"}]}), or "
                        + "declare the state without a schema and read it with getState(name, serde)");
            }
        }
    }

    /** The topics a Kafka source names; empty for other sources or unreadable parameters (reported elsewhere). */
    private static List<String> sourceTopics(SourceSpec source) {
        if (ServiceLogSource.is(source) || PunctuatedSources.is(source)) {
            return List.of();
        }
        try {
            return KafkaSourceParameters.topics(source);
        } catch (RuntimeException e) {
            return List.of();
        }
    }

    private void checkTimers(ComputationSpec c) {
        for (TimerStreamSpec t : c.timers()) {
            String field = "timers." + t.id();
            for (String p : t.parameters().keySet()) {
                if (!TimerStreamSpec.knownParameters().contains(p)) {
                    String suggestion = closest(p, TimerStreamSpec.knownParameters());
                    problem(suggestion != null, c.id(), field + "." + p, "unknown timer parameter '" + p + "'"
                            + (suggestion != null ? "" : " is ignored"), (suggestion == null ? ""
                                    : "did you mean '" + suggestion + "'? ") + "use one of "
                                    + TimerStreamSpec.knownParameters());
                }
            }
            boolean realTime = false;
            try {
                realTime = t.timeType() == TimeType.REAL_TIME;
            } catch (IllegalArgumentException e) {
                error(c.id(), field + ".time_type", e.getMessage(), "set time_type to event_time, system_time or real_time");
            }
            if (realTime) {
                // reference 003: real_time is "compared with real astronomical time", and such timer streams form a
                // group of their own "regardless of the configured input streams and delays"
                for (String p : List.of("streams", "streams_with_delays")) {
                    if (t.parameters().containsKey(p)) {
                        warning(c.id(), field + "." + p, "timer stream '" + t.id() + "' is real_time: it fires by the "
                                + "wall clock, and " + p + " is ignored", "remove " + p + ", or use event_time or "
                                + "system_time to wait on streams");
                    }
                }
                if (c.streamsDependency().containsKey(t.id())) {
                    warning(c.id(), "streams_dependency." + t.id(), "timer stream '" + t.id() + "' is real_time: it "
                            + "fires by the wall clock, and its streams_dependency entry is ignored",
                            "remove it, or use event_time or system_time to wait on streams");
                }
            }
            Object dedup = t.parameters().get("deduplicate_equal_timestamps");
            if (dedup != null && !(dedup instanceof Boolean) && !"true".equals(dedup.toString())
                    && !"false".equals(dedup.toString())) {
                error(c.id(), field + ".deduplicate_equal_timestamps", "deduplicate_equal_timestamps must be true or "
                        + "false but was '" + dedup + "'", "set it to true (default) or false");
            }
            try {
                java.util.Map<String, java.time.Duration> watched = t.watchedStreams();
                List<String> watchable = new ArrayList<>(c.inputStreamIds());
                c.sourceStreams().forEach(src -> watchable.add(src.streamId()));
                boolean eventTime;
                try {
                    eventTime = t.timeType() == TimeType.EVENT_TIME; // a system_time timer waiting on none follows the clock
                } catch (IllegalArgumentException e) {
                    eventTime = false; // reported above
                }
                if (eventTime && (watched != null ? watched.isEmpty() : watchable.isEmpty())) {
                    // reference 003: an event_time timer is "compared with EventWatermark across all input streams
                    // (or the streams listed in streams)": with none, it never fires and the computation never
                    // completes
                    error(c.id(), watched != null ? field + ".streams" : field, "timer stream '" + t.id() + "' waits on "
                            + (watched != null ? "no stream (its streams list is empty)" : "no stream: computation '"
                            + c.id() + "' has no input or source stream") + ", so its watermark never moves and its "
                            + "timers never fire", watched != null ? "list the input or source streams it waits on "
                            + watchable + ", or remove streams (then it waits on all)"
                            : "set time_type: real_time or system_time to "
                            + "fire by the wall clock");
                }
                if (watched != null) {
                    for (var e : watched.entrySet()) {
                        if (!watchable.contains(e.getKey())) {
                            error(c.id(), field + ".streams", "timer stream '" + t.id() + "' waits on stream '"
                                    + e.getKey() + "', which is not an input of '" + c.id() + "'",
                                    "list only input streams " + watchable);
                        }
                        if (e.getValue().isNegative()) {
                            error(c.id(), field + ".streams_with_delays." + e.getKey(), "a delay must be >= 0 but was "
                                    + e.getValue(), "use a non-negative duration like \"5m\"");
                        }
                    }
                }
            } catch (IllegalArgumentException e) {
                error(c.id(), field, e.getMessage(), "streams is a list of input stream ids; streams_with_delays "
                        + "maps input stream ids to durations like \"5m\"");
            }
            checkTimerDependency(c, t, field);
        }
    }

    /**
     * A timer's entry in {@code streams_dependency} narrows the streams its watermark waits on, as its
     * {@code streams} does: given once, input and source streams only, at least one.
     */
    private void checkTimerDependency(ComputationSpec c, TimerStreamSpec t, String field) {
        List<String> dependency = c.streamsDependency().get(t.id());
        if (dependency == null) {
            return;
        }
        String dep = "streams_dependency." + t.id();
        if (t.parameters().containsKey("streams") || t.parameters().containsKey("streams_with_delays")) {
            error(c.id(), dep, "timer stream '" + t.id() + "' names the streams it waits on twice: in " + dep
                    + " and in " + field + ".streams/streams_with_delays", "keep one of them");
        }
        if (dependency.isEmpty()) {
            error(c.id(), dep, "timer stream '" + t.id() + "' depends on no stream, so its watermark never moves",
                    "list the input or source streams it waits on, or remove " + dep + " (then it waits on all)");
        }
        List<String> watchable = new ArrayList<>(c.inputStreamIds());
        c.sourceStreams().forEach(src -> watchable.add(src.streamId()));
        for (String d : dependency) {
            if (!watchable.contains(d)) {
                error(c.id(), dep, "timer stream '" + t.id() + "' depends on '" + d + "': a timer's watermark "
                        + "follows only input and source streams", "list only input or source streams " + watchable);
            }
        }
    }

    private void checkDependencies(ComputationSpec c, Set<String> outputs, Set<String> sources, Set<String> timers) {
        Set<String> keys = new LinkedHashSet<>(outputs);
        keys.addAll(timers);
        Set<String> allowedValues = new LinkedHashSet<>(c.inputStreamIds());
        allowedValues.addAll(sources);
        allowedValues.addAll(timers);
        allowedValues.addAll(c.keyVisitorStreams().keySet());
        Set<String> known = new LinkedHashSet<>(knownStreams);
        known.addAll(timers);
        known.addAll(c.keyVisitorStreams().keySet());
        for (Map.Entry<String, List<String>> e : c.streamsDependency().entrySet()) {
            String key = e.getKey();
            String field = "streams_dependency." + key;
            if (!keys.contains(key)) {
                String suggestion = closest(key, keys);
                String what = known.contains(key) ? "stream '" + key + "' is not an output or timer stream of '"
                        + c.id() + "'" : "unknown stream '" + key + "'";
                error(c.id(), field, what + ": streams_dependency keys must be output or timer streams of their "
                        + "computation", (suggestion == null ? "" : "did you mean '" + suggestion + "'? ")
                        + "use one of " + keys);
            }
            for (String v : new LinkedHashSet<>(e.getValue())) {
                if (allowedValues.contains(v)) {
                    continue;
                }
                String suggestion = closest(v, allowedValues);
                String what = known.contains(v) ? "stream '" + v + "' is not an input, source, timer or key-visitor "
                        + "stream of '" + c.id() + "'" : "unknown stream '" + v + "'";
                error(c.id(), field, what + ": '" + key + "' can depend only on streams its computation reads",
                        (suggestion == null ? "" : "did you mean '" + suggestion + "'? ") + "use one of " + allowedValues);
            }
        }
    }

    private void checkKeyVisitors(ComputationSpec c) {
        if (c.keyVisitorStreams().isEmpty()) {
            return;
        }
        String id = c.id();
        if (c.kind() == ComputationKind.SOURCE) {
            error(id, "key_visitor_streams", "a Source computation cannot have key_visitor_streams",
                    "remove key_visitor_streams, or visit keys in a Transform computation reading its output");
            return;
        }
        if (c.kind() == ComputationKind.TRANSFORM_ORDERED_SOURCE) {
            return; // reported by checkShape
        }
        List<GroupByColumn> columns = c.groupBySchema();
        if (columns.isEmpty()) {
            error(id, "group_by_schema", "a computation with key_visitor_streams needs group_by_schema starting with "
                    + "a uint64 column (the hash that splits partitions into buckets)",
                    "add a first column {\"name\": \"hash\", \"type\": \"uint64\", \"expression\": \"farm_hash(<key "
                            + "field>)\"} followed by the key columns");
        } else if (c.inputStreamIds().isEmpty() && columns.get(0).type() != ColumnType.UINT64) {
            error(id, "group_by_schema[0]", "the first group_by_schema column '" + columns.get(0).name() + "' is "
                    + columns.get(0).type().specName() + ", but a computation with key_visitor_streams needs uint64 there",
                    firstColumnFix(columns.get(0)));
        }
        Set<String> followable = new LinkedHashSet<>(c.inputStreamIds());
        c.sourceStreams().forEach(s -> followable.add(s.streamId()));
        Set<String> timerIds = new HashSet<>();
        c.timers().forEach(t -> timerIds.add(t.id()));
        for (KeyVisitorStreamSpec v : c.keyVisitorStreams().values()) {
            String field = "key_visitor_streams." + v.id();
            if (knownStreams.contains(v.id()) || timerIds.contains(v.id())) {
                error(id, field, "key-visitor stream '" + v.id() + "' has the id of a "
                        + (timerIds.contains(v.id()) ? "timer stream" : "stream"),
                        "give the key-visitor stream an id of its own, e.g. '" + v.id() + "_visits'");
            }
            for (String p : v.parameters().keySet()) {
                if (!KeyVisitorStreamSpec.knownParameters().contains(p)) {
                    String suggestion = closest(p, KeyVisitorStreamSpec.knownParameters());
                    problem(suggestion != null, id, field + "." + p, "unknown key-visitor parameter '" + p + "'"
                            + (suggestion != null ? "" : " is ignored"), (suggestion == null ? ""
                                    : "did you mean '" + suggestion + "'? ") + "use one of "
                                    + KeyVisitorStreamSpec.knownParameters());
                }
            }
            try {
                v.settings();
                v.bucketCount();
            } catch (IllegalArgumentException e) {
                error(id, field, e.getMessage(), "see the key-visitor settings in the README (period \"1d\", "
                        + "max_scan_rows_per_iteration 1000, finite true, ...)");
            }
            List<String> names;
            try {
                names = v.names();
            } catch (IllegalArgumentException e) {
                error(id, field + ".names", e.getMessage(), "list declared state names, e.g. [\"total\"]");
                names = List.of();
            }
            for (String name : names) {
                if (!c.states().containsKey(name)) {
                    String suggestion = closest(name, c.states().keySet());
                    error(id, field + ".names", "key visitor '" + v.id() + "' visits state '" + name
                            + "', which computation '" + id + "' does not declare",
                            (suggestion == null ? "" : "did you mean '" + suggestion + "'? ")
                                    + "declare it in states, or use one of the declared states " + c.states().keySet());
                }
            }
            List<String> external;
            try {
                external = v.externalNames();
            } catch (IllegalArgumentException e) {
                error(id, field + ".external_names", e.getMessage(), "list external state manager and joiner names, "
                        + "e.g. [\"/reference_state\"]");
                external = List.of();
            }
            // what each name is: ExternalStateRules
            checkDuplicates(id, field + ".external_names", external, "external state");
            if (names.isEmpty() && external.isEmpty() && c.states().isEmpty()) {
                error(id, field, "key visitor '" + v.id() + "' visits the keys of every state of '" + id
                        + "', but it declares no states, so there is nothing to visit",
                        "declare the states the process function keeps in states, or list the external state to "
                                + "scan in external_names");
            }
            try {
                List<String> upstream = v.upstreamStreams();
                if (upstream != null) {
                    for (String s : upstream) {
                        if (!followable.contains(s)) {
                            String suggestion = closest(s, followable);
                            error(id, field + ".upstream_streams", "key visitor '" + v.id() + "' follows '" + s
                                    + "', which is not an input or source stream of '" + id + "'",
                                    (suggestion == null ? "" : "did you mean '" + suggestion + "'? ")
                                            + "list only streams of " + followable);
                        }
                    }
                }
            } catch (IllegalArgumentException e) {
                error(id, field + ".upstream_streams", e.getMessage(), "list input or source stream ids " + followable);
            }
            if (c.kind() == ComputationKind.SWIFT_MAP) {
                for (Map.Entry<String, List<String>> e : c.streamsDependency().entrySet()) {
                    if (e.getValue().contains(v.id())) {
                        error(id, "streams_dependency." + e.getKey(), "a SwiftMap computation may not emit from "
                                + "onVisit, so output '" + e.getKey() + "' cannot depend on key-visitor stream '"
                                + v.id() + "'", "remove '" + v.id() + "' from streams_dependency." + e.getKey()
                                + ", or make '" + id + "' a Transform computation");
                    }
                }
            }
        }
    }

    private void unknownStream(String computation, String field, String stream, Collection<String> candidates,
            String otherwise) {
        String suggestion = closest(stream, candidates);
        error(computation, field, "unknown stream '" + stream + "'",
                suggestion != null ? "did you mean '" + suggestion + "'? otherwise " + otherwise : otherwise);
    }

    private void problem(boolean isError, @Nullable String computation, String field, String message, String fix) {
        if (isError) {
            error(computation, field, message, fix);
        } else {
            warning(computation, field, message, fix);
        }
    }

    private void warning(@Nullable String computation, String field, String message, String fix) {
        warnings.add(SpecProblem.warning(computation, field, message, fix));
    }

    private void error(@Nullable String computation, String field, String message, String fix) {
        errors.add(SpecProblem.error(computation, field, message, fix));
    }

    private static @Nullable String closestIgnoringPrefix(String name, Collection<String> candidates) {
        String direct = closest(name, candidates);
        if (direct != null) {
            return direct;
        }
        return name.startsWith("T") ? closest(name.substring(1), candidates) : null;
    }

    /** The candidate closest to {@code name}, as {@link NearestName#closest}. */
    static @Nullable String closest(String name, Collection<String> candidates) {
        return NearestName.closest(name, candidates);
    }

    static int editDistance(String a, String b) {
        return NearestName.editDistance(a, b);
    }
}
