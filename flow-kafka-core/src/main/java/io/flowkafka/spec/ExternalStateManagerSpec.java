package io.flowkafka.spec;

import java.util.Map;
import java.util.Objects;
import org.apache.avro.Schema;
import org.jspecify.annotations.Nullable;

/**
 * An external state manager of a computation ({@code external_state_managers."/<name>"}): the one
 * read-write accessor of an external table, a key-value table outside the computation's own states.
 *
 * <p>On Kafka the table is a compacted topic, {@code <pipeline>.external.<name>} unless
 * {@code topic} names another, keyed by the computation's group-by key. Its rows are written in the
 * transaction of the call that set them, with the call's outputs and state. One table has one
 * manager in a pipeline (Flow: a second one fails with "claimed for writing").
 *
 * @param name the name the process function reads it by ({@code getExternalState(name)}), starting
 *     with {@code /} as in Flow
 * @param className {@code external_state_manager_class_name}: {@code TSimpleExternalStateManager}
 *     (Flow's {@code NYT::NFlow::TSimpleExternalStateManager} is accepted)
 * @param schema the Avro record schema of a row's value ({@code parameters.schema})
 * @param topic {@code parameters.topic}: the table's topic; null for the default
 * @param parameters the other parameters as given ({@code schema} and {@code topic} are the fields above; the
 *     validator warns about each, as a manager takes no other)
 */
public record ExternalStateManagerSpec(String name, String className, @Nullable Schema schema, @Nullable String topic,
        Map<String, Object> parameters) {

    /** flow-kafka's short class name of the manager. */
    public static final String SIMPLE = "TSimpleExternalStateManager";

    /**
     * Checks the name and copies the parameters.
     *
     * @param name the accessor name; not null
     * @param className the manager class; not null; Flow's namespace is dropped
     *     ({@link ExternalTables#shortClassName})
     * @param schema the row value schema; null only in a spec that fails validation
     * @param topic the table's topic, or null for the default
     * @param parameters the parameters as given; copied
     */
    public ExternalStateManagerSpec {
        Objects.requireNonNull(name, "name");
        className = ExternalTables.shortClassName(Objects.requireNonNull(className, "className"));
        parameters = Map.copyOf(parameters);
    }

    /**
     * A simple manager of the table named after it, with rows of {@code schema}.
     *
     * @param name the accessor name, e.g. {@code /reference_state}
     * @param schema the Avro record schema of a row's value
     * @return the manager spec
     */
    public static ExternalStateManagerSpec of(String name, Schema schema) {
        return new ExternalStateManagerSpec(name, SIMPLE, schema, null, Map.of());
    }

    /**
     * The same manager writing the table {@code topic}.
     *
     * @param topic a topic name
     * @return a copy with {@code topic} set
     */
    public ExternalStateManagerSpec withTopic(String topic) {
        return new ExternalStateManagerSpec(name, className, schema, topic, parameters);
    }

    /**
     * The table's topic in pipeline {@code pipelineName}.
     *
     * @param pipelineName the pipeline's name
     * @return {@link #topic()}, or the default {@code <pipeline>.external.<name without />}
     */
    public String tableTopic(String pipelineName) {
        return topic != null ? topic : ExternalTables.defaultTopic(pipelineName, name);
    }
}
