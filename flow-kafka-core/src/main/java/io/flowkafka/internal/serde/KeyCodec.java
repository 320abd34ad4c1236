package io.flowkafka.internal.serde;

import io.flowkafka.internal.key.KeyExpression;
import io.flowkafka.spec.ColumnType;
import io.flowkafka.spec.GroupByColumn;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.io.BinaryDecoder;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.DecoderFactory;
import org.apache.avro.io.EncoderFactory;
import org.jspecify.annotations.Nullable;

/**
 * The group-by key of one computation: its Avro schema, how to compute it from a payload, and its
 * encoding as a Kafka record key.
 *
 * <p>Encoding: the uint64 hash (first column) as 8 bytes big-endian, then the Avro binary of the
 * remaining columns. Keys therefore sort by hash as unsigned bytes, which range partitioning and
 * state range scans rely on. A computation without {@code group_by_schema} has the empty key,
 * encoded as 8 zero bytes.
 *
 * <p>Threading: not thread-safe (codec buffers); one instance per task.
 */
public final class KeyCodec {
    private final Schema keySchema;
    private final Schema restSchema;
    private final AvroCodec restCodec;
    private final boolean empty;
    private final String computationId;
    /**
     * Whether keys are written and read column by column ({@link #encodeDirect}, {@link #decodeDirect}): when the
     * first column is the uint64 hash, which the spec validation requires of every computation with a key.
     */
    private final boolean direct;
    /** Where {@link #encode} writes: the 8-byte hash, then the Avro binary of the other columns. */
    private final ByteArrayOutputStream buffer = new ByteArrayOutputStream(64);
    private BinaryEncoder encoder;
    private BinaryDecoder decoder;

    private KeyCodec(List<GroupByColumn> columns, String name, String computationId) {
        this.computationId = computationId;
        SchemaBuilder.FieldAssembler<Schema> all = SchemaBuilder.record(name).namespace("io.flowkafka.key").fields();
        SchemaBuilder.FieldAssembler<Schema> rest = SchemaBuilder.record(name + "Rest").namespace("io.flowkafka.key").fields();
        for (int i = 0; i < columns.size(); i++) {
            GroupByColumn c = columns.get(i);
            Schema t = avroType(c.type());
            if (i == 0 && c.type() == ColumnType.UINT64) {
                all = all.name(c.name()).type(t).noDefault();
            } else {
                Schema nullable = Schema.createUnion(Schema.create(Schema.Type.NULL), t);
                all = all.name(c.name()).type(nullable).withDefault(null);
                rest = rest.name(c.name()).type(nullable).withDefault(null);
            }
        }
        this.keySchema = all.endRecord();
        this.restSchema = rest.endRecord();
        this.restCodec = new AvroCodec(restSchema);
        this.empty = columns.isEmpty();
        boolean hashFirst = !columns.isEmpty() && columns.get(0).type() == ColumnType.UINT64;
        this.direct = hashFirst && restCodec.flat();
    }

    /** The codec of a computation's key; {@code name} names the Avro record (sanitized). */
    public static KeyCodec of(List<GroupByColumn> columns, String computationId) {
        return new KeyCodec(columns, "Key_" + computationId.replaceAll("[^A-Za-z0-9_]", "_"), computationId);
    }

    /** The Avro schema of the key record (all columns). */
    public Schema schema() {
        return keySchema;
    }

    /** Whether the computation has no group-by key. */
    public boolean isEmpty() {
        return empty;
    }

    /** The empty key record of a computation without group-by. */
    public GenericRecord emptyKey() {
        return new GenericData.Record(keySchema);
    }

    /** Encodes a key record. */
    public byte[] encode(GenericRecord key) {
        if (empty) {
            return new byte[8];
        }
        if (direct && key.getSchema() == keySchema) { // another schema's columns may be in another order: by name
            byte[] b = encodeDirect(key);
            if (b != null) {
                return b;
            }
        }
        if (key.getSchema() != keySchema) {
            checkColumns(key);
        }
        GenericData.Record rest = new GenericData.Record(restSchema);
        for (Schema.Field f : restSchema.getFields()) {
            rest.put(f.pos(), key.get(f.name()));
        }
        byte[] r = restCodec.encode(rest);
        Object h = key.get(keySchema.getFields().get(0).name());
        long hash = h == null ? 0L : ((Number) h).longValue();
        return ByteBuffer.allocate(8 + r.length).putLong(hash).put(r).array();
    }

    /**
     * Refuses a record of another schema without this key's columns (a payload passed for a key, a key of another
     * computation): read by name, it would encode another key's row, or fail in the encoder.
     */
    private void checkColumns(GenericRecord key) {
        List<String> missing = new ArrayList<>();
        for (Schema.Field f : keySchema.getFields()) {
            if (key.getSchema().getField(f.name()) == null) {
                missing.add(f.name());
            }
        }
        Object h = missing.isEmpty() ? key.get(keySchema.getFields().get(0).name()) : null;
        if (!missing.isEmpty() || (h != null && !(h instanceof Number))) {
            throw new IllegalArgumentException("the record given as a key (fields " + key.getSchema().getFields().stream()
                    .map(Schema.Field::name).toList() + ") is not a key of computation '" + computationId
                    + "', whose keys have columns " + keySchema.getFields().stream().map(Schema.Field::name).toList()
                    + ": pass message.getKey() (or timer.getKey(), visit.getKey()), not a payload");
        }
    }

    /**
     * Decodes an encoded key.
     *
     * @throws IllegalArgumentException if the bytes are not a key of this computation
     */
    public GenericRecord decode(byte[] bytes) {
        if (bytes == null || bytes.length < 8) {
            throw new IllegalArgumentException("record key is " + (bytes == null ? "null" : bytes.length + " bytes")
                    + ", but a flow key starts with an 8-byte hash");
        }
        if (direct) {
            GenericRecord key = decodeDirect(bytes);
            if (key != null) {
                return key;
            }
        }
        GenericData.Record key = new GenericData.Record(keySchema);
        if (empty) {
            return key;
        }
        key.put(0, ByteBuffer.wrap(bytes, 0, 8).getLong());
        GenericRecord rest = restCodec.decode(Arrays.copyOfRange(bytes, 8, bytes.length));
        for (Schema.Field f : restSchema.getFields()) {
            key.put(f.name(), rest.get(f.pos()));
        }
        return key;
    }

    /**
     * The encoding of {@code key} written column by column ({@link AvroCodec#writeFlat}), the same bytes as the Avro
     * writer of the rest schema gives; null at a value of another class than the column's (the caller then takes the
     * writer's path).
     */
    private byte @Nullable [] encodeDirect(GenericRecord key) {
        buffer.reset();
        encoder = EncoderFactory.get().directBinaryEncoder(buffer, encoder);
        try {
            Object h = key.get(0);
            long hash = h == null ? 0L : ((Number) h).longValue();
            for (int shift = 56; shift >= 0; shift -= 8) {
                buffer.write((int) (hash >>> shift));
            }
            if (!restCodec.writeFlat(key, 1, encoder)) {
                return null;
            }
        } catch (IOException | RuntimeException e) {
            return null; // the writer's path reports it
        }
        return buffer.toByteArray();
    }

    /**
     * The key record of {@code bytes} read column by column ({@link AvroCodec#readFlat}), as the Avro reader of the
     * rest schema reads it (strings as {@code String}); null for bytes it would reject, so that the reader's path
     * reports them.
     */
    private @Nullable GenericRecord decodeDirect(byte[] bytes) {
        GenericData.Record key = new GenericData.Record(keySchema);
        long hash = 0;
        for (int i = 0; i < 8; i++) {
            hash = (hash << 8) | (bytes[i] & 0xFF);
        }
        key.put(0, hash);
        decoder = DecoderFactory.get().binaryDecoder(bytes, 8, bytes.length - 8, decoder);
        try {
            return restCodec.readFlat(decoder, key, 1) && decoder.isEnd() ? key : null;
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    /** Computes keys of this computation from payloads of one input stream. */
    public Extractor extractor(List<GroupByColumn> columns, Schema payloadSchema) {
        List<KeyExpression> exprs = new ArrayList<>(columns.size());
        for (GroupByColumn c : columns) {
            exprs.add(KeyExpression.parse(c.expression() == null ? c.name() : c.expression(), payloadSchema));
        }
        return new Extractor(exprs);
    }

    /** Computes a key record from a payload. Not thread-safe. */
    public final class Extractor {
        private final List<KeyExpression> exprs;

        private Extractor(List<KeyExpression> exprs) {
            this.exprs = exprs;
        }

        /** The key record of {@code payload}. */
        public GenericRecord key(GenericRecord payload) {
            GenericData.Record key = new GenericData.Record(keySchema);
            for (int i = 0; i < exprs.size(); i++) {
                key.put(i, exprs.get(i).evaluate(payload));
            }
            return key;
        }
    }

    private static Schema avroType(ColumnType t) {
        return switch (t) {
            case UINT64, INT64 -> Schema.create(Schema.Type.LONG);
            case DOUBLE -> Schema.create(Schema.Type.DOUBLE);
            case BOOLEAN -> Schema.create(Schema.Type.BOOLEAN);
            case STRING -> {
                Schema s = Schema.create(Schema.Type.STRING);
                GenericData.setStringType(s, GenericData.StringType.String);
                yield s;
            }
        };
    }
}
