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
 * (strings as {@code Utf8}, or {@code String} where the field's {@code avro.java.string} says so; a
 * field schema with other properties always decodes through the reader), same errors. Other codecs
 * write and read such fields inside their own encodings with {@link #writeFlat} and {@link #readFlat}.
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
    /** Per field of a flat schema: whether its strings decode as {@code String} ({@code avro.java.string}). */
    private final boolean[] javaStrings;
    /** Whether a flat schema's records also decode field by field: no properties but the string class. */
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
        this.javaStrings = new boolean[n];
        boolean plain = types != null;
        for (int i = 0; plain && i < n; i++) {
            Schema f = schema.getFields().get(i).schema();
            Schema value = f.getType() == Schema.Type.UNION ? f.getTypes().get(1 - nullIndex[i]) : f;
            javaStrings[i] = value.getType() == Schema.Type.STRING
                    && "String".equals(value.getProp(GenericData.STRING_PROP));
            plain = value.getObjectProps().size() == (javaStrings[i] ? 1 : 0);
        }
        this.flatDecode = plain;
    }

    /** Whether {@link #writeFlat} and {@link #readFlat} take records of the schema. */
    boolean flat() {
        return flatTypes != null && flatDecode;
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
        return encode(record, NO_PREFIX);
    }

    private static final byte[] NO_PREFIX = new byte[0];

    /** Encodes a record of the schema after {@code prefix} (copied first, in the same array). */
    public byte[] encode(GenericRecord record, byte[] prefix) {
        buffer.reset();
        buffer.write(prefix, 0, prefix.length);
        encoder = EncoderFactory.get().directBinaryEncoder(buffer, encoder);
        try {
            if (flatTypes != null) {
                boolean written;
                try {
                    written = writeFlat(record, 0, encoder);
                } catch (RuntimeException e) {
                    written = false; // the generic writer reports it
                }
                if (written) {
                    return buffer.toByteArray();
                }
                buffer.reset();
                buffer.write(prefix, 0, prefix.length);
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
     * Writes the fields of a flat schema, taken from {@code record}'s positions from {@code offset} on, to
     * {@code out} as {@link GenericDatumWriter} does; false (part written) at the first value of another class than
     * generic data's for its type, or a null in a field that is not nullable: the caller then encodes with
     * {@link GenericDatumWriter}.
     */
    boolean writeFlat(IndexedRecord record, int offset, BinaryEncoder out) throws IOException {
        Schema.Type[] types = flatTypes;
        if (types == null) {
            return false;
        }
        for (int i = 0; i < types.length; i++) {
            Object v = record.get(offset + i);
            int nulls = nullIndex[i];
            if (v == null) {
                if (nulls < 0) {
                    return false;
                }
                out.writeIndex(nulls);
                continue;
            }
            if (nulls >= 0) {
                out.writeIndex(1 - nulls);
            }
            switch (types[i]) {
                case STRING -> {
                    if (!(v instanceof CharSequence cs)) {
                        return false;
                    }
                    out.writeString(cs);
                }
                case LONG -> {
                    if (!(v instanceof Long l)) {
                        return false;
                    }
                    out.writeLong(l);
                }
                case INT -> {
                    if (!(v instanceof Integer n)) {
                        return false;
                    }
                    out.writeInt(n);
                }
                case BOOLEAN -> {
                    if (!(v instanceof Boolean b)) {
                        return false;
                    }
                    out.writeBoolean(b);
                }
                case DOUBLE -> {
                    if (!(v instanceof Double d)) {
                        return false;
                    }
                    out.writeDouble(d);
                }
                case FLOAT -> {
                    if (!(v instanceof Float f)) {
                        return false;
                    }
                    out.writeFloat(f);
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
        return decode(bytes, 0);
    }

    /**
     * Decodes the bytes from {@code offset} on, written with the schema.
     *
     * @throws IllegalArgumentException if they are not a valid encoding
     */
    public GenericRecord decode(byte[] bytes, int offset) {
        if (flatDecode) {
            GenericRecord fast = decodeFlat(bytes, offset);
            if (fast != null) {
                return fast;
            }
        }
        decoder = DecoderFactory.get().binaryDecoder(bytes, offset, bytes.length - offset, decoder);
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
     * Reads a record of a flat schema as {@link GenericDatumReader} does; null for bytes it would reject (a bad union
     * index, too short, trailing data): the caller then decodes with it, which reports the error.
     */
    private @Nullable GenericRecord decodeFlat(byte[] bytes, int offset) {
        decoder = DecoderFactory.get().binaryDecoder(bytes, offset, bytes.length - offset, decoder);
        try {
            GenericData.Record r = new GenericData.Record(schema);
            return readFlat(decoder, r, 0) && decoder.isEnd() ? r : null;
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    /**
     * Reads the fields of a flat schema ({@link #flat()}) from {@code in} into {@code into}'s positions from
     * {@code offset} on, as {@link GenericDatumReader} reads them; false at a union index it would reject.
     *
     * @throws IOException if the bytes end early
     */
    boolean readFlat(BinaryDecoder in, IndexedRecord into, int offset) throws IOException {
        Schema.Type[] types = flatTypes;
        if (types == null || !flatDecode) {
            return false;
        }
        for (int i = 0; i < types.length; i++) {
            int nulls = nullIndex[i];
            if (nulls >= 0) {
                int branch = in.readIndex();
                if (branch == nulls) {
                    into.put(offset + i, null);
                    continue;
                }
                if (branch != 1 - nulls) {
                    return false;
                }
            }
            Object v = switch (types[i]) {
                case STRING -> javaStrings[i] ? in.readString() : in.readString(null);
                case LONG -> in.readLong();
                case INT -> in.readInt();
                case BOOLEAN -> in.readBoolean();
                case DOUBLE -> in.readDouble();
                case FLOAT -> in.readFloat();
                default -> throw new IllegalStateException("not a primitive: " + types[i]);
            };
            into.put(offset + i, v);
        }
        return true;
    }
}
