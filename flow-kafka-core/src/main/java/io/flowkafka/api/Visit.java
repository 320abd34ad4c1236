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

    /**
     * Nanoseconds: the time the scan was scheduled to reach this key,
     * {@code now − max(0, elapsed − scannedFraction · period)}; it lies in the past when the scan lags.
     */
    long getEventTimestamp();

    /** Nanoseconds; when the visit was made. */
    long getSystemTimestamp();

    /**
     * The pass this visit belongs to, counting from 0 per partition: within one pass each key
     * present for the whole pass is visited exactly once.
     */
    long getPass();
}
