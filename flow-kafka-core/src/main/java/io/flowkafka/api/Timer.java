package io.flowkafka.api;

import org.apache.avro.generic.GenericRecord;

/**
 * A timer handed to {@link RowFunction#onTimer}: it fires once the watermark of its timer stream
 * exceeds {@link #getTriggerTimestamp()}.
 *
 * <p>Immutable.
 */
public interface Timer {
    /** {@return the deterministic id of the timer} */
    MessageId getMessageId();

    /** {@return the timer stream id} */
    String getStreamId();

    /** {@return the key the timer was set for} */
    GenericRecord getKey();

    /** {@return the trigger timestamp in nanoseconds; the timer fires when its watermark exceeds it} */
    long getTriggerTimestamp();

    /**
     * {@return the event timestamp in nanoseconds; the timer's outputs inherit it, and it holds the
     * watermark while pending}
     */
    long getEventTimestamp();

    /** {@return the system timestamp in nanoseconds: when the timer was added} */
    long getSystemTimestamp();
}
