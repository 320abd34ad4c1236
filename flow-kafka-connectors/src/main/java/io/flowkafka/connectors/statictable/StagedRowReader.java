package io.flowkafka.connectors.statictable;

import io.flowkafka.api.MessageId;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.Arrays;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.avro.file.DataFileReader;
import org.apache.avro.generic.GenericDatumReader;
import org.apache.avro.generic.GenericRecord;

/**
 * Reads a staged file of the arrival-order sink row by row, reusing one record: each row's outbox offset, message id,
 * system timestamp, weight and the row itself as Avro binary in the table's schema (never decoded). Not thread-safe.
 */
final class StagedRowReader implements AutoCloseable {
    /** A staged row: the row is the Avro binary of the input stream's (= the table's) schema. */
    static final Schema SCHEMA = SchemaBuilder.record("StagedRow").namespace("io.flowkafka.statictable.staging")
            .fields().requiredLong("offset").requiredBytes("message_id").requiredLong("system_timestamp")
            .requiredLong("weight").requiredBytes("row").endRecord();
    static final int OFFSET = 0;
    static final int MESSAGE_ID = 1;
    static final int SYSTEM_TIMESTAMP = 2;
    static final int WEIGHT = 3;
    static final int ROW = 4;

    private final DataFileReader<GenericRecord> reader;
    private GenericRecord current;

    StagedRowReader(Path file) throws IOException {
        this.reader = new DataFileReader<>(file.toFile(), new GenericDatumReader<>(SCHEMA));
        if (!reader.getSchema().equals(SCHEMA)) {
            reader.close();
            throw new FormatException(file, reader.getSchema());
        }
    }

    /** A staged file of another layout: refused, never taken for a file cut short. */
    static final class FormatException extends IOException {
        private static final long serialVersionUID = 1L;

        FormatException(Path file, Schema schema) {
            super("staged file " + file + " is not in the staging format of this flow-kafka version (written by an "
                    + "earlier build?): " + schema);
        }
    }

    /** Moves to the next row; false at the end. */
    boolean next() throws IOException {
        if (!reader.hasNext()) {
            return false;
        }
        current = reader.next(current);
        return true;
    }

    long offset() {
        return (Long) current.get(OFFSET);
    }

    MessageId messageId() {
        ByteBuffer b = (ByteBuffer) current.get(MESSAGE_ID);
        return MessageId.of(Arrays.copyOfRange(b.array(), b.arrayOffset() + b.position(),
                b.arrayOffset() + b.limit()));
    }

    long systemTimestamp() {
        return (Long) current.get(SYSTEM_TIMESTAMP);
    }

    long weight() {
        return (Long) current.get(WEIGHT);
    }

    /** The row's Avro binary; valid until the next {@link #next}. */
    ByteBuffer row() {
        return ((ByteBuffer) current.get(ROW)).duplicate();
    }

    /** A copy of the row's Avro binary. */
    byte[] rowBytes() {
        ByteBuffer b = row();
        byte[] out = new byte[b.remaining()];
        b.get(out);
        return out;
    }

    @Override
    public void close() throws IOException {
        reader.close();
    }
}
