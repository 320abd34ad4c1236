package io.flowkafka.spi;

import io.flowkafka.api.MessageId;
import java.util.Objects;
import org.apache.kafka.common.header.Headers;

/**
 * One message of an async sink as its computation wrote it to the outbox topic, inside the epoch
 * transaction: the Kafka record the sink should produce (key, value and headers already encoded
 * per the sink's {@code format}, {@code key_column}, {@code payload_column} and
 * {@code message_id_header}), with its message id and outbox position.
 *
 * @param offset the record's offset in its outbox partition
 * @param messageId the message id (a stable dedup key: the same after any replay)
 * @param key the record key, or null
 * @param value the record value, or null
 * @param headers the record headers for the target (flow-kafka's own outbox headers removed)
 * @param timestampMs the record timestamp the sink's {@code timestamp} parameter chose
 * @param systemTimestamp the message's system timestamp in nanoseconds, or -1 when unknown (what a sink keeping a
 *     per-partition frontier {@code (system_timestamp, message_id)} records, whatever {@code timestamp} chose)
 */
public record OutboxRecord(long offset, MessageId messageId, byte @org.jspecify.annotations.Nullable [] key,
        byte @org.jspecify.annotations.Nullable [] value, Headers headers, long timestampMs, long systemTimestamp) {
    /**
     * Checks that the message id and the headers are set.
     *
     * @param offset the record's offset in its outbox partition
     * @param messageId the message id (a stable dedup key: the same after any replay)
     * @param key the record key, or null
     * @param value the record value, or null
     * @param headers the record headers for the target (flow-kafka's own outbox headers removed)
     * @param timestampMs the record timestamp the sink's {@code timestamp} parameter chose
     * @param systemTimestamp the message's system timestamp in nanoseconds, or -1 when unknown
     * @throws NullPointerException if {@code messageId} or {@code headers} is null
     */
    public OutboxRecord {
        Objects.requireNonNull(messageId, "messageId");
        Objects.requireNonNull(headers, "headers");
    }

    /**
     * A record whose system timestamp is unknown (-1).
     *
     * @param offset the record's offset in its outbox partition
     * @param messageId the message id (a stable dedup key: the same after any replay)
     * @param key the record key, or null
     * @param value the record value, or null
     * @param headers the record headers for the target (flow-kafka's own outbox headers removed)
     * @param timestampMs the record timestamp the sink's {@code timestamp} parameter chose
     * @throws NullPointerException if {@code messageId} or {@code headers} is null
     */
    public OutboxRecord(long offset, MessageId messageId, byte @org.jspecify.annotations.Nullable [] key,
            byte @org.jspecify.annotations.Nullable [] value, Headers headers, long timestampMs) {
        this(offset, messageId, key, value, headers, timestampMs, -1);
    }
}
