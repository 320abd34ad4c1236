package io.flowkafka.internal.message;

import io.flowkafka.api.Message;
import io.flowkafka.api.MessageId;
import java.util.List;
import org.apache.avro.generic.GenericRecord;

/** The immutable {@link Message} of the runtime (also what tools decode records into). */
public record FlowMessage(MessageId messageId, long eventTimestamp, long systemTimestamp, String streamId,
        GenericRecord key, GenericRecord payload, List<MessageId> parentIds) implements Message {

    @Override
    public MessageId getMessageId() {
        return messageId;
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
    public String getStreamId() {
        return streamId;
    }

    @Override
    public GenericRecord getKey() {
        return key;
    }

    @Override
    public GenericRecord getPayload() {
        return payload;
    }

    @Override
    public List<MessageId> getParentIds() {
        return parentIds;
    }
}
