package io.flowkafka.api;

import java.util.List;

/**
 * A process function called with a batch of inputs (Flow's {@code BatchFunction}).
 *
 * <p>The effects of one call are applied together, or not at all if it throws. Use
 * {@link RuntimeContext#getState(String, org.apache.avro.generic.GenericRecord)} to reach the
 * state of each message's key.
 *
 * <p>Batches hold the input of one Kafka record (a batch of one), except in a SwiftMap computation
 * with {@link io.flowkafka.spec.ComputationSpec#ALLOW_BATCHING_PARAMETER
 * allow_batching_with_relaxed_guarantees}: there {@link #onMessages} gets up to
 * {@code max_batch_size} messages of any keys, in the order they were read, and
 * <ul>
 *   <li>an output's parents are the whole batch by default, or the messages named with
 *       {@link OutputCollector#withParentIds} (any non-empty subset of the batch);</li>
 *   <li>an output's id derives from the set of its parents, so the same set gives the same id on
 *       a replay whatever the order, and a different set a different id;</li>
 *   <li>the call has no current key: {@link RuntimeContext#getKey()} and
 *       {@link RuntimeContext#getState(String)} throw {@link IllegalStateException}; use
 *       {@code message.getKey()} and {@code getState(name, message.getKey())};</li>
 *   <li>if the call throws, nothing of it is applied and each message of the batch is processed
 *       again alone, so only the messages that fail alone go to the dead-letter topic.</li>
 * </ul>
 * See that parameter for what downstream computations must then accept, and
 * {@code io.flowkafka.testing.SwiftMapBatchingTest} in flow-kafka-testing for a tested example.
 *
 * <ol>
 *   <li>Limitation: timers and visits are always handed over one at a time.</li>
 * </ol>
 */
public non-sealed interface BatchFunction extends ProcessFunction {
    /**
     * Processes a batch of messages.
     *
     * @param messages the batch: not empty, unmodifiable, valid after the call returns
     * @param output collects the call's outputs and timers
     * @param context the call's context: state, key, watermarks, parameters
     */
    void onMessages(List<Message> messages, OutputCollector output, RuntimeContext context);

    /**
     * Processes a batch of fired timers. The default does nothing.
     *
     * @param timers the fired timers
     * @param output collects the call's outputs and timers
     * @param context the call's context: state, key, watermarks, parameters
     */
    default void onTimers(List<Timer> timers, OutputCollector output, RuntimeContext context) {
    }

    /**
     * Processes a batch of visits. The default does nothing.
     *
     * @param visits the visits
     * @param output collects the call's outputs and timers
     * @param context the call's context: state, key, watermarks, parameters
     */
    default void onVisits(List<Visit> visits, OutputCollector output, RuntimeContext context) {
    }
}
