package io.flowkafka.api;

import java.util.Optional;

/**
 * Per-key state of one declared state name, for the key being processed.
 *
 * <p>Writes are buffered and applied only if the process-function call returns normally; if it
 * throws, none are. An empty state is an absent row: {@link #clear()} deletes it. Valid only
 * within the call that obtained it. Not thread-safe.
 *
 * @param <T> the value type: an Avro record by default, or the type of a user serde
 */
public interface StateAccessor<T> {
    /** {@return the current value, including writes made earlier in this call} */
    Optional<T> get();

    /**
     * The current value or {@code defaultValue} if absent.
     *
     * @param defaultValue returned when no value is present
     * @return the value or {@code defaultValue}
     */
    default T getOrDefault(T defaultValue) {
        return get().orElse(defaultValue);
    }

    /** {@return whether a value is present} */
    default boolean isPresent() {
        return get().isPresent();
    }

    /**
     * Replaces the value.
     *
     * @param value the new value
     */
    void set(T value);

    /** Deletes the value. */
    void clear();

    /**
     * A new value for this state, to fill and {@link #set}: an Avro record of the state's declared schema
     * whose fields with a default hold it and the others null. A function whose spec is a JSON or YAML
     * file needs no copy of the schema in Java.
     *
     * @return a new record, not stored until {@link #set}
     * @throws UnsupportedOperationException if the state is read with a user serde or as a specific record
     */
    default T newRecord() {
        throw new UnsupportedOperationException("newRecord() needs a state read as an Avro GenericRecord "
                + "(getState(name)); build the value yourself for a state read with a serde or a specific class");
    }
}
