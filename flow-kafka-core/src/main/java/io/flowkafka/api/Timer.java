package io.flowkafka.api;

import org.apache.avro.generic.GenericRecord;

/**
 * A timer handed to {@link RowFunction#onTimer}: it fires once the watermark of its timer stream
 * exceeds {@link #getTriggerTimestamp()}.
 *
 * <p>Immutable.
 */
public interface Timer {
    /** The deterministic id of the timer. */
    MessageId getMessageId();

    /** The timer stream id. */
    String getStreamId();

    /** The key the timer was set for. */
    GenericRecord getKey();

    /** Nanoseconds; the timer fires when its watermark exceeds it. */
    long getTriggerTimestamp();

    /** Nanoseconds; outputs of the timer inherit it, and it holds the watermark while pending. */
    long getEventTimestamp();

    /** Nanoseconds; when the timer was added. */
    long getSystemTimestamp();
}
