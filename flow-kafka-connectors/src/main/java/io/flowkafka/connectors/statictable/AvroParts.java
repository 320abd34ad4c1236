package io.flowkafka.connectors.statictable;

import java.io.IOException;
import java.nio.ByteBuffer;
import org.apache.avro.file.DataFileReader;
import org.apache.avro.file.SeekableInput;
import org.apache.avro.generic.GenericDatumReader;
import org.apache.avro.generic.GenericRecord;

/** Counts an Avro object-container file by its block headers, without decoding a row. */
final class AvroParts {
    record Counts(long rows, long encodedBytes) {
    }

    private AvroParts() {
    }

    /** Rows and uncompressed encoded bytes of a part, read block by block. */
    static Counts count(SeekableInput in) throws IOException {
        long rows = 0;
        long bytes = 0;
        try (DataFileReader<GenericRecord> reader = new DataFileReader<>(in, new GenericDatumReader<>())) {
            while (reader.hasNext()) {
                rows += reader.getBlockCount();
                ByteBuffer block = reader.nextBlock();
                bytes += block.remaining();
            }
        }
        return new Counts(rows, bytes);
    }
}
