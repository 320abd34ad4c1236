package io.flowkafka.spec;

import java.util.Map;
import java.util.Objects;

/**
 * A state joiner of a computation ({@code state_joiners."/<name>"}): a read-only view of another
 * computation's internal state {@code state_name}, read by the current key (the two computations share
 * their group-by key).
 *
 * <p>On Kafka it reads the other computation's state changelog, so it sees that computation's
 * committed writes, after a lag (eventually consistent).
 *
 * @param name the name the process function reads it by ({@code getExternalState(name)})
 * @param computationId {@code computation_id}: the computation whose state is read
 * @param stateName {@code state_name}: the state read; it must have an Avro schema
 * @param parameters the other fields as given ({@code auto_preload}, {@code join_on}, and Flow's
 *     {@code parameters} object under the key {@code parameters}; checked by
 *     {@link PipelineSpec#validate()})
 */
public record StateJoinerSpec(String name, String computationId, String stateName, Map<String, Object> parameters) {
    /**
     * Checks the fields and copies the parameters.
     *
     * @param name the accessor name; not null
     * @param computationId the computation read; not null
     * @param stateName the state read; not null
     * @param parameters the remaining fields; copied
     */
    public StateJoinerSpec {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(computationId, "computationId");
        Objects.requireNonNull(stateName, "stateName");
        parameters = Map.copyOf(parameters);
    }

    /**
     * A state joiner of {@code computationId}'s state {@code stateName}.
     *
     * @param name the accessor name
     * @param computationId the computation read
     * @param stateName the state read
     * @return the spec
     */
    public static StateJoinerSpec of(String name, String computationId, String stateName) {
        return new StateJoinerSpec(name, computationId, stateName, Map.of());
    }
}
