package io.flowkafka.internal.serde;

import java.io.IOException;
import java.util.HashMap;
import java.util.Map;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericDatumReader;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.io.BinaryDecoder;
import org.apache.avro.io.DecoderFactory;
import org.jspecify.annotations.Nullable;

/**
 * The bytes of a state row: Avro's single-object encoding ({@code C3 01}, the writer schema's 8-byte little-endian
 * fingerprint, then Avro binary), so a row written before a state's schema changed is read with Avro's schema
 * resolution (a field added with its default, a field removed, an int widened). It owns that rule: a row of the
 * current schema decodes directly, one of a known earlier schema ({@link StateSchemas}) through resolution, and a row
 * without the header (written before flow-kafka kept the fingerprint, or by a tool writing plain Avro) as plain Avro
 * of the current schema.
 *
 * <p>Not thread-safe: one per task (it reuses {@link AvroCodec}'s buffers).
 */
public final class StateRowCodec {
    /** The header's length: magic, then the fingerprint. */
    public static final int HEADER = 10;
    private static final byte MAGIC0 = (byte) 0xC3;
    private static final byte MAGIC1 = 0x01;

    private final AvroCodec codec;
    private final long fingerprint;
    private final byte[] header;
    private final Map<Long, GenericDatumReader<GenericRecord>> resolvers = new HashMap<>();
    private @Nullable BinaryDecoder decoder;

    /** A codec writing rows of {@code schema}, registered in {@link StateSchemas}. */
    public StateRowCodec(Schema schema) {
        this.codec = new AvroCodec(schema);
        this.fingerprint = StateSchemas.register(schema);
        this.header = header(fingerprint);
    }

    /** The schema rows are written and read with. */
    public Schema schema() {
        return codec.schema();
    }

    /** The row of {@code record}: header, then Avro binary of the schema. */
    public byte[] encode(GenericRecord record) {
        return codec.encode(record, header);
    }

    /**
     * The record of a row, read with the current schema.
     *
     * @throws IllegalArgumentException if the bytes are not a row of the current schema, of a known earlier one, or
     *     plain Avro of the current schema
     */
    public GenericRecord decode(byte[] bytes) {
        if (!hasHeader(bytes)) {
            return codec.decode(bytes);
        }
        long fp = fingerprintOf(bytes);
        if (fp == fingerprint) {
            return codec.decode(bytes, HEADER);
        }
        Schema writer = StateSchemas.of(fp);
        if (writer == null) {
            try {
                return codec.decode(bytes); // plain Avro that happens to start like a header
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(unknownWriter(codec.schema(), fp), e);
            }
        }
        GenericDatumReader<GenericRecord> reader = resolvers.computeIfAbsent(fp,
                f -> new GenericDatumReader<>(writer, codec.schema(), GenericData.get()));
        decoder = DecoderFactory.get().binaryDecoder(bytes, HEADER, bytes.length - HEADER, decoder);
        try {
            GenericRecord r = reader.read(null, decoder);
            if (!decoder.isEnd()) {
                throw new IOException("trailing data after the record");
            }
            return r;
        } catch (IOException | RuntimeException e) {
            throw new IllegalArgumentException("a row of state schema " + codec.schema().getFullName() + " written with "
                    + "an earlier schema (fingerprint " + Long.toHexString(fp) + ") cannot be read with the current one: "
                    + e.getMessage(), e);
        }
    }

    /** Why a row of an unknown writer schema cannot be read. */
    public static String unknownWriter(Schema reader, long fp) {
        return "a row of state schema " + reader.getFullName() + " was written with schema fingerprint "
                + Long.toHexString(fp) + ", which this process does not know: a newer version of the pipeline wrote it "
                + "(run every instance on that version), or this process did not read the pipeline's <pipeline>.schemas";
    }

    /** Whether {@code bytes} start with the single-object header. */
    public static boolean hasHeader(byte[] bytes) {
        return bytes.length >= HEADER && bytes[0] == MAGIC0 && bytes[1] == MAGIC1;
    }

    /** The writer fingerprint of a row with the header. */
    public static long fingerprintOf(byte[] bytes) {
        long fp = 0;
        for (int i = 9; i >= 2; i--) {
            fp = (fp << 8) | (bytes[i] & 0xFFL);
        }
        return fp;
    }

    /** The header of a row written with the schema of fingerprint {@code fp}. */
    public static byte[] header(long fp) {
        byte[] h = new byte[HEADER];
        h[0] = MAGIC0;
        h[1] = MAGIC1;
        for (int i = 0; i < 8; i++) {
            h[2 + i] = (byte) (fp >>> (8 * i));
        }
        return h;
    }
}
