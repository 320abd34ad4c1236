package io.flowkafka.internal.processor;

import io.flowkafka.api.Message;
import io.flowkafka.api.MessageBuilder;
import io.flowkafka.api.MessageId;
import io.flowkafka.api.OutputCollector;
import io.flowkafka.api.ProcessFunction;
import io.flowkafka.api.RuntimeContext;
import io.flowkafka.api.StateAccessor;
import io.flowkafka.api.Timer;
import io.flowkafka.internal.message.FlowMessage;
import io.flowkafka.internal.message.MessageIds;
import io.flowkafka.internal.serde.AvroCodec;
import io.flowkafka.internal.serde.KeyCodec;
import io.flowkafka.internal.state.KeyStates;
import io.flowkafka.internal.timers.PendingTimer;
import io.flowkafka.internal.timers.TimerStore;
import io.flowkafka.spec.ComputationSpec;
import io.flowkafka.spec.TimerStreamSpec;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.BiFunction;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.LongSupplier;
import java.util.function.ToLongFunction;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.specific.SpecificRecord;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.processor.StateStore;
import org.apache.kafka.streams.processor.StateStoreContext;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.jspecify.annotations.Nullable;

/**
 * Runs the process-function calls of one computation outside a topology with the runtime's own
 * call machinery: the engine behind {@code io.flowkafka.spi.ComputationCalls}, and so behind the
 * unit harness of flow-kafka-testing.
 *
 * <p>Model: a call begins for a key and an input id on a {@link CallContext}, exactly as in
 * {@link ComputationTask}; the input is handed to the function by the same
 * {@code CallContext.deliver*} methods; state writes go to a {@link KeyStates} call buffer and
 * timers to a {@link TimerStore} call buffer. The rules (declared states, output streams, timer
 * streams, visit outputs, the message builder's checks) and their messages are therefore the
 * runtime's. When the function returns, the call's effects are read from the buffers and returned
 * — outputs with the ids the runtime would give them ({@link MessageIds#output}), the timers after
 * the store's in-call merge, the state writes in the order first written — and the buffers are
 * dropped: nothing is applied here. The caller keeps the committed state, which the call reads
 * through {@code committedState}, and applies the effects it was given (or not, if the call
 * threw). The stores under the buffers are read-through views that are never written.
 *
 * <p>The object handed to the function ({@link #context()}) is a thin recorder around the
 * {@code CallContext}: it remembers which state rows a call wrote and how to decode them, which
 * the runtime does not need. The runtime's hot path is untouched.
 *
 * <p>Threading: not thread-safe; owned by one caller.
 */
public final class DetachedCall {
    private static final io.flowkafka.internal.dlq.RecordSizeLimit DEFAULT_LIMIT =
            io.flowkafka.internal.dlq.RecordSizeLimit.of(java.util.Map.of());

    /** The parent id of {@link #inspect} and {@link #seed} accesses, which have no input. */
    private static final MessageId NO_INPUT = MessageId.of(new byte[] {0});

    /**
     * An output message of a call.
     *
     * @param messageId the runtime's id: derived from the parents, the computation and the position
     * @param payload encoded with the stream's schema and decoded again, as a consumer reads it
     */
    public record Output(MessageId messageId, String streamId, GenericRecord payload, long eventTimestamp,
            long systemTimestamp, List<MessageId> parentIds) {
    }

    /**
     * The last write of one state row in a call.
     *
     * @param bytes the value as stored, null when cleared
     * @param value the value decoded as the writing accessor decodes it, null when cleared
     */
    public record StateWrite(String stateName, GenericRecord key, byte @Nullable [] bytes, @Nullable Object value) {
    }

    /** What a call did: outputs in order, timers added (merged within the call), state writes in first-write order. */
    public record Effects(List<Output> outputs, List<Timer> timers, List<StateWrite> stateWrites) {
    }

    private final ComputationSpec spec;
    private final KeyCodec keyCodec;
    private final KeyStates states;
    private final @Nullable TimerStore timers;
    private final CallContext call;
    private final Recorder recorder = new Recorder();
    private final Map<String, AvroCodec> outputCodecs = new LinkedHashMap<>();
    private final long computationTag;
    private final LongSupplier clockNanos;
    /** The state rows the current call wrote, in first-write order, with the accessor that wrote last. */
    private final Map<Bytes, CallContext.Accessor<?>> writes = new LinkedHashMap<>();

    /**
     * A detached call context of {@code spec}.
     *
     * @param outputSchemas the payload schema of each output stream
     * @param clockNanos what {@code currentTimeNanos()} returns; also stamps outputs and timers
     * @param inputWatermark what {@code getInputWatermark(stream)} returns for an input stream
     * @param minInputWatermark what {@code getMinInputWatermark()} returns
     * @param committedState the committed value of a state row (key, state name), null if absent
     */
    public DetachedCall(ComputationSpec spec, Map<String, Schema> outputSchemas, int partition, int partitionCount,
            LongSupplier clockNanos, ToLongFunction<String> inputWatermark, LongSupplier minInputWatermark,
            BiFunction<GenericRecord, String, byte @Nullable []> committedState) {
        this.spec = spec;
        this.clockNanos = clockNanos;
        this.keyCodec = KeyCodec.of(spec.groupBySchema(), spec.id());
        this.computationTag = MessageIds.computationTag(spec.id());
        outputSchemas.forEach((stream, schema) -> outputCodecs.put(stream, new AvroCodec(schema)));
        this.states = new KeyStates(spec.states().isEmpty() && spec.externalStateManagers().isEmpty() ? null
                : new ReadThroughStore(spec.id() + ".state",
                storeKey -> committedState.apply(keyCodec.decode(KeyStates.encodedKeyOf(storeKey)),
                        KeyStates.stateNameOf(storeKey))));
        this.call = new CallContext(spec, states, keyCodec, outputSchemas, clockNanos, partition, partitionCount,
                inputWatermark, minInputWatermark);
        if (spec.timers().isEmpty()) {
            this.timers = null;
        } else {
            boolean[] dedup = new boolean[spec.timers().size()];
            for (int i = 0; i < dedup.length; i++) {
                dedup[i] = spec.timers().get(i).deduplicateEqualTimestamps();
            }
            // used for its call buffer only: the caller keeps the pending timers
            this.timers = new TimerStore(new ReadThroughStore(TimerStore.timersStoreName(spec.id()), k -> null),
                    null,
                    spec.timers().stream().map(TimerStreamSpec::id).toList(), dedup);
            call.timers(timers, MessageIds.timerTag(spec.id()));
        }
    }

    /** The runtime's function factory: a new instance from the spec's supplier or class; null for a Source computation without one. */
    public static @Nullable ProcessFunction newFunction(ComputationSpec spec) {
        return FunctionFactory.create(spec);
    }

    /**
     * The context handed to the function: to {@code open}, and as context and collector of every
     * call. Outside a call, only what needs no call works, as in the runtime.
     */
    public RuntimeContext context() {
        return recorder;
    }

    /** Runs {@code onMessage} (or the Source forward) for a message of input {@code streamId}. */
    public Effects runMessage(@Nullable ProcessFunction function, MessageId id, String streamId, GenericRecord key,
            GenericRecord payload, long eventTimestamp, long systemTimestamp) {
        FlowMessage message = new FlowMessage(id, eventTimestamp, systemTimestamp, streamId, key, payload, List.of());
        return run(key, id, eventTimestamp, () -> call.deliverMessage(function, message, recorder, recorder));
    }

    /** Runs {@code onTimer} for a timer of one of the computation's timer streams, for its key. */
    public Effects runTimer(@Nullable ProcessFunction function, Timer timer) {
        return run(timer.getKey(), timer.getMessageId(), timer.getEventTimestamp(),
                () -> call.deliverTimer(function, timer, recorder, recorder));
    }

    /** Runs {@code onVisit} for a visit of {@code key}, then applies the runtime's rules for visit outputs. */
    public Effects runVisit(@Nullable ProcessFunction function, MessageId id, String visitorStreamId, GenericRecord key,
            long pass, long eventTimestamp) {
        FlowVisit visit = new FlowVisit(id, visitorStreamId, key, eventTimestamp, clockNanos.getAsLong(), pass);
        return run(key, id, eventTimestamp, () -> call.deliverVisit(function, visit, recorder, recorder));
    }

    /** Runs {@code reader} as a call for {@code key} without an input, and drops whatever it wrote. */
    public <T> T inspect(GenericRecord key, Function<RuntimeContext, T> reader) {
        begin(key, NO_INPUT);
        try {
            return reader.apply(recorder);
        } finally {
            end();
        }
    }

    /** Runs {@code writer} as a call for {@code key} without an input, and returns its state writes (applying nothing). */
    public List<StateWrite> seed(GenericRecord key, Consumer<RuntimeContext> writer) {
        begin(key, NO_INPUT);
        try {
            writer.accept(recorder);
            return stateWrites();
        } finally {
            end();
        }
    }

    private Effects run(GenericRecord key, MessageId inputId, long inputEventTimestamp, Runnable user) {
        begin(key, inputId);
        try {
            user.run();
            // the runtime's check of the state and timer rows the call writes, against Kafka's default producer limit
            // (1 MiB): a row the runtime would dead-letter the input for fails the call here too
            states.forEachBufferedPut((k, v) -> CallRowChecks.checkStateRowSize(DEFAULT_LIMIT, spec.id(), k, v));
            if (timers != null) {
                TimerStore t = timers;
                t.forEachBufferedAdd((k, timer) -> CallRowChecks.checkTimerRowSize(DEFAULT_LIMIT, spec.id(), t, k,
                        timer));
            }
            return new Effects(outputs(inputId, inputEventTimestamp), addedTimers(), stateWrites());
        } finally {
            end();
        }
    }

    private void begin(GenericRecord key, MessageId inputId) {
        Objects.requireNonNull(key, "key");
        call.begin(key, keyCodec.encode(key), inputId);
    }

    private void end() {
        call.end();
        states.abortCall();
        if (timers != null) {
            timers.abortCall();
        }
        writes.clear();
    }

    /** The outputs as the runtime writes them: ids from parents and position, payloads through the stream's codec. */
    private List<Output> outputs(MessageId inputId, long inputEventTimestamp) {
        List<CallContext.Output> outs = call.outputs;
        List<Output> result = new ArrayList<>(outs.size());
        long now = clockNanos.getAsLong();
        for (int position = 0; position < outs.size(); position++) {
            CallContext.Output o = outs.get(position);
            List<MessageId> parents = o.parentsOrInput(inputId);
            String stream = o.message().streamId;
            result.add(new Output(MessageIds.output(parents, inputId, computationTag, position), stream,
                    readBack(stream, o.message().payload), o.eventTimestampOr(inputEventTimestamp), now, parents));
        }
        return result;
    }

    private GenericRecord readBack(String stream, GenericRecord payload) {
        AvroCodec codec = outputCodecs.get(stream);
        byte[] bytes;
        try {
            bytes = codec.encode(payload);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("output of stream '" + stream + "' is not a valid record of schema "
                    + codec.schema().getFullName() + ": " + e.getMessage() + " (check the types of its fields)", e);
        }
        return codec.decode(bytes);
    }

    private List<Timer> addedTimers() {
        if (timers == null) {
            return List.of();
        }
        List<Timer> out = new ArrayList<>();
        for (PendingTimer t : timers.bufferedAdds()) {
            out.add(new FlowTimer(MessageId.of(t.messageId()), spec.timers().get(t.streamIndex()).id(),
                    keyCodec.decode(t.encodedKey()), t.triggerTs(), t.eventTs(), t.systemTs()));
        }
        return out;
    }

    private List<StateWrite> stateWrites() {
        List<StateWrite> out = new ArrayList<>(writes.size());
        for (Map.Entry<Bytes, CallContext.Accessor<?>> e : writes.entrySet()) {
            Bytes storeKey = e.getKey();
            byte[] bytes = states.get(storeKey); // the call buffer: the row's last write
            out.add(new StateWrite(KeyStates.stateNameOf(storeKey), keyCodec.decode(KeyStates.encodedKeyOf(storeKey)),
                    bytes, bytes == null ? null : e.getValue().decode(bytes)));
        }
        return out;
    }

    /** Gives the calls the tables their joiners and state joiners read. */
    public void externalReads(io.flowkafka.internal.external.ExternalReads reads) {
        call.external(reads);
    }

    /** The context handed to the function: the call's {@link CallContext}, remembering the state rows written. */
    private final class Recorder implements RuntimeContext, OutputCollector {
        @Override
        public MessageBuilder createMessageBuilder(String streamId) {
            return call.createMessageBuilder(streamId);
        }

        @Override
        public StateAccessor<GenericRecord> getState(String name) {
            return recorded(call.getState(name));
        }

        @Override
        public <T extends SpecificRecord> StateAccessor<T> getState(String name, Class<T> type) {
            return recorded(call.getState(name, type));
        }

        @Override
        public <T> StateAccessor<T> getState(String name, Serde<T> serde) {
            return recorded(call.getState(name, serde));
        }

        @Override
        public StateAccessor<GenericRecord> getState(String name, GenericRecord key) {
            return recorded(call.getState(name, key));
        }

        @Override
        public StateAccessor<GenericRecord> getExternalState(String name) {
            StateAccessor<GenericRecord> a = call.getExternalState(name);
            return a instanceof CallContext.Accessor<GenericRecord> ? recorded(a) : a;
        }

        @Override
        public StateAccessor<GenericRecord> getExternalState(String name, GenericRecord key) {
            StateAccessor<GenericRecord> a = call.getExternalState(name, key);
            return a instanceof CallContext.Accessor<GenericRecord> ? recorded(a) : a;
        }

        private <T> StateAccessor<T> recorded(StateAccessor<T> accessor) {
            return new Recorded<>((CallContext.Accessor<T>) accessor);
        }

        @Override
        public GenericRecord getKey() {
            return call.getKey();
        }

        @Override
        public String getComputationId() {
            return call.getComputationId();
        }

        @Override
        public int getPartition() {
            return call.getPartition();
        }

        @Override
        public int getPartitionCount() {
            return call.getPartitionCount();
        }

        @Override
        public long getInputWatermark(String streamId) {
            return call.getInputWatermark(streamId);
        }

        @Override
        public long getMinInputWatermark() {
            return call.getMinInputWatermark();
        }

        @Override
        public Map<String, Object> getParameters() {
            return call.getParameters();
        }

        @Override
        public long currentTimeNanos() {
            return call.currentTimeNanos();
        }

        @Override
        public void addMessage(Message message) {
            call.addMessage(message);
        }

        @Override
        public void addTimer(long triggerTimestamp, long eventTimestamp) {
            call.addTimer(triggerTimestamp, eventTimestamp);
        }

        @Override
        public void addTimer(String timerStreamId, long triggerTimestamp, long eventTimestamp) {
            call.addTimer(timerStreamId, triggerTimestamp, eventTimestamp);
        }

        @Override
        public OutputCollector withParentIds(List<MessageId> parentIds) {
            return call.withParentIds(parentIds);
        }
    }

    /** A runtime state accessor that records the rows it writes. */
    private final class Recorded<T> implements StateAccessor<T> {
        private final CallContext.Accessor<T> accessor;

        Recorded(CallContext.Accessor<T> accessor) {
            this.accessor = accessor;
        }

        @Override
        public Optional<T> get() {
            return accessor.get();
        }

        @Override
        public void set(T value) {
            accessor.set(value);
            writes.put(accessor.storeKey(), accessor);
        }

        @Override
        public void clear() {
            accessor.clear();
            writes.put(accessor.storeKey(), accessor);
        }

        @Override
        public T newRecord() {
            return accessor.newRecord();
        }
    }

    /**
     * A store seen through a reader: the committed rows under a call buffer. Never written (the
     * buffers are dropped, not committed) and never scanned (the timer store's start-up check
     * finds it empty).
     */
    private static final class ReadThroughStore implements KeyValueStore<Bytes, byte[]> {
        private final String name;
        private final Function<Bytes, byte @Nullable []> reader;

        ReadThroughStore(String name, Function<Bytes, byte @Nullable []> reader) {
            this.name = name;
            this.reader = reader;
        }

        @Override
        public byte @Nullable [] get(Bytes key) {
            return reader.apply(key);
        }

        @Override
        public KeyValueIterator<Bytes, byte[]> range(Bytes from, Bytes to) {
            return new Empty();
        }

        @Override
        public KeyValueIterator<Bytes, byte[]> all() {
            return new Empty();
        }

        @Override
        public long approximateNumEntries() {
            return 0;
        }

        @Override
        public void put(Bytes key, byte[] value) {
            throw readOnly();
        }

        @Override
        public byte[] putIfAbsent(Bytes key, byte[] value) {
            throw readOnly();
        }

        @Override
        public void putAll(List<KeyValue<Bytes, byte[]>> entries) {
            throw readOnly();
        }

        @Override
        public byte[] delete(Bytes key) {
            throw readOnly();
        }

        private UnsupportedOperationException readOnly() {
            return new UnsupportedOperationException("store " + name + " of a detached call is read-only: "
                    + "the call's effects are returned to the caller, not applied");
        }

        @Override
        public String name() {
            return name;
        }

        @Override
        public void init(StateStoreContext context, StateStore root) {
        }

        @Override
        public void close() {
        }

        @Override
        public boolean persistent() {
            return false;
        }

        @Override
        public boolean isOpen() {
            return true;
        }
    }

    /** An empty store iterator. */
    private static final class Empty implements KeyValueIterator<Bytes, byte[]> {
        @Override
        public boolean hasNext() {
            return false;
        }

        @Override
        public KeyValue<Bytes, byte[]> next() {
            throw new java.util.NoSuchElementException();
        }

        @Override
        public Bytes peekNextKey() {
            throw new java.util.NoSuchElementException();
        }

        @Override
        public void close() {
        }
    }
}
