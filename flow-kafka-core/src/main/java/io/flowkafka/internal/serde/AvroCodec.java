package io.flowkafka.internal.serde;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericDatumReader;
import org.apache.avro.generic.GenericDatumWriter;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.io.BinaryDecoder;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.DecoderFactory;
import org.apache.avro.io.EncoderFactory;

/**
 * Avro binary encoding of records of one schema, reusing its encoder, decoder and buffer.
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

    public AvroCodec(Schema schema) {
        this.schema = schema;
        this.writer = new GenericDatumWriter<>(schema, GenericData.get());
        this.reader = new GenericDatumReader<>(schema, schema, GenericData.get());
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
     * Decodes bytes written with the schema.
     *
     * @throws IllegalArgumentException if the bytes are not a valid encoding (truncated, bad union
     *     index, trailing bytes)
     */
    public GenericRecord decode(byte[] bytes) {
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
}
