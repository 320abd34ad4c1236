/**
 * The process-function API: what a computation's user code implements and receives. Start here.
 *
 * <h2>Where to start</h2>
 * <ol>
 *   <li>Describe the pipeline: {@link io.flowkafka.spec.PipelineSpec#builder(String)} declares its
 *       streams and computations (or {@link io.flowkafka.spec.PipelineSpecLoader} reads a spec
 *       file); {@link io.flowkafka.spec.PipelineSpec#validate()} reports every mistake at once.</li>
 *   <li>Write each computation's code: a {@link io.flowkafka.api.RowFunction} gets one message at a
 *       time ({@link io.flowkafka.api.RowFunction#onMessage}) and timers, reads and writes per-key
 *       state through {@link io.flowkafka.api.StateAccessor}, and emits messages and timers through
 *       {@link io.flowkafka.api.OutputCollector}; a {@link io.flowkafka.api.BatchFunction} gets
 *       batches (SwiftMap).</li>
 *   <li>Test it without a broker: {@code io.flowkafka.testing.FlowTestDriver} (module
 *       {@code flow-kafka-testing}) runs the whole pipeline deterministically.</li>
 *   <li>Run it: {@link io.flowkafka.runtime.FlowRuntime#create} with the spec and the
 *       {@code Properties} of Kafka Streams plus the {@code flow.*} keys of
 *       {@link io.flowkafka.runtime.FlowConfig} (docs/configuration.md lists them all).</li>
 * </ol>
 *
 * <p>Names follow YTsaurus Flow's Java API ({@link io.flowkafka.api.RowFunction#onMessage},
 * {@link io.flowkafka.api.OutputCollector#addTimer}) so that a Flow user recognises them.
 * All timestamps are nanoseconds since the epoch, as in Flow.
 */
@NullMarked
package io.flowkafka.api;

import org.jspecify.annotations.NullMarked;
