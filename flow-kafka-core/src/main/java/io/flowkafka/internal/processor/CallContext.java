package io.flowkafka.internal.processor;

import io.flowkafka.api.BatchFunction;
import io.flowkafka.api.Message;
import io.flowkafka.api.MessageBuilder;
import io.flowkafka.api.MessageId;
import io.flowkafka.api.OutputCollector;
import io.flowkafka.api.ProcessFunction;
import io.flowkafka.api.RowFunction;
import io.flowkafka.api.RuntimeContext;
import io.flowkafka.api.StateAccessor;
import io.flowkafka.api.Timer;
import io.flowkafka.api.Visit;
import io.flowkafka.internal.message.FlowMessage;
import io.flowkafka.internal.serde.AvroCodec;
import io.flowkafka.internal.serde.KeyCodec;
import io.flowkafka.internal.serde.StateRowCodec;
import io.flowkafka.internal.state.KeyStates;
import io.flowkafka.spec.ComputationKind;
import io.flowkafka.spec.ComputationSpec;
import io.flowkafka.spec.StateSpec;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.specific.SpecificRecord;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.utils.Bytes;
import org.jspecify.annotations.Nullable;

/**
 * The {@link RuntimeContext} and {@link OutputCollector} of one task, reset for every call, and
 * the rules of a call: which states, output streams and timer streams it may use, how inputs are
 * handed to the function, and what a visit may emit.
 *
 * <p>Collects the call's outputs; state writes go to {@link KeyStates}' call buffer, timers to the
 * {@link io.flowkafka.internal.timers.TimerStore}'s. Nothing is applied here: the caller applies or
 * drops everything when the call returns or throws. Two callers: {@link ComputationTask} in a
 * topology, and {@link DetachedCall} outside one (the unit harness, through the SPI), so both run
 * the same rules with the same messages.
 *
 * <p>Over 700 lines because it implements the two public interfaces a function calls, {@link RuntimeContext} and
 * {@link OutputCollector}, whose methods share the call's state; its accessors are the small nested classes.
 *
 * <p>Threading: owned by the task's stream thread.
 */
final class CallContext implements RuntimeContext, OutputCollector {
    /** An output with its explicit parents (null: the call's input). */
    record Output(OutputMessage message, @Nullable List<MessageId> parents) {
        /** The output's parents: those given to {@code withParentIds}, else the call's input. */
        List<MessageId> parentsOrInput(MessageId input) {
            return parents == null ? List.of(input) : parents;
        }

        /** The output's event timestamp: the one the function set, else the input's. */
        long eventTimestampOr(long inputEventTimestamp) {
            return message.eventTimestamp != Long.MIN_VALUE ? message.eventTimestamp : inputEventTimestamp;
        }
    }

    private final ComputationSpec spec;
    private final MillisecondTimestamps millis;
    private final KeyStates states;
    private final KeyCodec keyCodec;
    private final Map<String, Schema> outputSchemas;
    private final Map<String, AvroCodec> stateCodecs = new HashMap<>();
    /** The codecs of Avro states and of rows read through joiners: rows carry their writer schema's fingerprint. */
    private final Map<String, StateRowCodec> rowCodecs = new HashMap<>();
    private final Map<Class<?>, SpecificStateCodec<?>> specificCodecs = new HashMap<>();
    private final Map<String, byte[]> stateNames = new HashMap<>();
    private final Map<String, AvroState> avroStates = new HashMap<>();
    private final Map<String, Object> parameters;
    private final LongSupplier clockNanos;
    private final int partition;
    private final int partitionCount;
    private final java.util.function.ToLongFunction<String> inputWatermark;
    private final LongSupplier minInputWatermark;
    final List<Output> outputs = new ArrayList<>();
    private @Nullable GenericRecord key;
    private byte @Nullable [] encodedKey;
    private boolean active;
    /** Counts the calls: a state accessor remembers the call that made it, for that call's key. */
    private long call;
    private @Nullable MessageId parentId;
    /** The key-visitor stream of the visit being delivered; null in other calls. */
    private @Nullable String visitStream;
    private int timersAdded;
    private io.flowkafka.internal.timers.@Nullable TimerStore timers;
    private long timerTag;
    /** In a batched call (SwiftMap batching): the batch's message ids, sorted and distinct; else null. */
    private @Nullable List<MessageId> batchIds;
    /** In a batched call: the event timestamp of each message of the batch. */
    private final Map<MessageId, Long> batchEventTimestamps = new HashMap<>();
    private long batchMaxEventTimestamp;
    /** The tables read through joiners and state joiners; null when the computation reads none. */
    private io.flowkafka.internal.external.@Nullable ExternalReads external;

    CallContext(ComputationSpec spec, KeyStates states, KeyCodec keyCodec, Map<String, Schema> outputSchemas,
            LongSupplier clockNanos, int partition, int partitionCount,
            java.util.function.ToLongFunction<String> inputWatermark, LongSupplier minInputWatermark) {
        this.inputWatermark = inputWatermark;
        this.minInputWatermark = minInputWatermark;
        this.spec = spec;
        this.millis = new MillisecondTimestamps(spec.id());
        this.states = states;
        this.keyCodec = keyCodec;
        this.outputSchemas = outputSchemas;
        this.parameters = spec.parameters();
        this.clockNanos = clockNanos;
        this.partition = partition;
        this.partitionCount = partitionCount;
    }

    /** Gives the context the computation's timer store (null when it has no timers). */
    void timers(io.flowkafka.internal.timers.@Nullable TimerStore timers, long timerTag) {
        this.timers = timers;
        this.timerTag = timerTag;
    }

    /** Gives the context the tables its joiners and state joiners read. */
    void external(io.flowkafka.internal.external.@Nullable ExternalReads external) {
        this.external = external;
    }

    void begin(GenericRecord key, byte[] encodedKey, MessageId parentId) {
        if (external != null) {
            external.beginCall();
        }
        this.key = key;
        this.encodedKey = encodedKey;
        this.parentId = parentId;
        this.timersAdded = 0;
        this.active = true;
        this.call++;
        this.batchIds = null;
        outputs.clear();
    }

    /**
     * Starts a batched call of a SwiftMap with {@code allow_batching_with_relaxed_guarantees}: there
     * is no current key, and outputs may have any non-empty subset of the batch as parents.
     */
    void beginBatch(List<FlowMessage> messages) {
        if (external != null) {
            external.beginCall();
        }
        this.key = null;
        this.encodedKey = null;
        this.parentId = null;
        this.timersAdded = 0;
        this.active = true;
        this.call++;
        outputs.clear();
        batchEventTimestamps.clear();
        long max = Long.MIN_VALUE;
        List<MessageId> ids = new ArrayList<>(messages.size());
        for (FlowMessage m : messages) {
            ids.add(m.messageId());
            batchEventTimestamps.merge(m.messageId(), m.eventTimestamp(), Math::max);
            max = Math.max(max, m.eventTimestamp());
        }
        this.batchIds = ids.stream().sorted().distinct().toList();
        this.batchMaxEventTimestamp = max;
    }

    /** The ids of the current batch, sorted and distinct: the default parents of its outputs. */
    List<MessageId> batchIds() {
        return Objects.requireNonNull(batchIds, "not a batched call");
    }

    /** The largest event timestamp among {@code parents}, all messages of the current batch. */
    long batchEventTimestamp(List<MessageId> parents) {
        if (parents == batchIds) {
            return batchMaxEventTimestamp;
        }
        long max = Long.MIN_VALUE;
        for (MessageId p : parents) {
            max = Math.max(max, batchEventTimestamps.get(p));
        }
        return max;
    }

    void end() {
        active = false;
        key = null;
        encodedKey = null;
        outputs.clear();
        if (batchIds != null) {
            batchIds = null;
            batchEventTimestamps.clear();
        }
    }

    /** The current key's encoding; a batched call has none. */
    private byte[] currentEncodedKey() {
        if (batchIds != null) {
            throw new IllegalStateException("a batched call of SwiftMap computation '" + spec.id() + "' spans several "
                    + "messages and keys, so it has no current key: use getState(name, message.getKey()) and "
                    + "message.getKey() for each message of the batch");
        }
        return Objects.requireNonNull(encodedKey);
    }

    private void checkActive() {
        if (!active) {
            throw new IllegalStateException("the runtime context of computation '" + spec.id()
                    + "' is valid only during a process-function call");
        }
    }

    /**
     * Checks that a state accessor is used in the call that made it, or in a later call of the same key: one made for
     * the call's key and kept in a field would else silently read and write that key's row for every later key. An
     * accessor made for another key ({@code getState(name, key)}) stands for that key in any call.
     *
     * @param madeForKey the call's key when the accessor was made (null in a batched call)
     * @param rowKey the encoded key of the accessor's row, or null to read it from {@code storeKey}
     * @param state the state's name, or null to read it from {@code storeKey}
     */
    private void checkCall(long madeIn, byte @Nullable [] madeForKey, @Nullable Bytes storeKey,
            byte @Nullable [] rowKey, @Nullable String state) {
        checkActive();
        if (madeIn == call) {
            return;
        }
        byte[] row = rowKey != null ? rowKey : KeyStates.encodedKeyOf(Objects.requireNonNull(storeKey));
        if (madeForKey != null && !Arrays.equals(row, madeForKey)) {
            return; // made for an explicit key
        }
        if (madeForKey != null && encodedKey != null && Arrays.equals(madeForKey, encodedKey)) {
            return; // the same key again (a computation without group-by, a TransformOrderedSource's partition)
        }
        String name = state != null ? state : KeyStates.stateNameOf(Objects.requireNonNull(storeKey));
        throw new IllegalStateException("the accessor of state '" + name + "' of computation '" + spec.id()
                + "' was obtained in an earlier call and stands for that call's key; get it again in each call "
                + "instead of keeping it in a field");
    }

    // ---- RuntimeContext

    @Override
    public MessageBuilder createMessageBuilder(String streamId) {
        Schema schema = outputSchemas.get(streamId);
        if (schema == null) {
            throw new IllegalArgumentException("stream '" + streamId + "' is not an output of computation '" + spec.id()
                    + "'; its outputs are " + spec.outputStreamIds());
        }
        return new OutputMessageBuilder(streamId, schema, this, millis);
    }

    @Override
    public StateAccessor<GenericRecord> getState(String name) {
        checkActive();
        return avroState(name, currentEncodedKey());
    }

    @Override
    public StateAccessor<GenericRecord> getState(String name, GenericRecord key) {
        checkActive();
        return avroState(name, keyCodec.encode(key));
    }

    @Override
    public <T extends SpecificRecord> StateAccessor<T> getState(String name, Class<T> type) {
        checkActive();
        declared(name);
        @SuppressWarnings("unchecked")
        SpecificStateCodec<T> codec = (SpecificStateCodec<T>) specificCodecs.computeIfAbsent(type,
                t -> new SpecificStateCodec<>(type));
        return new Accessor<>(KeyStates.storeKey(currentEncodedKey(), nameBytes(name)), codec::encode, codec::decode);
    }

    @Override
    public <T> StateAccessor<T> getState(String name, Serde<T> serde) {
        checkActive();
        if (declared(name).schema() != null) {
            // its rows carry the schema's fingerprint and are read by the state's Avro readers: serde bytes would
            // break them (and the state joiners and queries reading them)
            throw new IllegalArgumentException("state '" + name + "' of computation '" + spec.id() + "' has an Avro "
                    + "schema: read it with getState(name) or a generated class of that schema, or declare it "
                    + "without a schema to store it with a serde");
        }
        String topic = spec.id() + ".state";
        return new Accessor<>(KeyStates.storeKey(currentEncodedKey(), nameBytes(name)),
                v -> serde.serializer().serialize(topic, v), b -> serde.deserializer().deserialize(topic, b));
    }

    private byte[] nameBytes(String name) {
        return stateNames.computeIfAbsent(name, n -> n.getBytes(java.nio.charset.StandardCharsets.UTF_8));
    }

    private StateSpec declared(String name) {
        return declared(spec, name);
    }

    /**
     * The declared state {@code name} of a computation.
     *
     * @throws IllegalArgumentException if the computation declares no such state
     */
    static StateSpec declared(ComputationSpec spec, String name) {
        StateSpec s = spec.states().get(name);
        if (s == null) {
            throw new IllegalArgumentException("computation '" + spec.id() + "' declares no state '" + name
                    + "'; declared states are " + spec.states().keySet() + " (add it under 'states' in the spec)");
        }
        return s;
    }

    private StateAccessor<GenericRecord> avroState(String name, byte[] encodedKey) {
        AvroState a = avroStates.get(name);
        if (a == null) {
            StateSpec s = declared(name);
            if (s.schema() == null) {
                throw new IllegalArgumentException("state '" + name + "' of computation '" + spec.id()
                        + "' has no Avro schema: read it with getState(name, serde)");
            }
            StateRowCodec codec = rowCodecs.computeIfAbsent(name, n -> new StateRowCodec(s.schema()));
            Schema schema = s.schema();
            StateRecordCheck check = new StateRecordCheck(spec.id(), name, schema);
            a = new AvroState(nameBytes(name), r -> codec.encode(check.checked(r)), codec::decode,
                    () -> newRecordOf(schema));
            avroStates.put(name, a);
        }
        return new Accessor<>(KeyStates.storeKey(encodedKey, a.name()), a.encode(), a.decode(), a.fresh());
    }

    /** What the accessors of a declared Avro state share, built at its first read (none per call). */
    private record AvroState(byte[] name, Function<GenericRecord, byte[]> encode, Function<byte[], GenericRecord> decode,
            Supplier<GenericRecord> fresh) {
    }

    @Override
    public StateAccessor<GenericRecord> getExternalState(String name) {
        checkActive();
        return externalState(name, currentEncodedKey());
    }

    @Override
    public StateAccessor<GenericRecord> getExternalState(String name, GenericRecord key) {
        checkActive();
        return externalState(name, keyCodec.encode(key));
    }

    /**
     * A manager's row, read and written like a state under the manager's name (so it commits with the call and
     * is published to the table topic by the task); a joiner's or state joiner's row, read-only.
     */
    private StateAccessor<GenericRecord> externalState(String name, byte[] encodedKey) {
        io.flowkafka.spec.ExternalStateManagerSpec manager = spec.externalStateManagers().get(name);
        if (manager != null) {
            Schema schema = java.util.Objects.requireNonNull(manager.schema(), () -> "external state manager '" + name
                    + "' of computation '" + spec.id() + "' has no row schema (parameters.schema)");
            AvroCodec codec = stateCodecs.computeIfAbsent(name, n -> new AvroCodec(schema));
            return new Accessor<>(KeyStates.storeKey(encodedKey, nameBytes(name)), codec::encode, codec::decode,
                    () -> newRecordOf(schema));
        }
        boolean joiner = spec.externalStateJoiners().containsKey(name);
        if (!joiner && !spec.stateJoiners().containsKey(name)) {
            throw new IllegalArgumentException("computation '" + spec.id() + "' declares no external state '" + name
                    + "'; its external state is " + externalNames() + " (declare it under external_state_managers, "
                    + "external_state_joiners or state_joiners in the spec)");
        }
        io.flowkafka.internal.external.ExternalPlan.Read read = external == null ? null : external.read(name);
        if (read == null) {
            throw new IllegalStateException("external state '" + name + "' of computation '" + spec.id() + "' is read "
                    + "from a table of the running pipeline, which this context has not: read it on FlowTestDriver or "
                    + "FlowRuntime");
        }
        return new ReadOnlyRow(name, read, encodedKey);
    }

    private List<String> externalNames() {
        List<String> names = new ArrayList<>(spec.externalStateManagers().keySet());
        names.addAll(spec.externalStateJoiners().keySet());
        names.addAll(spec.stateJoiners().keySet());
        return names;
    }

    @Override
    public GenericRecord getKey() {
        checkActive();
        currentEncodedKey();
        return Objects.requireNonNull(key);
    }

    @Override
    public String getComputationId() {
        return spec.id();
    }

    @Override
    public int getPartition() {
        return partition;
    }

    @Override
    public int getPartitionCount() {
        return partitionCount;
    }

    @Override
    public long getInputWatermark(String streamId) {
        if (!spec.inputStreamIds().contains(streamId)
                && spec.sourceStreams().stream().noneMatch(s -> s.streamId().equals(streamId))) {
            throw new IllegalArgumentException("stream '" + streamId + "' is not an input of computation '" + spec.id() + "'");
        }
        return inputWatermark.applyAsLong(streamId);
    }

    @Override
    public long getMinInputWatermark() {
        return minInputWatermark.getAsLong();
    }

    @Override
    public Map<String, Object> getParameters() {
        return parameters;
    }

    @Override
    public long currentTimeNanos() {
        return clockNanos.getAsLong();
    }

    // ---- OutputCollector

    @Override
    public void addMessage(Message message) {
        addMessage(message, null);
    }

    void addMessage(Message message, @Nullable List<MessageId> parents) {
        checkActive();
        if (!(message instanceof OutputMessage om) || om.owner != this) {
            throw new IllegalArgumentException("addMessage takes messages built with this call's "
                    + "RuntimeContext.createMessageBuilder; to forward an input, build a new message from its payload");
        }
        outputs.add(new Output(om, parents));
    }

    @Override
    public void addTimer(long triggerTimestamp, long eventTimestamp) {
        checkActive();
        if (spec.timers().isEmpty()) {
            throw noTimers();
        }
        addTimer(0, triggerTimestamp, eventTimestamp);
    }

    @Override
    public void addTimer(String timerStreamId, long triggerTimestamp, long eventTimestamp) {
        checkActive();
        for (int i = 0; i < spec.timers().size(); i++) {
            if (spec.timers().get(i).id().equals(timerStreamId)) {
                addTimer(i, triggerTimestamp, eventTimestamp);
                return;
            }
        }
        if (spec.timers().isEmpty()) {
            throw noTimers();
        }
        throw new IllegalArgumentException("computation '" + spec.id() + "' has no timer stream '" + timerStreamId
                + "'; its timer streams are " + spec.timers().stream().map(t -> t.id()).toList());
    }

    private void addTimer(int streamIndex, long trigger, long event) {
        millis.check("addTimer's trigger", trigger);
        millis.check("addTimer's event timestamp", event);
        io.flowkafka.internal.timers.TimerStore store = Objects.requireNonNull(timers);
        MessageId id = io.flowkafka.internal.message.MessageIds.derive(Objects.requireNonNull(parentId), timerTag,
                timersAdded++);
        store.add(new io.flowkafka.internal.timers.PendingTimer(streamIndex, trigger, event, clockNanos.getAsLong(),
                Objects.requireNonNull(encodedKey), id.toBytes(), List.of(parentId.toBytes())));
    }

    private IllegalStateException noTimers() {
        return new IllegalStateException("computation '" + spec.id() + "' added a timer but declares no timer stream: "
                + "add one under 'timers' in the spec (a Transform computation)");
    }

    // ---- handing inputs to the function

    /**
     * Hands a message to the function ({@code onMessage}, or {@code onMessages} with a batch of
     * one); a Source computation without a function forwards it to its single output unchanged
     * (fields copied by name, so the output schema may be a compatible copy of the source's).
     */
    void deliverMessage(@Nullable ProcessFunction function, Message message, RuntimeContext context,
            OutputCollector output) {
        if (function == null) {
            String out = spec.outputStreamIds().get(0);
            MessageBuilder b = createMessageBuilder(out);
            Schema outSchema = outputSchemas.get(out);
            GenericRecord payload = message.getPayload();
            if (outSchema.equals(payload.getSchema())) {
                b.setPayload(payload);
            } else {
                for (Schema.Field f : outSchema.getFields()) {
                    if (payload.getSchema().getField(f.name()) != null) {
                        b.set(f.name(), payload.get(f.name()));
                    }
                }
            }
            addMessage(b.build());
        } else if (function instanceof RowFunction row) {
            row.onMessage(message, output, context);
        } else {
            ((BatchFunction) function).onMessages(List.of(message), output, context);
        }
    }

    /**
     * Hands a timer to the function ({@code onTimer}, or {@code onTimers} with a batch of one), then checks what it
     * emitted ({@link #checkTimerOutputs}).
     */
    void deliverTimer(@Nullable ProcessFunction function, Timer timer, RuntimeContext context, OutputCollector output) {
        if (function instanceof RowFunction row) {
            row.onTimer(timer, output, context);
        } else if (function instanceof BatchFunction batch) {
            batch.onTimers(List.of(timer), output, context);
        }
        checkTimerOutputs(timer.getStreamId());
    }

    /**
     * Outputs from onTimer to a stream whose {@code streams_dependency} entry leaves the timer stream out would come
     * behind that stream's watermark (which does not wait for the timer): refused, as for visits.
     */
    private void checkTimerOutputs(String stream) {
        checkOutputsWaitFor("onTimer of timer stream", stream, false,
                ", so that output's watermark does not wait for the timer and the message would be late");
    }

    /**
     * Hands a visit to the function ({@code onVisit}, or {@code onVisits} with a batch of one),
     * then checks what it emitted ({@link #checkVisitOutputs}).
     */
    void deliverVisit(@Nullable ProcessFunction function, Visit visit, RuntimeContext context, OutputCollector output) {
        visitStream = visit.getStreamId();
        try {
            if (function instanceof RowFunction row) {
                row.onVisit(visit, output, context);
            } else if (function instanceof BatchFunction batch) {
                batch.onVisits(List.of(visit), output, context);
            }
        } finally {
            visitStream = null;
        }
        checkVisitOutputs(visit.getStreamId());
    }

    /** Outputs from onVisit need the visitor in streams_dependency; SwiftMap may not emit from a visit at all. */
    void checkVisitOutputs(String stream) {
        if (spec.kind() == ComputationKind.SWIFT_MAP && !outputs.isEmpty()) {
            throw new IllegalStateException("SwiftMap computation '" + spec.id() + "' emitted to '"
                    + outputs.get(0).message().streamId + "' from onVisit, which Flow forbids (a SwiftMap visit may "
                    + "only touch state); make '" + spec.id() + "' a Transform computation");
        }
        checkOutputsWaitFor("onVisit of key-visitor stream", stream, true, "");
    }

    /**
     * Refuses an output to a stream whose watermark does not wait for {@code stream}: one whose
     * {@code streams_dependency} entry does not list it, or (when {@code listed}) one without an entry; {@code why}
     * ends the message's reason.
     */
    private void checkOutputsWaitFor(String from, String stream, boolean listed, String why) {
        for (Output o : outputs) {
            String out = o.message().streamId;
            List<String> deps = spec.streamsDependency().get(out);
            if (deps == null ? listed : !deps.contains(stream)) {
                throw new IllegalStateException("computation '" + spec.id() + "' emitted to '" + out + "' from "
                        + from + " '" + stream + "', but streams_dependency." + out + " does not list '" + stream
                        + "'" + why + "; add it: \"streams_dependency\": {\"" + out + "\": [..., \"" + stream
                        + "\"]}");
            }
        }
    }

    @Override
    public OutputCollector withParentIds(List<MessageId> parentIds) {
        List<MessageId> given = List.copyOf(parentIds);
        if (given.isEmpty()) {
            throw new IllegalArgumentException("withParentIds needs at least one parent id");
        }
        List<MessageId> parents = spec.kind() == io.flowkafka.spec.ComputationKind.SWIFT_MAP ? swiftParents(given) : given;
        CallContext self = this;
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
     * The parents of a SwiftMap output, as a sorted set: Flow gives each output of a SwiftMap exactly
     * one parent, the input, unless {@code allow_batching_with_relaxed_guarantees} is on; then any
     * non-empty subset of the batch.
     */
    private List<MessageId> swiftParents(List<MessageId> given) {
        checkActive();
        List<MessageId> set = given.stream().sorted().distinct().toList();
        List<MessageId> batch = batchIds;
        if (batch == null) {
            if (set.size() != 1 || !set.get(0).equals(parentId)) {
                throw new IllegalArgumentException("SwiftMap computation '" + spec.id() + "' gave an output the parents "
                        + set + ", but each output of a SwiftMap has exactly one parent, the message being processed ("
                        + parentId + "), unless parameters." + ComputationSpec.ALLOW_BATCHING_PARAMETER + " is true: "
                        + "drop withParentIds, or set " + ComputationSpec.ALLOW_BATCHING_PARAMETER + ": true in the "
                        + "parameters of '" + spec.id() + "' and accept its relaxed guarantees");
            }
            return set;
        }
        for (MessageId p : set) {
            if (java.util.Collections.binarySearch(batch, p) < 0) {
                throw new IllegalArgumentException("parent " + p + " is not a message of the batch being processed by "
                        + "SwiftMap computation '" + spec.id() + "': the parents of an output must be messages passed "
                        + "to this onMessages call");
            }
        }
        return set.size() == batch.size() ? batch : set;
    }

    /** A record of {@code schema} whose fields with a default hold it (a copy), the others null. */
    private static GenericRecord newRecordOf(Schema schema) {
        GenericData.Record r = new GenericData.Record(schema);
        for (Schema.Field f : schema.getFields()) {
            if (f.hasDefaultValue()) {
                r.put(f.pos(), GenericData.get().deepCopy(f.schema(), GenericData.get().getDefaultValue(f)));
            }
        }
        return r;
    }

    /** A state accessor over the call buffer. */
    final class Accessor<T> implements StateAccessor<T> {
        private final Bytes storeKey;
        private final Function<T, byte[]> encode;
        private final Function<byte[], T> decode;
        private final @Nullable Supplier<T> fresh;
        private final long madeIn = call;
        private final byte @Nullable [] madeForKey = encodedKey;

        Accessor(Bytes storeKey, Function<T, byte[]> encode, Function<byte[], T> decode) {
            this(storeKey, encode, decode, null);
        }

        @SuppressWarnings("unchecked")
        Accessor(Bytes storeKey, Function<T, byte[]> encode, Function<byte[], T> decode,
                @Nullable Supplier<? extends GenericRecord> fresh) {
            this.storeKey = storeKey;
            this.encode = encode;
            this.decode = decode;
            this.fresh = (Supplier<T>) fresh;
        }

        @Override
        public T newRecord() {
            return fresh == null ? StateAccessor.super.newRecord() : fresh.get();
        }

        /** The store key of the state row this accessor reads and writes. */
        Bytes storeKey() {
            return storeKey;
        }

        /** Decodes a value of this state as {@link #get()} does. */
        T decode(byte[] bytes) {
            return decode.apply(bytes);
        }

        @Override
        public Optional<T> get() {
            checkCall(madeIn, madeForKey, storeKey, null, null);
            byte[] v = states.get(storeKey);
            return v == null ? Optional.empty() : Optional.of(decode.apply(v));
        }

        @Override
        public void set(T value) {
            checkCall(madeIn, madeForKey, storeKey, null, null);
            Objects.requireNonNull(value, "value (use clear() to delete a state)");
            byte[] bytes = encode.apply(value);
            if (bytes == null) {
                throw new IllegalArgumentException("the state serde of computation '" + spec.id()
                        + "' serialized a value to null; use clear() to delete a state");
            }
            states.put(storeKey, bytes);
        }

        @Override
        public void clear() {
            checkCall(madeIn, madeForKey, storeKey, null, null);
            states.delete(storeKey);
        }
    }

    /** A row read through a joiner or state joiner: {@code get()} looks it up; writes are an error. */
    private final class ReadOnlyRow implements StateAccessor<GenericRecord> {
        private final String name;
        private final io.flowkafka.internal.external.ExternalPlan.Read read;
        private final byte[] encodedKey;
        private final long madeIn = call;
        private final byte @Nullable [] madeForKey = CallContext.this.encodedKey;

        ReadOnlyRow(String name, io.flowkafka.internal.external.ExternalPlan.Read read, byte[] encodedKey) {
            this.name = name;
            this.read = read;
            this.encodedKey = encodedKey;
        }

        @Override
        public Optional<GenericRecord> get() {
            checkCall(madeIn, madeForKey, null, encodedKey, name);
            if (read.staticTable()) {
                return Optional.ofNullable(Objects.requireNonNull(external).staticRow(name, encodedKey, visitStream));
            }
            byte[] v = Objects.requireNonNull(external).lookup(name, encodedKey);
            if (v == null) {
                return Optional.empty();
            }
            // a published state's rows carry their fingerprint; a manager's and a batch job's are plain Avro
            StateRowCodec codec = rowCodecs.computeIfAbsent(name, n -> new StateRowCodec(read.schema()));
            return Optional.of(codec.decode(v));
        }

        @Override
        public GenericRecord newRecord() {
            return newRecordOf(read.schema());
        }

        @Override
        public void set(GenericRecord value) {
            throw readOnly();
        }

        @Override
        public void clear() {
            throw readOnly();
        }

        private UnsupportedOperationException readOnly() {
            return new UnsupportedOperationException("external state '" + name + "' is read through "
                    + (read.stateJoiner() ? "a state joiner" : "a joiner") + " of computation '" + spec.id() + "'; "
                    + (read.staticTable() ? "a TStaticTableKeyVisitorJoiner is read-only: its rows come from the "
                            + "static table" : read.stateJoiner() ? "state joiners are read-only: write it from "
                            + read.writer()
                            : "joiners are read-only: write it from the computation that manages it "
                                    + "(external_state_managers)" + (read.writer().startsWith("computation")
                                            ? ", " + read.writer() : "")));
        }
    }
}
