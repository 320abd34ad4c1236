package io.flowkafka.internal.source;

import io.flowkafka.internal.serde.PluggableSerdes;
import io.flowkafka.spec.SourceSpec;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.avro.Schema;
import org.jspecify.annotations.Nullable;

/**
 * The parameters of a {@code KafkaSource} ({@code source_streams.<stream>.parameters}): their
 * names, their checks at spec load, and typed reads for the compiler and the runtime (which only
 * see validated specs).
 *
 * <p>A Kafka source is compiled by core into the pipeline's Kafka Streams topology (a Kafka
 * Streams source node cannot live in another module); its parameters are:
 * <ul>
 *   <li>{@code topics} (or {@code topic}): a list of topic names, or one comma-separated string;</li>
 *   <li>{@code format}: {@code json} (default) or {@code avro} (Avro binary of the stream's schema);</li>
 *   <li>{@code value_serde}: instead of {@code format}, a {@code Serde<GenericRecord>} class; its
 *       records are converted to the stream's schema by field name; configured by
 *       {@code serde_config} (a map) over the deployment properties {@code flow.serde.*};</li>
 *   <li>{@code key_column}: a stream field that receives the record key as a UTF-8 string;</li>
 *   <li>{@code event_timestamp_column} and {@code event_timestamp_unit} ({@code ms} default,
 *       {@code us}, {@code ns}, {@code s}): the event time; the record timestamp otherwise;</li>
 *   <li>{@code starting_position}: {@code earliest} (default) or {@code latest}, for partitions
 *       without a committed offset;</li>
 *   <li>{@code finite}: read up to the last stable offsets seen at start, then complete;</li>
 *   <li>{@code group_id} and {@code use_consumer_group_offset}: with the latter true, partitions
 *       the pipeline's own consumer group has no offset for start where {@code group_id}
 *       committed (offsets copied once, before Kafka Streams starts);</li>
 *   <li>{@code partition_filter}: the partitions processed ({@link PartitionFilter}); records of
 *       other partitions are consumed and skipped;</li>
 *   <li>{@code key_partitioned}: the topic holds every record of one group-by key in one
 *       partition, so a Transform computation may read it directly, keyed by its
 *       {@code group_by_schema}, without a Source computation and an internal stream between
 *       (a flow-kafka extension, see {@link io.flowkafka.spec.ComputationSpec#readsKeyedSource()}).</li>
 * </ul>
 *
 * <p>Thread-safe: holds no state.
 */
public final class KafkaSourceParameters {
    /** Every parameter a KafkaSource reads; others are warned about and ignored. */
    public static final Set<String> KNOWN = Set.of("topics", "topic", "format", "value_serde", "serde_config",
            "key_column", "event_timestamp_column", "event_timestamp_unit", "starting_position", "finite", "group_id",
            "use_consumer_group_offset", "partition_filter", "key_partitioned");

    /** A problem with a parameter; {@code field} is relative to the source, e.g. {@code parameters.format}. */
    public record Problem(boolean error, String field, String message, String fix) {
    }

    private KafkaSourceParameters() {
    }

    /**
     * Checks the values of a KafkaSource's parameters (except {@code topics}, and unknown names,
     * which the spec validator reports).
     *
     * @param schema the stream's schema, or null if it has none (reported elsewhere)
     * @return errors and warnings, in parameter order
     */
    public static List<Problem> validate(SourceSpec source, @Nullable Schema schema) {
        List<Problem> problems = new ArrayList<>();
        Map<String, Object> p = source.parameters();
        String stream = source.streamId();
        oneOf(problems, p, "format", List.of("json", "avro"), "json");
        oneOf(problems, p, "starting_position", List.of("earliest", "latest"), "earliest");
        oneOf(problems, p, "event_timestamp_unit", List.of("ms", "us", "ns", "s"), "ms");
        bool(problems, p, "finite");
        bool(problems, p, "use_consumer_group_offset");
        bool(problems, p, "key_partitioned");
        for (String column : List.of("key_column", "event_timestamp_column")) {
            Object v = p.get(column);
            if (v == null) {
                continue;
            }
            if (!(v instanceof String s) || s.isBlank()) {
                problems.add(error(column, column + " must be a field name but was " + v,
                        "set " + column + " to a field of stream '" + stream + "'"));
            } else if (schema != null && schema.getType() == Schema.Type.RECORD && schema.getField(s) == null) {
                problems.add(error(column, column + " '" + s + "' is not a field of stream '" + stream + "'",
                        "use one of its fields " + schema.getFields().stream().map(Schema.Field::name).toList()));
            } else if (column.equals("event_timestamp_column") && schema != null
                    && schema.getType() == Schema.Type.RECORD && !isNumeric(schema.getField(s).schema())) {
                problems.add(error(column, column + " '" + s + "' of stream '" + stream + "' is "
                        + describe(schema.getField(s).schema()) + ", but an event timestamp is a number (of "
                        + "event_timestamp_unit, ms by default); every record would fail",
                        "name a long field of stream '" + stream + "'" + numericFields(schema)
                                + ", or change the field's type to long"));
            } else if (column.equals("key_column") && schema != null && schema.getType() == Schema.Type.RECORD
                    && !takesString(schema.getField(s).schema())) {
                problems.add(error(column, column + " '" + s + "' of stream '" + stream + "' is "
                        + describe(schema.getField(s).schema()) + ", but the record key goes into it as a string (the "
                        + "key bytes as UTF-8); every record would fail", "name a string field of stream '" + stream
                        + "', or change the field's type to string"));
            }
        }
        Object groupId = p.get("group_id");
        if (groupId != null && (!(groupId instanceof String g) || g.isBlank())) {
            problems.add(error("group_id", "group_id must be a consumer group id but was " + groupId,
                    "set group_id to the id of the consumer group whose committed offsets the source starts from"));
        }
        boolean useGroup = "true".equals(String.valueOf(p.get("use_consumer_group_offset")));
        if (useGroup && groupId == null) {
            problems.add(error("use_consumer_group_offset", "use_consumer_group_offset is true but no group_id names "
                    + "the group to start from (the pipeline itself always resumes from its own consumer group, the "
                    + "Kafka Streams application.id)", "set group_id to the consumer group whose committed offsets "
                    + "the source starts from, or remove use_consumer_group_offset"));
        } else if (!useGroup && groupId != null) {
            problems.add(warning("group_id", "group_id '" + groupId + "' is ignored: Kafka Streams reads with one "
                    + "consumer group per pipeline (the application.id), and group_id only seeds its starting "
                    + "offsets when use_consumer_group_offset is true",
                    "set use_consumer_group_offset: true to start where group '" + groupId + "' left off, or remove "
                            + "group_id"));
        }
        Object filter = p.get("partition_filter");
        if (filter != null) {
            try {
                PartitionFilter.parse(filter);
            } catch (IllegalArgumentException e) {
                problems.add(error("partition_filter", e.getMessage(), "list partition numbers and inclusive ranges, "
                        + "e.g. [0, 1, \"4-7\"] or \"0,1,4-7\"; remove partition_filter to read every partition"));
            }
        }
        Object serde = p.get("value_serde");
        problems.addAll(serdeProblems(p, "source '" + stream + "'"));
        if (serde != null && p.containsKey("format")) {
            problems.add(error("format", "format and value_serde are both set, but they are alternatives",
                    "remove format to read values with value_serde " + serde + ", or remove value_serde"));
        }
        return problems;
    }

    /**
     * Checks {@code value_serde} and {@code serde_config} of a source's or sink's parameters.
     *
     * @param owner e.g. {@code sink 'out'}, for messages
     */
    public static List<Problem> serdeProblems(Map<String, Object> p, String owner) {
        List<Problem> problems = new ArrayList<>();
        Object serde = p.get("value_serde");
        if (serde != null) {
            if (!(serde instanceof String s) || s.isBlank()) {
                problems.add(error("value_serde", "value_serde must be a class name but was " + serde,
                        "name a Serde<GenericRecord> class, e.g. io.flowkafka.connectors.registry.ConfluentAvroSerde"));
            } else {
                String problem = PluggableSerdes.problem(s);
                if (problem != null) {
                    problems.add(error("value_serde", "value_serde class '" + s + "' of " + owner + " " + problem,
                            "name a public Serde<GenericRecord> class with a public no-argument constructor, such as "
                                    + "io.flowkafka.connectors.registry.ConfluentAvroSerde (add "
                                    + "io.flowkafka:flow-kafka-connectors to the class path)"));
                }
            }
        }
        Object config = p.get("serde_config");
        if (config != null) {
            if (!(config instanceof Map<?, ?> m) || !m.keySet().stream().allMatch(k -> k instanceof String)) {
                problems.add(error("serde_config", "serde_config must be a map of serde settings but was " + config,
                        "write it as {\"schema.registry.url\": \"http://registry:8081\", ...}"));
            } else if (serde == null) {
                problems.add(warning("serde_config", "serde_config is ignored without value_serde",
                        "set value_serde, or remove serde_config"));
            }
        }
        return problems;
    }

    /** The topics: {@code topics} as a list or a comma-separated string ({@code topic} as a fallback). */
    public static List<String> topics(SourceSpec source) {
        Object t = source.parameters().get("topics");
        if (t == null) {
            t = source.parameters().get("topic");
        }
        if (t instanceof Collection<?> l) {
            return l.stream().map(Object::toString).toList();
        }
        List<String> out = new ArrayList<>();
        for (String s : String.valueOf(t).split(",")) {
            if (!s.isBlank()) {
                out.add(s.trim());
            }
        }
        return out;
    }

    /** Whether the source is {@code finite}. */
    public static boolean finite(SourceSpec source) {
        return Boolean.parseBoolean(String.valueOf(source.parameters().getOrDefault("finite", "false")));
    }

    /** Whether the source declares {@code key_partitioned: true}. */
    public static boolean keyPartitioned(SourceSpec source) {
        return Boolean.parseBoolean(String.valueOf(source.parameters().getOrDefault("key_partitioned", "false")));
    }

    /** The partition filter, or null when every partition is read. */
    public static @Nullable PartitionFilter partitionFilter(SourceSpec source) {
        Object f = source.parameters().get("partition_filter");
        return f == null ? null : PartitionFilter.parse(f);
    }

    /** The group whose committed offsets seed the pipeline's, or null when none is to be used. */
    public static @Nullable String seedGroup(SourceSpec source) {
        Object g = source.parameters().get("group_id");
        boolean use = Boolean.parseBoolean(String.valueOf(source.parameters().getOrDefault("use_consumer_group_offset",
                "false")));
        return use && g != null ? g.toString() : null;
    }

    /**
     * Whether values of {@code schema} are numbers (int, long, float, double), or null in a nullable
     * union of numbers: an event timestamp column.
     */
    public static boolean isNumeric(Schema schema) {
        if (schema.getType() == Schema.Type.UNION) {
            List<Schema> branches = schema.getTypes().stream().filter(b -> b.getType() != Schema.Type.NULL).toList();
            return !branches.isEmpty() && branches.stream().allMatch(KafkaSourceParameters::isNumeric);
        }
        return switch (schema.getType()) {
            case INT, LONG, FLOAT, DOUBLE -> true;
            default -> false;
        };
    }

    /** Whether a field of {@code schema} takes a {@code String}: a string, or a union with a string branch. */
    private static boolean takesString(Schema schema) {
        if (schema.getType() == Schema.Type.UNION) {
            return schema.getTypes().stream().anyMatch(b -> b.getType() == Schema.Type.STRING);
        }
        return schema.getType() == Schema.Type.STRING;
    }

    /** {@code a string}, {@code a union ["null","string"]}, for messages. */
    public static String describe(Schema schema) {
        return schema.getType() == Schema.Type.UNION ? "a union " + schema : "a " + schema.getType().getName();
    }

    /** {@code " (its numeric fields: [ts])"}, or empty when it has none. */
    public static String numericFields(Schema record) {
        List<String> names = record.getFields().stream().filter(f -> isNumeric(f.schema())).map(Schema.Field::name)
                .toList();
        return names.isEmpty() ? "" : " (its numeric fields: " + names + ")";
    }

    private static void oneOf(List<Problem> problems, Map<String, Object> p, String name, List<String> allowed,
            String dflt) {
        Object v = p.get(name);
        if (v != null && !allowed.contains(v.toString())) {
            problems.add(error(name, "unknown " + name + " '" + v + "'", "set " + name + " to one of " + allowed
                    + " (default " + dflt + ")"));
        }
    }

    private static void bool(List<Problem> problems, Map<String, Object> p, String name) {
        Object v = p.get(name);
        if (v != null && !(v instanceof Boolean) && !"true".equals(v.toString()) && !"false".equals(v.toString())) {
            problems.add(error(name, name + " must be true or false but was '" + v + "'", "set " + name
                    + " to true or false"));
        }
    }

    private static Problem error(String parameter, String message, String fix) {
        return new Problem(true, "parameters." + parameter, message, fix);
    }

    private static Problem warning(String parameter, String message, String fix) {
        return new Problem(false, "parameters." + parameter, message, fix);
    }
}
