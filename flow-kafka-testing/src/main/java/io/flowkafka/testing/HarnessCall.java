package io.flowkafka.testing;

import io.flowkafka.api.Message;
import io.flowkafka.api.MessageBuilder;
import io.flowkafka.api.MessageId;
import io.flowkafka.api.OutputCollector;
import io.flowkafka.api.RuntimeContext;
import io.flowkafka.api.StateAccessor;
import io.flowkafka.api.Visit;
import io.flowkafka.spec.ComputationSpec;
import io.flowkafka.spec.StateSpec;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericDatumReader;
import org.apache.avro.generic.GenericDatumWriter;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.io.BinaryDecoder;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.DatumReader;
import org.apache.avro.io.DatumWriter;
import org.apache.avro.io.DecoderFactory;
import org.apache.avro.io.EncoderFactory;
import org.apache.avro.specific.SpecificData;
import org.apache.avro.specific.SpecificDatumReader;
import org.apache.avro.specific.SpecificDatumWriter;
import org.apache.avro.specific.SpecificRecord;
import org.apache.kafka.common.serialization.Serde;
import org.jspecify.annotations.Nullable;

/**
 * The {@link RuntimeContext} and {@link OutputCollector} of a {@link ComputationHarness}, reset for
 * every call: the harness's counterpart of the runtime's call context, with the same checks and
 * the same error messages.
 *
 * <p>Collects the call's outputs, timers and state writes in buffers; nothing is applied here. The
 * harness applies the buffers when the call returned normally and drops them when it threw.
 *
 * <p>Not thread-safe; owned by its harness.
 */
final class HarnessCall implements RuntimeContext, OutputCollector {
    /** An output with its explicit parents (null: the call's input). */
    record Output(Built message, @Nullable List<MessageId> parents) {
    }

    /** A buffered state write: the new bytes (null: cleared) and how to show them in a result. */
    record Write(byte @Nullable [] bytes, Function<byte[], Object> decode) {
    }

    /** A state row: state name and canonical key. */
    record Ref(String state, GenericRecord key) {
    }

    /** A timer added by the call, before it gets an id. */
    record AddedTimer(int streamIndex, long trigger, long event) {
    }

    /** What the harness provides: committed state, watermarks, clock. */
    interface Host {
        byte @Nullable [] committedState(Ref ref);

        GenericRecord canonicalKey(GenericRecord key, String what);

        long inputWatermark(String stream);

        long minInputWatermark();

        long nowNanos();
    }

    private final ComputationSpec spec;
    private final Map<String, Schema> outputSchemas;
    private final Host host;
    final List<Output> outputs = new ArrayList<>();
    final List<AddedTimer> timers = new ArrayList<>();
    final Map<Ref, Write> writes = new LinkedHashMap<>();
    private @Nullable GenericRecord key;
    private boolean active;

    HarnessCall(ComputationSpec spec, Map<String, Schema> outputSchemas, Host host) {
        this.spec = spec;
        this.outputSchemas = outputSchemas;
        this.host = host;
    }

    void begin(GenericRecord canonicalKey) {
        this.key = canonicalKey;
        this.active = true;
        outputs.clear();
        timers.clear();
        writes.clear();
    }

    void end() {
        active = false;
        key = null;
        outputs.clear();
        timers.clear();
        writes.clear();
    }

    private void checkActive() {
        if (!active) {
            throw new IllegalStateException("the runtime context of computation '" + spec.id()
                    + "' is valid only during a process-function call");
        }
    }

    // ---- RuntimeContext

    @Override
    public MessageBuilder createMessageBuilder(String streamId) {
        Schema schema = outputSchemas.get(streamId);
        if (schema == null) {
            throw new IllegalArgumentException("stream '" + streamId + "' is not an output of computation '" + spec.id()
                    + "'; its outputs are " + spec.outputStreamIds());
        }
        return new Builder(streamId, schema, this);
    }

    @Override
    public StateAccessor<GenericRecord> getState(String name) {
        checkActive();
        return avroState(name, Objects.requireNonNull(key));
    }

    @Override
    public StateAccessor<GenericRecord> getState(String name, GenericRecord otherKey) {
        checkActive();
        return avroState(name, host.canonicalKey(otherKey, "getState(\"" + name + "\", key)"));
    }

    @Override
    public <T extends SpecificRecord> StateAccessor<T> getState(String name, Class<T> type) {
        checkActive();
        declared(spec, name);
        Schema schema = SpecificData.get().getSchema(type);
        Codec<T> codec = new Codec<>(new SpecificDatumWriter<>(schema), new SpecificDatumReader<>(schema), schema);
        return new Accessor<>(new Ref(name, Objects.requireNonNull(key)), codec::encode, codec::decode);
    }

    @Override
    public <T> StateAccessor<T> getState(String name, Serde<T> serde) {
        checkActive();
        declared(spec, name);
        String topic = spec.id() + ".state";
        return new Accessor<>(new Ref(name, Objects.requireNonNull(key)),
                v -> serde.serializer().serialize(topic, v), b -> serde.deserializer().deserialize(topic, b));
    }

    static StateSpec declared(ComputationSpec spec, String name) {
        StateSpec s = spec.states().get(name);
        if (s == null) {
            throw new IllegalArgumentException("computation '" + spec.id() + "' declares no state '" + name
                    + "'; declared states are " + spec.states().keySet() + " (add it under 'states' in the spec)");
        }
        return s;
    }

    static Schema avroSchema(ComputationSpec spec, String name, String serdeHint) {
        StateSpec s = declared(spec, name);
        if (s.schema() == null) {
            throw new IllegalArgumentException("state '" + name + "' of computation '" + spec.id()
                    + "' has no Avro schema: read it with " + serdeHint);
        }
        return s.schema();
    }

    private StateAccessor<GenericRecord> avroState(String name, GenericRecord stateKey) {
        Codec<GenericRecord> codec = Codec.generic(avroSchema(spec, name, "getState(name, serde)"));
        return new Accessor<>(new Ref(name, stateKey), codec::encode, codec::decode);
    }

    @Override
    public GenericRecord getKey() {
        checkActive();
        return Objects.requireNonNull(key);
    }

    @Override
    public String getComputationId() {
        return spec.id();
    }

    @Override
    public int getPartition() {
        return 0;
    }

    @Override
    public int getPartitionCount() {
        return 1;
    }

    @Override
    public long getInputWatermark(String streamId) {
        if (!isInput(spec, streamId)) {
            throw new IllegalArgumentException("stream '" + streamId + "' is not an input of computation '" + spec.id() + "'");
        }
        return host.inputWatermark(streamId);
    }

    static boolean isInput(ComputationSpec spec, String streamId) {
        return spec.inputStreamIds().contains(streamId)
                || spec.sourceStreams().stream().anyMatch(s -> s.streamId().equals(streamId));
    }

    @Override
    public long getMinInputWatermark() {
        return host.minInputWatermark();
    }

    @Override
    public Map<String, Object> getParameters() {
        return spec.parameters();
    }

    @Override
    public long currentTimeNanos() {
        return host.nowNanos();
    }

    // ---- OutputCollector

    @Override
    public void addMessage(Message message) {
        addMessage(message, null);
    }

    void addMessage(Message message, @Nullable List<MessageId> parents) {
        checkActive();
        if (!(message instanceof Built b) || b.owner != this) {
            throw new IllegalArgumentException("addMessage takes messages built with this call's "
                    + "RuntimeContext.createMessageBuilder; to forward an input, build a new message from its payload");
        }
        outputs.add(new Output(b, parents));
    }

    @Override
    public void addTimer(long triggerTimestamp, long eventTimestamp) {
        checkActive();
        if (spec.timers().isEmpty()) {
            throw noTimers();
        }
        timers.add(new AddedTimer(0, triggerTimestamp, eventTimestamp));
    }

    @Override
    public void addTimer(String timerStreamId, long triggerTimestamp, long eventTimestamp) {
        checkActive();
        for (int i = 0; i < spec.timers().size(); i++) {
            if (spec.timers().get(i).id().equals(timerStreamId)) {
                timers.add(new AddedTimer(i, triggerTimestamp, eventTimestamp));
                return;
            }
        }
        if (spec.timers().isEmpty()) {
            throw noTimers();
        }
        throw new IllegalArgumentException("computation '" + spec.id() + "' has no timer stream '" + timerStreamId
                + "'; its timer streams are " + spec.timers().stream().map(t -> t.id()).toList());
    }

    private IllegalStateException noTimers() {
        return new IllegalStateException("computation '" + spec.id() + "' added a timer but declares no timer stream: "
                + "add one under 'timers' in the spec (a Transform computation)");
    }

    @Override
    public OutputCollector withParentIds(List<MessageId> parentIds) {
        List<MessageId> parents = List.copyOf(parentIds);
        if (parents.isEmpty()) {
            throw new IllegalArgumentException("withParentIds needs at least one parent id");
        }
        HarnessCall self = this;
        return new OutputCollector() {
            @Override
            public void addMessage(Message message) {
                self.addMessage(message, parents);
            }

            @Override
            public void addTimer(long triggerTimestamp, long eventTimestamp) {
                self.addTimer(triggerTimestamp, eventTimestamp);
            }

            @Override
            public void addTimer(String timerStreamId, long triggerTimestamp, long eventTimestamp) {
                self.addTimer(timerStreamId, triggerTimestamp, eventTimestamp);
            }

            @Override
            public OutputCollector withParentIds(List<MessageId> ids) {
                return self.withParentIds(ids);
            }
        };
    }

    /**
     * The runtime's rule for outputs of {@code onVisit}: they need the visitor stream in the
     * output's {@code streams_dependency}, and a SwiftMap computation may not emit from a visit.
     */
    void checkVisitOutputs(String stream) {
        for (Output o : outputs) {
            String out = o.message().streamId;
            if (spec.kind() == io.flowkafka.spec.ComputationKind.SWIFT_MAP) {
                throw new IllegalStateException("SwiftMap computation '" + spec.id() + "' emitted to '" + out
                        + "' from onVisit, which Flow forbids (a SwiftMap visit may only touch state); make '"
                        + spec.id() + "' a Transform computation");
            }
            List<String> deps = spec.streamsDependency().get(out);
            if (deps == null || !deps.contains(stream)) {
                throw new IllegalStateException("computation '" + spec.id() + "' emitted to '" + out
                        + "' from onVisit of key-visitor stream '" + stream + "', but streams_dependency." + out
                        + " does not list '" + stream + "'; add it: \"streams_dependency\": {\"" + out + "\": [..., \""
                        + stream + "\"]}");
            }
        }
    }

    /** A state accessor over the call buffer, falling back to the committed state. */
    private final class Accessor<T> implements StateAccessor<T> {
        private final Ref ref;
        private final Function<T, byte[]> encode;
        private final Function<byte[], T> decode;

        Accessor(Ref ref, Function<T, byte[]> encode, Function<byte[], T> decode) {
            this.ref = ref;
            this.encode = encode;
            this.decode = decode;
        }

        @Override
        public Optional<T> get() {
            checkActive();
            Write w = writes.get(ref);
            byte[] v = w != null ? w.bytes() : host.committedState(ref);
            return v == null ? Optional.empty() : Optional.of(decode.apply(v));
        }

        @Override
        public void set(T value) {
            checkActive();
            Objects.requireNonNull(value, "value (use clear() to delete a state)");
            byte[] bytes = encode.apply(value);
            if (bytes == null) {
                throw new IllegalArgumentException("the state serde of computation '" + spec.id()
                        + "' serialized a value to null; use clear() to delete a state");
            }
            writes.put(ref, new Write(bytes, decode::apply));
        }

        @Override
        public void clear() {
            checkActive();
            writes.put(ref, new Write(null, decode::apply));
        }
    }

    // ---- messages

    /** An output message built by user code; gets its id and parents when the call returns. */
    static final class Built implements Message {
        final String streamId;
        final GenericRecord payload;
        final long eventTimestamp; // Long.MIN_VALUE: inherit from the input
        final Object owner;

        Built(String streamId, GenericRecord payload, long eventTimestamp, Object owner) {
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

    /** Builds a {@link Built} message of one stream; validates fields against the stream schema. */
    static final class Builder implements MessageBuilder {
        private final String streamId;
        private final Schema schema;
        private final Object owner;
        private GenericRecord payload;
        private long eventTimestamp = Long.MIN_VALUE;

        Builder(String streamId, Schema schema, Object owner) {
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
            return new Built(streamId, payload, eventTimestamp, owner);
        }
    }

    static boolean isNullable(Schema s) {
        return s.getType() == Schema.Type.NULL
                || (s.getType() == Schema.Type.UNION && s.getTypes().stream().anyMatch(t -> t.getType() == Schema.Type.NULL));
    }

    /** An input message handed to user code. */
    record InputMessage(MessageId messageId, long eventTimestamp, long systemTimestamp, String streamId,
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

    /** A visit handed to user code. */
    record InputVisit(MessageId messageId, String streamId, GenericRecord key, long eventTimestamp, long systemTimestamp,
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

    // ---- Avro binary, as the runtime stores and sends records

    /** Avro binary encoding of one schema; decodes with the same schema (strings as {@code Utf8}, as the runtime). */
    static final class Codec<T> {
        private final DatumWriter<T> writer;
        private final DatumReader<T> reader;
        private final Schema schema;

        Codec(DatumWriter<T> writer, DatumReader<T> reader, Schema schema) {
            this.writer = writer;
            this.reader = reader;
            this.schema = schema;
        }

        static Codec<GenericRecord> generic(Schema schema) {
            return new Codec<>(new GenericDatumWriter<>(schema, GenericData.get()),
                    new GenericDatumReader<>(schema, schema, GenericData.get()), schema);
        }

        byte[] encode(T value) {
            ByteArrayOutputStream out = new ByteArrayOutputStream(128);
            BinaryEncoder encoder = EncoderFactory.get().directBinaryEncoder(out, null);
            try {
                writer.write(value, encoder);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            } catch (RuntimeException e) {
                throw new IllegalArgumentException("cannot encode a record as Avro schema " + schema.getFullName()
                        + ": " + e.getMessage(), e);
            }
            return out.toByteArray();
        }

        T decode(byte[] bytes) {
            BinaryDecoder decoder = DecoderFactory.get().binaryDecoder(bytes, null);
            try {
                return reader.read(null, decoder);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }
}
