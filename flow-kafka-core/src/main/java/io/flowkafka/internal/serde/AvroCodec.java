package io.flowkafka.internal.serde;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericDatumReader;
import org.apache.avro.generic.GenericDatumWriter;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.generic.IndexedRecord;
import org.apache.avro.io.BinaryDecoder;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.DecoderFactory;
import org.apache.avro.io.EncoderFactory;
import org.jspecify.annotations.Nullable;

/**
 * Avro binary encoding of records of one schema, reusing its encoder, decoder and buffer.
 *
 * <p>A schema whose fields are all primitives (string, int, long, float, double, boolean) or
 * nullable primitives, without logical types, is encoded and decoded field by field (about half
 * the time of {@link GenericDatumWriter} and {@link GenericDatumReader} for the small states and
 * keys of a call). A value of another class than the one Avro's generic data maps the field's type
 * to (an {@code Integer} for a long, say) goes through {@link GenericDatumWriter}, and bytes the
 * field-by-field read cannot take through {@link GenericDatumReader}: same bytes, same records
 * (strings as {@code Utf8}; a field schema with properties, such as {@code avro.java.string},
 * always decodes through the reader), same errors.
 *
 * <p>Threading: not thread-safe; each task owns its codecs.
 */
public final class AvroCodec {
    private final Schema schema;
    private final GenericDatumWriter<GenericRecord> writer;
    private final GenericDatumReader<GenericRecord> reader;
    private final ByteArrayOutputStream buffer = new ByteArrayOutputStream(256);
    private BinaryEncoder encoder;
    private BinaryDecoder decoder;
    /** Per field of a flat schema: its primitive type; null if the schema is not flat. */
    private final Schema.Type @Nullable [] flatTypes;
    /** Per field of a flat schema: the union index of null, or -1 for a field that is not a nullable union. */
    private final int[] nullIndex;
    /** Whether a flat schema's records also decode field by field: no properties (string class, java-class). */
    private final boolean flatDecode;

    public AvroCodec(Schema schema) {
        this.schema = schema;
        this.writer = new GenericDatumWriter<>(schema, GenericData.get());
        this.reader = new GenericDatumReader<>(schema, schema, GenericData.get());
        int n = schema.getType() == Schema.Type.RECORD ? schema.getFields().size() : 0;
        Schema.Type[] types = schema.getType() == Schema.Type.RECORD ? new Schema.Type[n] : null;
        this.nullIndex = new int[n];
        for (int i = 0; types != null && i < n; i++) {
            Schema f = schema.getFields().get(i).schema();
            nullIndex[i] = -1;
            if (f.getType() == Schema.Type.UNION) {
                List<Schema> branches = f.getTypes();
                int nulls = branches.size() == 2 ? (branches.get(0).getType() == Schema.Type.NULL ? 0
                        : branches.get(1).getType() == Schema.Type.NULL ? 1 : -1) : -1;
                if (nulls < 0) {
                    types = null;
                    break;
                }
                nullIndex[i] = nulls;
                f = branches.get(1 - nulls);
            }
            types[i] = primitive(f);
            if (types[i] == null) {
                types = null;
            }
        }
        this.flatTypes = types;
        boolean plain = types != null;
        for (int i = 0; plain && i < n; i++) {
            Schema f = schema.getFields().get(i).schema();
            Schema value = f.getType() == Schema.Type.UNION ? f.getTypes().get(1 - nullIndex[i]) : f;
            plain = value.getObjectProps().isEmpty();
        }
        this.flatDecode = plain;
    }

    private static Schema.@Nullable Type primitive(Schema s) {
        if (s.getLogicalType() != null) {
            return null;
        }
        return switch (s.getType()) {
            case STRING, INT, LONG, FLOAT, DOUBLE, BOOLEAN -> s.getType();
            default -> null;
        };
    }

    /** The schema. */
    public Schema schema() {
        return schema;
    }

    /** Encodes a record of the schema. */
    public byte[] encode(GenericRecord record) {
        buffer.reset();
        encoder = EncoderFactory.get().directBinaryEncoder(buffer, encoder);
        try {
            if (flatTypes != null) {
                boolean written;
                try {
                    written = encodeFlat(record, flatTypes);
                } catch (RuntimeException e) {
                    written = false; // the generic writer reports it
                }
                if (written) {
                    return buffer.toByteArray();
                }
                buffer.reset();
                encoder = EncoderFactory.get().directBinaryEncoder(buffer, encoder);
            }
            writer.write(record, encoder);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("cannot encode a record as Avro schema " + schema.getFullName()
                    + ": " + e.getMessage(), e);
        }
        return buffer.toByteArray();
    }

    /**
     * Writes a record of a flat schema as {@link GenericDatumWriter} does; false (part written) at
     * the first value of another class than generic data's for its type, or a null in a field
     * that is not nullable: the caller then encodes with {@link GenericDatumWriter}.
     */
    private boolean encodeFlat(IndexedRecord record, Schema.Type[] types) throws IOException {
        for (int i = 0; i < types.length; i++) {
            Object v = record.get(i);
            int nulls = nullIndex[i];
            if (v == null) {
                if (nulls < 0) {
                    return false;
                }
                encoder.writeIndex(nulls);
                continue;
            }
            if (nulls >= 0) {
                encoder.writeIndex(1 - nulls);
            }
            switch (types[i]) {
                case STRING -> {
                    if (!(v instanceof CharSequence cs)) {
                        return false;
                    }
                    encoder.writeString(cs);
                }
                case LONG -> {
                    if (!(v instanceof Long l)) {
                        return false;
                    }
                    encoder.writeLong(l);
                }
                case INT -> {
                    if (!(v instanceof Integer n)) {
                        return false;
                    }
                    encoder.writeInt(n);
                }
                case BOOLEAN -> {
                    if (!(v instanceof Boolean b)) {
                        return false;
                    }
                    encoder.writeBoolean(b);
                }
                case DOUBLE -> {
                    if (!(v instanceof Double d)) {
                        return false;
                    }
                    encoder.writeDouble(d);
                }
                case FLOAT -> {
                    if (!(v instanceof Float f)) {
                        return false;
                    }
                    encoder.writeFloat(f);
                }
                default -> {
                    return false;
                }
            }
        }
        return true;
    }

    /**
     * Decodes bytes written with the schema.
     *
     * @throws IllegalArgumentException if the bytes are not a valid encoding (truncated, bad union
     *     index, trailing bytes)
     */
    public GenericRecord decode(byte[] bytes) {
        if (flatDecode) {
            GenericRecord fast = decodeFlat(bytes, flatTypes);
            if (fast != null) {
                return fast;
            }
        }
        decoder = DecoderFactory.get().binaryDecoder(bytes, decoder);
        try {
            GenericRecord r = reader.read(null, decoder);
            if (!decoder.isEnd()) {
                throw new IllegalArgumentException("bytes are not Avro of schema " + schema.getFullName()
                        + ": " + bytes.length + " bytes, trailing data after the record");
            }
            return r;
        } catch (IOException | RuntimeException e) {
            if (e instanceof IllegalArgumentException iae && iae.getMessage() != null
                    && iae.getMessage().startsWith("bytes are not Avro")) {
                throw iae;
            }
            throw new IllegalArgumentException("bytes are not Avro of schema " + schema.getFullName() + " ("
                    + bytes.length + " bytes): " + e.getClass().getSimpleName()
                    + (e.getMessage() == null ? "" : ": " + e.getMessage()), e);
        }
    }

    /**
     * Reads a record of a flat schema as {@link GenericDatumReader} does (strings as {@code Utf8});
     * null for bytes it would reject (a bad union index, too short, trailing data): the caller then
     * decodes with it, which reports the error.
     */
    private @Nullable GenericRecord decodeFlat(byte[] bytes, Schema.Type[] types) {
        decoder = DecoderFactory.get().binaryDecoder(bytes, decoder);
        try {
            GenericData.Record r = new GenericData.Record(schema);
            for (int i = 0; i < types.length; i++) {
                int nulls = nullIndex[i];
                if (nulls >= 0) {
                    int branch = decoder.readIndex();
                    if (branch == nulls) {
                        continue; // null
                    }
                    if (branch != 1 - nulls) {
                        return null;
                    }
                }
                Object v = switch (types[i]) {
                    case STRING -> decoder.readString(null);
                    case LONG -> decoder.readLong();
                    case INT -> decoder.readInt();
                    case BOOLEAN -> decoder.readBoolean();
                    case DOUBLE -> decoder.readDouble();
                    case FLOAT -> decoder.readFloat();
                    default -> throw new IllegalStateException("not a primitive: " + types[i]);
                };
                r.put(i, v);
            }
            return decoder.isEnd() ? r : null;
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }
}
