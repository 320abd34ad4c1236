package io.flowkafka.connectors.statictable;

import io.flowkafka.api.MessageId;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;

/**
 * Reads a staged file of the arrival-order sink row by row ({@link StagedFileFormat}, the whole file in memory): each
 * row's staging sequence number, message id, system timestamp, weight and the row itself as Avro binary in the table's schema
 * (never decoded). Not thread-safe.
 */
final class StagedRowReader implements AutoCloseable {
    /** A staged row: the row is the Avro binary of the input stream's (= the table's) schema. */
    static final Schema SCHEMA = SchemaBuilder.record("StagedRow").namespace("io.flowkafka.statictable.staging")
            .fields().requiredLong("offset").requiredBytes("message_id").requiredLong("system_timestamp")
            .requiredLong("weight").requiredBytes("row").endRecord();

    private final Path file;
    private final StagedFileFormat.Header header;
    private final StagedFileFormat.In in;
    private long leftInBlock;
    private long offset;
    private ByteBuffer messageId = ByteBuffer.allocate(0);
    private long systemTimestamp;
    private long weight;
    private ByteBuffer row = ByteBuffer.allocate(0);

    StagedRowReader(Path file) throws IOException {
        this.file = file;
        ByteBuffer bytes = ByteBuffer.wrap(Files.readAllBytes(file));
        this.header = StagedFileFormat.header(file, bytes);
        this.in = new StagedFileFormat.In(bytes);
        in.seek(header.blocksStart());
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
        try {
            if (leftInBlock == 0) {
                if (!nextBlock()) {
                    return false;
                }
            }
            offset = in.varLong();
            messageId = in.lengthAndSlice();
            systemTimestamp = in.varLong();
            weight = in.varLong();
            row = in.lengthAndSlice();
            if (--leftInBlock == 0 && !Arrays.equals(in.fixed(header.sync().length), header.sync())) {
                throw new IOException("staged file " + file + " has a block without its sync marker");
            }
            return true;
        } catch (EOFException e) {
            throw new IOException("staged file " + file + " ends within a block", e);
        }
    }

    private boolean nextBlock() throws EOFException {
        while (leftInBlock == 0) {
            if (in.remaining() == 0) {
                return false;
            }
            leftInBlock = in.varLong();
            long size = in.varLong();
            if (leftInBlock == 0) { // an empty block: its bytes and sync marker
                in.skip((int) size);
                in.fixed(header.sync().length);
            }
        }
        return true;
    }

    long offset() {
        return offset;
    }

    MessageId messageId() {
        byte[] b = new byte[messageId.remaining()];
        messageId.duplicate().get(b);
        return MessageId.of(b);
    }

    long systemTimestamp() {
        return systemTimestamp;
    }

    long weight() {
        return weight;
    }

    /** The row's Avro binary; valid until the next {@link #next}. */
    ByteBuffer row() {
        return row.duplicate();
    }

    /** A copy of the row's Avro binary. */
    byte[] rowBytes() {
        ByteBuffer b = row();
        byte[] out = new byte[b.remaining()];
        b.get(out);
        return out;
    }

    @Override
    public void close() {
        // the file was read whole at construction
    }
}
