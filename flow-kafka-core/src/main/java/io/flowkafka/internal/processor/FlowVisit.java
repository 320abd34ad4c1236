package io.flowkafka.internal.processor;

import io.flowkafka.api.MessageId;
import io.flowkafka.api.Visit;
import org.apache.avro.generic.GenericRecord;

/** The immutable {@link Visit} handed to user code. */
record FlowVisit(MessageId messageId, String streamId, GenericRecord key, long eventTimestamp, long systemTimestamp,
        long pass) implements Visit {
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
    public long getEventTimestamp() {
        return eventTimestamp;
    }

    @Override
    public long getSystemTimestamp() {
        return systemTimestamp;
    }

    @Override
    public long getPass() {
        return pass;
    }
}
