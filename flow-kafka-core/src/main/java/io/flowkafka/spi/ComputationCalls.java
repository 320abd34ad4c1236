package io.flowkafka.spi;

import io.flowkafka.api.MessageId;
import io.flowkafka.api.ProcessFunction;
import io.flowkafka.api.RuntimeContext;
import io.flowkafka.api.Timer;
import io.flowkafka.internal.dlq.Failures;
import io.flowkafka.internal.message.MessageIds;
import io.flowkafka.internal.processor.DetachedCall;
import io.flowkafka.internal.serde.AvroCodec;
import io.flowkafka.internal.serde.KeyCodec;
import io.flowkafka.spec.ComputationSpec;
import io.flowkafka.spec.PipelineSpec;
import io.flowkafka.spec.SourceSpec;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.function.Function;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericRecord;
import org.jspecify.annotations.Nullable;

/**
 * The runtime's process-function calls of one computation, outside a topology: how the runtime
 * keys an input, creates the function, hands it inputs, checks what it does, and names what it
 * emits. Everything here delegates to the classes the runtime's processor uses, so a caller runs
 * the same rule code with the same error messages: writing to a stream that is not an output, an
 * undeclared state or timer stream, a timer in a computation without timer streams, outputs of
 * {@code onVisit} that {@code streams_dependency} does not allow, SwiftMap outputs from a visit,
 * the message builder's field checks; message ids derived as the runtime derives them.
 *
 * <p>A {@link Call} runs a call and returns its {@link Effects} (outputs, timers added, state
 * writes) without applying them: the caller keeps the committed state and the pending timers,
 * and applies the effects of a call that returned (the runtime's all-or-nothing rule).
 *
 * <p>Used by flow-kafka-testing's {@code ComputationHarness}. SPI for flow-kafka's own modules; may
 * change between minor versions.
 *
 * <p>Not thread-safe (codecs are reused): use an instance, and its {@link Call}s, from one thread.
 */
public final class ComputationCalls {
    private final PipelineSpec spec;
    private final ComputationSpec computation;
    private final KeyCodec keyCodec;
    private final Map<String, Schema> outputSchemas = new LinkedHashMap<>();
    private final Map<String, AvroCodec> codecs = new LinkedHashMap<>();

    private ComputationCalls(PipelineSpec spec, ComputationSpec computation) {
        this.spec = spec;
        this.computation = computation;
        this.keyCodec = KeyCodec.of(computation.groupBySchema(), computation.id());
        for (String out : computation.outputStreamIds()) {
            outputSchemas.put(out, schemaOf(out));
        }
    }

    /**
     * Whether the runtime takes {@code failure} of a call for an outage (a Kafka {@code RetriableException}, a
     * connect or socket timeout among its causes) and retries the call from the last commit, instead of sending its
     * input to the dead-letter topic.
     *
     * @param failure what a call threw
     * @return true when the runtime retries it
     */
    public static boolean retriedByTheRuntime(Throwable failure) {
        return Failures.retriable(failure);
    }

    /**
     * The calls of computation {@code computationId} of {@code spec}.
     *
     * @param spec the pipeline spec; validated here
     * @param computationId the id of one of its computations
     * @return the calls of that computation
     * @throws io.flowkafka.spec.InvalidSpecException if the spec is invalid, listing every error
     * @throws IllegalArgumentException if the spec has no such computation, naming those it has
     */
    public static ComputationCalls of(PipelineSpec spec, String computationId) {
        Objects.requireNonNull(spec, "spec");
        Objects.requireNonNull(computationId, "computationId");
        PipelineSpec valid = spec.validated();
        ComputationSpec c = valid.computations().get(computationId);
        if (c == null) {
            throw new IllegalArgumentException("pipeline '" + spec.name() + "' has no computation '" + computationId
                    + "'; its computations are " + spec.computations().keySet());
        }
        return new ComputationCalls(valid, c);
    }

    /**
     * The (validated) pipeline spec.
     *
     * @return the pipeline spec, validated
     */
    public PipelineSpec spec() {
        return spec;
    }

    /**
     * The computation.
     *
     * @return the spec of the computation the calls run
     */
    public ComputationSpec computation() {
        return computation;
    }

    /**
     * The Avro schema of the computation's keys: one field per {@code group_by_schema} column, the
     * first {@code uint64} column required, the others nullable; strings as {@code String}.
     *
     * @return the key schema
     */
    public Schema keySchema() {
        return keyCodec.schema();
    }

    /**
     * The streams the computation reads: {@code input_stream_ids}, then its sources' streams.
     *
     * @return the input stream ids, in that order
     */
    public List<String> inputStreamIds() {
        List<String> out = new ArrayList<>(computation.inputStreamIds());
        for (SourceSpec s : computation.sourceStreams()) {
            out.add(s.streamId());
        }
        return out;
    }

    /**
     * The payload schema of an input stream of the computation.
     *
     * @param streamId an input or source stream of the computation
     * @return the stream's schema
     * @throws IllegalArgumentException if the stream is not an input or source of the computation
     */
    public Schema inputSchema(String streamId) {
        Objects.requireNonNull(streamId, "streamId");
        if (!inputStreamIds().contains(streamId)) {
            throw new IllegalArgumentException("stream '" + streamId + "' is not an input of computation '"
                    + computation.id() + "'; its inputs are " + inputStreamIds());
        }
        return schemaOf(streamId);
    }

    /**
     * The key a payload of input {@code streamId} maps to, computed by the computation's
     * {@code group_by_schema} as the runtime computes it.
     *
     * @param streamId an input or source stream of the computation
     * @param payload a payload of that stream
     * @return the key, a record of {@link #keySchema()}
     * @throws IllegalArgumentException if the stream is not an input of the computation
     */
    public GenericRecord keyOf(String streamId, GenericRecord payload) {
        Schema schema = inputSchema(streamId);
        return keyCodec.extractor(computation.groupBySchema(), schema).key(payload);
    }

    /**
     * A payload of {@code streamId} as a reader of the stream gets it: encoded with the stream's
     * schema as the runtime writes it, and decoded (strings as {@code Utf8}, a copy).
     *
     * @param streamId a stream of the pipeline
     * @param payload a payload of that stream
     * @return the payload after an encode and decode round trip
     * @throws IllegalArgumentException if the pipeline has no such stream, or the payload cannot be
     *     encoded with its schema (the message says why)
     */
    public GenericRecord asRead(String streamId, GenericRecord payload) {
        Objects.requireNonNull(payload, "payload");
        AvroCodec codec = codecs.computeIfAbsent(streamId, s -> new AvroCodec(schemaOf(s)));
        return codec.decode(codec.encode(payload));
    }

    /**
     * A new instance of the computation's process function, as the runtime creates one per task:
     * from the spec's supplier, or the class's no-argument constructor. Not opened.
     *
     * @return the function, or null for a Source computation without one (its calls forward each
     *     source message to the single output)
     * @throws IllegalStateException if the supplier returns null or the class cannot be instantiated
     */
    public @Nullable ProcessFunction newFunction() {
        return DetachedCall.newFunction(computation);
    }

    /**
     * The id the runtime gives the visit of {@code key} in pass {@code pass} of a key-visitor
     * stream, in task {@code partition}.
     *
     * @param visitorStreamId a key-visitor stream of the computation
     * @param key a record of {@link #keySchema()}
     * @param pass the pass number of the visitor
     * @param partition the task (partition of the computation)
     * @return the visit's message id
     * @throws IllegalArgumentException if the computation has no such key-visitor stream
     */
    public MessageId visitId(String visitorStreamId, GenericRecord key, long pass, int partition) {
        checkVisitor(visitorStreamId);
        return MessageIds.visit(MessageIds.visitOrigin(computation.id(), visitorStreamId, partition), pass,
                keyCodec.encode(key));
    }

    /**
     * A call context over {@code host}'s committed state, clock and watermarks, as the context of
     * task {@code partition} of {@code partitionCount}.
     *
     * @param host the caller's committed state, clock and watermarks
     * @param partition the task (partition of the computation), from 0
     * @param partitionCount the computation's number of partitions
     * @return a new call context
     */
    public Call newCall(Host host, int partition, int partitionCount) {
        Objects.requireNonNull(host, "host");
        DetachedCall detached = new DetachedCall(computation, outputSchemas, partition, partitionCount,
                host::currentTimeNanos, host::inputWatermark, host::minInputWatermark, host::committedState);
        var reads = io.flowkafka.internal.external.ExternalTopics.of(spec, "").plan(computation.id()).reads();
        if (!reads.isEmpty()) {
            detached.externalReads(new io.flowkafka.internal.external.ExternalReads(reads, r -> () -> new HostTable(host,
                    r.name()), host::currentTimeNanos));
        }
        return new Call(this, detached);
    }

    /** A joined table as the host holds it: rows by key, no versions, no scans. */
    private final class HostTable implements io.flowkafka.internal.external.TableView {
        private final Host host;
        private final String name;

        HostTable(Host host, String name) {
            this.host = host;
            this.name = name;
        }

        @Override
        public byte @Nullable [] get(byte[] encodedKey) {
            return host.externalRow(name, keyCodec.decode(encodedKey));
        }

        @Override
        public org.apache.kafka.streams.state.KeyValueIterator<org.apache.kafka.common.utils.Bytes, byte[]> scan(
                long fromHash, long toHash) {
            throw new UnsupportedOperationException("a call's host does not scan external tables");
        }

        @Override
        public @Nullable String version() {
            return null;
        }
    }

    private Schema schemaOf(String streamId) {
        var s = spec.streams().get(streamId);
        if (s == null || s.schema() == null) {
            throw new IllegalArgumentException("pipeline '" + spec.name() + "' has no stream '" + streamId
                    + "'; its streams are " + spec.streams().keySet());
        }
        return s.schema();
    }

    private void checkVisitor(String visitorStreamId) {
        if (!computation.keyVisitorStreams().containsKey(visitorStreamId)) {
            throw new IllegalArgumentException("computation '" + computation.id() + "' has no key-visitor stream '"
                    + visitorStreamId + "'; its key-visitor streams are " + computation.keyVisitorStreams().keySet());
        }
    }

    /**
     * What a {@link Call} reads from its caller: the committed state, the clock and the input
     * watermarks. Called on the caller's thread, during {@link Call}'s methods only.
     *
     * <p>SPI for flow-kafka's own modules; may change between minor versions.
     */
    public interface Host {
        /**
         * What {@code currentTimeNanos()} returns; also the system timestamp of outputs, timers and visits.
         *
         * @return the current time, in nanoseconds
         */
        long currentTimeNanos();

        /**
         * What {@code getInputWatermark(streamId)} returns, for an input or source stream of the computation.
         *
         * @param streamId an input or source stream of the computation
         * @return the stream's watermark, in nanoseconds
         */
        long inputWatermark(String streamId);

        /**
         * What {@code getMinInputWatermark()} returns.
         *
         * @return the smallest input watermark, in nanoseconds
         */
        long minInputWatermark();

        /**
         * The committed value of state {@code stateName} of {@code key}, as the function's accessors
         * encode it; null if absent.
         *
         * @param key a record of {@link ComputationCalls#keySchema()}
         * @param stateName a state of the computation
         * @return the encoded value, or null if the row is absent
         */
        byte @Nullable [] committedState(GenericRecord key, String stateName);

        /**
         * The row of {@code key} in the table the computation reads through joiner or state joiner {@code name}
         * (Avro binary of the table's schema); null if absent. By default every table is empty.
         *
         * @param name a joiner or state joiner of the computation
         * @param key a record of {@link ComputationCalls#keySchema()}
         * @return the encoded row, or null
         */
        default byte @Nullable [] externalRow(String name, GenericRecord key) {
            return null;
        }
    }

    /**
     * An output message of a call.
     *
     * @param messageId the runtime's id: derived from the parents, the computation and the output's
     *     position in the call
     * @param streamId the output stream
     * @param payload as a consumer reads it (encoded with the stream's schema and decoded: strings are
     *     {@code Utf8})
     * @param eventTimestamp nanoseconds: the one the function set, else the input's
     * @param systemTimestamp nanoseconds: the host's clock at the end of the call
     * @param parentIds the call's input, or the ids given to {@code withParentIds}
     */
    public record Output(MessageId messageId, String streamId, GenericRecord payload, long eventTimestamp,
            long systemTimestamp, List<MessageId> parentIds) {
        /**
         * Copies {@code parentIds}.
         *
         * @param messageId the runtime's id: derived from the parents, the computation and the output's position in
         *     the call
         * @param streamId the output stream
         * @param payload as a consumer reads it
         * @param eventTimestamp nanoseconds: the one the function set, else the input's
         * @param systemTimestamp nanoseconds: the host's clock at the end of the call
         * @param parentIds the call's input, or the ids given to {@code withParentIds}
         */
        public Output {
            parentIds = List.copyOf(parentIds);
        }
    }

    /**
     * The last write of one state row in a call.
     *
     * @param stateName the state
     * @param key the row's key (the call's key, or the one given to {@code getState(name, key)})
     * @param bytes the new value as stored (not copied), null when the call cleared it
     * @param value the new value decoded as the writing accessor decodes it (an Avro record, a
     *     generated class, or what the serde returns), empty when cleared
     */
    public record StateWrite(String stateName, GenericRecord key, byte @Nullable [] bytes, Optional<Object> value) {
        /**
         * Checks that the state name, key and value are set.
         *
         * @param stateName the state
         * @param key the row's key
         * @param bytes the new value as stored (not copied), null when the call cleared it
         * @param value the new value decoded, empty when cleared
         * @throws NullPointerException if {@code stateName}, {@code key} or {@code value} is null
         */
        public StateWrite {
            Objects.requireNonNull(stateName, "stateName");
            Objects.requireNonNull(key, "key");
            Objects.requireNonNull(value, "value");
        }

        /**
         * Whether the call cleared the row.
         *
         * @return true if the call cleared the row (no new value)
         */
        public boolean cleared() {
            return bytes == null;
        }
    }

    /**
     * What a call that returned did. Nothing of it is applied yet.
     *
     * @param outputs the output messages, in the order added
     * @param timers the timers added, merged as the runtime's timer store merges them within a call
     *     (equal stream, key and trigger with {@code deduplicate_equal_timestamps}: the smaller event
     *     timestamp, the first on a tie); not yet deduplicated against pending timers
     * @param stateWrites per state row its last write, in the order first written
     */
    public record Effects(List<Output> outputs, List<Timer> timers, List<StateWrite> stateWrites) {
        /**
         * Copies the lists.
         *
         * @param outputs the output messages, in the order added
         * @param timers the timers added, merged as within a call
         * @param stateWrites per state row its last write, in the order first written
         */
        public Effects {
            outputs = List.copyOf(outputs);
            timers = List.copyOf(timers);
            stateWrites = List.copyOf(stateWrites);
        }
    }

    /**
     * Runs calls of the computation's process function with the runtime's call context: one call
     * at a time, each all or nothing. A call that throws — the function, a rule it broke, or an
     * output that cannot be encoded — leaves no effect and the exception propagates unchanged (not
     * wrapped, {@link Error}s included); a call that returns yields its {@link Effects}.
     *
     * <p>Used by flow-kafka-testing's {@code ComputationHarness}. SPI for flow-kafka's own modules;
     * may change between minor versions.
     *
     * <p>Not thread-safe: owned by one thread.
     */
    public static final class Call {
        private final ComputationCalls calls;
        private final DetachedCall call;

        private Call(ComputationCalls calls, DetachedCall call) {
            this.calls = calls;
            this.call = call;
        }

        /**
         * The {@link RuntimeContext} (also the {@link io.flowkafka.api.OutputCollector}) handed to
         * the function: give it to {@code open}. Outside a call it refuses what needs one, as the
         * runtime's.
         *
         * @return the context of this call
         */
        public RuntimeContext context() {
            return call.context();
        }

        /**
         * Calls {@code onMessage} (or {@code onMessages} with a batch of one) with a message of input
         * {@code streamId} for {@code key}; without a function (a Source computation), forwards it to
         * the single output as the runtime does.
         *
         * @param function the function, from {@link ComputationCalls#newFunction()}, opened; null for a Source
         *     computation without one
         * @param id the input message's id
         * @param streamId an input or source stream of the computation
         * @param key a record of {@link ComputationCalls#keySchema()} (normally {@link ComputationCalls#keyOf} of the
         *     payload)
         * @param payload the message payload, normally {@link ComputationCalls#asRead} of it
         * @param eventTimestamp the message's event timestamp, in nanoseconds
         * @param systemTimestamp the message's system timestamp, in nanoseconds
         * @return the call's effects, not applied
         * @throws IllegalArgumentException if the stream is not an input of the computation
         */
        public Effects runMessage(@Nullable ProcessFunction function, MessageId id, String streamId,
                GenericRecord key, GenericRecord payload, long eventTimestamp, long systemTimestamp) {
            calls.inputSchema(streamId);
            return map(call.runMessage(function, id, streamId, key, payload, eventTimestamp, systemTimestamp));
        }

        /**
         * Calls {@code onTimer} (or {@code onTimers}) with {@code timer}, for its key; outputs inherit
         * its event timestamp and descend from its id.
         *
         * @param function the function, from {@link ComputationCalls#newFunction()}, opened; null for a Source
         *     computation without one
         * @param timer a due timer of the computation
         * @return the call's effects, not applied
         * @throws IllegalArgumentException if the timer's stream is not a timer stream of the computation
         */
        public Effects runTimer(@Nullable ProcessFunction function, Timer timer) {
            String stream = timer.getStreamId();
            if (calls.computation.timers().stream().noneMatch(t -> t.id().equals(stream))) {
                throw new IllegalArgumentException("computation '" + calls.computation.id() + "' has no timer stream '"
                        + stream + "'; its timer streams are "
                        + calls.computation.timers().stream().map(t -> t.id()).toList());
            }
            return map(call.runTimer(function, timer));
        }

        /**
         * Calls {@code onVisit} (or {@code onVisits}) with a visit of {@code key}, then checks its
         * outputs as the runtime does.
         *
         * @param function the function, from {@link ComputationCalls#newFunction()}, opened; null for a Source
         *     computation without one
         * @param id the visit's id, normally {@link ComputationCalls#visitId}
         * @param visitorStreamId a key-visitor stream of the computation
         * @param key the visited key, a record of {@link ComputationCalls#keySchema()}
         * @param pass the pass number of the visitor
         * @param eventTimestamp the visit's event timestamp, in nanoseconds
         * @return the call's effects, not applied
         * @throws IllegalArgumentException if the computation has no such key-visitor stream
         * @throws IllegalStateException (after the function returned) if it emitted what a visit may
         *     not: from a SwiftMap computation, or to a stream whose {@code streams_dependency} does
         *     not list the visitor stream
         */
        public Effects runVisit(@Nullable ProcessFunction function, MessageId id, String visitorStreamId,
                GenericRecord key, long pass, long eventTimestamp) {
            calls.checkVisitor(visitorStreamId);
            return map(call.runVisit(function, id, visitorStreamId, key, pass, eventTimestamp));
        }

        /**
         * Runs {@code reader} against the context of a call for {@code key} that has no input (to
         * read state with the function's own accessors), then drops whatever it wrote.
         *
         * @param <T> what {@code reader} returns
         * @param key a record of {@link ComputationCalls#keySchema()}
         * @param reader reads from the context
         * @return what {@code reader} returned
         */
        public <T> T inspect(GenericRecord key, Function<RuntimeContext, T> reader) {
            return call.inspect(key, reader);
        }

        /**
         * Runs {@code writer} against the context of a call for {@code key} that has no input (to
         * write state with the function's own accessors) and returns its state writes, unapplied;
         * outputs and timers it adds are dropped.
         *
         * @param key a record of {@link ComputationCalls#keySchema()}
         * @param writer writes state through the context
         * @return the state writes, in the order first written
         */
        public List<StateWrite> seed(GenericRecord key, Consumer<RuntimeContext> writer) {
            return call.seed(key, writer).stream().map(Call::map).toList();
        }

        private static Effects map(DetachedCall.Effects e) {
            return new Effects(e.outputs().stream().map(o -> new Output(o.messageId(), o.streamId(), o.payload(),
                    o.eventTimestamp(), o.systemTimestamp(), o.parentIds())).toList(), e.timers(),
                    e.stateWrites().stream().map(Call::map).toList());
        }

        private static StateWrite map(DetachedCall.StateWrite w) {
            return new StateWrite(w.stateName(), w.key(), w.bytes(), Optional.ofNullable(w.value()));
        }
    }
}
