package io.flowkafka.connectors.statictable;

import java.io.EOFException;
import java.io.IOException;
import org.apache.avro.file.DataFileConstants;
import org.apache.avro.file.SeekableInput;

/**
 * Walks the blocks of an Avro data file by their headers (row count, byte size), without reading or inflating their
 * data: a reader of a row range passes over whole blocks at the cost of a few bytes each.
 *
 * <p>Stateless and thread-safe; the input is the caller's.
 */
final class AvroBlocks {
    /** Two varints at most: 10 bytes each. */
    private static final int HEADER_MAX = 20;

    /**
     * Where a walk ended.
     *
     * @param position the start of the block holding the target row (or the end of the file)
     * @param skipped the rows of the blocks passed over
     */
    record Walk(long position, long skipped) {
    }

    private AvroBlocks() {
    }

    /**
     * Passes over the whole blocks before row {@code rows}, counted from the block starting at {@code position}.
     *
     * @param in the file; its position is left anywhere
     * @param position the start of a block (a sync point)
     * @param rows the rows to pass over, {@code >= 0}
     * @return the start of the block holding that row, and the rows passed over
     * @throws IOException if the file cannot be read or a header is malformed
     */
    static Walk skip(SeekableInput in, long position, long rows) throws IOException {
        long length = in.length();
        long skipped = 0;
        byte[] header = new byte[HEADER_MAX];
        while (skipped < rows && position < length) {
            in.seek(position);
            int n = read(in, header);
            long[] count = varlong(header, 0, n);
            long[] size = varlong(header, (int) count[1], n);
            if (count[0] <= 0 || size[0] < 0) {
                throw new IOException("malformed Avro block header at byte " + position + ": " + count[0] + " rows, "
                        + size[0] + " bytes");
            }
            if (skipped + count[0] > rows) {
                break;
            }
            skipped += count[0];
            position += size[1] + size[0] + DataFileConstants.SYNC_SIZE;
        }
        return new Walk(position, skipped);
    }

    private static int read(SeekableInput in, byte[] buf) throws IOException {
        int n = 0;
        while (n < buf.length) {
            int r = in.read(buf, n, buf.length - n);
            if (r < 0) {
                break;
            }
            n += r;
        }
        return n;
    }

    /** A zig-zag varint long at {@code from}: its value and the offset after it. */
    private static long[] varlong(byte[] buf, int from, int end) throws IOException {
        long raw = 0;
        int i = from;
        for (int shift = 0; ; shift += 7) {
            if (i >= end || shift > 63) {
                throw new EOFException("truncated Avro block header");
            }
            int b = buf[i++] & 0xff;
            raw |= (long) (b & 0x7f) << shift;
            if ((b & 0x80) == 0) {
                break;
            }
        }
        return new long[] {(raw >>> 1) ^ -(raw & 1), i};
    }
}
