package io.flowkafka.connectors.statictable;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericDatumWriter;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.EncoderFactory;

/** Encodes rows of one schema as Avro binary, reusing its encoder and buffer. Not thread-safe. */
final class RowEncoder {
    private final GenericDatumWriter<GenericRecord> writer;
    private final ByteArrayOutputStream buffer = new ByteArrayOutputStream(256);
    private BinaryEncoder encoder;

    RowEncoder(Schema schema) {
        this.writer = new GenericDatumWriter<>(schema);
    }

    /** The row's Avro binary encoding; throws an unchecked exception if the row does not fit the schema. */
    byte[] encode(GenericRecord row) {
        buffer.reset();
        encoder = EncoderFactory.get().directBinaryEncoder(buffer, encoder);
        try {
            writer.write(row, encoder);
            encoder.flush();
        } catch (IOException e) {
            throw new UncheckedIOException(e); // a ByteArrayOutputStream does not throw
        }
        return buffer.toByteArray();
    }
}
