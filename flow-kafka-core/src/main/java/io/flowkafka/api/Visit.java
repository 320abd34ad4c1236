package io.flowkafka.api;

import org.apache.avro.generic.GenericRecord;

/**
 * A key-visitor visit handed to {@link RowFunction#onVisit}: a background scan reached a key.
 *
 * <p>Immutable.
 */
public interface Visit {
    /** {@return the deterministic id of the visit} */
    MessageId getMessageId();

    /** {@return the key-visitor stream id} */
    String getStreamId();

    /** {@return the visited key} */
    GenericRecord getKey();

    /**
     * Nanoseconds: the time the scan was scheduled to reach this key,
     * {@code now − max(0, elapsed − scannedFraction · period)}; it lies in the past when the scan lags.
     *
     * @return the event timestamp in nanoseconds
     */
    long getEventTimestamp();

    /** {@return the system timestamp in nanoseconds: when the visit was made} */
    long getSystemTimestamp();

    /**
     * The pass this visit belongs to, counting from 0 per partition: within one pass each key
     * present for the whole pass is visited exactly once.
     *
     * @return the pass number
     */
    long getPass();
}
