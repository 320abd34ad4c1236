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
 * @param processingMode {@code processing_mode}
 * @param parameters {@code parameters}, passed to the process function
 * @param desiredPartitionCount {@code desired_partition_count}; the partition count of the
 *     computation's input topics
 * @param watermarkStrategy {@code watermark_strategy} of a source computation
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
        WatermarkStrategy watermarkStrategy) {

    /** Default {@code desired_partition_count}. */
    public static final int DEFAULT_PARTITION_COUNT = 4;

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
    }

    /** A builder for a computation with the given id. */
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
        private final Map<String, List<String>> dependency = new LinkedHashMap<>();
        private ProcessingMode mode = ProcessingMode.EXACTLY_ONCE;
        private final Map<String, Object> parameters = new LinkedHashMap<>();
        private int partitions = DEFAULT_PARTITION_COUNT;
        private WatermarkStrategy watermarkStrategy = WatermarkStrategy.DEFAULT;

        private Builder(String id) {
            this.id = Objects.requireNonNull(id, "id");
        }

        public Builder kind(ComputationKind kind) {
            this.kind = Objects.requireNonNull(kind, "kind");
            return this;
        }

        /** {@code processing_function}: a class name. */
        public Builder processingFunction(String className) {
            this.processingFunction = Objects.requireNonNull(className, "className");
            return this;
        }

        /** The process function as a supplier of new instances (one per task). */
        public Builder processingFunction(Supplier<? extends ProcessFunction> supplier) {
            this.functionSupplier = Objects.requireNonNull(supplier, "supplier");
            return this;
        }

        public Builder inputStreamIds(String... ids) {
            inputs.addAll(List.of(ids));
            return this;
        }

        public Builder outputStreamIds(String... ids) {
            outputs.addAll(List.of(ids));
            return this;
        }

        /** Adds a source writing {@code streamId}. */
        public Builder source(String streamId, String sourceClassName, Map<String, Object> parameters) {
            sources.add(new SourceSpec(streamId, sourceClassName, parameters));
            return this;
        }

        /** Adds a sink reading {@code inputStreamIds}. */
        public Builder sink(String id, String sinkClassName, List<String> inputStreamIds, Map<String, Object> parameters) {
            sinks.add(new SinkSpec(id, sinkClassName, inputStreamIds, parameters));
            return this;
        }

        /** Appends a group-by column. */
        public Builder groupBy(GroupByColumn column) {
            groupBy.add(Objects.requireNonNull(column, "column"));
            return this;
        }

        /** Appends a group-by column computed by {@code expression} (null: the payload field). */
        public Builder groupBy(String name, ColumnType type, @Nullable String expression) {
            return groupBy(new GroupByColumn(name, type, expression));
        }

        /** Declares a state whose value is an Avro record of {@code schema}. */
        public Builder state(String name, Schema schema) {
            states.put(name, new StateSpec(name, Objects.requireNonNull(schema, "schema")));
            return this;
        }

        /** Declares a state whose value is stored with a user serde (given at access). */
        public Builder state(String name) {
            states.put(name, new StateSpec(name, null));
            return this;
        }

        public Builder timer(String id, Map<String, Object> parameters) {
            timers.add(new TimerStreamSpec(id, parameters));
            return this;
        }

        public Builder keyVisitorStream(String id, Map<String, Object> parameters) {
            visitors.put(id, new KeyVisitorStreamSpec(id, parameters));
            return this;
        }

        public Builder streamsDependency(String stream, List<String> dependsOn) {
            dependency.put(stream, List.copyOf(dependsOn));
            return this;
        }

        public Builder processingMode(ProcessingMode mode) {
            this.mode = Objects.requireNonNull(mode, "mode");
            return this;
        }

        public Builder parameter(String name, Object value) {
            parameters.put(name, Objects.requireNonNull(value, "value"));
            return this;
        }

        /**
         * {@code desired_partition_count}.
         *
         * @throws IllegalArgumentException if {@code count < 1}
         */
        public Builder desiredPartitionCount(int count) {
            if (count < 1) {
                throw new IllegalArgumentException("desired_partition_count must be >= 1 but was " + count);
            }
            this.partitions = count;
            return this;
        }

        /** {@code watermark_strategy} of a source computation. */
        public Builder watermarkStrategy(WatermarkStrategy strategy) {
            this.watermarkStrategy = Objects.requireNonNull(strategy, "strategy");
            return this;
        }

        /** Builds the computation; the builder stays usable. */
        public ComputationSpec build() {
            return new ComputationSpec(id, kind, processingFunction, functionSupplier, inputs, outputs, sources,
                    sinks, groupBy, states, timers, visitors, dependency, mode, parameters, partitions, watermarkStrategy);
        }
    }
}
