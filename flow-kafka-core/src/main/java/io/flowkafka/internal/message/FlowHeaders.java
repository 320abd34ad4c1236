package io.flowkafka.internal.message;

import io.flowkafka.api.MessageId;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.jspecify.annotations.Nullable;

/**
 * The {@code flow.*} record headers that carry message metadata on internal topics.
 *
 * <ul>
 *   <li>{@code flow.id}: the message id bytes;</li>
 *   <li>{@code flow.ets}: event timestamp, 8 bytes big-endian nanoseconds;</li>
 *   <li>{@code flow.sts}: system timestamp, 8 bytes big-endian nanoseconds;</li>
 *   <li>{@code flow.parents}: parent ids, each as its length (unsigned varint) then the id;</li>
 *   <li>{@code flow.control}: present on control records (watermarks, completion).</li>
 * </ul>
 * The stream id is the topic's. Stateless and thread-safe.
 */
public final class FlowHeaders {
    public static final String MESSAGE_ID = "flow.id";
    public static final String EVENT_TIMESTAMP = "flow.ets";
    public static final String SYSTEM_TIMESTAMP = "flow.sts";
    public static final String PARENTS = "flow.parents";
    public static final String CONTROL = "flow.control";

    private FlowHeaders() {
    }

    /** Metadata read from headers. */
    public record Metadata(MessageId messageId, long eventTimestamp, long systemTimestamp, List<MessageId> parents) {
    }

    /** Writes the metadata headers. */
    public static Headers write(Headers headers, MessageId id, long eventTs, long systemTs, List<MessageId> parents) {
        headers.add(MESSAGE_ID, id.toBytes());
        headers.add(EVENT_TIMESTAMP, longBytes(eventTs));
        headers.add(SYSTEM_TIMESTAMP, longBytes(systemTs));
        if (!parents.isEmpty()) {
            headers.add(PARENTS, encodeIds(parents));
        }
        return headers;
    }

    /** New headers carrying the metadata. */
    public static Headers of(MessageId id, long eventTs, long systemTs, List<MessageId> parents) {
        return write(new RecordHeaders(), id, eventTs, systemTs, parents);
    }

    /**
     * Reads the metadata.
     *
     * @throws IllegalArgumentException naming the missing or malformed header
     */
    public static Metadata read(Headers headers) {
        byte[] id = last(headers, MESSAGE_ID);
        byte[] ets = last(headers, EVENT_TIMESTAMP);
        byte[] sts = last(headers, SYSTEM_TIMESTAMP);
        if (id == null || ets == null || sts == null || ets.length != 8 || sts.length != 8) {
            throw new IllegalArgumentException("record is not a flow message: headers " + MESSAGE_ID + ", "
                    + EVENT_TIMESTAMP + " (8 bytes) and " + SYSTEM_TIMESTAMP + " (8 bytes) are required");
        }
        byte[] parents = last(headers, PARENTS);
        return new Metadata(MessageId.of(id), ByteBuffer.wrap(ets).getLong(), ByteBuffer.wrap(sts).getLong(),
                parents == null ? List.of() : decodeIds(parents));
    }

    /** Whether the record is a control record. */
    public static boolean isControl(Headers headers) {
        return headers.lastHeader(CONTROL) != null;
    }

    static byte @Nullable [] last(Headers headers, String key) {
        Header h = headers.lastHeader(key);
        return h == null ? null : h.value();
    }

    static byte[] longBytes(long v) {
        return ByteBuffer.allocate(8).putLong(v).array();
    }

    static byte[] encodeIds(List<MessageId> ids) {
        int size = 0;
        for (MessageId m : ids) {
            size += 5 + m.size();
        }
        ByteBuffer b = ByteBuffer.allocate(size);
        for (MessageId m : ids) {
            int len = m.size();
            while ((len & ~0x7f) != 0) {
                b.put((byte) ((len & 0x7f) | 0x80));
                len >>>= 7;
            }
            b.put((byte) len).put(m.toBytes());
        }
        return java.util.Arrays.copyOf(b.array(), b.position());
    }

    static List<MessageId> decodeIds(byte[] bytes) {
        List<MessageId> ids = new ArrayList<>(2);
        ByteBuffer b = ByteBuffer.wrap(bytes);
        while (b.hasRemaining()) {
            int len = 0;
            int shift = 0;
            byte x;
            do {
                if (!b.hasRemaining() || shift > 28) {
                    throw new IllegalArgumentException("header " + PARENTS + " is malformed: truncated length");
                }
                x = b.get();
                len |= (x & 0x7f) << shift;
                shift += 7;
            } while ((x & 0x80) != 0);
            if (len <= 0 || len > b.remaining()) {
                throw new IllegalArgumentException("header " + PARENTS + " is malformed: id length " + len
                        + " with " + b.remaining() + " bytes left");
            }
            byte[] id = new byte[len];
            b.get(id);
            ids.add(MessageId.of(id));
        }
        return ids;
    }
}
