package io.flowkafka.api;

import org.apache.avro.generic.GenericRecord;
import org.jspecify.annotations.Nullable;

/**
 * Builds an output message of one stream; obtained from {@link RuntimeContext#createMessageBuilder}.
 *
 * <p>Not thread-safe; use it within the process-function call that created it.
 */
public interface MessageBuilder {
    /**
     * Sets a payload field.
     *
     * @param field the field name
     * @param value its value, of the field's Avro type
     * @return this builder
     * @throws IllegalArgumentException if the stream's schema has no such field
     */
    MessageBuilder set(String field, @Nullable Object value);

    /**
     * Sets the whole payload.
     *
     * @param payload a record of the stream's schema
     * @return this builder
     */
    MessageBuilder setPayload(GenericRecord payload);

    /**
     * Overrides the event timestamp (nanoseconds). By default an output takes the largest event
     * timestamp of its parents.
     *
     * @param eventTimestampNanos the event timestamp in nanoseconds since the epoch
     * @return this builder
     */
    MessageBuilder setEventTimestamp(long eventTimestampNanos);

    /**
     * Builds the message.
     *
     * @return the message, to pass to {@link OutputCollector#addMessage}
     * @throws IllegalStateException if a required payload field was not set
     */
    Message build();
}
