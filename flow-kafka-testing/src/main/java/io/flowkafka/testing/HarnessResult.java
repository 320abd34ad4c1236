package io.flowkafka.testing;

import io.flowkafka.api.MessageId;
import io.flowkafka.spec.ComputationSpec;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import org.apache.avro.generic.GenericRecord;
import org.jspecify.annotations.Nullable;

/**
 * What one process-function call of a {@link ComputationHarness} did: its output messages, the
 * timers it added and its state changes, or the exception it threw.
 *
 * <p>All or nothing, as in the runtime: a call that threw applied none of its effects, and a
 * result that {@link #failed()} has none. Reading {@link #outputs()}, {@link #timers()} or
 * {@link #stateChanges()} of a failed result throws an {@link AssertionError} carrying the
 * exception, so a test that expects success fails with the function's own stack trace; test
 * failures with {@link #failed()} and {@link #failure()}.
 *
 * <p>Immutable.
 */
public final class HarnessResult {
    /** What the call processed. */
    public enum InputKind {
        /** {@code onMessage} / {@code onMessages}. */
        MESSAGE,
        /** {@code onTimer} / {@code onTimers}. */
        TIMER,
        /** {@code onVisit} / {@code onVisits}. */
        VISIT
    }

    /**
     * An output message of a call.
     *
     * @param messageId its id, derived from its parents and its position in the call as the runtime
     *     derives it (from the harness's input ids, which are not the runtime's)
     * @param streamId the output stream
     * @param payload the payload as a consumer would read it (decoded from Avro: strings are
     *     {@code Utf8}; compare them with {@code toString()})
     * @param eventTimestamp nanoseconds: the one the function set, else the input's
     * @param systemTimestamp nanoseconds: the harness clock at the call
     * @param parentIds the call's input, or the ids given to {@code withParentIds}
     */
    public record Output(MessageId messageId, String streamId, GenericRecord payload, long eventTimestamp,
            long systemTimestamp, List<MessageId> parentIds) {
        /**
         * Copies {@code parentIds}.
         *
         * @param messageId the output's id
         * @param streamId the output stream
         * @param payload the payload as a consumer would read it
         * @param eventTimestamp the event timestamp, nanoseconds
         * @param systemTimestamp the system timestamp, nanoseconds
         * @param parentIds the ids of the output's parents
         */
        public Output {
            parentIds = List.copyOf(parentIds);
        }

        /**
         * A payload field, with {@code Utf8} strings turned into {@code String}s.
         *
         * @param field the payload field's name
         * @return the field's value, or null if it is null
         */
        public @Nullable Object get(String field) {
            Object v = payload.get(field);
            return v instanceof CharSequence s ? s.toString() : v;
        }
    }

    /**
     * A state change of a call: the last write of one state of one key.
     *
     * @param state the state name
     * @param key the key (the call's key, or another one for {@code getState(name, key)})
     * @param value the new value (an Avro record for Avro states, else what the serde or class
     *     decodes), empty when the call cleared it
     */
    public record StateChange(String state, GenericRecord key, Optional<Object> value) {
        /**
         * Checks that no component is null.
         *
         * @param state the state name
         * @param key the key whose state changed
         * @param value the new value, empty when the call cleared it
         */
        public StateChange {
            Objects.requireNonNull(state, "state");
            Objects.requireNonNull(key, "key");
            Objects.requireNonNull(value, "value");
        }

        /**
         * Whether the call cleared the state.
         *
         * @return true if the state was cleared
         */
        public boolean cleared() {
            return value.isEmpty();
        }

        /**
         * The new value as an Avro record.
         *
         * @return the new value
         * @throws AssertionError if the call cleared the state, or its value is not an Avro record
         */
        public GenericRecord record() {
            Object v = value.orElseThrow(() -> new AssertionError("state '" + state + "' of key " + key
                    + " was cleared, it has no value"));
            if (!(v instanceof GenericRecord r)) {
                throw new AssertionError("state '" + state + "' is not an Avro record but " + v.getClass().getName());
            }
            return r;
        }
    }

    private final InputKind kind;
    private final String input;
    private final String stream;
    private final GenericRecord key;
    private final MessageId inputId;
    private final List<Output> outputs;
    private final List<HarnessTimer> timers;
    private final List<StateChange> stateChanges;
    private final @Nullable Exception failure;
    /** The computation's output streams and states: a name it does not have is a mistake of the test. */
    private final ComputationSpec computation;

    HarnessResult(ComputationSpec computation, InputKind kind, String input, String stream, GenericRecord key,
            MessageId inputId, List<Output> outputs, List<HarnessTimer> timers, List<StateChange> stateChanges,
            @Nullable Exception failure) {
        this.computation = computation;
        this.kind = kind;
        this.input = input;
        this.stream = stream;
        this.key = key;
        this.inputId = inputId;
        this.outputs = List.copyOf(outputs);
        this.timers = List.copyOf(timers);
        this.stateChanges = List.copyOf(stateChanges);
        this.failure = failure;
    }

    /**
     * What the call processed.
     *
     * @return the kind of input: message, timer or visit
     */
    public InputKind kind() {
        return kind;
    }

    /**
     * The input stream, timer stream or key-visitor stream of the call.
     *
     * @return the stream's id
     */
    public String stream() {
        return stream;
    }

    /**
     * The key of the call.
     *
     * @return the key record
     */
    public GenericRecord key() {
        return key;
    }

    /**
     * The id the harness gave the input message, timer or visit (the parent of the outputs).
     *
     * @return the input's id
     */
    public MessageId inputId() {
        return inputId;
    }

    /**
     * Whether the process function threw (or its outputs could not be written).
     *
     * @return true if the call failed
     */
    public boolean failed() {
        return failure != null;
    }

    /**
     * The exception of a failed call: what the function threw (or the output encoding failure).
     *
     * @return the exception, or empty if the call succeeded
     */
    public Optional<Exception> failure() {
        return Optional.ofNullable(failure);
    }

    /**
     * This result, if the call succeeded.
     *
     * @return this result
     * @throws AssertionError naming the computation and the input, with the exception as cause
     */
    public HarnessResult assertSucceeded() {
        if (failure != null) {
            throw new AssertionError(describeFailure(), failure);
        }
        return this;
    }

    /**
     * The output messages, in the order the function added them.
     *
     * @return the outputs, empty if none
     */
    public List<Output> outputs() {
        assertSucceeded();
        return outputs;
    }

    /**
     * The output messages of one stream.
     *
     * @param streamId an output stream's id
     * @return the stream's outputs in the order added, empty if none
     * @throws IllegalArgumentException if the computation has no such output stream
     */
    public List<Output> outputs(String streamId) {
        if (!computation.outputStreamIds().contains(streamId)) {
            throw new IllegalArgumentException("stream '" + streamId + "' is not an output of computation '"
                    + computation.id() + "'; its outputs are " + computation.outputStreamIds());
        }
        return outputs().stream().filter(o -> o.streamId().equals(streamId)).toList();
    }

    /**
     * The payloads of one stream's output messages.
     *
     * @param streamId an output stream's id
     * @return the payloads in the order added, empty if none
     * @throws IllegalArgumentException if the computation has no such output stream
     */
    public List<GenericRecord> payloads(String streamId) {
        return outputs(streamId).stream().map(Output::payload).toList();
    }

    /**
     * The timers the call added, after merging those of equal stream, key and trigger within the
     * call (with {@code deduplicate_equal_timestamps}); whether they stay pending next to earlier
     * timers shows in {@link ComputationHarness#pendingTimers()}.
     *
     * @return the timers added, empty if none
     */
    public List<HarnessTimer> timers() {
        assertSucceeded();
        return timers;
    }

    /**
     * The state changes: per state and key, the call's last write, in the order first written.
     *
     * @return the state changes, empty if none
     */
    public List<StateChange> stateChanges() {
        assertSucceeded();
        return stateChanges;
    }

    /**
     * The change of state {@code name} of the call's key, if the call wrote it.
     *
     * @param name the state's name
     * @return the change, or empty if the call did not write that state of its key
     * @throws IllegalArgumentException if the computation declares no such state
     */
    public Optional<StateChange> stateChange(String name) {
        if (!computation.states().containsKey(name) && !computation.externalStateManagers().containsKey(name)) {
            throw new IllegalArgumentException("computation '" + computation.id() + "' declares no state '" + name
                    + "'; its states are " + computation.states().keySet() + (computation.externalStateManagers()
                    .isEmpty() ? "" : " and its external state managers " + computation.externalStateManagers()
                    .keySet()));
        }
        return stateChanges().stream()
                .filter(c -> c.state().equals(name) && ComputationHarness.sameKey(c.key(), key)).findFirst();
    }

    /**
     * Whether the call had no effect: no output, timer or state change (false if it failed).
     *
     * @return true if the call succeeded without any effect
     */
    public boolean isEmpty() {
        return failure == null && outputs.isEmpty() && timers.isEmpty() && stateChanges.isEmpty();
    }

    String describeFailure() {
        Exception f = Objects.requireNonNull(failure);
        return input + " failed: " + f.getClass().getName() + (f.getMessage() == null ? "" : ": " + f.getMessage());
    }

    @Override
    public String toString() {
        if (failure != null) {
            return describeFailure();
        }
        return input + ": outputs " + outputs + ", timers " + timers + ", state changes " + stateChanges;
    }
}
