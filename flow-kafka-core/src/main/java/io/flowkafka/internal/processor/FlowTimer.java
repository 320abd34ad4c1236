package io.flowkafka.internal.processor;

import io.flowkafka.api.MessageId;
import io.flowkafka.api.Timer;
import org.apache.avro.generic.GenericRecord;

/** The immutable {@link Timer} handed to user code (and shown by {@code PipelineCodecs.pendingTimers}). */
public record FlowTimer(MessageId messageId, String streamId, GenericRecord key, long triggerTimestamp, long eventTimestamp,
        long systemTimestamp) implements Timer {
    @Override
    public MessageId getMessageId() {
        return messageId;
    }

    @Override
    public String getStreamId() {
        return streamId;
    }

    @Override
    public GenericRecord getKey() {
        return key;
    }

    @Override
    public long getTriggerTimestamp() {
        return triggerTimestamp;
    }

    @Override
    public long getEventTimestamp() {
        return eventTimestamp;
    }

    @Override
    public long getSystemTimestamp() {
        return systemTimestamp;
    }
}
