package io.flowkafka.spec;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import org.apache.avro.Schema;
import org.jspecify.annotations.Nullable;

/**
 * Flow's rules for external state, checked by {@link SpecValidator} before start: managers
 * ({@code external_state_managers}), joiners ({@code external_state_joiners}), state joiners
 * ({@code state_joiners}) and the {@code external_names} of key visitors. Every problem names the
 * computation, the field and the fix.
 *
 * <p>A table is identified by its topic ({@code parameters.topic}, default
 * {@code <pipeline>.external.<name>}): the Kafka analog of Flow's {@code (cluster, path)}.
 */
final class ExternalStateRules {
    private static final Pattern LEGAL_TOPIC = Pattern.compile("[a-zA-Z0-9._-]{1,249}");
    private static final String MANAGERS = ExternalStateReader.MANAGERS;
    private static final String JOINERS = ExternalStateReader.JOINERS;
    private static final String STATE_JOINERS = ExternalStateReader.STATE_JOINERS;
    private static final String KEY_SCHEMA_OVERRIDE = "key_schema_override";
    /** The fields a record holds typed: given in its parameters (by code) they would be ignored. */
    private static final List<String> TYPED_MANAGER_PARAMETERS = List.of("schema", "topic");
    private static final List<String> TYPED_JOINER_PARAMETERS = List.of("schema", "topic", "versioned");

    /** The manager writing a table, and its computation. */
    private record Writer(ComputationSpec computation, ExternalStateManagerSpec manager) {
    }

    private final PipelineSpec spec;
    private final List<SpecProblem> problems = new ArrayList<>();
    /** Table topic -> its first manager in the pipeline. */
    private final Map<String, Writer> writers = new LinkedHashMap<>();

    private ExternalStateRules(PipelineSpec spec) {
        this.spec = spec;
    }

    /** Every error and warning about external state in {@code spec}, in computation order. */
    static List<SpecProblem> check(PipelineSpec spec) {
        ExternalStateRules rules = new ExternalStateRules(spec);
        rules.indexWriters();
        for (ComputationSpec c : spec.computations().values()) {
            rules.checkComputation(c);
        }
        return List.copyOf(rules.problems);
    }

    /**
     * Flow: "if two computations declare writes (via their external-state managers) to the same
     * (cluster, path), the spec submit fails with the claimed for writing error".
     */
    private void indexWriters() {
        for (ComputationSpec c : spec.computations().values()) {
            for (ExternalStateManagerSpec m : c.externalStateManagers().values()) {
                String topic = m.tableTopic(spec.name());
                Writer first = writers.putIfAbsent(topic, new Writer(c, m));
                if (first != null) {
                    error(c.id(), MANAGERS + "." + m.name(), "external table topic '" + topic + "' is claimed for "
                            + "writing by manager '" + first.manager().name() + "' of computation '"
                            + first.computation().id() + "' and by manager '" + m.name() + "' of computation '"
                            + c.id() + "'; a table has one writer (concurrent writers would race and lose updates)",
                            "let one computation manage '" + topic + "' and read it elsewhere with a read-only "
                                    + "external_state_joiner, or give one of the managers another parameters.topic");
                }
            }
        }
    }

    private void checkComputation(ComputationSpec c) {
        checkNames(c);
        checkServiceLogTables(c);
        if (!c.hasExternalState()) {
            checkExternalNames(c);
            return;
        }
        if (c.kind() == ComputationKind.SOURCE || c.kind() == ComputationKind.TRANSFORM_ORDERED_SOURCE) {
            String field = !c.externalStateManagers().isEmpty() ? MANAGERS
                    : !c.externalStateJoiners().isEmpty() ? JOINERS : STATE_JOINERS;
            error(c.id(), field, "a " + c.kind().shortName() + " computation has no group_by_schema (it is keyed by "
                    + "source partition), but external state is keyed by the computation's group-by key",
                    "move " + field + " of '" + c.id() + "' to a Transform computation reading its output");
            return;
        }
        c.externalStateManagers().values().forEach(m -> checkManager(c, m));
        c.externalStateJoiners().values().forEach(j -> checkJoiner(c, j));
        c.stateJoiners().values().forEach(j -> checkStateJoiner(c, j));
        checkExternalNames(c);
    }

    /**
     * External names start with {@code /} (Flow's convention), internal state names do not, and a
     * name is declared once among a computation's managers, joiners and state joiners.
     */
    private void checkNames(ComputationSpec c) {
        for (String state : c.states().keySet()) {
            if (state.startsWith("/")) {
                error(c.id(), "states." + state, "internal state name '" + state + "' starts with '/', which marks "
                        + "external state (managers, joiners, state joiners)",
                        "rename the state to '" + state.replaceFirst("^/+", "") + "'");
            }
        }
        Map<String, String> seen = new LinkedHashMap<>();
        List<Map.Entry<String, Set<String>>> maps = List.of(
                Map.entry(MANAGERS, c.externalStateManagers().keySet()),
                Map.entry(JOINERS, c.externalStateJoiners().keySet()),
                Map.entry(STATE_JOINERS, c.stateJoiners().keySet()));
        for (Map.Entry<String, Set<String>> map : maps) {
            for (String name : map.getValue()) {
                String field = map.getKey() + "." + name;
                if (!name.startsWith("/") || name.length() < 2) {
                    error(c.id(), field, "external state name '" + name + "' must start with '/' followed by a name "
                            + "(Flow's convention, which keeps external state apart from internal states)",
                            "rename it to '/" + (name.replaceFirst("^/+", "").isEmpty() ? "table"
                                    : name.replaceFirst("^/+", "")) + "'");
                } else if (!LEGAL_TOPIC.matcher(ExternalTables.defaultTopic(spec.name(), name)).matches()) {
                    error(c.id(), field, "external state name '" + name + "' cannot be part of its table's topic '"
                            + ExternalTables.defaultTopic(spec.name(), name) + "'",
                            "use only letters, digits, '.', '_', '-' and '/' after the leading '/'");
                }
                String first = seen.putIfAbsent(name, map.getKey());
                if (first != null) {
                    error(c.id(), field, "external state name '" + name + "' is declared in both " + first + " and "
                            + map.getKey() + " of '" + c.id() + "'; the process function reads each by its name",
                            "give each manager, joiner and state joiner of '" + c.id() + "' a name of its own");
                }
                if (c.states().containsKey(name)) {
                    error(c.id(), field, "external state name '" + name + "' is also an internal state of '" + c.id()
                            + "'", "rename one of them; external state names start with '/', internal ones do not");
                }
            }
        }
    }

    private void checkManager(ComputationSpec c, ExternalStateManagerSpec m) {
        String field = MANAGERS + "." + m.name();
        if (!m.className().equals(ExternalStateManagerSpec.SIMPLE)) {
            unknownClass(c, field + ".external_state_manager_class_name", "external_state_manager_class_name",
                    m.className(), List.of(ExternalStateManagerSpec.SIMPLE));
        }
        Schema schema = m.schema();
        if (schema == null) {
            error(c.id(), field + ".parameters.schema", "manager '" + m.name() + "' has no Avro record schema of "
                    + "its rows", "set parameters.schema, e.g. {\"type\": \"record\", \"name\": \"Row\", \"fields\": "
                    + "[{\"name\": \"value\", \"type\": \"string\"}]}");
        } else if (schema.getType() != Schema.Type.RECORD) {
            notRecord(c, field, m.name(), schema);
        }
        checkTopic(c, field, m.topic());
        unknownParameters(c, field, "manager", m.parameters(), TYPED_MANAGER_PARAMETERS, List.of("schema", "topic"));
    }

    private void checkJoiner(ComputationSpec c, ExternalStateJoinerSpec j) {
        String field = JOINERS + "." + j.name();
        if (j.className().equals(ExternalStateJoinerSpec.STATIC_TABLE_KEY_VISITOR)) {
            checkStaticTableJoiner(c, j, field);
            return;
        }
        if (!j.className().equals(ExternalStateJoinerSpec.SIMPLE)) {
            unknownClass(c, field + ".external_state_joiner_class_name", "external_state_joiner_class_name",
                    j.className(), List.of(ExternalStateJoinerSpec.SIMPLE));
        }
        checkTopic(c, field, j.topic());
        String topic = j.tableTopic(spec.name());
        Writer writer = writers.get(topic);
        if (j.versioned()) {
            if (j.topic() == null) {
                error(c.id(), field + ".parameters.versioned", "versioned joiner '" + j.name() + "' gives no topic: "
                        + "a versioned reference is a topic of its own, written by VersionedReferenceWriter",
                        "set parameters.topic to the versioned reference's topic, and parameters.schema");
                return;
            }
            if (writer != null) {
                error(c.id(), field + ".parameters.versioned", "versioned joiner '" + j.name() + "' reads topic '"
                        + topic + "', which is the managed table of manager '" + writer.manager().name()
                        + "' of computation '" + writer.computation().id() + "'; a versioned reference is not a "
                        + "managed table", "remove versioned to read the managed table, or give the versioned "
                        + "reference a topic of its own");
                return;
            }
        }
        Schema schema = j.schema();
        if (writer == null) {
            if (j.topic() == null) {
                String close = SpecValidator.closest(j.name(), managerNames());
                error(c.id(), field, "joiner '" + j.name() + "' reads table topic '" + topic + "' (the default of its "
                        + "name), but no manager of the pipeline writes it and no parameters.topic is given",
                        (close == null ? "" : "did you mean '" + close + "'? ") + "declare manager '" + j.name()
                                + "' in the computation that writes the table, or set parameters.topic and "
                                + "parameters.schema to read a topic written outside the pipeline");
            } else if (schema == null) {
                error(c.id(), field + ".parameters.schema", "joiner '" + j.name() + "' reads topic '" + topic
                        + "', which no manager of the pipeline writes, so the schema of its rows is unknown",
                        "set parameters.schema to the Avro record schema of the topic's values");
            }
        } else {
            Schema written = writer.manager().schema();
            if (schema != null && written != null && !schema.equals(written)) {
                error(c.id(), field + ".parameters.schema", "joiner '" + j.name() + "' gives a schema that differs "
                        + "from the one manager '" + writer.manager().name() + "' of '" + writer.computation().id()
                        + "' writes table '" + topic + "' with", "remove parameters.schema (the manager's is used), "
                        + "or make it equal to the manager's");
            }
            String mismatch = keyMismatch(c.groupBySchema(), writer.computation().groupBySchema());
            if (mismatch != null) {
                error(c.id(), field, "key schema mismatch: joiner '" + j.name() + "' of '" + c.id() + "' reads table '"
                        + topic + "' written by manager '" + writer.manager().name() + "' of '"
                        + writer.computation().id() + "', but " + mismatch,
                        "give '" + c.id() + "' the group_by_schema of '" + writer.computation().id() + "' (same column "
                                + "names and types, and the same hash expression): "
                                + describe(writer.computation().groupBySchema()));
            }
        }
        if (schema != null && schema.getType() != Schema.Type.RECORD) {
            notRecord(c, field, j.name(), schema);
        }
        Duration ttl = j.cacheTtl();
        if (ttl != null && (ttl.isZero() || ttl.isNegative())) {
            error(c.id(), field + ".parameters.cache.ttl", "cache.ttl of joiner '" + j.name() + "' must be a positive "
                    + "duration but is " + ttl, "give how long a looked-up row may be reused, e.g. \"5s\", or remove "
                    + "cache to read the table on every lookup");
        }
        Map<String, Object> rest = new LinkedHashMap<>(j.parameters());
        checkJoinOn(c, field, rest.remove("join_on"));
        Object cache = rest.remove("cache");
        if (cache instanceof Map<?, ?> map) {
            for (Object key : map.keySet()) {
                if ("ttl".equals(key)) {
                    error(c.id(), field + ".parameters.cache.ttl", "cache.ttl is in the parameters map, where it "
                            + "would be ignored", "set it with ExternalStateJoinerSpec.withCacheTtl, as the spec "
                            + "loader does");
                } else {
                    warning(c.id(), field + ".parameters.cache." + key, "unknown cache parameter '" + key
                            + "' is ignored", "use cache.ttl only");
                }
            }
        } else if (cache != null) {
            error(c.id(), field + ".parameters.cache", "cache must be an object but is " + cache,
                    "write it as {\"ttl\": \"5s\"}");
        }
        unknownParameters(c, field, "joiner", rest, TYPED_JOINER_PARAMETERS,
                List.of("schema", "topic", "versioned", "cache", "join_on"));
    }

    private void checkStateJoiner(ComputationSpec c, StateJoinerSpec j) {
        String field = STATE_JOINERS + "." + j.name();
        ComputationSpec target = spec.computations().get(j.computationId());
        if (target == null) {
            String close = SpecValidator.closest(j.computationId(), spec.computations().keySet());
            error(c.id(), field + ".computation_id", "state joiner '" + j.name() + "' reads computation '"
                    + j.computationId() + "', which the pipeline does not have", (close == null ? ""
                    : "did you mean '" + close + "'? ") + "name one of " + spec.computations().keySet());
        } else if (target == c) {
            error(c.id(), field + ".computation_id", "state joiner '" + j.name() + "' reads computation '" + c.id()
                    + "' itself", "read state '" + j.stateName() + "' with context.getState, or name another "
                    + "computation");
        } else {
            StateSpec state = target.states().get(j.stateName());
            if (state == null) {
                String close = SpecValidator.closest(j.stateName(), target.states().keySet());
                error(c.id(), field + ".state_name", "state joiner '" + j.name() + "' reads state '" + j.stateName()
                        + "', which computation '" + target.id() + "' does not declare", (close == null ? ""
                        : "did you mean '" + close + "'? ") + "name one of its states " + target.states().keySet());
            } else if (state.schema() == null) {
                error(c.id(), field + ".state_name", "state joiner '" + j.name() + "' reads state '" + j.stateName()
                        + "' of '" + target.id() + "', which has no Avro schema", "give states." + j.stateName()
                        + " of '" + target.id() + "' an Avro record schema");
            }
            String mismatch = keyMismatch(c.groupBySchema(), target.groupBySchema());
            if (target.groupBySchema().isEmpty() && !c.groupBySchema().isEmpty()) {
                error(c.id(), field + ".computation_id", "key schema mismatch: state joiner '" + j.name() + "' reads "
                        + "the state of '" + target.id() + "', which has no group_by_schema (a " + target.kind()
                        .shortName() + " computation's state is not keyed by the group-by key)",
                        "read the state of a computation with the group_by_schema of '" + c.id() + "'");
            } else if (mismatch != null) {
                error(c.id(), field, "key schema mismatch: state joiner '" + j.name() + "' of '" + c.id()
                        + "' reads the state of '" + target.id() + "', but " + mismatch, "give '" + c.id()
                        + "' the group_by_schema of '" + target.id() + "' (same column names and types, and the same "
                        + "hash expression): " + describe(target.groupBySchema()));
            }
        }
        Map<String, Object> rest = new LinkedHashMap<>(j.parameters());
        Object preload = rest.remove("auto_preload");
        if (Boolean.FALSE.equals(preload)) {
            warning(c.id(), field + ".auto_preload", "auto_preload: false is ignored: on Kafka a state joiner is "
                    + "always loaded before processing starts (its store is restored first)",
                    "remove auto_preload, or set it to true");
        } else if (preload != null && !Boolean.TRUE.equals(preload)) {
            error(c.id(), field + ".auto_preload", "auto_preload must be true or false but is " + preload,
                    "remove it (a state joiner is always preloaded on Kafka) or set it to true");
        }
        checkJoinOn(c, field, rest.remove("join_on"));
        Object params = rest.remove("parameters");
        if (params instanceof Map<?, ?> map) {
            for (Object key : map.keySet()) {
                warning(c.id(), field + ".parameters." + key, "unknown state joiner parameter '" + key
                        + "' is ignored", "remove it: a state joiner takes computation_id, state_name, auto_preload "
                        + "and join_on");
            }
        } else if (params != null) {
            error(c.id(), field + ".parameters", "parameters must be an object but is " + params, "remove it");
        }
        for (String key : rest.keySet()) {
            String close = SpecValidator.closest(key, List.of("auto_preload", "join_on", "parameters"));
            warning(c.id(), field + "." + key, "unknown state joiner field '" + key + "' is ignored",
                    (close == null ? "" : "did you mean '" + close + "'? ")
                            + "use computation_id, state_name, auto_preload, join_on or parameters");
        }
    }

    /**
     * Reference 000, "Static table joiner": a {@code TStaticTableKeyVisitorJoiner} is read by a key visitor that lists
     * it in {@code external_names}; "The table must be strictly sorted by the computation's group_by_schema: the
     * prefix of its key columns must match that schema in names and types" (its first fields; checked here when the
     * table exists, the order is checked as it is read).
     */
    private void checkStaticTableJoiner(ComputationSpec c, ExternalStateJoinerSpec j, String field) {
        boolean scanned = c.keyVisitorStreams().values().stream().anyMatch(v -> {
            try {
                return v.externalNames().contains(j.name());
            } catch (IllegalArgumentException e) {
                return false;
            }
        });
        if (!scanned) {
            error(c.id(), field, "static-table joiner '" + j.name() + "' is listed in the external_names of no key "
                    + "visitor: a TStaticTableKeyVisitorJoiner is read only by a key visitor's scan",
                    "add '" + j.name() + "' to external_names of one key_visitor_streams entry of '" + c.id() + "'");
        }
        if (j.topic() != null || j.versioned() || j.cacheTtl() != null) {
            error(c.id(), field + ".parameters", "static-table joiner '" + j.name() + "' reads a static table, not a "
                    + "topic: topic, versioned and cache do not apply", "remove them; give tables_path (the newest "
                    + "table of a directory) and optionally table");
        }
        if (c.groupBySchema().isEmpty()) {
            return; // reported by the key visitor rules
        }
        io.flowkafka.spi.StaticTableProvider provider = io.flowkafka.spi.StaticTableProvider.findOrNull();
        if (provider == null) {
            error(c.id(), field + ".external_state_joiner_class_name", "static-table joiner '" + j.name() + "' needs "
                    + "a StaticTableProvider, and none is on the class path", "add the flow-kafka-connectors "
                    + "dependency, which reads static tables");
            return;
        }
        List<String> problems = provider.problems(j.parameters());
        for (String p : problems) {
            error(c.id(), field + ".parameters", "static-table joiner '" + j.name() + "': " + p,
                    "set parameters.tables_path to a tables directory, and optionally parameters.table");
        }
        if (!problems.isEmpty()) {
            return;
        }
        Schema schema = j.schema();
        if (schema == null) {
            try {
                schema = provider.rowSchema(j.parameters()).orElse(null);
            } catch (java.io.IOException | RuntimeException e) {
                warning(c.id(), field + ".parameters", "static-table joiner '" + j.name() + "': its table cannot be "
                        + "read to check its key columns (" + e.getMessage() + ")", "the key visitor retries "
                        + "reading it and reports the error in its status until it is readable");
                return;
            }
        }
        if (schema == null) {
            return; // no table yet: checked as it is read
        }
        List<GroupByColumn> key = c.groupBySchema();
        List<Schema.Field> fields = schema.getType() == Schema.Type.RECORD ? schema.getFields() : List.of();
        for (int i = 0; i < key.size(); i++) {
            GroupByColumn col = key.get(i);
            Schema.Field f = i < fields.size() ? fields.get(i) : null;
            String expected = col.name() + " " + col.type().specName();
            if (f == null || !f.name().equals(col.name()) || !sameType(f.schema(), col.type())) {
                error(c.id(), field, "key schema mismatch: the static table of joiner '" + j.name() + "' must be "
                        + "strictly sorted by the group_by_schema of '" + c.id() + "', so its first columns must be "
                        + describe(key) + ", but column " + i + " is " + (f == null ? "missing"
                                : "'" + f.name() + "' " + f.schema().getType().getName()),
                        "write the table with its key columns first: " + describe(key) + " (column " + i + ": "
                                + expected + ")");
                return;
            }
        }
    }

    /** Whether an Avro field type (possibly nullable) holds a column type. */
    private static boolean sameType(Schema schema, ColumnType type) {
        Schema s = schema;
        if (s.getType() == Schema.Type.UNION) {
            List<Schema> nonNull = s.getTypes().stream().filter(t -> t.getType() != Schema.Type.NULL).toList();
            if (nonNull.size() != 1) {
                return false;
            }
            s = nonNull.get(0);
        }
        return switch (type) {
            case UINT64, INT64 -> s.getType() == Schema.Type.LONG;
            case DOUBLE -> s.getType() == Schema.Type.DOUBLE;
            case BOOLEAN -> s.getType() == Schema.Type.BOOLEAN;
            case STRING -> s.getType() == Schema.Type.STRING;
            default -> false;
        };
    }

    /**
     * {@code join_on.key_schema_override}: the key the table is looked up by. Only the computation's own
     * key is runnable: a lookup encodes the current key with the computation's key codec.
     */
    private void checkJoinOn(ComputationSpec c, String field, @Nullable Object joinOn) {
        if (joinOn == null) {
            return;
        }
        String f = field + ".join_on";
        if (!(joinOn instanceof Map<?, ?> map)) {
            error(c.id(), f, "join_on must be an object but is " + joinOn,
                    "write it as {\"key_schema_override\": [...]}, or remove it");
            return;
        }
        for (Map.Entry<?, ?> e : map.entrySet()) {
            if (!KEY_SCHEMA_OVERRIDE.equals(e.getKey())) {
                warning(c.id(), f + "." + e.getKey(), "unknown join_on field '" + e.getKey() + "' is ignored",
                        "use join_on.key_schema_override only");
                continue;
            }
            List<GroupByColumn> override = columns(e.getValue());
            if (override == null) {
                error(c.id(), f + "." + KEY_SCHEMA_OVERRIDE, "join_on.key_schema_override must be a list of columns "
                        + "{\"name\", \"type\", \"expression\"} but is " + e.getValue(), "remove join_on, or write "
                        + "the group_by_schema of '" + c.id() + "' there: " + describe(c.groupBySchema()));
            } else if (!normalizedColumns(override).equals(normalizedColumns(c.groupBySchema()))) {
                error(c.id(), f + "." + KEY_SCHEMA_OVERRIDE, "join_on.key_schema_override " + describe(override)
                        + " differs from the group_by_schema of '" + c.id() + "' " + describe(c.groupBySchema())
                        + ": looking a table up by another key than the computation's is not runnable yet",
                        "remove join_on, or make key_schema_override equal to the group_by_schema");
            }
        }
    }

    /** {@code key_schema_override} as columns; null if it is not a list of column objects. */
    private static @Nullable List<GroupByColumn> columns(Object value) {
        if (!(value instanceof List<?> list)) {
            return null;
        }
        List<GroupByColumn> out = new ArrayList<>();
        for (Object o : list) {
            if (!(o instanceof Map<?, ?> col) || !(col.get("name") instanceof String name)
                    || !(col.get("type") instanceof String type)) {
                return null;
            }
            Object expression = col.get("expression");
            try {
                out.add(new GroupByColumn(name, ColumnType.parse(type), expression == null ? null : expression.toString()));
            } catch (IllegalArgumentException e) {
                return null;
            }
        }
        return out;
    }

    /**
     * Why two group-by schemas do not encode a key to the same bytes, or null if they do (or one is
     * empty, which other rules report): column names and types, and the first (hash) column's expression.
     */
    static @Nullable String keyMismatch(List<GroupByColumn> mine, List<GroupByColumn> theirs) {
        if (mine.isEmpty() || theirs.isEmpty()) {
            return null;
        }
        if (mine.size() != theirs.size()) {
            return "the joiner's key has " + mine.size() + " column(s) " + describe(mine) + " and the table's "
                    + theirs.size() + " " + describe(theirs);
        }
        for (int i = 0; i < mine.size(); i++) {
            GroupByColumn a = mine.get(i);
            GroupByColumn b = theirs.get(i);
            if (!a.name().equals(b.name()) || a.type() != b.type()) {
                return "column " + i + " is '" + a.name() + "' " + a.type().specName() + " in the joiner's key and '"
                        + b.name() + "' " + b.type().specName() + " in the table's";
            }
        }
        String hashA = normalized(mine.get(0));
        String hashB = normalized(theirs.get(0));
        if (!hashA.equals(hashB)) {
            return "the hash column '" + mine.get(0).name() + "' is computed as '" + hashA + "' in the joiner's key and '"
                    + hashB + "' in the table's, so the same key would hash differently";
        }
        return null;
    }

    /** Columns as name, type and normalized expression, to compare two key schemas exactly. */
    private static List<String> normalizedColumns(List<GroupByColumn> columns) {
        return columns.stream().map(c -> c.name() + " " + c.type().specName() + " " + normalized(c)).toList();
    }

    private static String normalized(GroupByColumn column) {
        String e = column.expression() == null ? column.name() : column.expression();
        return e.replaceAll("\\s+", "").replaceAll("(?i)farm_hash\\(", "farm_hash(");
    }

    private static String describe(List<GroupByColumn> columns) {
        List<String> out = new ArrayList<>();
        for (GroupByColumn c : columns) {
            out.add(c.name() + " " + c.type().specName() + (c.expression() == null ? "" : " = " + c.expression()));
        }
        return out.toString();
    }

    /**
     * Reference 000: {@code external_names} lists managers and visitor-driven joiners of the computation; a
     * joiner is scanned in no more than one visit stream. Duplicates are reported by {@link SpecValidator}.
     */
    private void checkExternalNames(ComputationSpec c) {
        Map<String, String> joinerScannedBy = new LinkedHashMap<>();
        for (KeyVisitorStreamSpec v : c.keyVisitorStreams().values()) {
            List<String> names;
            try {
                names = v.externalNames();
            } catch (IllegalArgumentException e) {
                continue; // reported by SpecValidator
            }
            String field = "key_visitor_streams." + v.id() + ".external_names";
            for (String name : new LinkedHashSet<>(names)) {
                ExternalStateJoinerSpec joiner = c.externalStateJoiners().get(name);
                if (c.externalStateManagers().containsKey(name)) {
                    continue;
                }
                if (joiner != null) {
                    if (joiner.versioned()) {
                        error(c.id(), field, "key visitor '" + v.id() + "' scans versioned joiner '" + name + "', but a "
                                + "versioned reference is not scannable (its rows of several versions share one topic)",
                                "remove '" + name + "' from external_names; scan a managed table instead");
                        continue;
                    }
                    String first = joinerScannedBy.putIfAbsent(name, v.id());
                    if (first != null) {
                        error(c.id(), field, "joiner '" + name + "' is scanned by key visitors '" + first + "' and '"
                                + v.id() + "'; a joiner is scanned in no more than one visit stream of the computation",
                                "list '" + name + "' in the external_names of one key visitor only");
                    }
                } else if (c.stateJoiners().containsKey(name)) {
                    StateJoinerSpec sj = c.stateJoiners().get(name);
                    error(c.id(), field, "key visitor '" + v.id() + "' scans state joiner '" + name + "', but a state "
                            + "joiner is not scannable: external_names lists external state managers and joiners",
                            "remove '" + name + "' from external_names; to visit state '" + sj.stateName() + "', add a "
                                    + "key visitor to computation '" + sj.computationId() + "'");
                } else if (c.states().containsKey(name)) {
                    error(c.id(), field, "key visitor '" + v.id() + "' lists internal state '" + name
                            + "' in external_names", "list it in names instead");
                } else {
                    Set<String> known = new LinkedHashSet<>(c.externalStateManagers().keySet());
                    known.addAll(c.externalStateJoiners().keySet());
                    String close = SpecValidator.closest(name, known);
                    error(c.id(), field, "key visitor '" + v.id() + "' scans '" + name + "', which is not an external "
                            + "state manager or joiner of '" + c.id() + "'", (close == null ? "" : "did you mean '"
                            + close + "'? ") + (known.isEmpty() ? "declare it in external_state_managers or "
                            + "external_state_joiners of '" + c.id() + "'" : "list one of " + known));
                }
            }
        }
    }

    private void checkTopic(ComputationSpec c, String field, @Nullable String topic) {
        if (topic != null && !LEGAL_TOPIC.matcher(topic).matches()) {
            error(c.id(), field + ".parameters.topic", "'" + topic + "' is not a legal Kafka topic name",
                    "use 1 to 249 letters, digits, '.', '_' and '-'");
        }
    }

    private void notRecord(ComputationSpec c, String field, String name, Schema schema) {
        error(c.id(), field + ".parameters.schema", "'" + name + "' has a schema of type "
                + schema.getType().getName() + ", but a table's rows are Avro records",
                "wrap the row in a record schema: {\"type\": \"record\", \"name\": ..., \"fields\": [...]}");
    }

    private void unknownClass(ComputationSpec c, String field, String classField, String className,
            List<String> known) {
        String lower = className.toLowerCase(Locale.ROOT);
        String close = SpecValidator.closest(className, known);
        if (close == null && !lower.startsWith("t")) {
            close = SpecValidator.closest("T" + className, known);
        }
        error(c.id(), field, "unknown " + classField + " '" + className + "'", (close == null ? ""
                : "did you mean '" + close + "'? ") + "use " + String.join(" or ", known) + " (Flow's NYT::NFlow:: "
                + "names are accepted too)");
    }

    private void unknownParameters(ComputationSpec c, String field, String what, Map<String, Object> parameters,
            Collection<String> typed, List<String> known) {
        for (String key : parameters.keySet()) {
            if (typed.contains(key)) {
                error(c.id(), field + ".parameters." + key, what + " parameter '" + key + "' is in the parameters map, "
                        + "where it would be ignored", "set it through the spec's own field (e.g. "
                        + (key.equals("schema") ? "ExternalStateManagerSpec.of(name, schema)" : "withTopic(...)")
                        + "), as the spec loader does");
                continue;
            }
            String close = SpecValidator.closest(key, known);
            warning(c.id(), field + ".parameters." + key, "unknown " + what + " parameter '" + key + "' is ignored",
                    (close == null ? "" : "did you mean '" + close + "'? ") + "use one of " + known);
        }
    }

    /** A service-log source's {@code table} that names a manager ({@code /name}) must name one of the pipeline. */
    private void checkServiceLogTables(ComputationSpec c) {
        for (SourceSpec source : c.sourceStreams()) {
            String className = ExternalTables.shortClassName(source.sourceClassName());
            if (!className.equals("TServiceLogSource") || !(source.parameters().get("table") instanceof String table)
                    || !table.startsWith("/") || managerNames().contains(table)) {
                continue;
            }
            error(c.id(), "source_streams." + source.streamId() + ".parameters.table", "service-log source '"
                    + source.streamId() + "' reads table '" + table + "', but no computation of the pipeline declares "
                    + "an external state manager of that name", "set parameters.table to a manager's name "
                    + (managerNames().isEmpty() ? "(declare one in external_state_managers)" : managerNames())
                    + ", or to the topic of a table written outside the pipeline");
        }
    }

    private Set<String> managerNames() {
        Set<String> names = new LinkedHashSet<>();
        spec.computations().values().forEach(c -> names.addAll(c.externalStateManagers().keySet()));
        return names;
    }

    private void error(String computation, String field, String message, String fix) {
        problems.add(SpecProblem.error(computation, field, message, fix));
    }

    private void warning(String computation, String field, String message, String fix) {
        problems.add(SpecProblem.warning(computation, field, message, fix));
    }
}
