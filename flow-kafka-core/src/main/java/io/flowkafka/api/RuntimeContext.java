package io.flowkafka.api;

import java.util.Map;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.specific.SpecificRecord;
import org.apache.kafka.common.serialization.Serde;

/**
 * What a process function can see and use besides its input: output builders, per-key state,
 * watermarks, its partition and its parameters.
 *
 * <p>Valid only within the call it was passed to. Not thread-safe.
 */
public interface RuntimeContext {
    /**
     * A builder for a message of an output stream of this computation.
     *
     * @param streamId an output stream of this computation
     * @return a new builder
     * @throws IllegalArgumentException if {@code streamId} is not an output of this computation
     */
    MessageBuilder createMessageBuilder(String streamId);

    /**
     * The state {@code name} of the current key, as an Avro record of the declared schema.
     *
     * @param name a state the computation declares
     * @return the state's accessor
     * @throws IllegalArgumentException if the computation declares no state {@code name}
     */
    StateAccessor<GenericRecord> getState(String name);

    /**
     * The state {@code name} of the current key as a generated Avro class. Since Avro 1.12.2 your
     * generated classes must be trusted (system property {@code org.apache.avro.SERIALIZABLE_PACKAGES}
     * or {@code ClassSecurityValidator.setGlobal}); flow-kafka trusts only its own.
     *
     * @param <T> the generated class
     * @param name a state the computation declares
     * @param type the generated class of the state's schema
     * @return the state's accessor
     */
    <T extends SpecificRecord> StateAccessor<T> getState(String name, Class<T> type);

    /**
     * The state {@code name} of the current key stored with a user serde.
     *
     * @param <T> the value type
     * @param name a state the computation declares without a schema
     * @param serde encodes and decodes its values
     * @return the state's accessor
     */
    <T> StateAccessor<T> getState(String name, Serde<T> serde);

    /**
     * The state {@code name} of another key (for {@link BatchFunction}s, whose calls span keys).
     *
     * @param name a state the computation declares
     * @param key a group-by key of this computation
     * @return the state's accessor
     */
    StateAccessor<GenericRecord> getState(String name, GenericRecord key);

    /**
     * The external state {@code name} of the current key: the row of an external table kept by an external
     * state manager ({@code external_state_managers}, read-write), or read through an external state joiner
     * or a state joiner ({@code external_state_joiners}, {@code state_joiners}, read-only: {@code set} and
     * {@code clear} throw). Rows are Avro records of the table's schema; a manager's writes are applied with
     * the call's other effects, all or nothing.
     *
     * @param name a manager, joiner or state joiner the computation declares, e.g. {@code /reference_state}
     * @return the row's accessor
     * @throws IllegalArgumentException if the computation declares no external state {@code name}
     */
    default StateAccessor<GenericRecord> getExternalState(String name) {
        throw new UnsupportedOperationException("this context has no external state; external state '" + name
                + "' is read in a process-function call");
    }

    /**
     * The external state {@code name} of another key (for {@link BatchFunction}s, whose calls span keys).
     *
     * @param name a manager, joiner or state joiner the computation declares
     * @param key a group-by key of this computation
     * @return the row's accessor
     * @throws IllegalArgumentException if the computation declares no external state {@code name}
     */
    default StateAccessor<GenericRecord> getExternalState(String name, GenericRecord key) {
        throw new UnsupportedOperationException("this context has no external state; external state '" + name
                + "' is read in a process-function call");
    }

    /** {@return the key being processed} */
    GenericRecord getKey();

    /** {@return id of this computation} */
    String getComputationId();

    /** {@return the partition (Kafka Streams task) processing this call, from 0} */
    int getPartition();

    /** {@return the number of partitions of this computation} */
    int getPartitionCount();

    /**
     * The event watermark of an input stream in nanoseconds: every message of that stream with a
     * smaller event timestamp has been processed; a message below it is late.
     *
     * @param streamId an input stream of this computation
     * @return the watermark in nanoseconds
     * @throws IllegalArgumentException if {@code streamId} is not an input of this computation
     */
    long getInputWatermark(String streamId);

    /** {@return the minimum input event watermark over all inputs and sources} */
    long getMinInputWatermark();

    /** {@return the computation's {@code parameters} from the spec (strings, numbers, booleans, lists, maps)} */
    Map<String, Object> getParameters();

    /** {@return wall-clock time in nanoseconds, from the runtime's clock (the test driver's clock in tests)} */
    long currentTimeNanos();
}
