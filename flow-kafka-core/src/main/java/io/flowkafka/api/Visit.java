package io.flowkafka.api;

import org.apache.avro.generic.GenericRecord;

/**
 * A key-visitor visit handed to {@link RowFunction#onVisit}: a background scan reached a key.
 *
 * <p>Immutable.
 */
public interface Visit {
    /** The deterministic id of the visit. */
    MessageId getMessageId();

    /** The key-visitor stream id. */
    String getStreamId();

    /** The visited key. */
    GenericRecord getKey();

    /** Nanoseconds; see the key-visitor documentation for how lag shows here. */
    long getEventTimestamp();

    /** Nanoseconds; when the visit was made. */
    long getSystemTimestamp();
}
