package io.flowkafka.internal.processor;

import io.flowkafka.internal.serde.StateRowCodec;
import io.flowkafka.internal.serde.StateSchemas;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import org.apache.avro.Schema;
import org.apache.avro.io.DecoderFactory;
import org.apache.avro.specific.SpecificData;
import org.apache.avro.specific.SpecificDatumReader;
import org.apache.avro.specific.SpecificDatumWriter;

/**
 * State rows of a generated (specific) Avro class, in the layout {@link StateRowCodec} owns: the writer schema's
 * fingerprint first, so rows the generic accessor wrote, and rows of earlier schemas, read alike. Per call context.
 */
final class SpecificStateCodec<T> {
    private final Schema schema;
    private final long fingerprint;
    private final byte[] header;
    private final SpecificDatumWriter<T> writer;
    private final Map<Long, SpecificDatumReader<T>> readers = new HashMap<>();

    SpecificStateCodec(Class<T> type) {
        this.schema = SpecificData.get().getSchema(type);
        this.fingerprint = StateSchemas.register(schema);
        this.header = StateRowCodec.header(fingerprint);
        this.writer = new SpecificDatumWriter<>(schema);
    }

    byte[] encode(T value) {
        byte[] body = SpecificCodec.encode(writer, value);
        byte[] out = Arrays.copyOf(header, header.length + body.length);
        System.arraycopy(body, 0, out, header.length, body.length);
        return out;
    }

    T decode(byte[] bytes) {
        if (!StateRowCodec.hasHeader(bytes)) {
            return SpecificCodec.decode(reader(fingerprint, schema), bytes); // written before rows carried it
        }
        long fp = StateRowCodec.fingerprintOf(bytes);
        Schema written = fp == fingerprint ? schema : StateSchemas.of(fp);
        if (written == null) {
            throw new IllegalArgumentException(StateRowCodec.unknownWriter(schema, fp));
        }
        try {
            return reader(fp, written).read(null, DecoderFactory.get().binaryDecoder(bytes, StateRowCodec.HEADER,
                    bytes.length - StateRowCodec.HEADER, null));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private SpecificDatumReader<T> reader(long fp, Schema written) {
        return readers.computeIfAbsent(fp, f -> new SpecificDatumReader<>(written, schema));
    }
}
