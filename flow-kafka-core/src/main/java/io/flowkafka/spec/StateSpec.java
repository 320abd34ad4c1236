package io.flowkafka.spec;

import java.util.Objects;
import org.apache.avro.Schema;
import org.jspecify.annotations.Nullable;

/**
 * A declared per-key state of a computation.
 *
 * @param name the state name used with {@code RuntimeContext.getState(name)}
 * @param schema the Avro schema of the value; null when the value is stored with a user serde
 */
public record StateSpec(String name, @Nullable Schema schema) {
    /**
     * Checks the name.
     *
     * @param name the state name; not null
     * @param schema the Avro schema of the value; null when the value is stored with a user serde
     */
    public StateSpec {
        Objects.requireNonNull(name, "name");
    }
}
