package io.flowkafka.api;

/**
 * A process function called once per message, timer or visit (Flow's {@code RowFunction}).
 *
 * <p>If a call throws, none of its effects (state writes, outputs, timers) are applied and its
 * input goes to the dead-letter topic with the reason. Example: {@code
 * io.flowkafka.examples.activity.ActivityCounter} in the examples module.
 */
public non-sealed interface RowFunction extends ProcessFunction {
    /**
     * Processes one input message.
     *
     * @param message the message
     * @param output collects the call's outputs and timers
     * @param context the call's context: state, key, watermarks, parameters
     */
    void onMessage(Message message, OutputCollector output, RuntimeContext context);

    /**
     * Processes a fired timer. The default does nothing.
     *
     * @param timer the timer
     * @param output collects the call's outputs and timers
     * @param context the call's context: state, key, watermarks, parameters
     */
    default void onTimer(Timer timer, OutputCollector output, RuntimeContext context) {
    }

    /**
     * Processes a key-visitor visit. The default does nothing.
     *
     * @param visit the visit
     * @param output collects the call's outputs and timers
     * @param context the call's context: state, key, watermarks, parameters
     */
    default void onVisit(Visit visit, OutputCollector output, RuntimeContext context) {
    }
}
