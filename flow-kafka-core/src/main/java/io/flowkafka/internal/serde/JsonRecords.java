package io.flowkafka.internal.serde;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.jspecify.annotations.Nullable;

/**
 * Plain JSON objects (not Avro's JSON encoding with union wrappers) to and from Avro records, for
 * source and sink topics in {@code json} format.
 *
 * <p>Stateless and thread-safe.
 */
public final class JsonRecords {
    /** Fails on content after the value ({@code {...}{...}}, {@code {...} xyz}): one record holds one object. */
    private static final ObjectMapper MAPPER = new ObjectMapper()
            .enable(com.fasterxml.jackson.databind.DeserializationFeature.FAIL_ON_TRAILING_TOKENS);

    private JsonRecords() {
    }

    /**
     * Reads a JSON object as a record of {@code schema}; missing fields take their defaults.
     *
     * @throws IllegalArgumentException naming the field and the problem
     */
    public static GenericRecord fromJson(byte[] json, Schema schema) {
        Flat flat = flat(schema);
        if (flat != null) {
            GenericRecord fast = fromJsonFlat(json, schema, flat);
            if (fast != null) {
                return fast;
            }
        }
        JsonNode node;
        try {
            node = MAPPER.readTree(json);
        } catch (IOException e) {
            throw new IllegalArgumentException("value is not JSON: " + firstLine(e.getMessage()));
        }
        if (node == null || !node.isObject()) {
            throw new IllegalArgumentException("value is not a JSON object of schema " + schema.getFullName());
        }
        return (GenericRecord) convert(node, schema, schema.getName());
    }

    /**
     * A non-finite float or double as Jackson writes it: the strings {@code "NaN"}, {@code "Infinity"} and
     * {@code "-Infinity"} (JSON has no such numbers), read back so what flow-kafka writes it can read; else null.
     */
    static @Nullable Double nonFinite(@Nullable String text) {
        if (text == null) {
            return null;
        }
        return switch (text) {
            case "NaN" -> Double.NaN;
            case "Infinity", "+Infinity" -> Double.POSITIVE_INFINITY;
            case "-Infinity" -> Double.NEGATIVE_INFINITY;
            default -> null;
        };
    }

    /** Writes a record as a JSON object. */
    public static byte[] toJson(GenericRecord record) {
        Schema schema = record.getSchema();
        try {
            Flat flat = flat(schema);
            if (flat != null) {
                com.fasterxml.jackson.core.util.ByteArrayBuilder out = new com.fasterxml.jackson.core.util.ByteArrayBuilder(
                        null, 128);
                try (com.fasterxml.jackson.core.JsonGenerator g = FACTORY.createGenerator(out)) {
                    g.writeStartObject();
                    for (int i = 0; i < flat.names.length; i++) {
                        g.writeFieldName(flat.names[i]);
                        writeScalar(g, record.get(i), flat.types[i]);
                    }
                    g.writeEndObject();
                }
                return out.toByteArray();
            }
            return MAPPER.writeValueAsBytes(toNode(record, schema));
        } catch (IOException e) {
            throw new IllegalStateException(e);
        } catch (ClassCastException e) {
            throw new IllegalArgumentException(mismatch(record, e), e);
        }
    }

    /** Which field holds a value of another type than its schema's (a String set into a long field), in words. */
    private static String mismatch(GenericRecord record, ClassCastException e) {
        for (Schema.Field f : record.getSchema().getFields()) {
            Object v = record.get(f.pos());
            Schema.Type type = scalarType(f.schema());
            if (v == null || type == null) {
                continue;
            }
            boolean fits = switch (type) {
                case STRING -> v instanceof CharSequence;
                case INT, LONG, FLOAT, DOUBLE -> v instanceof Number;
                case BOOLEAN -> v instanceof Boolean;
                default -> true;
            };
            if (!fits) {
                return "field '" + f.name() + "' of " + record.getSchema().getFullName() + " is "
                        + type.getName() + ", but it holds a " + v.getClass().getSimpleName() + " (" + v
                        + "); set it to a value of the field's type";
            }
        }
        return "a value of " + record.getSchema().getFullName() + " does not fit its field's type: " + e.getMessage();
    }

    private static final com.fasterxml.jackson.core.JsonFactory FACTORY = MAPPER.getFactory();
    private static final java.util.Map<Schema, java.util.Optional<Flat>> FLAT =
            new java.util.concurrent.ConcurrentHashMap<>();

    /**
     * A flat schema's fields in order: names pre-encoded for the generator (Avro names are ASCII
     * identifiers, so the output is the same as writing the name) and scalar types.
     */
    private record Flat(com.fasterxml.jackson.core.io.SerializedString[] names, Schema.Type[] types) {
    }

    /**
     * The fields of a schema whose every field is a primitive (string, int, long, float, double,
     * boolean) or a nullable one; null for any other schema.
     */
    private static @Nullable Flat flat(Schema schema) {
        return FLAT.computeIfAbsent(schema, s -> {
            List<Schema.Field> fields = s.getFields();
            com.fasterxml.jackson.core.io.SerializedString[] names =
                    new com.fasterxml.jackson.core.io.SerializedString[fields.size()];
            Schema.Type[] types = new Schema.Type[fields.size()];
            for (Schema.Field f : fields) {
                types[f.pos()] = scalarType(f.schema());
                if (types[f.pos()] == null) {
                    return java.util.Optional.empty();
                }
                names[f.pos()] = new com.fasterxml.jackson.core.io.SerializedString(f.name());
            }
            return java.util.Optional.of(new Flat(names, types));
        }).orElse(null);
    }

    private static Schema.@Nullable Type scalarType(Schema s) {
        if (s.getType() == Schema.Type.UNION) {
            if (s.getTypes().size() != 2) {
                return null;
            }
            Schema a = s.getTypes().get(0);
            Schema b = s.getTypes().get(1);
            Schema other = a.getType() == Schema.Type.NULL ? b : b.getType() == Schema.Type.NULL ? a : null;
            return other == null ? null : scalarType(other);
        }
        return switch (s.getType()) {
            case STRING, INT, LONG, FLOAT, DOUBLE, BOOLEAN -> s.getType();
            default -> null;
        };
    }

    private static void writeScalar(com.fasterxml.jackson.core.JsonGenerator g, @Nullable Object v, Schema.Type type)
            throws IOException {
        if (v == null) {
            g.writeNull();
            return;
        }
        switch (type) {
            case STRING -> g.writeString(v.toString());
            case INT -> g.writeNumber(((Number) v).intValue());
            case LONG -> g.writeNumber(((Number) v).longValue());
            case FLOAT -> g.writeNumber(((Number) v).floatValue());
            case DOUBLE -> g.writeNumber(((Number) v).doubleValue());
            case BOOLEAN -> g.writeBoolean((Boolean) v);
            default -> throw new IllegalStateException("not a scalar: " + type);
        }
    }

    /**
     * Streams a JSON object straight into a flat record; null when the input needs the general
     * path (it then reports the precise error).
     */
    private static @Nullable GenericRecord fromJsonFlat(byte[] json, Schema schema, Flat flat) {
        GenericData.Record r = new GenericData.Record(schema);
        boolean[] seen = new boolean[schema.getFields().size()];
        try (com.fasterxml.jackson.core.JsonParser p = FACTORY.createParser(json)) {
            if (p.nextToken() != com.fasterxml.jackson.core.JsonToken.START_OBJECT) {
                return null;
            }
            com.fasterxml.jackson.core.JsonToken t;
            while ((t = p.nextToken()) == com.fasterxml.jackson.core.JsonToken.FIELD_NAME) {
                Schema.Field f = schema.getField(p.currentName());
                com.fasterxml.jackson.core.JsonToken v = p.nextToken();
                if (f == null) {
                    p.skipChildren();
                    continue;
                }
                Object value;
                if (v == com.fasterxml.jackson.core.JsonToken.VALUE_NULL) {
                    value = null;
                } else {
                    switch (flat.types[f.pos()]) {
                        case STRING -> {
                            if (!v.isScalarValue()) {
                                return null;
                            }
                            value = p.getText();
                        }
                        case INT -> {
                            if (v != com.fasterxml.jackson.core.JsonToken.VALUE_NUMBER_INT) {
                                return null;
                            }
                            value = p.getIntValue();
                        }
                        case LONG -> {
                            if (v != com.fasterxml.jackson.core.JsonToken.VALUE_NUMBER_INT) {
                                return null;
                            }
                            value = p.getLongValue();
                        }
                        case FLOAT -> {
                            if (!v.isNumeric()) {
                                Double special = nonFinite(p.getValueAsString());
                                if (v != com.fasterxml.jackson.core.JsonToken.VALUE_STRING || special == null) {
                                    return null;
                                }
                                value = special.floatValue();
                            } else {
                                value = p.getFloatValue();
                            }
                        }
                        case DOUBLE -> {
                            if (!v.isNumeric()) {
                                Double special = nonFinite(p.getValueAsString());
                                if (v != com.fasterxml.jackson.core.JsonToken.VALUE_STRING || special == null) {
                                    return null;
                                }
                                value = special;
                            } else {
                                value = p.getDoubleValue();
                            }
                        }
                        case BOOLEAN -> {
                            if (!v.isBoolean()) {
                                return null;
                            }
                            value = p.getBooleanValue();
                        }
                        default -> {
                            return null;
                        }
                    }
                }
                r.put(f.pos(), value);
                seen[f.pos()] = true;
            }
            if (t != com.fasterxml.jackson.core.JsonToken.END_OBJECT || p.nextToken() != null) {
                return null;
            }
        } catch (IOException | RuntimeException e) {
            return null; // the general path reports the error with the field
        }
        for (Schema.Field f : schema.getFields()) {
            Object v = r.get(f.pos());
            if (!seen[f.pos()] && f.hasDefaultValue()) {
                r.put(f.pos(), GenericData.get().getDefaultValue(f));
            } else if (v == null && f.schema().getType() != Schema.Type.UNION) {
                return null; // missing or null required field: the general path names it
            }
        }
        return r;
    }

    private static @Nullable Object convert(@Nullable JsonNode node, Schema schema, String path) {
        switch (schema.getType()) {
            case NULL:
                if (node == null || node.isNull()) {
                    return null;
                }
                throw mismatch(path, "null", node);
            case UNION: {
                if (node == null || node.isNull()) {
                    for (Schema s : schema.getTypes()) {
                        if (s.getType() == Schema.Type.NULL) {
                            return null;
                        }
                    }
                    throw new IllegalArgumentException("field '" + path + "' is missing or null but is not nullable");
                }
                IllegalArgumentException last = null;
                // a text in a union with a string branch is that string, even "NaN": try the text branches first
                boolean textFirst = node.isTextual() && schema.getTypes().stream()
                        .anyMatch(b -> b.getType() == Schema.Type.STRING || b.getType() == Schema.Type.ENUM);
                List<Schema> branches = schema.getTypes();
                if (textFirst) {
                    branches = new ArrayList<>(branches);
                    branches.sort(Comparator.comparingInt(b -> b.getType() == Schema.Type.STRING
                            || b.getType() == Schema.Type.ENUM ? 0 : 1));
                }
                for (Schema s : branches) {
                    if (s.getType() == Schema.Type.NULL) {
                        continue;
                    }
                    try {
                        return convert(node, s, path);
                    } catch (IllegalArgumentException e) {
                        last = e;
                    }
                }
                throw last != null ? last : mismatch(path, schema.toString(), node);
            }
            case RECORD: {
                if (node == null || !node.isObject()) {
                    throw mismatch(path, "object", node);
                }
                GenericData.Record r = new GenericData.Record(schema);
                for (Schema.Field f : schema.getFields()) {
                    JsonNode v = node.get(f.name());
                    if (v == null && f.hasDefaultValue()) {
                        r.put(f.pos(), GenericData.get().getDefaultValue(f));
                    } else {
                        r.put(f.pos(), convert(v, f.schema(), path + "." + f.name()));
                    }
                }
                return r;
            }
            case STRING:
                if (node != null && node.isValueNode() && !node.isNull()) {
                    return node.asText();
                }
                throw mismatch(path, "string", node);
            case INT:
                if (node != null && node.canConvertToInt() && node.isIntegralNumber()) {
                    return node.intValue();
                }
                throw mismatch(path, "int", node);
            case LONG:
                if (node != null && node.isIntegralNumber() && node.canConvertToLong()) {
                    return node.longValue();
                }
                throw mismatch(path, "long", node);
            case FLOAT:
                if (node != null && node.isNumber()) {
                    return node.floatValue();
                }
                if (node != null && node.isTextual() && nonFinite(node.textValue()) != null) {
                    return nonFinite(node.textValue()).floatValue();
                }
                throw mismatch(path, "float", node);
            case DOUBLE:
                if (node != null && node.isNumber()) {
                    return node.doubleValue();
                }
                if (node != null && node.isTextual() && nonFinite(node.textValue()) != null) {
                    return nonFinite(node.textValue());
                }
                throw mismatch(path, "double", node);
            case BOOLEAN:
                if (node != null && node.isBoolean()) {
                    return node.booleanValue();
                }
                throw mismatch(path, "boolean", node);
            case BYTES:
                if (node != null && node.isTextual()) {
                    try {
                        return ByteBuffer.wrap(Base64.getDecoder().decode(node.asText()));
                    } catch (IllegalArgumentException e) {
                        throw new IllegalArgumentException("field '" + path + "' must be base64 bytes: " + e.getMessage());
                    }
                }
                throw mismatch(path, "base64 string", node);
            case ENUM:
                if (node != null && node.isTextual() && schema.hasEnumSymbol(node.asText())) {
                    return new GenericData.EnumSymbol(schema, node.asText());
                }
                throw mismatch(path, "one of " + schema.getEnumSymbols(), node);
            case ARRAY: {
                if (node == null || !node.isArray()) {
                    throw mismatch(path, "array", node);
                }
                List<Object> list = new ArrayList<>(node.size());
                int i = 0;
                for (JsonNode e : node) {
                    list.add(convert(e, schema.getElementType(), path + "[" + i++ + "]"));
                }
                return new GenericData.Array<>(schema, list);
            }
            case MAP: {
                if (node == null || !node.isObject()) {
                    throw mismatch(path, "object", node);
                }
                Map<String, Object> map = new LinkedHashMap<>();
                node.fields().forEachRemaining(e -> map.put(e.getKey(),
                        convert(e.getValue(), schema.getValueType(), path + "." + e.getKey())));
                return map;
            }
            default:
                throw new IllegalArgumentException("field '" + path + "' has Avro type " + schema.getType()
                        + ", which the json format does not support; use format avro");
        }
    }

    private static JsonNode toNode(@Nullable Object value, Schema schema) {
        JsonNodeFactory f = JsonNodeFactory.instance;
        if (value == null) {
            return f.nullNode();
        }
        switch (schema.getType()) {
            case UNION:
                return toNode(value, schema.getTypes().get(GenericData.get().resolveUnion(schema, value)));
            case RECORD: {
                GenericRecord r = (GenericRecord) value;
                ObjectNode o = f.objectNode();
                for (Schema.Field fld : schema.getFields()) {
                    o.set(fld.name(), toNode(r.get(fld.pos()), fld.schema()));
                }
                return o;
            }
            case STRING:
            case ENUM:
                return f.textNode(value.toString());
            case INT:
                return f.numberNode(((Number) value).intValue());
            case LONG:
                return f.numberNode(((Number) value).longValue());
            case FLOAT:
                return f.numberNode(((Number) value).floatValue());
            case DOUBLE:
                return f.numberNode(((Number) value).doubleValue());
            case BOOLEAN:
                return f.booleanNode((Boolean) value);
            case BYTES: {
                ByteBuffer b = ((ByteBuffer) value).duplicate();
                byte[] a = new byte[b.remaining()];
                b.get(a);
                return f.textNode(Base64.getEncoder().encodeToString(a));
            }
            case ARRAY: {
                ArrayNode a = f.arrayNode();
                for (Object e : (Iterable<?>) value) {
                    a.add(toNode(e, schema.getElementType()));
                }
                return a;
            }
            case MAP: {
                ObjectNode o = f.objectNode();
                ((Map<?, ?>) value).forEach((k, v) -> o.set(k.toString(), toNode(v, schema.getValueType())));
                return o;
            }
            default:
                return f.textNode(value.toString());
        }
    }

    private static IllegalArgumentException mismatch(String path, String expected, @Nullable JsonNode node) {
        return new IllegalArgumentException("field '" + path + "' must be " + expected + " but was "
                + (node == null ? "missing" : node.getNodeType().toString().toLowerCase(java.util.Locale.ROOT)
                + " " + abbreviate(node.toString())));
    }

    private static String abbreviate(String s) {
        return s.length() > 40 ? s.substring(0, 40) + "..." : s;
    }

    private static String firstLine(@Nullable String s) {
        if (s == null) {
            return "malformed";
        }
        int i = s.indexOf('\n');
        return i < 0 ? s : s.substring(0, i);
    }
}
