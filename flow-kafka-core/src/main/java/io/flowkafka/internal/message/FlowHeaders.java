package io.flowkafka.internal.message;

import io.flowkafka.api.MessageId;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.jspecify.annotations.Nullable;

/**
 * The record headers that carry message metadata on internal topics.
 *
 * <ul>
 *   <li>{@code flow.meta}: one packed header, so Kafka Streams sizes and copies one header per
 *       record instead of four: {@code event timestamp (8 bytes, big-endian nanoseconds) |
 *       system timestamp (8) | id length (unsigned varint) | id | per parent: length (varint) | id};</li>
 *   <li>{@code flow.control}: present on control records (watermarks, completion).</li>
 *   <li>{@code flow.wm}: on a message, a control record's value that the reader applies right after the message,
 *       as if that control record followed it (FlowTestDriver's one-partition topics, where a control record
 *       would reach the same partition: one record routed and committed per message instead of two).</li>
 * </ul>
 * The stream id is the topic's. Stateless and thread-safe.
 */
public final class FlowHeaders {
    /** The packed metadata header. */
    public static final String META = "flow.meta";
    /** Marks control records. */
    public static final String CONTROL = "flow.control";
    /** A control record's value carried by a message, applied right after it. */
    public static final String WATERMARK_AFTER = "flow.wm";

    private FlowHeaders() {
    }

    /** Metadata read from headers. */
    public record Metadata(MessageId messageId, long eventTimestamp, long systemTimestamp, List<MessageId> parents) {
    }

    /** Adds the metadata header. */
    public static Headers write(Headers headers, MessageId id, long eventTs, long systemTs, List<MessageId> parents) {
        headers.add(META, encode(id, eventTs, systemTs, parents));
        return headers;
    }

    /** New headers carrying the metadata. */
    public static Headers of(MessageId id, long eventTs, long systemTs, List<MessageId> parents) {
        return write(new RecordHeaders(), id, eventTs, systemTs, parents);
    }

    /** The packed metadata. */
    public static byte[] encode(MessageId id, long eventTs, long systemTs, List<MessageId> parents) {
        int size = 16 + 5 + id.size();
        for (MessageId p : parents) {
            size += 5 + p.size();
        }
        byte[] out = new byte[size];
        putLong(out, 0, eventTs);
        putLong(out, 8, systemTs);
        int pos = putVarint(out, 16, id.size());
        pos = putId(out, pos, id);
        for (MessageId p : parents) {
            pos = putVarint(out, pos, p.size());
            pos = putId(out, pos, p);
        }
        return pos == size ? out : java.util.Arrays.copyOf(out, pos);
    }

    /**
     * Reads the metadata (the last {@code flow.meta} header).
     *
     * @throws IllegalArgumentException naming the missing or malformed header
     */
    public static Metadata read(Headers headers) {
        Header h = headers.lastHeader(META);
        if (h == null || h.value() == null) {
            throw new IllegalArgumentException("record is not a flow message: header " + META
                    + " (event and system timestamps, message id, parents) is required");
        }
        byte[] b = h.value();
        if (b.length < 17) {
            throw new IllegalArgumentException("header " + META + " is malformed: " + b.length
                    + " bytes, but two 8-byte timestamps and a message id are required");
        }
        long ets = getLong(b, 0);
        long sts = getLong(b, 8);
        int[] cursor = {16};
        MessageId id = readId(b, cursor);
        List<MessageId> parents = cursor[0] == b.length ? List.of() : new ArrayList<>(2);
        while (cursor[0] < b.length) {
            parents.add(readId(b, cursor));
        }
        return new Metadata(id, ets, sts, parents);
    }

    /** Whether the record is a control record. */
    public static boolean isControl(Headers headers) {
        return headers.lastHeader(CONTROL) != null;
    }

    /** The control record value a message carries ({@link #WATERMARK_AFTER}), or null. */
    public static byte @Nullable [] watermarkAfter(Headers headers) {
        Header h = headers.lastHeader(WATERMARK_AFTER);
        return h == null ? null : h.value();
    }

    private static MessageId readId(byte[] b, int[] cursor) {
        int len = 0;
        int shift = 0;
        int pos = cursor[0];
        byte x;
        do {
            if (pos >= b.length || shift > 28) {
                throw new IllegalArgumentException("header " + META + " is malformed: truncated id length");
            }
            x = b[pos++];
            len |= (x & 0x7f) << shift;
            shift += 7;
        } while ((x & 0x80) != 0);
        if (len <= 0) {
            throw new IllegalArgumentException("header " + META + " is malformed: a message id must not be empty");
        }
        if (len > b.length - pos) {
            throw new IllegalArgumentException("header " + META + " is malformed: id length " + len + " with "
                    + (b.length - pos) + " bytes left");
        }
        MessageId id = MessageId.of(java.util.Arrays.copyOfRange(b, pos, pos + len));
        cursor[0] = pos + len;
        return id;
    }

    private static int putId(byte[] out, int pos, MessageId id) {
        byte[] bytes = id.toBytes();
        System.arraycopy(bytes, 0, out, pos, bytes.length);
        return pos + bytes.length;
    }

    private static int putVarint(byte[] out, int pos, int v) {
        while ((v & ~0x7f) != 0) {
            out[pos++] = (byte) ((v & 0x7f) | 0x80);
            v >>>= 7;
        }
        out[pos++] = (byte) v;
        return pos;
    }

    private static void putLong(byte[] out, int pos, long v) {
        for (int i = 7; i >= 0; i--) {
            out[pos + i] = (byte) v;
            v >>>= 8;
        }
    }

    private static long getLong(byte[] b, int pos) {
        long v = 0;
        for (int i = 0; i < 8; i++) {
            v = (v << 8) | (b[pos + i] & 0xff);
        }
        return v;
    }
}
