package io.flowkafka.internal.serde;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericEnumSymbol;
import org.apache.avro.generic.GenericFixed;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.util.Utf8;
import org.jspecify.annotations.Nullable;

/**
 * Converts a record read by a pluggable serde (written with the producer's schema) to a stream's
 * schema, field by field by name.
 *
 * <p>Rules: fields are matched by name at every level of nesting, whatever the record names,
 * namespaces and field order; fields the stream's schema lacks are dropped; a field the stream
 * has but the record lacks takes the stream field's default, and without a default the record is
 * rejected with a message naming every such field. Values convert as in Avro schema resolution:
 * int to long, float or double; long to float or double; float to double; string and bytes
 * into each other; enum symbols by name; union branches by type (records: by full name, else by
 * simple name, else the only record branch).
 *
 * <p>Threading: not thread-safe (it caches the last source schema); each task owns its own.
 */
public final class RecordConverter {
    private final Schema target;
    private final String what;
    private @Nullable Schema lastSame;

    /**
     * A converter to {@code target}.
     *
     * @param what the owner of the target schema for messages, e.g. {@code stream 'events'}
     */
    public RecordConverter(Schema target, String what) {
        this.target = target;
        this.what = what;
    }

    /**
     * Converts {@code source} to the target schema.
     *
     * @return a record of the target schema (the same instance if it already has that schema)
     * @throws IllegalArgumentException naming the fields that are missing or do not convert
     */
    public GenericData.Record convert(GenericRecord source) {
        Schema schema = source.getSchema();
        if (schema == lastSame || schema.equals(target)) {
            lastSame = schema;
            if (source instanceof GenericData.Record r) {
                return r;
            }
        }
        return record(source, target, "");
    }

    private GenericData.Record record(GenericRecord source, Schema to, String path) {
        GenericData.Record out = new GenericData.Record(to);
        Schema from = source.getSchema();
        List<String> missing = new ArrayList<>();
        for (Schema.Field f : to.getFields()) {
            Schema.Field sf = from.getField(f.name());
            if (sf == null) {
                if (f.hasDefaultValue()) {
                    out.put(f.pos(), GenericData.get().deepCopy(f.schema(), GenericData.get().getDefaultValue(f)));
                } else {
                    missing.add(path + f.name());
                }
                continue;
            }
            out.put(f.pos(), value(source.get(sf.pos()), f.schema(), path + f.name()));
        }
        if (!missing.isEmpty()) {
            throw new IllegalArgumentException("the record read has schema " + from.getFullName() + ", which lacks "
                    + (missing.size() == 1 ? "field " : "fields ") + missing + " of " + what + " (schema "
                    + target.getFullName() + ") without a default; add " + (missing.size() == 1 ? "it" : "them")
                    + " to the writer's schema, or give " + (missing.size() == 1 ? "it" : "them")
                    + " a default in the stream's schema");
        }
        return out;
    }

    private @Nullable Object value(@Nullable Object v, Schema to, String path) {
        switch (to.getType()) {
            case UNION:
                return union(v, to, path);
            case NULL:
                if (v == null) {
                    return null;
                }
                break;
            default:
                if (v == null) {
                    throw new IllegalArgumentException("field '" + path + "' is null, but " + what + " declares it "
                            + to.getType().getName() + " (not nullable)");
                }
                Object converted = nonNull(v, to, path);
                if (converted != null) {
                    return converted;
                }
        }
        throw new IllegalArgumentException("field '" + path + "' holds " + describe(v) + ", which does not convert to "
                + "the " + to.getType().getName() + " that " + what + " declares");
    }

    private @Nullable Object union(@Nullable Object v, Schema union, String path) {
        if (v == null) {
            for (Schema b : union.getTypes()) {
                if (b.getType() == Schema.Type.NULL) {
                    return null;
                }
            }
            throw new IllegalArgumentException("field '" + path + "' is null, but " + what + " declares it "
                    + union + " (no null branch)");
        }
        Schema branch = null;
        if (v instanceof GenericRecord r) {
            branch = recordBranch(r.getSchema(), union);
        } else {
            for (Schema b : union.getTypes()) { // first a branch of the value's own type, then one it promotes to
                if (sameKind(v, b)) {
                    branch = b;
                    break;
                }
            }
            if (branch == null) {
                for (Schema b : union.getTypes()) {
                    if (b.getType() != Schema.Type.NULL && b.getType() != Schema.Type.RECORD
                            && nonNullOrNull(v, b, path) != null) {
                        branch = b;
                        break;
                    }
                }
            }
        }
        if (branch == null) {
            throw new IllegalArgumentException("field '" + path + "' holds " + describe(v) + ", which fits no branch of "
                    + "the union " + union + " that " + what + " declares");
        }
        return value(v, branch, path);
    }

    private @Nullable Object nonNullOrNull(Object v, Schema to, String path) {
        try {
            return nonNull(v, to, path);
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    private static @Nullable Schema recordBranch(Schema from, Schema union) {
        List<Schema> records = new ArrayList<>();
        for (Schema b : union.getTypes()) {
            if (b.getType() == Schema.Type.RECORD) {
                if (b.getFullName().equals(from.getFullName())) {
                    return b;
                }
                records.add(b);
            }
        }
        for (Schema b : records) {
            if (b.getName().equals(from.getName())) {
                return b;
            }
        }
        return records.size() == 1 ? records.get(0) : null;
    }

    private static boolean sameKind(Object v, Schema b) {
        return switch (b.getType()) {
            case STRING -> v instanceof CharSequence;
            case BYTES -> v instanceof ByteBuffer;
            case INT -> v instanceof Integer;
            case LONG -> v instanceof Long;
            case FLOAT -> v instanceof Float;
            case DOUBLE -> v instanceof Double;
            case BOOLEAN -> v instanceof Boolean;
            case ENUM -> v instanceof GenericEnumSymbol<?> e && b.hasEnumSymbol(e.toString());
            case FIXED -> v instanceof GenericFixed f && f.bytes().length == b.getFixedSize();
            case ARRAY -> v instanceof Collection<?>;
            case MAP -> v instanceof Map<?, ?>;
            default -> false;
        };
    }

    /** The converted value, or null if {@code v} does not convert to {@code to}. */
    private @Nullable Object nonNull(Object v, Schema to, String path) {
        switch (to.getType()) {
            case RECORD:
                return v instanceof GenericRecord r ? (r.getSchema().equals(to) ? r : record(r, to, path + ".")) : null;
            case STRING:
                if (v instanceof CharSequence) {
                    return v;
                }
                return v instanceof ByteBuffer b ? new Utf8(bytes(b)) : null;
            case BYTES:
                if (v instanceof ByteBuffer) {
                    return v;
                }
                return v instanceof CharSequence s ? ByteBuffer.wrap(s.toString().getBytes(StandardCharsets.UTF_8)) : null;
            case INT:
                return v instanceof Integer ? v : null;
            case LONG:
                return v instanceof Integer || v instanceof Long ? ((Number) v).longValue() : null;
            case FLOAT:
                return v instanceof Integer || v instanceof Long || v instanceof Float ? ((Number) v).floatValue() : null;
            case DOUBLE:
                return v instanceof Integer || v instanceof Long || v instanceof Float || v instanceof Double
                        ? ((Number) v).doubleValue() : null;
            case BOOLEAN:
                return v instanceof Boolean ? v : null;
            case ENUM:
                if ((v instanceof GenericEnumSymbol<?> || v instanceof CharSequence) && to.hasEnumSymbol(v.toString())) {
                    return new GenericData.EnumSymbol(to, v.toString());
                }
                return null;
            case FIXED:
                return v instanceof GenericFixed f && f.bytes().length == to.getFixedSize()
                        ? new GenericData.Fixed(to, f.bytes()) : null;
            case ARRAY:
                if (!(v instanceof Collection<?> c)) {
                    return null;
                }
                GenericData.Array<Object> array = new GenericData.Array<>(c.size(), to);
                int i = 0;
                for (Object e : c) {
                    array.add(value(e, to.getElementType(), path + "[" + i++ + "]"));
                }
                return array;
            case MAP:
                if (!(v instanceof Map<?, ?> m)) {
                    return null;
                }
                Map<Object, Object> map = new LinkedHashMap<>();
                m.forEach((k, e) -> map.put(k, value(e, to.getValueType(), path + "[" + k + "]")));
                return map;
            default:
                return null;
        }
    }

    private static byte[] bytes(ByteBuffer b) {
        byte[] a = new byte[b.remaining()];
        b.duplicate().get(a);
        return a;
    }

    private static String describe(@Nullable Object v) {
        if (v == null) {
            return "null";
        }
        if (v instanceof GenericRecord r) {
            return "a record of schema " + r.getSchema().getFullName();
        }
        return "a " + v.getClass().getSimpleName() + " (" + v + ")";
    }
}
