package io.flowkafka.internal.processor;

import io.flowkafka.api.Message;
import io.flowkafka.api.MessageBuilder;
import java.util.Objects;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.jspecify.annotations.Nullable;

/** Builds an {@link OutputMessage} of one stream; validates fields against the stream schema. */
final class OutputMessageBuilder implements MessageBuilder {
    private final String streamId;
    private final Schema schema;
    private final Object owner;
    private final MillisecondTimestamps millis;
    private GenericRecord payload;
    private long eventTimestamp = Long.MIN_VALUE;

    OutputMessageBuilder(String streamId, Schema schema, Object owner, MillisecondTimestamps millis) {
        this.millis = millis;
        this.streamId = streamId;
        this.schema = schema;
        this.owner = owner;
        this.payload = new GenericData.Record(schema);
    }

    @Override
    public MessageBuilder set(String field, @Nullable Object value) {
        Schema.Field f = schema.getField(field);
        if (f == null) {
            throw new IllegalArgumentException("stream '" + streamId + "' has no field '" + field + "'; its fields are "
                    + schema.getFields().stream().map(Schema.Field::name).toList());
        }
        payload.put(f.pos(), value);
        return this;
    }

    @Override
    public MessageBuilder setPayload(GenericRecord payload) {
        Objects.requireNonNull(payload, "payload");
        if (!payload.getSchema().equals(schema)) {
            throw new IllegalArgumentException("payload of schema " + payload.getSchema().getFullName()
                    + " is not a record of stream '" + streamId + "' (schema " + schema.getFullName() + ")");
        }
        this.payload = payload;
        return this;
    }

    @Override
    public MessageBuilder setEventTimestamp(long eventTimestampNanos) {
        millis.check("setEventTimestamp", eventTimestampNanos);
        this.eventTimestamp = eventTimestampNanos;
        return this;
    }

    @Override
    public Message build() {
        for (Schema.Field f : schema.getFields()) {
            if (payload.get(f.pos()) == null) {
                if (f.hasDefaultValue()) {
                    payload.put(f.pos(), GenericData.get().deepCopy(f.schema(), GenericData.get().getDefaultValue(f)));
                } else if (!isNullable(f.schema())) {
                    throw new IllegalStateException("stream '" + streamId + "': field '" + f.name()
                            + "' was not set and has no default");
                }
            }
        }
        return new OutputMessage(streamId, payload, eventTimestamp, owner);
    }

    private static boolean isNullable(Schema s) {
        return s.getType() == Schema.Type.NULL
                || (s.getType() == Schema.Type.UNION && s.getTypes().stream().anyMatch(t -> t.getType() == Schema.Type.NULL));
    }
}
