package io.flowkafka.spec;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.avro.Schema;
import org.jspecify.annotations.Nullable;

/**
 * Reads a computation's {@code external_state_managers}, {@code external_state_joiners} and
 * {@code state_joiners} for {@link PipelineSpecLoader}: structure only (types, Avro schemas, durations);
 * the rules that need the whole pipeline are in {@link ExternalStateRules}.
 *
 * <p>The typed fields of the records ({@code schema}, {@code topic}, {@code cache.ttl}, {@code versioned})
 * are taken out of {@code parameters}; the rest is kept there as given, for the validator to check.
 */
final class ExternalStateReader {
    static final String MANAGERS = "external_state_managers";
    static final String JOINERS = "external_state_joiners";
    static final String STATE_JOINERS = "state_joiners";
    private static final String MANAGER_CLASS = "external_state_manager_class_name";
    private static final String JOINER_CLASS = "external_state_joiner_class_name";
    private static final List<String> MANAGER_FIELDS = List.of(MANAGER_CLASS, "parameters");
    private static final List<String> JOINER_FIELDS = List.of(JOINER_CLASS, "parameters");
    private static final List<String> STATE_JOINER_FIELDS = List.of("computation_id", "state_name", "auto_preload",
            "join_on", "parameters");

    private final PipelineSpecLoader.Reading reading;
    private final String id;
    /** Every external name read so far in this computation, with the field that declared it. */
    private final Map<String, String> declared = new LinkedHashMap<>();

    ExternalStateReader(PipelineSpecLoader.Reading reading, String computationId) {
        this.reading = reading;
        this.id = computationId;
    }

    void read(ComputationSpec.Builder b, JsonNode computation) {
        for (Map.Entry<String, JsonNode> e : reading.entries(computation.get(MANAGERS), id, MANAGERS)) {
            ExternalStateManagerSpec m = manager(e.getKey(), e.getValue());
            if (m != null && unique(MANAGERS, m.name())) {
                b.externalStateManager(m);
            }
        }
        for (Map.Entry<String, JsonNode> e : reading.entries(computation.get(JOINERS), id, JOINERS)) {
            ExternalStateJoinerSpec j = joiner(e.getKey(), e.getValue());
            if (j != null && unique(JOINERS, j.name())) {
                b.externalStateJoiner(j);
            }
        }
        for (Map.Entry<String, JsonNode> e : reading.entries(computation.get(STATE_JOINERS), id, STATE_JOINERS)) {
            StateJoinerSpec j = stateJoiner(e.getKey(), e.getValue());
            if (j != null && unique(STATE_JOINERS, j.name())) {
                b.stateJoiner(j);
            }
        }
    }

    /** Flow: the name of a manager, joiner or state joiner is unique in its computation. */
    private boolean unique(String map, String name) {
        String first = declared.putIfAbsent(name, map);
        if (first == null) {
            return true;
        }
        reading.error(id, map + "." + name, "external state name '" + name + "' is declared in both " + first
                + " and " + map + " of '" + id + "'; the process function reads each by its name",
                "give each manager, joiner and state joiner of '" + id + "' a name of its own");
        return false;
    }

    private @Nullable ExternalStateManagerSpec manager(String name, JsonNode node) {
        String field = MANAGERS + "." + name;
        if (!node.isObject()) {
            reading.typeError(id, field, node, "an object", "{\"" + MANAGER_CLASS + "\": \""
                    + ExternalStateManagerSpec.SIMPLE + "\", \"parameters\": {\"schema\": {...}}}");
            return null;
        }
        reading.unknownFields(node, id, field + ".", MANAGER_FIELDS, List.of());
        String className = className(node, field, MANAGER_CLASS, ExternalStateManagerSpec.SIMPLE);
        ObjectNode params = parameters(node, field);
        if (params == null) {
            return null;
        }
        Schema schema = schema(params, field);
        String topic = topic(params, field);
        Map<String, Object> rest = rest(params, field);
        return className == null || rest == null ? null
                : new ExternalStateManagerSpec(name, className, schema, topic, rest);
    }

    private @Nullable ExternalStateJoinerSpec joiner(String name, JsonNode node) {
        String field = JOINERS + "." + name;
        if (!node.isObject()) {
            reading.typeError(id, field, node, "an object", "{\"" + JOINER_CLASS + "\": \""
                    + ExternalStateJoinerSpec.SIMPLE + "\", \"parameters\": {...}}");
            return null;
        }
        reading.unknownFields(node, id, field + ".", JOINER_FIELDS, List.of());
        String className = className(node, field, JOINER_CLASS, ExternalStateJoinerSpec.SIMPLE);
        ObjectNode params = parameters(node, field);
        if (params == null) {
            return null;
        }
        Schema schema = schema(params, field);
        String topic = topic(params, field);
        boolean versioned = false;
        JsonNode v = params.remove("versioned");
        if (v != null && !v.isNull()) {
            if (v.isBoolean()) {
                versioned = v.booleanValue();
            } else {
                reading.typeError(id, field + ".parameters.versioned", v, "true or false", "true");
            }
        }
        Duration ttl = cacheTtl(params, field);
        Map<String, Object> rest = rest(params, field);
        return className == null || rest == null ? null
                : new ExternalStateJoinerSpec(name, className, schema, topic, ttl, versioned, rest);
    }

    private @Nullable StateJoinerSpec stateJoiner(String name, JsonNode node) {
        String field = STATE_JOINERS + "." + name;
        if (!node.isObject()) {
            reading.typeError(id, field, node, "an object", "{\"computation_id\": \"<computation>\", "
                    + "\"state_name\": \"<state>\"}");
            return null;
        }
        reading.unknownFields(node, id, field + ".", STATE_JOINER_FIELDS, List.of());
        String computation = reading.string(node.get("computation_id"), id, field + ".computation_id");
        String state = reading.string(node.get("state_name"), id, field + ".state_name");
        for (String required : List.of("computation_id", "state_name")) {
            if (!node.hasNonNull(required)) {
                reading.error(id, field + "." + required, "state joiner '" + name + "' has no " + required,
                        "add \"" + required + "\": the " + (required.equals("state_name") ? "state" : "computation")
                                + " it reads, e.g. \"computation_id\": \"counter\", \"state_name\": \"total\"");
            }
        }
        ObjectNode rest = ((ObjectNode) node).deepCopy();
        rest.remove(List.of("computation_id", "state_name"));
        rest.retain(STATE_JOINER_FIELDS);
        Map<String, Object> params = reading.parameterMap(rest, id, field);
        return computation == null || state == null || params == null ? null
                : new StateJoinerSpec(name, computation, state, params);
    }

    private @Nullable String className(JsonNode node, String field, String classField, String simple) {
        String className = reading.string(node.get(classField), id, field + "." + classField);
        if (className == null && !node.hasNonNull(classField)) {
            reading.error(id, field + "." + classField, "'" + field + "' has no " + classField,
                    "add \"" + classField + "\": \"" + simple + "\" (or Flow's \"NYT::NFlow::" + simple + "\")");
        }
        return className;
    }

    /** A copy of {@code parameters} to take the typed fields from; null (after reporting) if not an object. */
    private @Nullable ObjectNode parameters(JsonNode node, String field) {
        JsonNode params = node.get("parameters");
        if (params == null || params.isNull()) {
            return JsonNodeFactory.instance.objectNode();
        }
        if (!params.isObject()) {
            reading.typeError(id, field + ".parameters", params, "an object", "{\"schema\": {...}, \"topic\": \"...\"}");
            return null;
        }
        ObjectNode copy = ((ObjectNode) params).deepCopy();
        JsonNode path = copy.remove("path");
        if (path != null) {
            reading.error(id, field + ".parameters.path", "'" + field + "' names a YT table (path " + path
                    + "), but on Kafka an external table is a compacted topic",
                    "name the table's topic: parameters.topic (or leave both out for the default topic "
                            + "<pipeline>.external.<name>)");
        }
        return copy;
    }

    private @Nullable Schema schema(ObjectNode params, String field) {
        JsonNode node = params.remove("schema");
        return node == null || node.isNull() ? null : reading.schema(node, id, field + ".parameters.schema");
    }

    private @Nullable String topic(ObjectNode params, String field) {
        JsonNode node = params.remove("topic");
        return reading.string(node, id, field + ".parameters.topic");
    }

    /** {@code cache.ttl}, removed from {@code cache} (which is removed when nothing else is left in it). */
    private @Nullable Duration cacheTtl(ObjectNode params, String field) {
        JsonNode cache = params.get("cache");
        if (cache == null || cache.isNull() || !cache.isObject()) {
            return null; // a cache that is not an object is kept, and reported by the validator
        }
        ObjectNode rest = ((ObjectNode) cache).deepCopy();
        JsonNode ttl = rest.remove("ttl");
        if (rest.isEmpty()) {
            params.remove("cache");
        } else {
            params.set("cache", rest);
        }
        if (ttl == null || ttl.isNull()) {
            return null;
        }
        if (!ttl.isTextual() && !ttl.isNumber()) {
            reading.typeError(id, field + ".parameters.cache.ttl", ttl, "a duration", "\"5s\"");
            return null;
        }
        try {
            return Durations.parse(ttl, field + ".parameters.cache.ttl");
        } catch (IllegalArgumentException e) {
            reading.error(id, field + ".parameters.cache.ttl", e.getMessage(), "give how long a looked-up row may be "
                    + "reused, e.g. \"5s\", or remove cache to read the table on every lookup");
            return null;
        }
    }

    private @Nullable Map<String, Object> rest(ObjectNode params, String field) {
        return reading.parameterMap(params, id, field + ".parameters");
    }
}
