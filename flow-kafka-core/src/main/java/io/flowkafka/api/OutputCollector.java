package io.flowkafka.api;

import java.util.List;

/**
 * Collects the effects of one process-function call: output messages and timers.
 *
 * <p>Effects are applied only if the call returns normally. Not thread-safe; valid only within
 * the call it was passed to.
 */
public interface OutputCollector {
    /**
     * Adds an output message, built with {@link RuntimeContext#createMessageBuilder}.
     *
     * @param message the message
     * @throws IllegalArgumentException if the message's stream is not an output of this computation
     */
    void addMessage(Message message);

    /**
     * Adds a timer of the default timer stream for the current key, with its event timestamp equal
     * to its trigger timestamp.
     *
     * @param triggerTimestamp nanoseconds; the timer fires when its watermark exceeds it
     */
    default void addTimer(long triggerTimestamp) {
        addTimer(triggerTimestamp, triggerTimestamp);
    }

    /**
     * Adds a timer of the default (first declared) timer stream for the current key.
     *
     * @param triggerTimestamp nanoseconds; the timer fires when its watermark exceeds it
     * @param eventTimestamp nanoseconds; the timer's outputs inherit it, and it holds the watermark
     *     while pending
     */
    void addTimer(long triggerTimestamp, long eventTimestamp);

    /**
     * Adds a timer of the named timer stream for the current key.
     *
     * @param timerStreamId a timer stream of the computation
     * @param triggerTimestamp nanoseconds; the timer fires when its watermark exceeds it
     * @param eventTimestamp nanoseconds; the timer's outputs inherit it, and it holds the watermark
     *     while pending
     * @throws IllegalArgumentException if the computation declares no such timer stream
     */
    void addTimer(String timerStreamId, long triggerTimestamp, long eventTimestamp);

    /**
     * A collector whose outputs have the given parents instead of the current message (Flow's
     * {@code setParentIds}). Parents are a set: their order and repeats do not matter, and an
     * output with several parents gets an id derived from that set. In a Transform they may name
     * messages of earlier calls (ids kept in state); the output's id then also derives from the
     * call's input, so outputs of two calls naming the same earlier message get different ids.
     *
     * <p>In a SwiftMap computation, each output has exactly one parent, the message being processed,
     * unless {@link io.flowkafka.spec.ComputationSpec#ALLOW_BATCHING_PARAMETER
     * allow_batching_with_relaxed_guarantees} is on; then the parents may be any non-empty subset of
     * the batch passed to {@link BatchFunction#onMessages}.
     *
     * @param parentIds the parents' message ids
     * @return a collector adding outputs with those parents
     * @throws IllegalArgumentException if {@code parentIds} is empty, or, in a SwiftMap computation,
     *     names a message that is not an input of the current call, or several messages without
     *     {@code allow_batching_with_relaxed_guarantees}
     */
    OutputCollector withParentIds(List<MessageId> parentIds);

    /**
     * Flow's name of {@link #withParentIds}.
     *
     * @param parentIds the parents' message ids
     * @return a collector adding outputs with those parents
     * @throws IllegalArgumentException as {@link #withParentIds}
     */
    default OutputCollector setParentIds(List<MessageId> parentIds) {
        return withParentIds(parentIds);
    }
}
