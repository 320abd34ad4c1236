package io.flowkafka.spec;

import io.flowkafka.api.ProcessFunction;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Supplier;
import org.apache.avro.Schema;
import org.jspecify.annotations.Nullable;

/**
 * One computation of a pipeline, with Flow's fields.
 *
 * <p>Over 700 lines because it is Flow's computation as one record: twenty spec fields, their builder and the
 * Javadoc of SwiftMap batching's parameters; the parsing and the rules live in {@link PipelineSpecLoader} and the
 * validator.
 *
 * @param id the computation id; processor, store and topic names derive from it
 * @param kind the computation kind ({@code computation_class_name})
 * @param processingFunction {@code processing_function}: the class name of a
 *     {@link io.flowkafka.api.RowFunction} or {@link io.flowkafka.api.BatchFunction} with a public
 *     no-argument constructor; may be null when {@code functionSupplier} is set
 * @param functionSupplier programmatic alternative to {@code processingFunction}; must return a
 *     new instance on each call
 * @param inputStreamIds {@code input_stream_ids}
 * @param outputStreamIds {@code output_stream_ids}
 * @param sourceStreams {@code source_streams}
 * @param sinks {@code sinks}
 * @param groupBySchema {@code group_by_schema}; empty for source computations
 * @param states declared per-key states, by name
 * @param timers {@code timers} (alias {@code timer_streams})
 * @param keyVisitorStreams {@code key_visitor_streams}
 * @param streamsDependency {@code streams_dependency}: output or timer stream id to the streams
 *     it depends on
 * @param processingMode {@code processing_mode}: {@code exactly_once} (default) or
 *     {@code at_least_once_consistent}, accepted on Transform computations only; both run on Kafka
 *     Streams' {@code exactly_once_v2} (see {@link ProcessingMode})
 * @param parameters {@code parameters}, passed to the process function; the runtime itself reads
 *     {@value #ALLOW_BATCHING_PARAMETER}, {@value #MAX_BATCH_SIZE_PARAMETER} and
 *     {@value #MAX_BATCH_DELAY_PARAMETER} of SwiftMap computations
 * @param desiredPartitionCount {@code desired_partition_count}; the partition count of the
 *     computation's input topics
 * @param watermarkStrategy {@code watermark_strategy} of a source computation
 * @param externalStateManagers {@code external_state_managers}, by name
 * @param externalStateJoiners {@code external_state_joiners}, by name
 * @param stateJoiners {@code state_joiners}, by name
 */
public record ComputationSpec(
        String id,
        ComputationKind kind,
        @Nullable String processingFunction,
        @Nullable Supplier<? extends ProcessFunction> functionSupplier,
        List<String> inputStreamIds,
        List<String> outputStreamIds,
        List<SourceSpec> sourceStreams,
        List<SinkSpec> sinks,
        List<GroupByColumn> groupBySchema,
        Map<String, StateSpec> states,
        List<TimerStreamSpec> timers,
        Map<String, KeyVisitorStreamSpec> keyVisitorStreams,
        Map<String, List<String>> streamsDependency,
        ProcessingMode processingMode,
        Map<String, Object> parameters,
        int desiredPartitionCount,
        WatermarkStrategy watermarkStrategy,
        Map<String, ExternalStateManagerSpec> externalStateManagers,
        Map<String, ExternalStateJoinerSpec> externalStateJoiners,
        Map<String, StateJoinerSpec> stateJoiners) {

    /** Default {@code desired_partition_count}. */
    public static final int DEFAULT_PARTITION_COUNT = 4;

    /**
     * SwiftMap parameter {@value}: {@code true} lets a {@link io.flowkafka.api.BatchFunction} get
     * batches of several input messages and emit messages with several parents (Flow's
     * {@code allow_batching_with_relaxed_guarantees}, set in the computation's {@code parameters}
     * block; default {@code false}). Accepted only on SwiftMap computations whose function is a
     * {@code BatchFunction}.
     *
     * <p>With the flag on:
     * <ul>
     *   <li>inputs are buffered per task in a changelogged store and handed to
     *       {@code onMessages} as one batch when {@value #MAX_BATCH_SIZE_PARAMETER} messages are
     *       buffered, when the oldest has waited {@value #MAX_BATCH_DELAY_PARAMETER} (wall clock),
     *       or when every input stream has completed; the buffer commits with the input offsets,
     *       so no input is lost or processed twice by a restart;</li>
     *   <li>an output's default parent is the whole batch; {@code withParentIds} narrows it to any
     *       non-empty subset of the batch's messages;</li>
     *   <li>an output's message id is derived from the <em>set</em> of its parent ids and its
     *       position among the call's outputs with that same set: the same set gives the same id
     *       in any order and on any replay, a different set gives a different id;</li>
     *   <li>an output's default event timestamp is the largest of its parents'; the task's output
     *       watermark is held at the oldest buffered message.</li>
     * </ul>
     *
     * <p>What downstream computations must accept (Flow's "relaxed guarantees"):
     * <ol>
     *   <li>at-least-once per parent: "on restart, the batch boundaries might differ [...] if a
     *       parent ends up in a batch with a different composition, that batch's MessageId is
     *       different — downstream computations must be ready to see each parent's content more
     *       than once". On Kafka an aborted attempt's outputs are never read (read_committed), so
     *       flow-kafka does not produce such repeats today, but a pipeline must not rely on that;</li>
     *   <li>no message-id order within a key: "the MessageId order within a single key isn't
     *       preserved on the downstream computations' side". A batch's output sorts by its largest
     *       parent, so outputs of consecutive batches need not sort in the order they were
     *       written;</li>
     *   <li>batch composition is not part of the contract: a batch cut by size is reproduced by a
     *       replay of a single input stream, but a cut by {@value #MAX_BATCH_DELAY_PARAMETER}, or
     *       the interleaving of several input streams, may differ on a replay.</li>
     * </ol>
     */
    public static final String ALLOW_BATCHING_PARAMETER = "allow_batching_with_relaxed_guarantees";

    /**
     * SwiftMap parameter {@value}: the most input messages one batch holds when
     * {@value #ALLOW_BATCHING_PARAMETER} is on; a batch is cut as soon as this many are buffered.
     * An integer in [1, {@value #MAX_BATCH_SIZE_LIMIT}]; default {@value #DEFAULT_MAX_BATCH_SIZE}.
     */
    public static final String MAX_BATCH_SIZE_PARAMETER = "max_batch_size";

    /** Default of {@value #MAX_BATCH_SIZE_PARAMETER}. */
    public static final int DEFAULT_MAX_BATCH_SIZE = 1000;

    /** Largest accepted {@value #MAX_BATCH_SIZE_PARAMETER}: a batch is held on the heap and in one call. */
    public static final int MAX_BATCH_SIZE_LIMIT = 100_000;

    /**
     * SwiftMap parameter {@value}: how long (wall clock) the oldest buffered message may wait before
     * its batch is cut, when {@value #ALLOW_BATCHING_PARAMETER} is on; a duration like
     * {@code "100ms"} or milliseconds, at least 1 ms; default 100 ms. Cuts made by this rule
     * depend on timing, so a replay may cut elsewhere.
     */
    public static final String MAX_BATCH_DELAY_PARAMETER = "max_batch_delay";

    /** Default of {@value #MAX_BATCH_DELAY_PARAMETER}. */
    public static final java.time.Duration DEFAULT_MAX_BATCH_DELAY = java.time.Duration.ofMillis(100);

    /**
     * Checks the required fields and copies the collections, unmodifiable and in their order.
     *
     * @param id the computation id; not null
     * @param kind the computation kind; not null
     * @param processingFunction the function's class name; may be null when {@code functionSupplier} is set
     * @param functionSupplier programmatic alternative to {@code processingFunction}; may be null
     * @param inputStreamIds {@code input_stream_ids}; copied
     * @param outputStreamIds {@code output_stream_ids}; copied
     * @param sourceStreams {@code source_streams}; copied
     * @param sinks {@code sinks}; copied
     * @param groupBySchema {@code group_by_schema}; copied
     * @param states declared per-key states, by name; copied
     * @param timers {@code timers}; copied
     * @param keyVisitorStreams {@code key_visitor_streams}; copied
     * @param streamsDependency {@code streams_dependency}; copied
     * @param processingMode {@code processing_mode}; not null
     * @param parameters {@code parameters}; copied
     * @param desiredPartitionCount {@code desired_partition_count}
     * @param watermarkStrategy {@code watermark_strategy}; not null
     * @param externalStateManagers {@code external_state_managers}; copied
     * @param externalStateJoiners {@code external_state_joiners}; copied
     * @param stateJoiners {@code state_joiners}; copied
     */
    public ComputationSpec {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(processingMode, "processingMode");
        Objects.requireNonNull(watermarkStrategy, "watermarkStrategy");
        inputStreamIds = List.copyOf(inputStreamIds);
        outputStreamIds = List.copyOf(outputStreamIds);
        sourceStreams = List.copyOf(sourceStreams);
        sinks = List.copyOf(sinks);
        groupBySchema = List.copyOf(groupBySchema);
        states = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(states));
        timers = List.copyOf(timers);
        keyVisitorStreams = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(keyVisitorStreams));
        streamsDependency = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(streamsDependency));
        parameters = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(parameters));
        externalStateManagers = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(externalStateManagers));
        externalStateJoiners = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(externalStateJoiners));
        stateJoiners = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(stateJoiners));
    }

    /**
     * A computation without external state (the fields of earlier versions).
     *
     * @param id the computation id
     * @param kind the computation kind
     * @param processingFunction the function's class name, or null
     * @param functionSupplier programmatic alternative to {@code processingFunction}, or null
     * @param inputStreamIds {@code input_stream_ids}
     * @param outputStreamIds {@code output_stream_ids}
     * @param sourceStreams {@code source_streams}
     * @param sinks {@code sinks}
     * @param groupBySchema {@code group_by_schema}
     * @param states declared per-key states, by name
     * @param timers {@code timers}
     * @param keyVisitorStreams {@code key_visitor_streams}
     * @param streamsDependency {@code streams_dependency}
     * @param processingMode {@code processing_mode}
     * @param parameters {@code parameters}
     * @param desiredPartitionCount {@code desired_partition_count}
     * @param watermarkStrategy {@code watermark_strategy}
     */
    public ComputationSpec(String id, ComputationKind kind, @Nullable String processingFunction,
            @Nullable Supplier<? extends ProcessFunction> functionSupplier, List<String> inputStreamIds,
            List<String> outputStreamIds, List<SourceSpec> sourceStreams, List<SinkSpec> sinks,
            List<GroupByColumn> groupBySchema, Map<String, StateSpec> states, List<TimerStreamSpec> timers,
            Map<String, KeyVisitorStreamSpec> keyVisitorStreams, Map<String, List<String>> streamsDependency,
            ProcessingMode processingMode, Map<String, Object> parameters, int desiredPartitionCount,
            WatermarkStrategy watermarkStrategy) {
        this(id, kind, processingFunction, functionSupplier, inputStreamIds, outputStreamIds, sourceStreams, sinks,
                groupBySchema, states, timers, keyVisitorStreams, streamsDependency, processingMode, parameters,
                desiredPartitionCount, watermarkStrategy, Map.of(), Map.of(), Map.of());
    }

    /**
     * Whether the computation declares any external state: managers, joiners or state joiners.
     *
     * @return true if one of the three maps is not empty
     */
    public boolean hasExternalState() {
        return !externalStateManagers.isEmpty() || !externalStateJoiners.isEmpty() || !stateJoiners.isEmpty();
    }

    /**
     * Whether {@value #ALLOW_BATCHING_PARAMETER} is on: the parameter is {@code true} (a boolean,
     * or the string {@code "true"} or YSON's {@code "%true"}).
     *
     * @return true if batching is allowed; false when the parameter is unset or false
     * @throws IllegalArgumentException if the parameter is set to anything but a boolean
     */
    public boolean allowBatchingWithRelaxedGuarantees() {
        Object v = parameters.get(ALLOW_BATCHING_PARAMETER);
        if (v == null || v instanceof Boolean) {
            return Boolean.TRUE.equals(v);
        }
        String text = v.toString().trim();
        if (text.equals("true") || text.equals("%true")) {
            return true;
        }
        if (text.equals("false") || text.equals("%false")) {
            return false;
        }
        throw new IllegalArgumentException("parameters." + ALLOW_BATCHING_PARAMETER + " must be true or false but was '"
                + v + "'");
    }

    /**
     * {@value #MAX_BATCH_SIZE_PARAMETER}, or its default.
     *
     * @return the most messages in one batch
     * @throws IllegalArgumentException if it is not an integer in [1, {@value #MAX_BATCH_SIZE_LIMIT}]
     */
    public int maxBatchSize() {
        Object v = parameters.get(MAX_BATCH_SIZE_PARAMETER);
        if (v == null) {
            return DEFAULT_MAX_BATCH_SIZE;
        }
        long n;
        if (v instanceof Integer || v instanceof Long || v instanceof Short) {
            n = ((Number) v).longValue();
        } else {
            try {
                n = Long.parseLong(v.toString().trim());
            } catch (NumberFormatException e) {
                n = Long.MIN_VALUE;
            }
        }
        if (n < 1 || n > MAX_BATCH_SIZE_LIMIT) {
            throw new IllegalArgumentException("parameters." + MAX_BATCH_SIZE_PARAMETER + " must be an integer in [1, "
                    + MAX_BATCH_SIZE_LIMIT + "] but was '" + v + "'");
        }
        return (int) n;
    }

    /**
     * {@value #MAX_BATCH_DELAY_PARAMETER}, or its default.
     *
     * @return how long the oldest buffered message may wait before its batch is cut
     * @throws IllegalArgumentException if it is not a duration of at least 1 ms
     */
    public java.time.Duration maxBatchDelay() {
        Object v = parameters.get(MAX_BATCH_DELAY_PARAMETER);
        if (v == null) {
            return DEFAULT_MAX_BATCH_DELAY;
        }
        java.time.Duration d = Durations.parse(v, "parameters." + MAX_BATCH_DELAY_PARAMETER);
        if (d.toMillis() < 1) {
            throw new IllegalArgumentException("parameters." + MAX_BATCH_DELAY_PARAMETER + " must be at least 1ms but was '"
                    + v + "'");
        }
        return d;
    }

    /**
     * Whether this is a Transform computation reading a key-partitioned source directly (a
     * flow-kafka extension): a KafkaSource whose topic holds every record of one group-by key in
     * one partition ({@code key_partitioned: true}), read by the keyed computation itself instead
     * of a Source computation and an internal stream. Each source partition is one task; state,
     * timers and outputs are those of the group-by key computed from the source record.
     *
     * @return true for a Transform computation with source streams
     */
    public boolean readsKeyedSource() {
        return kind == ComputationKind.TRANSFORM && !sourceStreams.isEmpty();
    }

    /**
     * The streams whose watermarks a timer stream waits on, with their delays: its {@code streams} /
     * {@code streams_with_delays}, else its entry in {@code streams_dependency} (each stream without delay); null
     * when neither is set, for every input and source stream of the computation.
     *
     * @param timer one of this computation's timer streams
     * @return the watched streams in order, or null
     * @throws IllegalArgumentException for a malformed {@code streams} list or {@code streams_with_delays} map
     */
    public @Nullable Map<String, java.time.Duration> timerWatchedStreams(TimerStreamSpec timer) {
        Map<String, java.time.Duration> own = timer.watchedStreams();
        List<String> dependency = streamsDependency.get(timer.id());
        if (own != null || dependency == null) {
            return own;
        }
        Map<String, java.time.Duration> watched = new LinkedHashMap<>();
        dependency.forEach(d -> watched.put(d, java.time.Duration.ZERO));
        return watched;
    }

    /**
     * A builder for a computation; usually reached through
     * {@link PipelineSpec.Builder#computation(String, java.util.function.Consumer)}.
     *
     * @param id the computation id
     * @return a builder for a Transform computation with the defaults
     */
    public static Builder builder(String id) {
        return new Builder(id);
    }

    /**
     * Builds a {@link ComputationSpec}. Setters are bare and chain; list setters append.
     * {@link #build()} does not check cross-field rules: {@link PipelineSpec#validate()} does, so
     * every mistake is reported at once.
     */
    public static final class Builder {
        private final String id;
        private ComputationKind kind = ComputationKind.TRANSFORM;
        private @Nullable String processingFunction;
        private @Nullable Supplier<? extends ProcessFunction> functionSupplier;
        private final List<String> inputs = new ArrayList<>();
        private final List<String> outputs = new ArrayList<>();
        private final List<SourceSpec> sources = new ArrayList<>();
        private final List<SinkSpec> sinks = new ArrayList<>();
        private final List<GroupByColumn> groupBy = new ArrayList<>();
        private final Map<String, StateSpec> states = new LinkedHashMap<>();
        private final List<TimerStreamSpec> timers = new ArrayList<>();
        private final Map<String, KeyVisitorStreamSpec> visitors = new LinkedHashMap<>();
        private final Map<String, ExternalStateManagerSpec> managers = new LinkedHashMap<>();
        private final Map<String, ExternalStateJoinerSpec> joiners = new LinkedHashMap<>();
        private final Map<String, StateJoinerSpec> stateJoiners = new LinkedHashMap<>();
        private final Map<String, List<String>> dependency = new LinkedHashMap<>();
        private ProcessingMode mode = ProcessingMode.EXACTLY_ONCE;
        private final Map<String, Object> parameters = new LinkedHashMap<>();
        private int partitions = DEFAULT_PARTITION_COUNT;
        private WatermarkStrategy watermarkStrategy = WatermarkStrategy.DEFAULT;

        private Builder(String id) {
            this.id = Objects.requireNonNull(id, "id");
        }

        /**
         * {@code computation_class_name}: the computation kind (default Transform).
         *
         * @param kind the kind
         * @return this builder
         */
        public Builder kind(ComputationKind kind) {
            this.kind = Objects.requireNonNull(kind, "kind");
            return this;
        }

        /**
         * {@code processing_function}: the process function by class name, instantiated with its
         * public no-argument constructor once per task.
         *
         * @param className the fully qualified name of a {@link io.flowkafka.api.RowFunction} or
         *     {@link io.flowkafka.api.BatchFunction}
         * @return this builder
         */
        public Builder processingFunction(String className) {
            this.processingFunction = Objects.requireNonNull(className, "className");
            return this;
        }

        /**
         * The process function as a supplier of new instances (one per task), the programmatic
         * alternative to a class name.
         *
         * @param supplier returns a new instance on each call
         * @return this builder
         */
        public Builder processingFunction(Supplier<? extends ProcessFunction> supplier) {
            this.functionSupplier = Objects.requireNonNull(supplier, "supplier");
            return this;
        }

        /**
         * {@code input_stream_ids}: appends streams this computation reads.
         *
         * @param ids stream ids
         * @return this builder
         */
        public Builder inputStreamIds(String... ids) {
            inputs.addAll(List.of(ids));
            return this;
        }

        /**
         * {@code output_stream_ids}: appends streams this computation writes.
         *
         * @param ids stream ids
         * @return this builder
         */
        public Builder outputStreamIds(String... ids) {
            outputs.addAll(List.of(ids));
            return this;
        }

        /**
         * {@code source_streams}: adds a source writing {@code streamId}.
         *
         * @param streamId the stream the source writes
         * @param sourceClassName the source class, e.g. {@code TKafkaSource}
         * @param parameters the source's settings, as in a spec file (see {@link SourceSpec})
         * @return this builder
         */
        public Builder source(String streamId, String sourceClassName, Map<String, Object> parameters) {
            return source(new SourceSpec(streamId, sourceClassName, parameters));
        }

        /**
         * {@code source_streams}: adds a source.
         *
         * @param source the source
         * @return this builder
         */
        public Builder source(SourceSpec source) {
            sources.add(Objects.requireNonNull(source, "source"));
            return this;
        }

        /**
         * {@code sinks}: adds a sink reading {@code inputStreamIds}.
         *
         * @param id the sink id
         * @param sinkClassName the sink class, e.g. {@code TKafkaSink}
         * @param inputStreamIds the streams the sink reads
         * @param parameters the sink's settings, as in a spec file (see {@link SinkSpec})
         * @return this builder
         */
        public Builder sink(String id, String sinkClassName, List<String> inputStreamIds, Map<String, Object> parameters) {
            return sink(new SinkSpec(id, sinkClassName, inputStreamIds, parameters));
        }

        /**
         * {@code sinks}: adds a sink.
         *
         * @param sink the sink
         * @return this builder
         */
        public Builder sink(SinkSpec sink) {
            sinks.add(Objects.requireNonNull(sink, "sink"));
            return this;
        }

        /**
         * {@code group_by_schema}: appends a group-by column.
         *
         * @param column the column
         * @return this builder
         */
        public Builder groupBy(GroupByColumn column) {
            groupBy.add(Objects.requireNonNull(column, "column"));
            return this;
        }

        /**
         * {@code group_by_schema}: appends a group-by column.
         *
         * @param name the column name
         * @param type the column type
         * @param expression the expression computing it; null: the payload field {@code name}
         * @return this builder
         */
        public Builder groupBy(String name, ColumnType type, @Nullable String expression) {
            return groupBy(new GroupByColumn(name, type, expression));
        }

        /**
         * Declares a per-key state whose value is an Avro record of {@code schema}.
         *
         * @param name the state name
         * @param schema the value schema
         * @return this builder
         * @throws IllegalArgumentException if a state of that name was already declared, or the schema is null
         */
        public Builder state(String name, Schema schema) {
            if (schema == null) {
                throw new IllegalArgumentException("states." + name + ".schema is null (a static Schema field declared "
                        + "below the one building the spec is still null then); give the state's Avro record schema, "
                        + "or use state(name) for a state read with a serde");
            }
            return addState(new StateSpec(name, schema));
        }

        private Builder addState(StateSpec state) {
            if (states.putIfAbsent(state.name(), state) != null) {
                throw new IllegalArgumentException("state '" + state.name() + "' is declared twice; declare each "
                        + "state name once");
            }
            return this;
        }

        /**
         * Declares a per-key state whose value is stored with a user serde (given at access).
         *
         * @param name the state name
         * @return this builder
         * @throws IllegalArgumentException if a state of that name was already declared
         */
        public Builder state(String name) {
            return addState(new StateSpec(name, null));
        }

        /**
         * {@code timers}: adds a timer stream with its spec-file parameters. The typed forms are
         * {@link #timer(String, TimeType)} and {@link #timer(TimerStreamSpec)} with
         * {@link TimerStreamSpec#builder(String)}.
         *
         * @param id the timer stream id
         * @param parameters {@code time_type}, {@code streams}, {@code streams_with_delays},
         *     {@code deduplicate_equal_timestamps} (see {@link TimerStreamSpec})
         * @return this builder
         */
        public Builder timer(String id, Map<String, Object> parameters) {
            return timer(new TimerStreamSpec(id, parameters));
        }

        /**
         * {@code timers}: adds a timer stream of {@code timeType} waiting on every input, the same
         * as {@code timer(id, Map.of("time_type", timeType.specName()))}.
         *
         * @param id the timer stream id
         * @param timeType the scale its trigger timestamps are compared on
         * @return this builder
         */
        public Builder timer(String id, TimeType timeType) {
            return timer(TimerStreamSpec.builder(id).timeType(timeType).build());
        }

        /**
         * {@code timers}: adds a timer stream, e.g. one made with {@link TimerStreamSpec#builder(String)}.
         *
         * @param timer the timer stream
         * @return this builder
         */
        public Builder timer(TimerStreamSpec timer) {
            timers.add(Objects.requireNonNull(timer, "timer"));
            return this;
        }

        /**
         * {@code key_visitor_streams}: adds a key-visitor stream with its spec-file parameters. The
         * typed form is {@link #keyVisitorStream(KeyVisitorStreamSpec)} with
         * {@link KeyVisitorStreamSpec#builder(String)}.
         *
         * @param id the visitor stream id
         * @param parameters its static and dynamic settings (see {@link KeyVisitorStreamSpec})
         * @return this builder
         */
        public Builder keyVisitorStream(String id, Map<String, Object> parameters) {
            return keyVisitorStream(new KeyVisitorStreamSpec(id, parameters));
        }

        /**
         * {@code key_visitor_streams}: adds a key-visitor stream, e.g. one made with
         * {@link KeyVisitorStreamSpec#builder(String)}.
         *
         * @param visitor the visitor stream
         * @return this builder
         * @throws IllegalArgumentException if a key-visitor stream of that id was already added
         */
        public Builder keyVisitorStream(KeyVisitorStreamSpec visitor) {
            if (visitors.putIfAbsent(Objects.requireNonNull(visitor, "visitor").id(), visitor) != null) {
                throw new IllegalArgumentException("key_visitor_streams." + visitor.id() + " is declared twice; "
                        + "declare each key-visitor stream once");
            }
            return this;
        }

        /**
         * {@code streams_dependency}: the streams an output or timer stream depends on.
         *
         * @param stream an output or timer stream id
         * @param dependsOn the streams it depends on
         * @return this builder
         */
        public Builder streamsDependency(String stream, List<String> dependsOn) {
            dependency.put(stream, List.copyOf(dependsOn));
            return this;
        }

        /**
         * {@code processing_mode} (default {@code exactly_once}); see {@link ProcessingMode}.
         *
         * @param mode the mode
         * @return this builder
         */
        public Builder processingMode(ProcessingMode mode) {
            this.mode = Objects.requireNonNull(mode, "mode");
            return this;
        }

        /**
         * Sets {@value ComputationSpec#ALLOW_BATCHING_PARAMETER} in {@code parameters}: SwiftMap
         * batching, with the relaxed guarantees described there.
         *
         * @param allow whether a SwiftMap's BatchFunction gets batches
         * @return this builder
         */
        public Builder allowBatchingWithRelaxedGuarantees(boolean allow) {
            parameters.put(ALLOW_BATCHING_PARAMETER, allow);
            return this;
        }

        /**
         * Sets {@value ComputationSpec#MAX_BATCH_SIZE_PARAMETER} in {@code parameters}.
         *
         * @param size the most input messages in one batch
         * @return this builder
         * @throws IllegalArgumentException if {@code size} is not in [1, {@value ComputationSpec#MAX_BATCH_SIZE_LIMIT}]
         */
        public Builder maxBatchSize(int size) {
            if (size < 1 || size > MAX_BATCH_SIZE_LIMIT) {
                throw new IllegalArgumentException(MAX_BATCH_SIZE_PARAMETER + " must be in [1, " + MAX_BATCH_SIZE_LIMIT
                        + "] but was " + size);
            }
            parameters.put(MAX_BATCH_SIZE_PARAMETER, size);
            return this;
        }

        /**
         * Sets {@value ComputationSpec#MAX_BATCH_DELAY_PARAMETER} in {@code parameters}.
         *
         * @param delay how long the oldest buffered message may wait; stored in milliseconds
         * @return this builder
         * @throws IllegalArgumentException if {@code delay} is shorter than 1 ms
         */
        public Builder maxBatchDelay(java.time.Duration delay) {
            Objects.requireNonNull(delay, "delay");
            if (delay.toMillis() < 1) {
                throw new IllegalArgumentException(MAX_BATCH_DELAY_PARAMETER + " must be at least 1ms but was " + delay);
            }
            parameters.put(MAX_BATCH_DELAY_PARAMETER, delay.toMillis());
            return this;
        }

        /**
         * {@code parameters}: sets one parameter passed to the process function.
         *
         * @param name the parameter name
         * @param value its value
         * @return this builder
         * @throws IllegalArgumentException if the value is null
         */
        public Builder parameter(String name, Object value) {
            if (value == null) {
                throw new IllegalArgumentException("parameters." + name + " is null (an unset environment variable or "
                        + "system property?); give it a value, or leave the parameter out");
            }
            parameters.put(name, value);
            return this;
        }

        /**
         * {@code desired_partition_count}: the partition count of the computation's input topics
         * (default {@value ComputationSpec#DEFAULT_PARTITION_COUNT}).
         *
         * @param count the partition count
         * @return this builder
         * @throws IllegalArgumentException if {@code count < 1}
         */
        public Builder desiredPartitionCount(int count) {
            if (count < 1) {
                throw new IllegalArgumentException("desired_partition_count must be >= 1 but was " + count);
            }
            this.partitions = count;
            return this;
        }

        /**
         * {@code watermark_strategy} of a source computation.
         *
         * @param strategy the strategy
         * @return this builder
         */
        public Builder watermarkStrategy(WatermarkStrategy strategy) {
            this.watermarkStrategy = Objects.requireNonNull(strategy, "strategy");
            return this;
        }

        /**
         * Builds the computation; the builder stays usable.
         *
         * @return the computation
         */
        public ComputationSpec build() {
            return new ComputationSpec(id, kind, processingFunction, functionSupplier, inputs, outputs, sources,
                    sinks, groupBy, states, timers, visitors, dependency, mode, parameters, partitions, watermarkStrategy,
                    managers, joiners, stateJoiners);
        }

        /**
         * {@code external_state_managers}: adds the read-write manager of an external table.
         *
         * @param manager e.g. {@code ExternalStateManagerSpec.of("/reference_state", schema)}
         * @return this builder
         * @throws IllegalArgumentException if external state of that name was already declared
         */
        public Builder externalStateManager(ExternalStateManagerSpec manager) {
            checkExternalName(Objects.requireNonNull(manager, "manager").name());
            managers.put(manager.name(), manager);
            return this;
        }

        /**
         * {@code external_state_joiners}: adds a read-only joiner of an external table.
         *
         * @param joiner e.g. {@code ExternalStateJoinerSpec.of("/reference_state")}
         * @return this builder
         * @throws IllegalArgumentException if external state of that name was already declared
         */
        public Builder externalStateJoiner(ExternalStateJoinerSpec joiner) {
            checkExternalName(Objects.requireNonNull(joiner, "joiner").name());
            joiners.put(joiner.name(), joiner);
            return this;
        }

        /**
         * {@code state_joiners}: adds a read-only view of another computation's state.
         *
         * @param joiner e.g. {@code StateJoinerSpec.of("/totals", "counter", "total")}
         * @return this builder
         * @throws IllegalArgumentException if external state of that name was already declared
         */
        public Builder stateJoiner(StateJoinerSpec joiner) {
            checkExternalName(Objects.requireNonNull(joiner, "joiner").name());
            stateJoiners.put(joiner.name(), joiner);
            return this;
        }

        private void checkExternalName(String name) {
            if (managers.containsKey(name) || joiners.containsKey(name) || stateJoiners.containsKey(name)) {
                throw new IllegalArgumentException("external state '" + name + "' is declared twice; declare each "
                        + "manager, joiner and state joiner name once");
            }
        }
    }
}
