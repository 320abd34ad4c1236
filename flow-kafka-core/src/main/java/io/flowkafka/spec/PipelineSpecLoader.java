package io.flowkafka.spec;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.core.json.JsonReadFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import org.apache.avro.Schema;
import org.jspecify.annotations.Nullable;

/**
 * Loads a {@link PipelineSpec} from JSON or YAML written with YTsaurus Flow's field names.
 *
 * <p>Format (every map is a JSON object keyed by id):
 * <pre>{@code
 * {
 *   "name": "activity",
 *   "streams": {"events": {"schema": {"type": "record", "name": "Event", "fields": [...]}}},
 *   "computations": {
 *     "count": {
 *       "computation_class_name": "Transform",          // or TProcessFunctionComputation, SwiftMap, Source, ...
 *       "processing_function": "com.acme.ActivityCounter",
 *       "input_stream_ids": ["events"], "output_stream_ids": ["counts"],
 *       "source_streams": {"<stream>": {"source_class_name": "KafkaSource", "parameters": {"topics": ["t"]}}},
 *       "sinks": {"<sink>": {"sink_class_name": "KafkaSink", "input_stream_ids": ["counts"],
 *                            "parameters": {"topic": "out"}}},
 *       "group_by_schema": [{"name": "hash", "type": "uint64", "expression": "farm_hash(user)"},
 *                           {"name": "user", "type": "string"}],
 *       "states": {"total": {"schema": {...}}},
 *       "timers": {"<id>": {...}},                      // "timer_streams" is an alias
 *       "key_visitor_streams": {"<id>": {"names": ["total"]}},
 *       "streams_dependency": {"counts": ["events"]},
 *       "processing_mode": "exactly_once",
 *       "parameters": {...},                            // also read from "processing_function_parameters"
 *       "desired_partition_count": 8,
 *       "external_state_managers": {"/table": {"external_state_manager_class_name": "TSimpleExternalStateManager",
 *                                              "parameters": {"schema": {...}, "topic": "t"}}},
 *       "external_state_joiners": {"/other": {"external_state_joiner_class_name": "TSimpleExternalStateJoiner",
 *                                             "parameters": {"topic": "t", "cache": {"ttl": "5s"}}}},
 *       "state_joiners": {"/totals": {"computation_id": "count", "state_name": "total"}}
 *     }
 *   }
 * }
 * }</pre>
 * A schema is an Avro schema as a JSON object, or as a string holding one. {@code parameters}
 * become plain Java values: {@code Map} (insertion-ordered), {@code List}, {@code String},
 * {@code Long}, {@code Double}, {@code Boolean}; object members whose value is {@code null} are
 * dropped with a warning. Java-style comments are allowed.
 *
 * <p>YAML ({@link #fromYaml}, or a file or resource ending in {@code .yaml} or {@code .yml}) has
 * the same fields and the same rules; only the syntax differs:
 * <pre>{@code
 * name: activity
 * streams:
 *   events: {schema: {type: record, name: Event, fields: [{name: user, type: string}]}}
 * computations:
 *   count:
 *     computation_class_name: Transform
 *     processing_function: com.acme.ActivityCounter
 *     input_stream_ids: [events]
 *     group_by_schema:
 *       - {name: hash, type: uint64, expression: farm_hash(user)}
 *       - {name: user, type: string}
 * }</pre>
 * A YAML scalar keeps its YAML type: {@code 8} is a number, {@code "8"} a string, {@code true} a
 * boolean; a field that wants a string rejects a number (quote it), as JSON does.
 *
 * <p>As in Flow, an unknown field is a warning, not an error: it is recorded in
 * {@link PipelineSpec#warnings()} naming the field and the known ones. Flow computation fields flow-kafka
 * does not support yet ({@code input_ordering}, {@code min_partition_count}, ...) are warnings too.
 * A known field flow-kafka would accept and silently ignore is an error instead:
 * {@code watermark_generator.late_data_partitions}, a {@code watermark_strategy} on a computation
 * without {@code source_streams}, a {@code sort_order} other than {@code ascending}. Malformed JSON, a
 * wrong JSON type, an unknown computation kind or column type and a bad Avro schema are errors: all of
 * them are collected and thrown together as one {@link InvalidSpecException}, each naming the
 * computation and the field.
 *
 * <p>External state ({@code external_state_managers}, {@code external_state_joiners}, {@code state_joiners})
 * is read by {@link ExternalStateReader}: class names in Flow's form ({@code NYT::NFlow::TSimpleExternalStateJoiner})
 * or short; a YT {@code path} parameter is an error (a table is a topic: {@code parameters.topic}).
 *
 * <p>Loading checks structure only: call {@link PipelineSpec#validate()} or
 * {@link PipelineSpec#validated()} on the result to check Flow's rules (stream writers, schemas,
 * group-by keys, ...). Stateless and thread-safe.
 *
 * <p>Over 700 lines because it reads every Flow field of a spec file, each with its own error and fix;
 * the rules that need the whole spec are in {@link SpecValidator}.
 */
public final class PipelineSpecLoader {
    private static final JsonMapper MAPPER = JsonMapper.builder()
            .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
            .enable(JsonReadFeature.ALLOW_JAVA_COMMENTS)
            .build();
    private static final YAMLMapper YAML_MAPPER = YAMLMapper.builder()
            .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
            .build();

    /** The syntax of a spec text. */
    private enum Syntax {
        JSON, YAML;

        static Syntax of(String fileName) {
            String lower = fileName.toLowerCase(Locale.ROOT);
            return lower.endsWith(".yaml") || lower.endsWith(".yml") ? YAML : JSON;
        }
    }

    private static final List<String> TOP_FIELDS = List.of("name", "streams", "computations");
    private static final List<String> STREAM_FIELDS = List.of("schema");
    private static final List<String> STATE_FIELDS = List.of("schema");
    private static final List<String> SOURCE_FIELDS = List.of("source_class_name", "parameters");
    private static final List<String> SINK_FIELDS = List.of("sink_class_name", "input_stream_ids", "parameters",
            "at_most_once_strategy");
    private static final List<String> COLUMN_FIELDS = List.of("name", "type", "expression", "sort_order", "required");
    private static final List<String> COMPUTATION_FIELDS = List.of("computation_class_name", "processing_function",
            "processing_function_parameters", "parameters", "input_stream_ids", "output_stream_ids", "source_streams",
            "sinks", "group_by_schema", "states", "timers", "timer_streams", "key_visitor_streams",
            "streams_dependency", "processing_mode", "desired_partition_count", "watermark_strategy",
            "external_state_managers", "external_state_joiners", "state_joiners");
    /** Flow computation fields that flow-kafka does not support yet. */
    private static final List<String> UNSUPPORTED_COMPUTATION_FIELDS = List.of("input_ordering",
            "min_partition_count", "max_partition_count");

    private PipelineSpecLoader() {
    }

    /**
     * Loads a spec from JSON text.
     *
     * @param json the spec
     * @return the spec, not yet validated against Flow's rules; its {@link PipelineSpec#warnings()}
     *     list unknown fields
     * @throws InvalidSpecException listing every structural error (malformed JSON, wrong JSON types,
     *     unknown computation kinds, column types or processing modes, bad Avro schemas)
     */
    public static PipelineSpec fromJson(String json) {
        Objects.requireNonNull(json, "json");
        return new Reading(Syntax.JSON, null).read(json);
    }

    /**
     * Loads a spec from YAML text, with the same fields and rules as {@link #fromJson}.
     *
     * @param yaml the spec
     * @return the spec, not yet validated against Flow's rules; its {@link PipelineSpec#warnings()}
     *     list unknown fields
     * @throws InvalidSpecException listing every structural error; a syntax error gives its line and
     *     column
     */
    public static PipelineSpec fromYaml(String yaml) {
        Objects.requireNonNull(yaml, "yaml");
        return new Reading(Syntax.YAML, null).read(yaml);
    }

    /**
     * Loads a spec from a UTF-8 file: YAML if its name ends in {@code .yaml} or {@code .yml}, JSON
     * otherwise. Errors name the file.
     *
     * @param path the file
     * @return the spec, not yet validated against Flow's rules
     * @throws UncheckedIOException if the file cannot be read
     * @throws InvalidSpecException listing every structural error, as {@link #fromJson}; a syntax
     *     error gives the file, line and column
     */
    public static PipelineSpec fromFile(Path path) {
        Objects.requireNonNull(path, "path");
        String text;
        try {
            text = Files.readString(path, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read pipeline spec file " + path + ": " + e.getMessage()
                    + "; check that the file exists, is readable and is UTF-8", e);
        }
        Path name = path.getFileName();
        return new Reading(Syntax.of(name == null ? "" : name.toString()), path.toString()).read(text);
    }

    /**
     * Loads a spec from a UTF-8 classpath resource, e.g. {@code specs/activity.json} or
     * {@code specs/activity.yaml} (YAML if its name ends in {@code .yaml} or {@code .yml}), looked up
     * with the thread's context class loader (or this class's loader when there is none).
     *
     * @param resource the resource path; a leading {@code /} is ignored
     * @return the spec, not yet validated against Flow's rules
     * @throws IllegalArgumentException if no such resource is on the classpath
     * @throws UncheckedIOException if the resource cannot be read
     * @throws InvalidSpecException listing every structural error, as {@link #fromJson}
     */
    public static PipelineSpec fromResource(String resource) {
        Objects.requireNonNull(resource, "resource");
        String name = resource.startsWith("/") ? resource.substring(1) : resource;
        ClassLoader context = Thread.currentThread().getContextClassLoader();
        ClassLoader loader = context != null ? context : PipelineSpecLoader.class.getClassLoader();
        try (InputStream in = loader.getResourceAsStream(name)) {
            if (in == null) {
                throw new IllegalArgumentException("pipeline spec resource '" + resource + "' is not on the classpath: "
                        + "put it under src/main/resources (or src/test/resources) and pass its path relative to "
                        + "that folder");
            }
            return new Reading(Syntax.of(name), "resource " + name)
                    .read(new String(in.readAllBytes(), StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read pipeline spec resource '" + resource + "': " + e.getMessage(), e);
        }
    }

    /** One load: collects errors and warnings, then builds the spec or throws. */
    static final class Reading {
        private final List<SpecProblem> errors = new ArrayList<>();
        final List<SpecProblem> warnings = new ArrayList<>();
        private final Syntax syntax;
        /** The file or resource read, for messages; null for text. */
        private final @Nullable String source;

        Reading(Syntax syntax, @Nullable String source) {
            this.syntax = syntax;
            this.source = source;
        }

        PipelineSpec read(String text) {
            JsonNode root;
            String format = syntax.name();
            String field = format.toLowerCase(Locale.ROOT);
            String unnamed = source == null ? "<unnamed>" : source;
            ObjectMapper mapper = syntax == Syntax.YAML ? YAML_MAPPER : MAPPER;
            try {
                root = mapper.readTree(text);
            } catch (JsonProcessingException e) {
                error(null, field, syntaxError(e, format), "fix the " + format + " syntax there");
                throw new InvalidSpecException(unnamed, errors);
            }
            if (root == null || !root.isObject()) {
                error(null, field, (source == null ? "the pipeline spec" : source) + " must be a " + format
                        + (syntax == Syntax.YAML ? " mapping" : " object") + " but is "
                        + (root == null || root.isMissingNode() || root.isNull() ? "empty" : describe(root)),
                        syntax == Syntax.YAML ? "write name: ..., streams: {...}, computations: {...}"
                                : "write {\"name\": ..., \"streams\": {...}, \"computations\": {...}}");
                throw new InvalidSpecException(unnamed, errors);
            }
            unknownFields(root, null, "", TOP_FIELDS, List.of());
            if (root.has("processing_mode")) {
                error(null, "processing_mode", "processing_mode is set per computation, not for the whole pipeline",
                        "move it into each Transform computation that should use it: \"computations\": {\"<id>\": "
                                + "{\"processing_mode\": " + root.get("processing_mode") + ", ...}}");
            }
            String name = string(root.get("name"), null, "name");
            if (name == null && !root.has("name")) {
                error(null, "name", "the pipeline spec has no name", "add \"name\": \"<pipeline>\"; it becomes the "
                        + "Kafka Streams application.id and topic prefix");
            }
            PipelineSpec.Builder builder = PipelineSpec.builder(name == null ? "<unnamed>" : name);
            readStreams(root.get("streams"), builder);
            JsonNode computations = root.get("computations");
            if (computations == null) {
                error(null, "computations", "the pipeline spec has no computations",
                        "add \"computations\": {\"<id>\": {...}}");
            }
            for (Map.Entry<String, JsonNode> e : entries(computations, null, "computations")) {
                ComputationSpec c = readComputation(e.getKey(), e.getValue());
                if (c != null) {
                    builder.computation(c);
                }
            }
            if (!errors.isEmpty()) {
                List<SpecProblem> problems = new ArrayList<>(errors);
                problems.addAll(warnings);
                throw InvalidSpecException.of(name == null ? "<unnamed>" : name, problems);
            }
            warnings.forEach(builder::warning);
            return builder.build();
        }

        /**
         * One sentence: where (file, line, column) and what is wrong, e.g. {@code wait-click.yaml,
         * line 3, column 9: not valid YAML: mapping values are not allowed here}.
         */
        private String syntaxError(JsonProcessingException e, String format) {
            JsonLocation at = e.getLocation();
            int line = at == null ? -1 : at.getLineNr();
            int column = at == null ? -1 : at.getColumnNr();
            String what = e.getOriginalMessage();
            if (e.getCause() instanceof org.yaml.snakeyaml.error.MarkedYAMLException y && y.getProblem() != null) {
                what = y.getProblem() + (y.getContext() == null ? "" : " (" + y.getContext() + ")");
                if (y.getProblemMark() != null) { // where the problem is; Jackson's location may be the context's
                    line = y.getProblemMark().getLine() + 1;
                    column = y.getProblemMark().getColumn() + 1;
                }
            }
            StringBuilder where = new StringBuilder(source == null ? "the pipeline spec" : source);
            if (line > 0) {
                where.append(", line ").append(line);
                if (column > 0) {
                    where.append(", column ").append(column);
                }
            }
            what = what == null ? "syntax error" : what.lines().findFirst().orElse("syntax error").trim()
                    .replaceAll("\\[Source: [^\\]]*; line: (\\d+), column: (\\d+)\\]", "line $1, column $2");
            if (what.endsWith(".")) {
                what = what.substring(0, what.length() - 1);
            }
            return where + ": not valid " + format + ": " + what;
        }

        private void readStreams(@Nullable JsonNode streams, PipelineSpec.Builder builder) {
            for (Map.Entry<String, JsonNode> e : entries(streams, null, "streams")) {
                String id = e.getKey();
                String field = "streams." + id;
                JsonNode node = e.getValue();
                if (!node.isObject()) {
                    typeError(null, field, node, "an object", "{\"schema\": {\"type\": \"record\", ...}}");
                    continue;
                }
                unknownFields(node, null, field + ".", STREAM_FIELDS, List.of());
                JsonNode schemaNode = node.get("schema");
                if (schemaNode == null || schemaNode.isNull()) {
                    builder.streamWithoutSchema(id);
                    continue;
                }
                Schema schema = schema(schemaNode, null, field + ".schema");
                if (schema != null) {
                    builder.stream(id, schema);
                }
            }
        }

        private @Nullable ComputationSpec readComputation(String id, JsonNode node) {
            if (!node.isObject()) {
                typeError(id, "computations." + id, node, "an object", "{\"computation_class_name\": \"Transform\", ...}");
                return null;
            }
            unknownFields(node, id, "", COMPUTATION_FIELDS, UNSUPPORTED_COMPUTATION_FIELDS);
            for (String parameter : List.of(ComputationSpec.ALLOW_BATCHING_PARAMETER,
                    ComputationSpec.MAX_BATCH_SIZE_PARAMETER, ComputationSpec.MAX_BATCH_DELAY_PARAMETER)) {
                if (node.has(parameter)) {
                    error(id, parameter, parameter + " is a parameter: Flow reads it from the computation's "
                            + "parameters block, and beside it it would be ignored", "move it into parameters: "
                            + "\"parameters\": {\"" + parameter + "\": " + node.get(parameter) + "}");
                }
            }
            ComputationSpec.Builder b = ComputationSpec.builder(id);

            String kind = string(node.get("computation_class_name"), id, "computation_class_name");
            if (kind != null) {
                try {
                    b.kind(ComputationKind.parse(kind));
                } catch (IllegalArgumentException ex) {
                    error(id, "computation_class_name", ex.getMessage(),
                            "set computation_class_name to Transform, SwiftMap, Source or TransformOrderedSource");
                }
            }
            String function = string(node.get("processing_function"), id, "processing_function");
            if (function != null) {
                b.processingFunction(function);
            }
            b.inputStreamIds(stringList(node.get("input_stream_ids"), id, "input_stream_ids").toArray(String[]::new));
            b.outputStreamIds(stringList(node.get("output_stream_ids"), id, "output_stream_ids").toArray(String[]::new));

            for (Map.Entry<String, JsonNode> e : entries(node.get("source_streams"), id, "source_streams")) {
                readSource(b, id, e.getKey(), e.getValue());
            }
            for (Map.Entry<String, JsonNode> e : entries(node.get("sinks"), id, "sinks")) {
                readSink(b, id, e.getKey(), e.getValue());
            }
            readGroupBy(b, id, node.get("group_by_schema"));
            for (Map.Entry<String, JsonNode> e : entries(node.get("states"), id, "states")) {
                readState(b, id, e.getKey(), e.getValue());
            }
            for (String timersField : List.of("timers", "timer_streams")) {
                for (Map.Entry<String, JsonNode> e : entries(node.get(timersField), id, timersField)) {
                    Map<String, Object> params = parameterMap(e.getValue(), id, timersField + "." + e.getKey());
                    if (params != null) {
                        b.timer(e.getKey(), params);
                    }
                }
            }
            for (Map.Entry<String, JsonNode> e : entries(node.get("key_visitor_streams"), id, "key_visitor_streams")) {
                Map<String, Object> params = parameterMap(e.getValue(), id, "key_visitor_streams." + e.getKey());
                if (params != null) {
                    b.keyVisitorStream(e.getKey(), params);
                }
            }
            for (Map.Entry<String, JsonNode> e : entries(node.get("streams_dependency"), id, "streams_dependency")) {
                String field = "streams_dependency." + e.getKey();
                if (!e.getValue().isArray()) {
                    typeError(id, field, e.getValue(), "a list of stream ids", "[\"<stream>\", ...]");
                    continue;
                }
                b.streamsDependency(e.getKey(), stringList(e.getValue(), id, field));
            }
            String mode = string(node.get("processing_mode"), id, "processing_mode");
            if (mode != null) {
                try {
                    b.processingMode(ProcessingMode.parse(mode));
                } catch (IllegalArgumentException ex) {
                    error(id, "processing_mode", ex.getMessage(),
                            "set processing_mode to exactly_once or at_least_once_consistent");
                }
            }
            new ExternalStateReader(this, id).read(b, node);
            readParameters(b, id, node);
            readWatermarkStrategy(b, id, node);
            JsonNode partitions = node.get("desired_partition_count");
            if (partitions != null && !partitions.isNull()) {
                if (!partitions.isIntegralNumber() || !partitions.canConvertToInt() || partitions.intValue() < 1) {
                    error(id, "desired_partition_count", "desired_partition_count must be a positive integer but was "
                            + partitions, "set desired_partition_count to the number of partitions, e.g. 8");
                } else {
                    b.desiredPartitionCount(partitions.intValue());
                }
            }
            return b.build();
        }

        private void readWatermarkStrategy(ComputationSpec.Builder b, String id, JsonNode computation) {
            JsonNode node = computation.get("watermark_strategy");
            if (node == null || node.isNull()) {
                return;
            }
            String field = "watermark_strategy";
            if (!node.isObject()) {
                typeError(id, field, node, "an object", "{\"watermark_generator\": {\"out_of_orderness_bound\": \"1m\"}}");
                return;
            }
            JsonNode sources = computation.get("source_streams");
            if (!node.isEmpty() && (sources == null || !sources.isObject() || sources.isEmpty())) {
                error(id, field, "watermark_strategy applies to a computation's source_streams, and '" + id + "' reads "
                        + "no source_streams: it would be ignored (the watermarks of its inputs come from the "
                        + "computations writing them)", "remove it, or move it to the computation reading the source");
                return;
            }
            unknownFields(node, id, field + ".", List.of("event_timestamp_assigner", "watermark_generator",
                    "watermark_alignment"), List.of());
            WatermarkStrategy ws = WatermarkStrategy.DEFAULT;
            try {
                JsonNode assigner = object(node.get("event_timestamp_assigner"), id, field + ".event_timestamp_assigner",
                        "{\"column\": \"ts\"}");
                if (assigner != null) {
                    unknownFields(assigner, id, field + ".event_timestamp_assigner.", List.of("column"), List.of());
                    String column = string(assigner.get("column"), id, field + ".event_timestamp_assigner.column");
                    if (column != null) {
                        ws = ws.withTimestampColumn(column);
                    }
                }
                JsonNode gen = object(node.get("watermark_generator"), id, field + ".watermark_generator",
                        "{\"out_of_orderness_bound\": \"1m\"}");
                if (gen != null) {
                    ws = readGenerator(id, field + ".watermark_generator", gen, ws);
                }
                JsonNode align = node.get("watermark_alignment");
                if (align != null && !align.isNull()) {
                    ws = readAlignment(id, field + ".watermark_alignment", align, ws);
                }
                b.watermarkStrategy(ws);
            } catch (IllegalArgumentException e) {
                error(id, field, e.getMessage(), "durations are strings like \"1m\", \"30s\", \"500ms\" or "
                        + "milliseconds as a number; max_ratio is in [0, 1]");
            }
        }

        /** {@code watermark_generator}: {@code out_of_orderness_bound}, {@code idle_partitions}. */
        private WatermarkStrategy readGenerator(String id, String field, JsonNode gen, WatermarkStrategy ws) {
            unknownFields(gen, id, field + ".", List.of("out_of_orderness_bound", "idle_partitions",
                    "late_data_partitions"), List.of());
            if (gen.hasNonNull("late_data_partitions")) {
                error(id, field + ".late_data_partitions", "late_data_partitions is not supported by flow-kafka: "
                        + "it would be ignored, and a partition holding only old data would still hold the event "
                        + "watermark back", "remove late_data_partitions (flow-kafka's watermark is Flow's without "
                        + "it: every partition that is not idle counts); to keep a lagging partition's records from "
                        + "waiting for it, compare message.eventTimestamp() with the input watermark in the process "
                        + "function and drop or divert the late ones");
            }
            if (gen.hasNonNull("out_of_orderness_bound")) {
                ws = ws.withOutOfOrdernessBound(Durations.parse(gen.get("out_of_orderness_bound"),
                        field + ".out_of_orderness_bound"));
            }
            JsonNode idle = object(gen.get("idle_partitions"), id, field + ".idle_partitions",
                    "{\"duration\": \"1m\", \"max_ratio\": 0.4}");
            if (idle == null) {
                return ws;
            }
            unknownFields(idle, id, field + ".idle_partitions.", List.of("duration", "max_ratio"), List.of());
            Duration d = idle.hasNonNull("duration")
                    ? Durations.parse(idle.get("duration"), field + ".idle_partitions.duration")
                    : ws.idleDuration();
            JsonNode ratio = idle.get("max_ratio");
            if (ratio != null && !ratio.isNull() && !ratio.isNumber()) {
                typeError(id, field + ".idle_partitions.max_ratio", ratio, "a number in [0, 1]", "0.4");
                return ws;
            }
            return ws.withIdlePartitions(d, ratio == null || ratio.isNull() ? ws.idleMaxRatio() : ratio.asDouble());
        }

        /** An optional object field: null when absent or null, or (after reporting) of another type. */
        private @Nullable JsonNode object(@Nullable JsonNode node, String id, String field, String example) {
            if (node == null || node.isNull()) {
                return null;
            }
            if (!node.isObject()) {
                typeError(id, field, node, "an object", example);
                return null;
            }
            return node;
        }

        /** {@code watermark_alignment}: {@code group_name} (required), {@code drift_bound} (default 20m). */
        private WatermarkStrategy readAlignment(String id, String field, JsonNode align, WatermarkStrategy ws) {
            String example = "{\"group_name\": \"impressions-and-clicks\", \"drift_bound\": \"20m\"}";
            if (!align.isObject()) {
                typeError(id, field, align, "an object", example);
                return ws;
            }
            unknownFields(align, id, field + ".", List.of("group_name", "drift_bound"), List.of());
            JsonNode group = align.get("group_name");
            if (group == null || !group.isTextual() || group.asText().isBlank()) {
                error(id, field + ".group_name", "watermark_alignment needs a group_name (a non-empty string) but "
                        + (group == null ? "has none" : "has " + group),
                        "name the group of sources to read in step, e.g. " + example);
                return ws;
            }
            Duration drift = WatermarkStrategy.DEFAULT_DRIFT_BOUND;
            if (align.hasNonNull("drift_bound")) {
                drift = Durations.parse(align.get("drift_bound"), field + ".drift_bound");
                if (drift.isNegative() || drift.isZero()) {
                    error(id, field + ".drift_bound", "drift_bound must be > 0 but was " + align.get("drift_bound"),
                            "give how far in event time a source may read ahead of its group, e.g. \"20m\" (Flow's default)");
                    return ws;
                }
            }
            return ws.withAlignment(group.asText(), drift);
        }

        private void readParameters(ComputationSpec.Builder b, String id, JsonNode node) {
            Map<String, Object> merged = new LinkedHashMap<>();
            for (String field : List.of("parameters", "processing_function_parameters")) {
                JsonNode p = node.get(field);
                if (p == null || p.isNull()) {
                    continue;
                }
                Map<String, Object> params = parameterMap(p, id, field);
                if (params == null) {
                    continue;
                }
                for (Map.Entry<String, Object> e : params.entrySet()) {
                    if (merged.putIfAbsent(e.getKey(), e.getValue()) != null) {
                        error(id, field + "." + e.getKey(), "parameter '" + e.getKey()
                                + "' is set in both parameters and processing_function_parameters",
                                "keep it in one of them");
                    }
                }
            }
            merged.forEach(b::parameter);
        }

        private void readSource(ComputationSpec.Builder b, String id, String stream, JsonNode node) {
            String field = "source_streams." + stream;
            if (!node.isObject()) {
                typeError(id, field, node, "an object", "{\"source_class_name\": \"KafkaSource\", \"parameters\": {...}}");
                return;
            }
            unknownFields(node, id, field + ".", SOURCE_FIELDS, List.of());
            String className = string(node.get("source_class_name"), id, field + ".source_class_name");
            if (className == null && node.get("source_class_name") == null) {
                error(id, field + ".source_class_name", "source of stream '" + stream + "' has no source_class_name",
                        "add \"source_class_name\": \"KafkaSource\"");
            }
            Map<String, Object> params = optionalParameterMap(node.get("parameters"), id, field + ".parameters");
            if (className != null && params != null) {
                b.source(stream, className, params);
            }
        }

        private void readSink(ComputationSpec.Builder b, String id, String sinkId, JsonNode node) {
            String field = "sinks." + sinkId;
            if (!node.isObject()) {
                typeError(id, field, node, "an object", "{\"sink_class_name\": \"KafkaSink\", \"input_stream_ids\": [...], "
                        + "\"parameters\": {...}}");
                return;
            }
            unknownFields(node, id, field + ".", SINK_FIELDS, List.of());
            String className = string(node.get("sink_class_name"), id, field + ".sink_class_name");
            if (className == null && node.get("sink_class_name") == null) {
                error(id, field + ".sink_class_name", "sink '" + sinkId + "' has no sink_class_name",
                        "add \"sink_class_name\": \"KafkaSink\"");
            }
            List<String> inputs = stringList(node.get("input_stream_ids"), id, field + ".input_stream_ids");
            Map<String, Object> params = optionalParameterMap(node.get("parameters"), id, field + ".parameters");
            JsonNode amo = node.get("at_most_once_strategy");
            if (params != null && amo != null && !amo.isNull()) {
                // Flow puts it beside the parameters; flow-kafka keeps it among them
                Map<String, Object> amoMap = optionalParameterMap(amo, id, field + ".at_most_once_strategy");
                if (amoMap != null && params.containsKey("at_most_once_strategy")) {
                    error(id, field + ".at_most_once_strategy", "sink '" + sinkId + "' sets at_most_once_strategy both "
                            + "beside and inside its parameters", "keep one of the two");
                } else if (amoMap != null) {
                    params = new java.util.LinkedHashMap<>(params);
                    params.put("at_most_once_strategy", amoMap);
                }
            }
            if (className != null && params != null) {
                b.sink(sinkId, className, inputs, params);
            }
        }

        private void readGroupBy(ComputationSpec.Builder b, String id, @Nullable JsonNode node) {
            if (node == null || node.isNull()) {
                return;
            }
            if (!node.isArray()) {
                typeError(id, "group_by_schema", node, "a list of columns",
                        "[{\"name\": \"hash\", \"type\": \"uint64\", \"expression\": \"farm_hash(<key>)\"}, ...]");
                return;
            }
            for (int i = 0; i < node.size(); i++) {
                JsonNode col = node.get(i);
                String field = "group_by_schema[" + i + "]";
                if (!col.isObject()) {
                    typeError(id, field, col, "an object", "{\"name\": ..., \"type\": ..., \"expression\": ...}");
                    continue;
                }
                unknownFields(col, id, field + ".", COLUMN_FIELDS, List.of());
                String name = string(col.get("name"), id, field + ".name");
                String type = string(col.get("type"), id, field + ".type");
                String expression = string(col.get("expression"), id, field + ".expression");
                JsonNode required = col.get("required");
                if (required != null && !required.isNull()) {
                    warnings.add(SpecProblem.warning(id, field + ".required", "'required' is not enforced: a key column "
                            + "may be null in flow-kafka (a null value is part of the key like any other)",
                            "remove 'required', or check for null in a Source computation's process function"));
                }
                String sortOrder = string(col.get("sort_order"), id, field + ".sort_order");
                if (sortOrder != null && !sortOrder.equals("ascending")) {
                    error(id, field + ".sort_order", "sort_order '" + sortOrder + "' is not supported by flow-kafka and "
                            + "would be ignored: keys have one order only, ascending by the first (hash) column", "remove sort_order, or set it to "
                            + "\"ascending\"");
                }
                if (col.get("name") == null) {
                    error(id, field + ".name", "group_by_schema column " + i + " has no name",
                            "add \"name\": \"<column>\"");
                }
                if (col.get("type") == null) {
                    error(id, field + ".type", "group_by_schema column " + (name == null ? i : "'" + name + "'")
                            + " has no type", "add \"type\": one of uint64, int64, double, boolean, string");
                }
                ColumnType columnType = null;
                if (type != null) {
                    try {
                        columnType = ColumnType.parse(type);
                    } catch (IllegalArgumentException ex) {
                        error(id, field + ".type", ex.getMessage(), "set type to uint64, int64, double, boolean or string");
                    }
                }
                if (name != null && columnType != null) {
                    b.groupBy(name, columnType, expression);
                }
            }
        }

        private void readState(ComputationSpec.Builder b, String id, String name, JsonNode node) {
            String field = "states." + name;
            if (!node.isObject()) {
                typeError(id, field, node, "an object", "{\"schema\": {\"type\": \"record\", ...}} or {}");
                return;
            }
            unknownFields(node, id, field + ".", STATE_FIELDS, List.of());
            JsonNode schemaNode = node.get("schema");
            if (schemaNode == null || schemaNode.isNull()) {
                b.state(name);
                return;
            }
            Schema schema = schema(schemaNode, id, field + ".schema");
            if (schema != null) {
                b.state(name, schema);
            }
        }

        @Nullable Schema schema(JsonNode node, @Nullable String computation, String field) {
            String text;
            if (node.isTextual()) {
                String t = node.textValue().trim();
                text = t.startsWith("{") || t.startsWith("[") || t.startsWith("\"") ? t : node.toString();
            } else if (node.isObject() || node.isArray()) {
                text = node.toString();
            } else {
                typeError(computation, field, node, "an Avro schema (a JSON object, or a string holding one)",
                        "{\"type\": \"record\", \"name\": \"Event\", \"fields\": [...]}");
                return null;
            }
            try {
                return new Schema.Parser().parse(text);
            } catch (RuntimeException e) {
                error(computation, field, "bad Avro schema: " + e.getMessage(),
                        "write a valid Avro schema, e.g. {\"type\": \"record\", \"name\": \"Event\", \"fields\": "
                                + "[{\"name\": \"user\", \"type\": \"string\"}]}");
                return null;
            }
        }

        @Nullable String string(@Nullable JsonNode node, @Nullable String computation, String field) {
            if (node == null || node.isNull()) {
                return null;
            }
            if (!node.isTextual()) {
                typeError(computation, field, node, "a string", "\"...\"");
                return null;
            }
            return node.textValue();
        }

        private List<String> stringList(@Nullable JsonNode node, @Nullable String computation, String field) {
            if (node == null || node.isNull()) {
                return List.of();
            }
            if (!node.isArray()) {
                typeError(computation, field, node, "a list of stream ids", "[\"<stream>\", ...]");
                return List.of();
            }
            List<String> out = new ArrayList<>();
            for (int i = 0; i < node.size(); i++) {
                JsonNode e = node.get(i);
                if (e.isTextual()) {
                    out.add(e.textValue());
                } else {
                    typeError(computation, field + "[" + i + "]", e, "a string", "\"<stream>\"");
                }
            }
            return out;
        }

        List<Map.Entry<String, JsonNode>> entries(@Nullable JsonNode node, @Nullable String computation,
                String field) {
            if (node == null || node.isNull()) {
                return List.of();
            }
            if (!node.isObject()) {
                typeError(computation, field, node, "an object keyed by id", "{\"<id>\": {...}}");
                return List.of();
            }
            List<Map.Entry<String, JsonNode>> out = new ArrayList<>();
            out.addAll(node.properties());
            return out;
        }

        private @Nullable Map<String, Object> optionalParameterMap(@Nullable JsonNode node,
                @Nullable String computation, String field) {
            if (node == null || node.isNull()) {
                return Map.of();
            }
            return parameterMap(node, computation, field);
        }

        /** A JSON object as a Java map; null (after reporting) if it is not an object. */
        @Nullable Map<String, Object> parameterMap(JsonNode node, @Nullable String computation, String field) {
            if (node.isNull()) {
                return Map.of();
            }
            if (!node.isObject()) {
                typeError(computation, field, node, "an object", "{\"<name>\": <value>, ...}");
                return null;
            }
            @SuppressWarnings("unchecked")
            Map<String, Object> map = (Map<String, Object>) toJava(node, computation, field);
            return map;
        }

        private @Nullable Object toJava(JsonNode node, @Nullable String computation, String field) {
            if (node.isObject()) {
                Map<String, Object> map = new LinkedHashMap<>();
                for (Map.Entry<String, JsonNode> e : node.properties()) {
                    String sub = field + "." + e.getKey();
                    if (e.getValue().isNull()) {
                        warnings.add(SpecProblem.warning(computation, sub, "'" + e.getKey() + "' is null and is ignored",
                                "remove it, or give it a value"));
                        continue;
                    }
                    Object v = toJava(e.getValue(), computation, sub);
                    if (v != null) {
                        map.put(e.getKey(), v);
                    }
                }
                return Collections.unmodifiableMap(map);
            }
            if (node.isArray()) {
                List<@Nullable Object> list = new ArrayList<>();
                for (int i = 0; i < node.size(); i++) {
                    JsonNode e = node.get(i);
                    list.add(e.isNull() ? null : toJava(e, computation, field + "[" + i + "]"));
                }
                return Collections.unmodifiableList(list);
            }
            if (node.isTextual()) {
                return node.textValue();
            }
            if (node.isBoolean()) {
                return node.booleanValue();
            }
            if (node.isIntegralNumber()) {
                if (!node.canConvertToLong()) {
                    error(computation, field, "number " + node + " does not fit in 64 bits",
                            "use a number between -2^63 and 2^63-1, or a string");
                    return null;
                }
                return node.longValue();
            }
            if (node.isNumber()) {
                return node.doubleValue();
            }
            error(computation, field, "unsupported JSON value " + node, "use an object, list, string, number or boolean");
            return null;
        }

        void unknownFields(JsonNode node, @Nullable String computation, String prefix, List<String> known,
                List<String> unsupported) {
            for (Map.Entry<String, JsonNode> property : node.properties()) {
                String f = property.getKey();
                if (known.contains(f)) {
                    continue;
                }
                if (unsupported.contains(f)) {
                    warnings.add(SpecProblem.warning(computation, prefix + f, "Flow field '" + f
                            + "' is not supported by flow-kafka yet and is ignored",
                            "remove it, or check that the pipeline does not rely on it"));
                    continue;
                }
                String suggestion = SpecValidator.closest(f, known);
                warnings.add(SpecProblem.warning(computation, prefix + f, "unknown field '" + f + "' is ignored",
                        (suggestion == null ? "" : "did you mean '" + suggestion + "'? ")
                                + "known fields: " + String.join(", ", known)));
            }
        }

        void typeError(@Nullable String computation, String field, JsonNode node, String expected,
                String example) {
            error(computation, field, field + " must be " + expected + " but is " + describe(node),
                    "write it as " + example);
        }

        void error(@Nullable String computation, String field, String message, String fix) {
            errors.add(SpecProblem.error(computation, field, message, fix));
        }

        private static String describe(JsonNode node) {
            String type = node.getNodeType().name().toLowerCase(Locale.ROOT);
            String text = node.toString();
            if (text.length() > 40) {
                text = text.substring(0, 37) + "...";
            }
            return (type.startsWith("a") || type.startsWith("o") ? "an " : "a ") + type + " (" + text + ")";
        }
    }
}
