package io.flowkafka.internal.processor;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.DecoderFactory;
import org.apache.avro.io.EncoderFactory;
import org.apache.avro.specific.SpecificDatumReader;
import org.apache.avro.specific.SpecificDatumWriter;

/** Avro binary for generated (specific) classes. */
final class SpecificCodec {
    private SpecificCodec() {
    }

    static <T> byte[] encode(SpecificDatumWriter<T> writer, T value) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(64);
        BinaryEncoder enc = EncoderFactory.get().directBinaryEncoder(out, null);
        try {
            writer.write(value, enc);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toByteArray();
    }

    static <T> T decode(SpecificDatumReader<T> reader, byte[] bytes) {
        try {
            return reader.read(null, DecoderFactory.get().binaryDecoder(bytes, null));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
