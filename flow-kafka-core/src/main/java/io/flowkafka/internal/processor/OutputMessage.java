package io.flowkafka.internal.processor;

import io.flowkafka.api.Message;
import io.flowkafka.api.MessageId;
import java.util.List;
import org.apache.avro.generic.GenericRecord;

/**
 * A message built by user code but not yet emitted: its id and parents are assigned when the call
 * returns, from the call's parents and the output position.
 */
final class OutputMessage implements Message {
    final String streamId;
    final GenericRecord payload;
    final long eventTimestamp; // Long.MIN_VALUE: inherit from parents
    final Object owner;

    OutputMessage(String streamId, GenericRecord payload, long eventTimestamp, Object owner) {
        this.streamId = streamId;
        this.payload = payload;
        this.eventTimestamp = eventTimestamp;
        this.owner = owner;
    }

    @Override
    public MessageId getMessageId() {
        throw new IllegalStateException("an output message gets its id when the process function returns");
    }

    @Override
    public long getEventTimestamp() {
        return eventTimestamp;
    }

    @Override
    public long getSystemTimestamp() {
        throw new IllegalStateException("an output message gets its system timestamp when it is written");
    }

    @Override
    public String getStreamId() {
        return streamId;
    }

    @Override
    public GenericRecord getKey() {
        throw new IllegalStateException("an output message's key is computed by each consuming computation");
    }

    @Override
    public GenericRecord getPayload() {
        return payload;
    }

    @Override
    public List<MessageId> getParentIds() {
        return List.of();
    }
}
