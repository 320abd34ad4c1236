package io.flowkafka.internal.timers;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The timer store's value: the Avro binary encoding of {@code io.flowkafka.avro.TimerValue}
 * (fields in schema order: {@code message_id}, {@code key}, {@code stream_id},
 * {@code trigger_timestamp}, {@code event_timestamp}, {@code system_timestamp},
 * {@code parent_ids}), written and read by hand so that adding and firing a timer allocates no
 * Avro record and needs no reflection. A test checks that {@code SpecificDatumReader} and
 * {@code SpecificDatumWriter} of {@code TimerValue} agree byte for byte, so tools can decode the
 * changelog with the schema.
 *
 * <p>Stateless and thread-safe.
 */
final class TimerValueCodec {
    private TimerValueCodec() {
    }

    /** An upper bound of the size of {@link #encode}'s result, computed without encoding. */
    static int sizeBound(PendingTimer t, byte[] streamId) {
        int size = bytesSize(t.messageId().length) + bytesSize(t.encodedKey().length) + bytesSize(streamId.length)
                + 3 * 10 + 2 * 10;
        for (byte[] p : t.parentIds()) {
            size += bytesSize(p.length);
        }
        return size;
    }

    /** Encodes a timer; {@code streamId} is the UTF-8 of its timer stream id. */
    static byte[] encode(PendingTimer t, byte[] streamId) {
        Writer w = new Writer(new byte[sizeBound(t, streamId)]);
        w.bytes(t.messageId());
        w.bytes(t.encodedKey());
        w.bytes(streamId);
        w.varLong(t.triggerTs());
        w.varLong(t.eventTs());
        w.varLong(t.systemTs());
        if (!t.parentIds().isEmpty()) {
            w.varLong(t.parentIds().size());
            for (byte[] p : t.parentIds()) {
                w.bytes(p);
            }
        }
        w.varLong(0);
        return Arrays.copyOf(w.buf, w.pos);
    }

    /**
     * Decodes a timer of stream {@code streamIndex}.
     *
     * @throws IllegalStateException if the bytes are not a {@code TimerValue}
     */
    static PendingTimer decode(int streamIndex, byte[] value) {
        try {
            Reader r = new Reader(value);
            byte[] messageId = r.bytes();
            byte[] key = r.bytes();
            r.skipBytes();
            long trigger = r.varLong();
            long event = r.varLong();
            long system = r.varLong();
            List<byte[]> parents = List.of();
            for (long n = r.varLong(); n != 0; n = r.varLong()) {
                if (n < 0) {
                    n = -n;
                    r.varLong(); // block size in bytes
                }
                if (parents.isEmpty()) {
                    parents = new ArrayList<>((int) Math.min(n, 1024));
                }
                for (long i = 0; i < n; i++) {
                    parents.add(r.bytes());
                }
            }
            return new PendingTimer(streamIndex, trigger, event, system, key, messageId, parents);
        } catch (RuntimeException e) {
            throw new IllegalStateException("a timer store value of " + value.length
                    + " bytes is not an Avro TimerValue: " + e.getMessage(), e);
        }
    }

    /** The timer stream id of an encoded timer. */
    static String streamId(byte[] value) {
        Reader r = new Reader(value);
        r.skipBytes();
        r.skipBytes();
        return new String(r.bytes(), StandardCharsets.UTF_8);
    }

    /** The event timestamp of an encoded timer, without decoding the rest. */
    static long eventTs(byte[] value) {
        Reader r = new Reader(value);
        r.skipBytes();
        r.skipBytes();
        r.skipBytes();
        r.varLong();
        return r.varLong();
    }

    private static int bytesSize(int length) {
        return 5 + length;
    }

    private static final class Writer {
        final byte[] buf;
        int pos;

        Writer(byte[] buf) {
            this.buf = buf;
        }

        void bytes(byte[] b) {
            varLong(b.length);
            System.arraycopy(b, 0, buf, pos, b.length);
            pos += b.length;
        }

        void varLong(long v) {
            long n = (v << 1) ^ (v >> 63);
            while ((n & ~0x7FL) != 0) {
                buf[pos++] = (byte) ((n & 0x7F) | 0x80);
                n >>>= 7;
            }
            buf[pos++] = (byte) n;
        }
    }

    private static final class Reader {
        final byte[] buf;
        int pos;

        Reader(byte[] buf) {
            this.buf = buf;
        }

        long varLong() {
            long n = 0;
            int shift = 0;
            while (true) {
                if (shift > 63) {
                    throw new IllegalArgumentException("malformed varint at byte " + pos);
                }
                byte b = buf[pos++];
                n |= (long) (b & 0x7F) << shift;
                if ((b & 0x80) == 0) {
                    break;
                }
                shift += 7;
            }
            return (n >>> 1) ^ -(n & 1);
        }

        byte[] bytes() {
            int n = length();
            byte[] out = Arrays.copyOfRange(buf, pos, pos + n);
            pos += n;
            return out;
        }

        void skipBytes() {
            int n = length(); // not "pos += length()": that reads pos before length() advances it
            pos += n;
        }

        private int length() {
            long n = varLong();
            if (n < 0 || n > buf.length - pos) {
                throw new IllegalArgumentException("length " + n + " at byte " + pos + " overruns the value");
            }
            return (int) n;
        }
    }
}
