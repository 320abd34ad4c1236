package io.flowkafka.api;

import java.util.List;

/**
 * A process function called with a batch of inputs (Flow's {@code BatchFunction}).
 *
 * <p>The effects of one call are applied together, or not at all if it throws. Use
 * {@link RuntimeContext#getState(String, org.apache.avro.generic.GenericRecord)} to reach the
 * state of each message's key.
 *
 * <ol>
 *   <li>Limitation: batches currently hold the inputs of one Kafka record (a batch of one).</li>
 * </ol>
 */
public non-sealed interface BatchFunction extends ProcessFunction {
    /** Processes a batch of messages. */
    void onMessages(List<Message> messages, OutputCollector output, RuntimeContext context);

    /** Processes a batch of fired timers. The default does nothing. */
    default void onTimers(List<Timer> timers, OutputCollector output, RuntimeContext context) {
    }

    /** Processes a batch of visits. The default does nothing. */
    default void onVisits(List<Visit> visits, OutputCollector output, RuntimeContext context) {
    }
}
