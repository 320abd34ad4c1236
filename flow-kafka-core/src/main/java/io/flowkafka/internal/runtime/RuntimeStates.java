package io.flowkafka.internal.runtime;

import io.flowkafka.runtime.FlowRuntime.State;
import org.apache.kafka.streams.KafkaStreams;

/**
 * What a Kafka Streams state change means for the runtime's own {@link State}. The rules it keeps: a stop ends only
 * in stopped, and a stop of the runtime's own is stopped only once it closed its sinks too (the stop says so, not
 * Kafka Streams); completed is terminal until the runtime is closed; rebalances do not end a drain, a shutdown or an
 * error does.
 *
 * <p>Thread-safe: holds no state.
 */
public final class RuntimeStates {
    private RuntimeStates() {
    }

    /**
     * The runtime's state after Kafka Streams moved to {@code s}.
     *
     * @param stopRunning whether the runtime's stop is running: it sets STOPPED itself once its sinks are closed
     */
    public static State next(State current, KafkaStreams.State s, boolean paused, boolean stopRunning) {
        if (current == State.STOPPING || current == State.STOPPED) {
            return s == KafkaStreams.State.NOT_RUNNING && !stopRunning ? State.STOPPED : current;
        }
        if (current == State.COMPLETED && (s == KafkaStreams.State.RUNNING || s == KafkaStreams.State.REBALANCING)) {
            return current; // completed is terminal until the runtime is closed
        }
        if (current == State.DRAINING) {
            // rebalances do not end a drain; a shutdown or an error does
            return switch (s) {
                case PENDING_SHUTDOWN -> State.STOPPING;
                case NOT_RUNNING -> State.STOPPED;
                case PENDING_ERROR, ERROR -> State.FAILED;
                default -> current;
            };
        }
        return switch (s) {
            case CREATED, REBALANCING -> State.STARTING;
            case RUNNING -> paused ? State.PAUSED : State.RUNNING;
            case PENDING_SHUTDOWN -> State.STOPPING;
            case NOT_RUNNING -> State.STOPPED;
            case PENDING_ERROR, ERROR -> State.FAILED;
            default -> current;
        };
    }
}
