package io.flowkafka.spec;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.json.JsonReadFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.BooleanNode;
import com.fasterxml.jackson.databind.node.DoubleNode;
import com.fasterxml.jackson.databind.node.IntNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.JsonNodeType;
import com.fasterxml.jackson.databind.node.NullNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * Turns a valid pipeline spec (JSON or YAML) into a mutated one, for {@link SpecFuzzTest}: one mutation of a
 * {@link Kind} per call, drawn from a {@link Random}, so a seed reproduces the same spec text.
 *
 * <p>A mutation of a kind that must make the spec invalid ({@link Mutation#mustBeInvalid()}) also says what the
 * rejection must name: the computation and the field ({@link Mutation#mustContain()}), at least one of
 * {@link Mutation#anyOf()}. Random structural mutations may leave the spec valid (a deleted optional field, a
 * changed topic name); the test then checks that it really is (it compiles).
 */
final class SpecMutator {
    private static final JsonMapper JSON = JsonMapper.builder().enable(JsonReadFeature.ALLOW_JAVA_COMMENTS).build();
    private static final YAMLMapper YAML = new YAMLMapper();
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

    /** What a mutation does. */
    enum Kind {
        WRONG_TYPE(true), UNKNOWN_ID(true), CYCLE(true), DUPLICATE_WRITER(true), BAD_DURATION(true),
        OUT_OF_RANGE(true), MISSING_REQUIRED(true), DUPLICATE_KEY(true), TRUNCATED(false), STRUCTURAL(false);

        final boolean alwaysInvalid;

        Kind(boolean alwaysInvalid) {
            this.alwaysInvalid = alwaysInvalid;
        }
    }

    /** A valid spec to mutate. */
    record Base(String name, ObjectNode tree, boolean yaml) {
        static Base resource(String resource) {
            try (InputStream in = SpecMutator.class.getClassLoader().getResourceAsStream(resource)) {
                if (in == null) {
                    throw new IllegalArgumentException(resource + " is not on the test classpath");
                }
                String text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
                boolean yaml = resource.endsWith(".yaml");
                ObjectNode tree = (ObjectNode) (yaml ? YAML.readTree(text) : JSON.readTree(text));
                return new Base(resource, tree, yaml);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        String text() {
            return render(tree, yaml);
        }
    }

    /**
     * One mutated spec.
     *
     * @param kind the mutation kind
     * @param base the resource it was made from
     * @param yaml whether {@code text} is YAML (else JSON)
     * @param text the mutated spec
     * @param description what was changed, for a failure message
     * @param mustBeInvalid whether a loader accepting it is a bug
     * @param mustContain strings the rejection's message must all contain (computation, field, what)
     * @param anyOf strings of which the message must contain at least one (alternative field names); may be empty
     */
    record Mutation(Kind kind, String base, boolean yaml, String text, String description, boolean mustBeInvalid,
            List<String> mustContain, List<String> anyOf) {
        @Override
        public String toString() {
            return kind + " of " + base + ": " + description + " (must contain " + mustContain
                    + (anyOf.isEmpty() ? "" : ", one of " + anyOf) + ")";
        }
    }

    private final Random random;
    private final Base base;
    private final ObjectNode tree;

    private SpecMutator(Base base, Random random) {
        this.base = base;
        this.random = random;
        this.tree = base.tree().deepCopy();
    }

    /** Mutates a copy of {@code base} with a mutation of {@code kind}; null when the kind does not apply to it. */
    static @Nullable Mutation mutate(Base base, Kind kind, Random random) {
        return new SpecMutator(base, random).mutate(kind);
    }

    private @Nullable Mutation mutate(Kind kind) {
        return switch (kind) {
            case WRONG_TYPE -> wrongType();
            case UNKNOWN_ID -> unknownId();
            case CYCLE -> cycle();
            case DUPLICATE_WRITER -> duplicateWriter();
            case BAD_DURATION -> badDuration();
            case OUT_OF_RANGE -> outOfRange();
            case MISSING_REQUIRED -> missingRequired();
            case DUPLICATE_KEY -> duplicateKey();
            case TRUNCATED -> truncated();
            case STRUCTURAL -> structural();
        };
    }

    // ---- wrong types -------------------------------------------------------------------------------------------

    /** Computation fields and the JSON type each must have. */
    private static final Map<String, JsonNodeType> COMPUTATION_FIELD_TYPES = new LinkedHashMap<>();

    static {
        for (String f : List.of("computation_class_name", "processing_function", "processing_mode")) {
            COMPUTATION_FIELD_TYPES.put(f, JsonNodeType.STRING);
        }
        for (String f : List.of("input_stream_ids", "output_stream_ids", "group_by_schema")) {
            COMPUTATION_FIELD_TYPES.put(f, JsonNodeType.ARRAY);
        }
        for (String f : List.of("source_streams", "sinks", "states", "timers", "key_visitor_streams",
                "streams_dependency", "parameters", "watermark_strategy")) {
            COMPUTATION_FIELD_TYPES.put(f, JsonNodeType.OBJECT);
        }
        COMPUTATION_FIELD_TYPES.put("desired_partition_count", JsonNodeType.NUMBER);
    }

    private Mutation wrongType() {
        String c = computation();
        ObjectNode comp = comp(c);
        List<String[]> targets = new ArrayList<>(); // {relative path, expected type}
        COMPUTATION_FIELD_TYPES.forEach((f, t) -> targets.add(new String[] {f, t.name()}));
        for (String f : List.of("input_stream_ids", "output_stream_ids")) {
            JsonNode list = comp.get(f);
            for (int i = 0; list != null && i < list.size(); i++) {
                targets.add(new String[] {f + "[" + i + "]", "STRING"});
            }
        }
        JsonNode groupBy = comp.get("group_by_schema");
        for (int i = 0; groupBy != null && i < groupBy.size(); i++) {
            targets.add(new String[] {"group_by_schema[" + i + "]", "OBJECT"});
            targets.add(new String[] {"group_by_schema[" + i + "].name", "STRING"});
            targets.add(new String[] {"group_by_schema[" + i + "].type", "STRING"});
        }
        for (String f : List.of("states", "sinks", "timers", "timer_streams", "source_streams", "key_visitor_streams")) {
            JsonNode entries = comp.get(f);
            if (entries != null && entries.isObject()) {
                entries.fieldNames().forEachRemaining(k -> targets.add(new String[] {f + "." + k, "OBJECT"}));
            }
        }
        String[] target = pick(targets);
        JsonNode value = wrongValue(JsonNodeType.valueOf(target[1]));
        set(comp, target[0], value);
        String field = target[0];
        return invalid(Kind.WRONG_TYPE, "computations." + c + "." + field + " = " + value, List.of(c, field));
    }

    private JsonNode wrongValue(JsonNodeType expected) {
        List<JsonNode> candidates = new ArrayList<>(List.of(IntNode.valueOf(42), BooleanNode.TRUE,
                TextNode.valueOf("oops"), NODES.arrayNode().add(1).add("x"), NODES.objectNode().put("x", 1),
                DoubleNode.valueOf(1.5)));
        candidates.removeIf(n -> n.getNodeType() == expected);
        return pick(candidates);
    }

    // ---- unknown ids -------------------------------------------------------------------------------------------

    private Mutation unknownId() {
        String c = computation();
        ObjectNode comp = comp(c);
        List<String[]> targets = new ArrayList<>(); // {path of a string, field the error names}
        for (String f : List.of("input_stream_ids", "output_stream_ids")) {
            JsonNode list = comp.get(f);
            for (int i = 0; list != null && i < list.size(); i++) {
                targets.add(new String[] {f + "[" + i + "]", f});
            }
        }
        forEntries(comp, "sinks", (k, v) -> {
            JsonNode list = v.get("input_stream_ids");
            for (int i = 0; list != null && i < list.size(); i++) {
                targets.add(new String[] {"sinks." + k + ".input_stream_ids[" + i + "]", "sinks." + k + ".input_stream_ids"});
            }
        });
        forEntries(comp, "streams_dependency", (k, v) -> {
            for (int i = 0; i < v.size(); i++) {
                targets.add(new String[] {"streams_dependency." + k + "[" + i + "]", "streams_dependency." + k});
            }
        });
        forEntries(comp, "key_visitor_streams", (k, v) -> {
            JsonNode list = v.get("names");
            for (int i = 0; list != null && i < list.size(); i++) {
                targets.add(new String[] {"key_visitor_streams." + k + ".names[" + i + "]", "key_visitor_streams." + k});
            }
        });
        for (String timers : List.of("timers", "timer_streams")) {
            forEntries(comp, timers, (k, v) -> {
                JsonNode list = v.get("streams");
                for (int i = 0; list != null && i < list.size(); i++) {
                    targets.add(new String[] {timers + "." + k + ".streams[" + i + "]", k});
                }
            });
        }
        if (targets.isEmpty()) {
            return missingRequired();
        }
        String[] target = pick(targets);
        String unknown = unknownId(textAt(comp, target[0]));
        set(comp, target[0], TextNode.valueOf(unknown));
        if (target[0].startsWith("timer")) { // the validator names timers by their main field, whatever alias was used
            return invalid(Kind.UNKNOWN_ID, "computations." + c + "." + target[0] + " = " + unknown,
                    List.of(c, target[1], unknown), List.of("timers." + target[1], "timer_streams." + target[1]));
        }
        return invalid(Kind.UNKNOWN_ID, "computations." + c + "." + target[0] + " = " + unknown,
                List.of(c, target[1], unknown));
    }

    /** An id declared nowhere in the spec: a typo of {@code near} or a new name. */
    private String unknownId(@Nullable String near) {
        Set<String> used = new HashSet<>();
        collectText(tree, used);
        tree.fieldNames().forEachRemaining(used::add);
        collectKeys(tree, used);
        for (int attempt = 0; ; attempt++) {
            String id = near != null && near.length() > 2 && random.nextBoolean()
                    ? (random.nextBoolean() ? near.substring(0, near.length() - 1) : near + "s")
                    : "no_such_" + random.nextInt(1000);
            if (attempt > 5) {
                id = "no_such_" + attempt + "_" + random.nextInt(1000);
            }
            if (!used.contains(id)) {
                return id;
            }
        }
    }

    // ---- cycles ------------------------------------------------------------------------------------------------

    /**
     * Makes a computation read a stream written downstream of it, and makes its outputs depend on it: the
     * stream's watermark then waits for itself.
     */
    private @Nullable Mutation cycle() {
        List<String> candidates = new ArrayList<>();
        comps().fieldNames().forEachRemaining(c -> {
            JsonNode in = comp(c).get("input_stream_ids");
            if (in != null && in.size() > 0 && !comp(c).path("output_stream_ids").isEmpty()) {
                candidates.add(c);
            }
        });
        if (candidates.isEmpty()) {
            return null;
        }
        String c = pick(candidates);
        ObjectNode comp = comp(c);
        List<String> downstream = new ArrayList<>(downstreamOf(c));
        String s = pick(downstream);
        ((ArrayNode) comp.get("input_stream_ids")).add(s);
        JsonNode deps = comp.get("streams_dependency");
        if (deps != null && deps.isObject()) {
            deps.elements().forEachRemaining(list -> ((ArrayNode) list).add(s));
        }
        return invalid(Kind.CYCLE, "computation " + c + " also reads " + s + ", written downstream of it",
                List.of(c, "input_stream_ids", "cycle", s));
    }

    /** The streams written by {@code c} and by everything that depends on them (streams_dependency respected). */
    private Set<String> downstreamOf(String c) {
        Set<String> streams = new LinkedHashSet<>();
        List<String> queue = new ArrayList<>();
        comp(c).path("output_stream_ids").forEach(o -> queue.add(o.asText()));
        while (!queue.isEmpty()) {
            String s = queue.remove(0);
            if (!streams.add(s)) {
                continue;
            }
            comps().properties().forEach(e -> {
                JsonNode x = e.getValue();
                if (!contains(x.path("input_stream_ids"), s)) {
                    return;
                }
                x.path("output_stream_ids").forEach(o -> {
                    JsonNode deps = x.path("streams_dependency").get(o.asText());
                    if (deps == null || contains(deps, s)) {
                        queue.add(o.asText());
                    }
                });
            });
        }
        return streams;
    }

    // ---- duplicate writers -------------------------------------------------------------------------------------

    private @Nullable Mutation duplicateWriter() {
        List<String[]> pairs = new ArrayList<>(); // {computation, stream written by another}
        comps().fieldNames().forEachRemaining(c -> comps().fieldNames().forEachRemaining(d -> {
            if (!c.equals(d)) {
                comp(d).path("output_stream_ids").forEach(o -> {
                    if (!contains(comp(c).path("output_stream_ids"), o.asText())) {
                        pairs.add(new String[] {c, d, o.asText()});
                    }
                });
            }
        }));
        if (pairs.isEmpty()) {
            return null;
        }
        String[] p = pick(pairs);
        ObjectNode comp = comp(p[0]);
        if (!comp.path("output_stream_ids").isArray()) {
            comp.putArray("output_stream_ids");
        }
        ((ArrayNode) comp.get("output_stream_ids")).add(p[2]);
        return invalid(Kind.DUPLICATE_WRITER, "computation " + p[0] + " also writes " + p[2] + " (written by " + p[1]
                + ")", List.of(p[0], p[1], "output_stream_ids", "writers", p[2]));
    }

    // ---- durations and numbers ---------------------------------------------------------------------------------

    private static final List<Object> BAD_DURATIONS = List.of("-5s", "5 fortnights", "abc", "", "1.5.3m", "s",
            "--1m", "1e3s", "5 s m", true, -1000, "-0.5h", List.of(), Map.of("a", 1), "99999999999999999999d", 1e30,
            new BigInteger("18446744073709551621"));

    private Mutation badDuration() {
        List<String[]> targets = new ArrayList<>(); // {computation, path, leaf}
        comps().fieldNames().forEachRemaining(c -> {
            ObjectNode comp = comp(c);
            forEntries(comp, "key_visitor_streams", (k, v) -> {
                targets.add(new String[] {c, "key_visitor_streams." + k + ".period", "period"});
                targets.add(new String[] {c, "key_visitor_streams." + k + ".background_fill_period",
                        "background_fill_period"});
            });
            if (comp.path("source_streams").size() > 0) {
                String ws = "watermark_strategy.";
                targets.add(new String[] {c, ws + "watermark_generator.out_of_orderness_bound", "out_of_orderness_bound"});
                targets.add(new String[] {c, ws + "watermark_generator.idle_partitions.duration", "duration"});
                targets.add(new String[] {c, ws + "watermark_alignment.drift_bound", "drift_bound"});
            }
            if ("SwiftMap".equals(comp.path("computation_class_name").asText())) {
                targets.add(new String[] {c, "parameters.max_batch_delay", "max_batch_delay"});
            }
        });
        String[] t = pick(targets);
        ObjectNode comp = comp(t[0]);
        Object bad = pick(BAD_DURATIONS);
        set(comp, t[1], JSON.valueToTree(bad));
        if (t[1].contains("watermark_alignment") && !comp.path("watermark_strategy").path("watermark_alignment")
                .has("group_name")) {
            ((ObjectNode) comp.get("watermark_strategy").get("watermark_alignment")).put("group_name", "g");
        }
        if (t[1].startsWith("parameters.max_batch")) {
            ((ObjectNode) comp.get("parameters")).put("allow_batching", true);
        }
        return invalid(Kind.BAD_DURATION, "computations." + t[0] + "." + t[1] + " = " + bad, List.of(t[0], t[2]));
    }

    private Mutation outOfRange() {
        List<Object[]> targets = new ArrayList<>(); // {computation, path, leaf, values}
        List<Object> partitionCounts = List.of(0, -3, 2147483648L, new BigInteger("99999999999999999999"), 1.5, 1e300);
        comps().fieldNames().forEachRemaining(c -> {
            ObjectNode comp = comp(c);
            targets.add(new Object[] {c, "desired_partition_count", "desired_partition_count", partitionCounts});
            targets.add(new Object[] {c, "parameters.huge", "parameters.huge",
                    List.of(new BigInteger("1180591620717411303424"), new BigInteger("-99999999999999999999"))});
            forEntries(comp, "key_visitor_streams", (k, v) -> {
                targets.add(new Object[] {c, "key_visitor_streams." + k + ".max_scan_rows_per_iteration",
                        "max_scan_rows_per_iteration", List.of(0, -1, 2.5, 1e12, new BigInteger("99999999999999999999"))});
                targets.add(new Object[] {c, "key_visitor_streams." + k + ".buffer_row_limit", "buffer_row_limit",
                        List.of(0, -7, 0.5, 3000000000L)});
            });
            if (comp.path("source_streams").size() > 0) {
                targets.add(new Object[] {c, "watermark_strategy.watermark_generator.idle_partitions.max_ratio",
                        "max_ratio", List.of(1.5, -0.2, 1e300, -1)});
            }
            if ("SwiftMap".equals(comp.path("computation_class_name").asText())) {
                targets.add(new Object[] {c, "parameters.max_batch_size", "max_batch_size", List.of(0, -5)});
            }
        });
        Object[] t = pick(targets);
        String c = (String) t[0];
        String path = (String) t[1];
        @SuppressWarnings("unchecked")
        Object value = pick((List<Object>) t[3]);
        ObjectNode comp = comp(c);
        set(comp, path, JSON.valueToTree(value));
        if (path.startsWith("parameters.max_batch")) {
            ((ObjectNode) comp.get("parameters")).put("allow_batching", true);
        }
        return invalid(Kind.OUT_OF_RANGE, "computations." + c + "." + path + " = " + value, List.of(c, (String) t[2]));
    }

    // ---- missing required fields -------------------------------------------------------------------------------

    private Mutation missingRequired() {
        List<Runnable> removals = new ArrayList<>();
        List<Mutation> results = new ArrayList<>(1);
        removals.add(() -> {
            tree.remove("name");
            results.add(invalid(Kind.MISSING_REQUIRED, "no name", List.of("name", "pipeline")));
        });
        comps().fieldNames().forEachRemaining(c -> {
            ObjectNode comp = comp(c);
            String kind = comp.path("computation_class_name").asText();
            boolean source = comp.path("source_streams").size() > 0;
            if (comp.has("processing_function") && comp.path("output_stream_ids").size() > 0) {
                removals.add(() -> {
                    comp.remove("processing_function");
                    results.add(invalid(Kind.MISSING_REQUIRED, c + " has no processing_function",
                            List.of(c, "processing_function")));
                });
            }
            if (!source && comp.has("input_stream_ids")) {
                removals.add(() -> {
                    comp.remove("input_stream_ids");
                    // with a key visitor it may read nothing; then what named the inputs is wrong
                    results.add(invalid(Kind.MISSING_REQUIRED, c + " has no input_stream_ids", List.of(c),
                            List.of("input_stream_ids", "streams_dependency", "timers", "timer_streams")));
                });
            }
            if (source) {
                removals.add(() -> {
                    comp.remove("source_streams");
                    comp.remove("watermark_strategy");
                    results.add(invalid(Kind.MISSING_REQUIRED, c + " has no source_streams",
                            List.of(c, "source_streams")));
                });
            }
            if (!source && !kind.equals("SwiftMap") && comp.has("group_by_schema")) {
                removals.add(() -> {
                    comp.remove("group_by_schema");
                    results.add(invalid(Kind.MISSING_REQUIRED, c + " has no group_by_schema",
                            List.of(c, "group_by_schema")));
                });
            }
            JsonNode groupBy = comp.path("group_by_schema");
            for (int i = 0; i < groupBy.size(); i++) {
                int col = i;
                for (String f : List.of("name", "type")) {
                    removals.add(() -> {
                        ((ObjectNode) groupBy.get(col)).remove(f);
                        results.add(invalid(Kind.MISSING_REQUIRED, c + " group_by_schema[" + col + "] has no " + f,
                                List.of(c, "group_by_schema[" + col + "]." + f)));
                    });
                }
            }
            forEntries(comp, "source_streams", (k, v) -> {
                removals.add(() -> {
                    ((ObjectNode) v).remove("source_class_name");
                    results.add(invalid(Kind.MISSING_REQUIRED, c + " source " + k + " has no source_class_name",
                            List.of(c, "source_streams." + k + ".source_class_name")));
                });
                if (v.path("parameters").has("topics")) {
                    removals.add(() -> {
                        ((ObjectNode) v.get("parameters")).remove("topics");
                        results.add(invalid(Kind.MISSING_REQUIRED, c + " source " + k + " has no topics",
                                List.of(c, "source_streams." + k, "topics")));
                    });
                }
            });
            forEntries(comp, "sinks", (k, v) -> {
                removals.add(() -> {
                    ((ObjectNode) v).remove("sink_class_name");
                    results.add(invalid(Kind.MISSING_REQUIRED, c + " sink " + k + " has no sink_class_name",
                            List.of(c, "sinks." + k + ".sink_class_name")));
                });
                if (v.path("parameters").has("topic")) {
                    removals.add(() -> {
                        ((ObjectNode) v.get("parameters")).remove("topic");
                        results.add(invalid(Kind.MISSING_REQUIRED, c + " sink " + k + " has no topic",
                                List.of(c, "sinks." + k + ".parameters.topic")));
                    });
                }
            });
            JsonNode align = comp.path("watermark_strategy").path("watermark_alignment");
            if (align.has("group_name")) {
                removals.add(() -> {
                    ((ObjectNode) align).remove("group_name");
                    results.add(invalid(Kind.MISSING_REQUIRED, c + " watermark_alignment has no group_name",
                            List.of(c, "watermark_alignment.group_name")));
                });
            }
            for (JsonNode o : comp.path("output_stream_ids")) {
                String s = o.asText();
                if (tree.path("streams").has(s)) {
                    removals.add(() -> {
                        ((ObjectNode) tree.get("streams").get(s)).remove("schema");
                        results.add(invalid(Kind.MISSING_REQUIRED, "stream " + s + " (written by " + c
                                + ") has no schema", List.of(c, "streams." + s + ".schema")));
                    });
                    removals.add(() -> {
                        ((ObjectNode) tree.get("streams")).remove(s);
                        results.add(invalid(Kind.MISSING_REQUIRED, "stream " + s + " (written by " + c
                                + ") is not declared", List.of(c, s, "missing from streams")));
                    });
                }
            }
        });
        pick(removals).run();
        return results.get(0);
    }

    // ---- text-level mutations ----------------------------------------------------------------------------------

    private static final Pattern JSON_SCALAR_MEMBER = Pattern.compile("^(\\s*)\"([^\"]+)\" : ([^\\[{]*?)(,?)$",
            Pattern.MULTILINE);
    private static final Pattern YAML_SCALAR_MEMBER = Pattern.compile("^(\\s*)([A-Za-z_][\\w]*): ([^\\[{\\n]+)$",
            Pattern.MULTILINE);

    /** Repeats a scalar member of an object: a spec that means two things at once. */
    private @Nullable Mutation duplicateKey() {
        boolean yaml = base.yaml();
        String text = pretty(tree, yaml);
        Matcher m = (yaml ? YAML_SCALAR_MEMBER : JSON_SCALAR_MEMBER).matcher(text);
        List<int[]> hits = new ArrayList<>();
        while (m.find()) {
            hits.add(new int[] {m.start(), m.end()});
        }
        if (hits.isEmpty()) {
            return null;
        }
        int[] hit = pick(hits);
        String line = text.substring(hit[0], hit[1]);
        String copy = yaml ? line : (line.endsWith(",") ? line : line + ",");
        String mutated = text.substring(0, hit[0]) + copy + "\n" + text.substring(hit[0]);
        String key = line.trim().replaceFirst(yaml ? ":.*" : "^\"([^\"]+)\".*", yaml ? "" : "$1");
        return new Mutation(Kind.DUPLICATE_KEY, base.name(), yaml, mutated, "repeated member '" + key + "'", true,
                List.of(key, yaml ? "yaml" : "json"), List.of());
    }

    private Mutation truncated() {
        String text = pretty(tree, base.yaml());
        int cut = random.nextInt(Math.max(1, text.trim().length() - 1));
        String mutated = text.substring(0, cut);
        return new Mutation(Kind.TRUNCATED, base.name(), base.yaml(), mutated, "truncated to " + cut + " chars",
                !base.yaml(), List.of(), List.of());
    }

    // ---- random structural mutations ---------------------------------------------------------------------------

    private static final String NOISE = "{}[]\":,-\n #'x0\t&*!|>%@`";

    private Mutation structural() {
        List<String> paths = new ArrayList<>();
        collectPaths(tree, "", paths);
        String path = pick(paths);
        int op = random.nextInt(5);
        String description;
        switch (op) {
            case 0 -> {
                remove(path);
                description = "removed " + path;
            }
            case 1 -> {
                JsonNode value = pick(List.of(NullNode.getInstance(), IntNode.valueOf(random.nextInt(100) - 50),
                        TextNode.valueOf("x" + random.nextInt(10)), NODES.objectNode(), NODES.arrayNode(),
                        BooleanNode.FALSE, DoubleNode.valueOf(-0.0)));
                replace(path, value);
                description = "replaced " + path + " with " + value;
            }
            case 2 -> {
                String other = pick(paths);
                JsonNode a = at(path);
                JsonNode b = at(other);
                if (!other.startsWith(path) && !path.startsWith(other)) {
                    replace(path, b.deepCopy());
                    replace(other, a.deepCopy());
                }
                description = "swapped " + path + " and " + other;
            }
            case 3 -> {
                String renamed = rename(path);
                description = "renamed " + path + " to " + renamed;
            }
            default -> {
                String text = render(tree, base.yaml());
                int at = random.nextInt(text.length());
                char ch = NOISE.charAt(random.nextInt(NOISE.length()));
                String mutated = random.nextBoolean() ? text.substring(0, at) + ch + text.substring(at)
                        : text.substring(0, at) + ch + text.substring(Math.min(text.length(), at + 1));
                return new Mutation(Kind.STRUCTURAL, base.name(), base.yaml(), mutated,
                        "character '" + ch + "' at " + at, false, List.of(), List.of());
            }
        }
        return new Mutation(Kind.STRUCTURAL, base.name(), base.yaml(), render(tree, base.yaml()), description, false,
                List.of(), List.of());
    }

    private void collectPaths(JsonNode node, String prefix, List<String> out) {
        if (node.isObject()) {
            node.fieldNames().forEachRemaining(k -> {
                String p = prefix.isEmpty() ? k : prefix + "\u0000" + k;
                out.add(p);
                collectPaths(node.get(k), p, out);
            });
        } else if (node.isArray()) {
            for (int i = 0; i < node.size(); i++) {
                String p = prefix + "\u0000#" + i;
                out.add(p);
                collectPaths(node.get(i), p, out);
            }
        }
    }

    private JsonNode at(String path) {
        JsonNode n = tree;
        for (String step : path.split("\u0000")) {
            n = step.startsWith("#") ? n.get(Integer.parseInt(step.substring(1))) : n.get(step);
        }
        return n;
    }

    private JsonNode parentOf(String path) {
        int cut = path.lastIndexOf('\u0000');
        return cut < 0 ? tree : at(path.substring(0, cut));
    }

    private static String last(String path) {
        return path.substring(path.lastIndexOf('\u0000') + 1);
    }

    private void remove(String path) {
        JsonNode parent = parentOf(path);
        String step = last(path);
        if (parent instanceof ArrayNode a) {
            a.remove(Integer.parseInt(step.substring(1)));
        } else {
            ((ObjectNode) parent).remove(step);
        }
    }

    private void replace(String path, JsonNode value) {
        JsonNode parent = parentOf(path);
        String step = last(path);
        if (parent instanceof ArrayNode a) {
            a.set(Integer.parseInt(step.substring(1)), value);
        } else {
            ((ObjectNode) parent).set(step, value);
        }
    }

    private String rename(String path) {
        JsonNode parent = parentOf(path);
        String step = last(path);
        if (!(parent instanceof ObjectNode o)) {
            return step;
        }
        String renamed = random.nextBoolean() ? step.toUpperCase(java.util.Locale.ROOT) : step + "_";
        Map<String, JsonNode> copy = new LinkedHashMap<>();
        o.properties().forEach(e -> copy.put(e.getKey().equals(step) ? renamed : e.getKey(), e.getValue()));
        o.removeAll();
        copy.forEach(o::set);
        return renamed;
    }

    // ---- helpers -----------------------------------------------------------------------------------------------

    private Mutation invalid(Kind kind, String description, List<String> mustContain) {
        return invalid(kind, description, mustContain, List.of());
    }

    private Mutation invalid(Kind kind, String description, List<String> mustContain, List<String> anyOf) {
        return new Mutation(kind, base.name(), base.yaml(), render(tree, base.yaml()), description, true,
                List.copyOf(mustContain), List.copyOf(anyOf));
    }

    private ObjectNode comps() {
        return (ObjectNode) tree.get("computations");
    }

    private ObjectNode comp(String id) {
        return (ObjectNode) comps().get(id);
    }

    private String computation() {
        List<String> ids = new ArrayList<>();
        comps().fieldNames().forEachRemaining(ids::add);
        return pick(ids);
    }

    private <T> T pick(List<T> list) {
        return list.get(random.nextInt(list.size()));
    }

    private static boolean contains(JsonNode list, String value) {
        for (JsonNode e : list) {
            if (value.equals(e.asText())) {
                return true;
            }
        }
        return false;
    }

    private interface EntryVisitor {
        void visit(String key, JsonNode value);
    }

    private static void forEntries(ObjectNode comp, String field, EntryVisitor visitor) {
        JsonNode entries = comp.get(field);
        if (entries != null && entries.isObject()) {
            List<Map.Entry<String, JsonNode>> list = new ArrayList<>();
            entries.properties().forEach(list::add);
            list.forEach(e -> visitor.visit(e.getKey(), e.getValue()));
        }
    }

    /** The text at a dotted path with [i] steps, or null. */
    private static @Nullable String textAt(ObjectNode root, String path) {
        JsonNode n = root;
        for (String step : steps(path)) {
            n = step.startsWith("#") ? n.path(Integer.parseInt(step.substring(1))) : n.path(step);
        }
        return n.isTextual() ? n.textValue() : null;
    }

    /** Sets a value at a dotted path with [i] steps, creating objects on the way. */
    private static void set(ObjectNode root, String path, JsonNode value) {
        List<String> steps = steps(path);
        JsonNode n = root;
        for (int i = 0; i < steps.size() - 1; i++) {
            String step = steps.get(i);
            JsonNode next = step.startsWith("#") ? n.get(Integer.parseInt(step.substring(1))) : n.get(step);
            if (next == null || !next.isContainerNode()) {
                next = NODES.objectNode();
                ((ObjectNode) n).set(step, next);
            }
            n = next;
        }
        String leaf = steps.get(steps.size() - 1);
        if (leaf.startsWith("#")) {
            ((ArrayNode) n).set(Integer.parseInt(leaf.substring(1)), value);
        } else {
            ((ObjectNode) n).set(leaf, value);
        }
    }

    private static List<String> steps(String path) {
        List<String> steps = new ArrayList<>();
        for (String part : path.split("\\.")) {
            Matcher m = Pattern.compile("([^\\[]+)((?:\\[\\d+])*)").matcher(part);
            if (!m.matches()) {
                throw new IllegalArgumentException(path);
            }
            steps.add(m.group(1));
            Matcher idx = Pattern.compile("\\[(\\d+)]").matcher(m.group(2));
            while (idx.find()) {
                steps.add("#" + idx.group(1));
            }
        }
        return steps;
    }

    private static void collectText(JsonNode node, Set<String> out) {
        if (node.isTextual()) {
            out.add(node.textValue());
        }
        node.elements().forEachRemaining(e -> collectText(e, out));
    }

    private static void collectKeys(JsonNode node, Set<String> out) {
        if (node.isObject()) {
            node.fieldNames().forEachRemaining(out::add);
        }
        node.elements().forEachRemaining(e -> collectKeys(e, out));
    }

    static String render(JsonNode tree, boolean yaml) {
        try {
            return yaml ? YAML.writeValueAsString(tree) : JSON.writeValueAsString(tree);
        } catch (JsonProcessingException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String pretty(JsonNode tree, boolean yaml) {
        try {
            return yaml ? YAML.writeValueAsString(tree) : JSON.writerWithDefaultPrettyPrinter().writeValueAsString(tree);
        } catch (JsonProcessingException e) {
            throw new UncheckedIOException(e);
        }
    }
}
