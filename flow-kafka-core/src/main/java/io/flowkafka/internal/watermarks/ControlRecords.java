package io.flowkafka.internal.watermarks;

import io.flowkafka.avro.ControlRecord;
import io.flowkafka.avro.FlowAvroClasses;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import org.apache.avro.io.BinaryDecoder;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.DecoderFactory;
import org.apache.avro.io.EncoderFactory;
import org.apache.avro.specific.SpecificDatumReader;
import org.apache.avro.specific.SpecificDatumWriter;

/**
 * Avro encoding of {@link ControlRecord}s: a producer's watermarks and completion, sent in-band on
 * internal topics with the {@code flow.control} header. Not thread-safe (reuses encoders).
 */
public final class ControlRecords {
    static {
        FlowAvroClasses.trust();
    }

    private final SpecificDatumWriter<ControlRecord> writer = new SpecificDatumWriter<>(ControlRecord.class);
    private final SpecificDatumReader<ControlRecord> reader = new SpecificDatumReader<>(ControlRecord.class);
    private final ByteArrayOutputStream buffer = new ByteArrayOutputStream(64);
    private BinaryEncoder encoder;
    private BinaryDecoder decoder;

    /** Encodes a control record. */
    public byte[] encode(ControlRecord record) {
        buffer.reset();
        encoder = EncoderFactory.get().directBinaryEncoder(buffer, encoder);
        try {
            writer.write(record, encoder);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return buffer.toByteArray();
    }

    /**
     * Decodes a control record.
     *
     * @throws IllegalArgumentException if the bytes are not a control record
     */
    public ControlRecord decode(byte[] bytes) {
        decoder = DecoderFactory.get().binaryDecoder(bytes, decoder);
        try {
            return reader.read(null, decoder);
        } catch (IOException | RuntimeException e) {
            throw new IllegalArgumentException("record with header flow.control is not a control record: " + e, e);
        }
    }
}
