package io.flowkafka.connectors.statictable;

import io.flowkafka.api.MessageId;
import io.flowkafka.connectors.statictable.ArrivalOrderTableSink.Staged;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import org.apache.avro.Schema;

/**
 * The byte layout of a staged file: an Avro object container file (codec {@code null}) of
 * {@link StagedRowReader#SCHEMA} rows, its metadata holding the arrival stamp, partition, first and last id, row count
 * and weight, its blocks of at most about {@value #BLOCK_BYTES} bytes. Written and read here without Avro's
 * {@code DataFileWriter}/{@code DataFileReader}: a staged file is written once per epoch and read twice, so
 * their per-file work (schema JSON printed and parsed, a sync marker digested, a record decoded per row) cost as much
 * as the rows. The files stay readable by any Avro reader, and files an Avro writer wrote are read alike.
 *
 * <p>Rule it keeps: a file cut short is never taken for a complete one (its blocks hold fewer rows than its header
 * says, or a block ends early), and a file of another schema is refused ({@link StagedRowReader.FormatException}).
 */
final class StagedFileFormat {
    /** Avro's default sync interval: a block is closed once it holds this many bytes. */
    static final int BLOCK_BYTES = 64_000;
    private static final byte[] MAGIC = {'O', 'b', 'j', 1};
    private static final int SYNC_SIZE = 16;
    private static final String SCHEMA_KEY = "avro.schema";
    private static final String CODEC_KEY = "avro.codec";
    private static final byte[] SCHEMA_JSON = StagedRowReader.SCHEMA.toString().getBytes(StandardCharsets.UTF_8);

    private StagedFileFormat() {
    }

    /** A staged file's header: its metadata and where its blocks begin. */
    record Header(long stamp, int partition, MessageId firstId, MessageId lastId, long rows, long weight,
            byte[] sync, int blocksStart) {
    }

    /** The bytes of a staged file of {@code rows} (not empty), stamped {@code stamp}. */
    static ByteBuffer encode(long stamp, int partition, List<Staged> rows) {
        long weight = 0;
        int size = 512;
        for (Staged s : rows) {
            weight = TableSlot.addWeights(weight, s.weight());
            size += s.row().length + 48;
        }
        Out out = new Out(size + size / 8);
        out.bytes(MAGIC);
        out.varLong(8); // one map block of 8 entries, then the end of the map
        out.meta(SCHEMA_KEY, SCHEMA_JSON);
        out.meta(CODEC_KEY, "null".getBytes(StandardCharsets.US_ASCII));
        out.meta("flow.stamp", Long.toString(stamp));
        out.meta("flow.partition", Integer.toString(partition));
        out.meta("flow.first_id", rows.get(0).messageId().toString());
        out.meta("flow.last_id", rows.get(rows.size() - 1).messageId().toString());
        out.meta("flow.rows", Long.toString(rows.size()));
        out.meta("flow.weight", Long.toString(weight));
        out.varLong(0);
        byte[] sync = new byte[SYNC_SIZE];
        ThreadLocalRandom.current().nextBytes(sync);
        out.bytes(sync);
        Out block = new Out(Math.min(size, BLOCK_BYTES + 4096));
        int count = 0;
        for (Staged s : rows) {
            block.varLong(s.offset());
            block.lengthAndBytes(s.messageId().toBytes());
            block.varLong(s.systemTimestamp());
            block.varLong(s.weight());
            block.lengthAndBytes(s.row());
            count++;
            if (block.length >= BLOCK_BYTES) {
                out.block(count, block, sync);
                count = 0;
            }
        }
        if (count > 0) {
            out.block(count, block, sync);
        }
        return ByteBuffer.wrap(out.buf, 0, out.length);
    }

    /**
     * The header of a staged file's bytes.
     *
     * @throws StagedRowReader.FormatException for a file of another schema or codec
     * @throws IOException for bytes that end early or are not an Avro container file
     */
    static Header header(Path file, ByteBuffer bytes) throws IOException {
        In in = new In(bytes);
        for (byte m : MAGIC) {
            if (in.byte1() != m) {
                throw new IOException("staged file " + file + " is not an Avro container file");
            }
        }
        Map<String, byte[]> meta = new HashMap<>();
        for (long n = in.varLong(); n != 0; n = in.varLong()) {
            if (n < 0) {
                n = -n;
                in.varLong(); // the block's size in bytes
            }
            for (long i = 0; i < n; i++) {
                meta.put(new String(in.lengthAndBytes(), StandardCharsets.UTF_8), in.lengthAndBytes());
            }
        }
        byte[] sync = in.fixed(SYNC_SIZE);
        byte[] schema = meta.get(SCHEMA_KEY);
        if (schema == null) {
            throw new IOException("staged file " + file + " has no schema");
        }
        if (!Arrays.equals(schema, SCHEMA_JSON)) {
            Schema parsed = new Schema.Parser().parse(new String(schema, StandardCharsets.UTF_8));
            if (!parsed.equals(StagedRowReader.SCHEMA)) {
                throw new StagedRowReader.FormatException(file, parsed);
            }
        }
        byte[] codec = meta.get(CODEC_KEY);
        if (codec != null && !"null".equals(new String(codec, StandardCharsets.UTF_8))) {
            throw new IOException("staged file " + file + " has codec " + new String(codec, StandardCharsets.UTF_8)
                    + "; staged files are written without one");
        }
        return new Header(metaLong(file, meta, "flow.stamp"), (int) metaLong(file, meta, "flow.partition"),
                MessageId.fromHex(metaString(file, meta, "flow.first_id")),
                MessageId.fromHex(metaString(file, meta, "flow.last_id")), metaLong(file, meta, "flow.rows"),
                metaLong(file, meta, "flow.weight"), sync, in.position());
    }

    /**
     * The rows of the complete blocks of a staged file, without decoding them: a block cut short ends the count.
     */
    static long countRows(ByteBuffer bytes, Header header) {
        In in = new In(bytes);
        in.seek(header.blocksStart());
        long rows = 0;
        try {
            while (in.remaining() > 0) {
                long count = in.varLong();
                long size = in.varLong();
                if (count < 0 || size < 0 || size > in.remaining() - SYNC_SIZE) {
                    break;
                }
                in.skip((int) size);
                if (!Arrays.equals(in.fixed(SYNC_SIZE), header.sync())) {
                    break;
                }
                rows += count;
            }
        } catch (EOFException e) {
            // a block header cut short
        }
        return rows;
    }

    private static String metaString(Path file, Map<String, byte[]> meta, String key) throws IOException {
        byte[] v = meta.get(key);
        if (v == null) {
            throw new IOException("staged file " + file + " has no " + key);
        }
        return new String(v, StandardCharsets.UTF_8);
    }

    private static long metaLong(Path file, Map<String, byte[]> meta, String key) throws IOException {
        try {
            return Long.parseLong(metaString(file, meta, key));
        } catch (NumberFormatException e) {
            throw new IOException("staged file " + file + " has an invalid " + key, e);
        }
    }

    /** A growable byte array written with Avro's binary encoding. */
    private static final class Out {
        byte[] buf;
        int length;

        Out(int capacity) {
            buf = new byte[Math.max(64, capacity)];
        }

        private void ensure(int more) {
            if (length + more > buf.length) {
                buf = Arrays.copyOf(buf, Math.max(buf.length * 2, length + more));
            }
        }

        void varLong(long v) {
            ensure(10);
            long n = (v << 1) ^ (v >> 63); // zig-zag
            while ((n & ~0x7FL) != 0) {
                buf[length++] = (byte) ((n & 0x7F) | 0x80);
                n >>>= 7;
            }
            buf[length++] = (byte) n;
        }

        void bytes(byte[] b) {
            bytes(b, 0, b.length);
        }

        void bytes(byte[] b, int from, int len) {
            ensure(len);
            System.arraycopy(b, from, buf, length, len);
            length += len;
        }

        void lengthAndBytes(byte[] b) {
            varLong(b.length);
            bytes(b);
        }

        void meta(String key, byte[] value) {
            lengthAndBytes(key.getBytes(StandardCharsets.UTF_8));
            lengthAndBytes(value);
        }

        void meta(String key, String value) {
            meta(key, value.getBytes(StandardCharsets.UTF_8));
        }

        /** A data block: its row count, its size, its rows, the sync marker; empties {@code block}. */
        void block(int count, Out block, byte[] sync) {
            varLong(count);
            varLong(block.length);
            bytes(block.buf, 0, block.length);
            bytes(sync);
            block.length = 0;
        }
    }

    /** Reads Avro's binary encoding from a buffer; running past its end is an {@link EOFException}. */
    static final class In {
        private final ByteBuffer b;

        In(ByteBuffer bytes) {
            this.b = bytes.duplicate();
        }

        int position() {
            return b.position();
        }

        void seek(int position) {
            b.position(position);
        }

        int remaining() {
            return b.remaining();
        }

        byte byte1() throws EOFException {
            if (!b.hasRemaining()) {
                throw new EOFException();
            }
            return b.get();
        }

        long varLong() throws EOFException {
            long n = 0;
            for (int shift = 0; shift < 64; shift += 7) {
                byte x = byte1();
                n |= (long) (x & 0x7F) << shift;
                if ((x & 0x80) == 0) {
                    return (n >>> 1) ^ -(n & 1);
                }
            }
            throw new EOFException("a varint longer than 10 bytes");
        }

        private int length() throws EOFException {
            long n = varLong();
            if (n < 0 || n > b.remaining()) {
                throw new EOFException();
            }
            return (int) n;
        }

        byte[] lengthAndBytes() throws EOFException {
            return fixed(length());
        }

        byte[] fixed(int n) throws EOFException {
            if (n > b.remaining()) {
                throw new EOFException();
            }
            byte[] out = new byte[n];
            b.get(out);
            return out;
        }

        /** The next length-prefixed bytes as a view of the buffer (not copied). */
        ByteBuffer lengthAndSlice() throws EOFException {
            int n = length();
            ByteBuffer out = b.slice();
            out.limit(n);
            b.position(b.position() + n);
            return out;
        }

        void skip(int n) throws EOFException {
            if (n > b.remaining()) {
                throw new EOFException();
            }
            b.position(b.position() + n);
        }
    }
}
