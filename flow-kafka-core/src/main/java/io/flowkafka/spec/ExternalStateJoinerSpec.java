package io.flowkafka.spec;

import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import org.apache.avro.Schema;
import org.jspecify.annotations.Nullable;

/**
 * An external state joiner of a computation ({@code external_state_joiners."/<name>"}): a read-only
 * view of an external table, read by the current key.
 *
 * <p>The table is the one a manager of the pipeline writes (the manager of the same name, or the
 * one writing {@code topic}), or a topic written outside the pipeline ({@code topic} and
 * {@code schema} given). A {@code versioned} joiner reads a versioned reference: rows of several
 * versions and a pointer naming the current one, switched with one write.
 *
 * @param name the name the process function reads it by, starting with {@code /}
 * @param className {@code external_state_joiner_class_name}: {@code TSimpleExternalStateJoiner}, or
 *     {@code TStaticTableKeyVisitorJoiner} (a static table scanned by a key visitor; {@code parameters.tables_path})
 * @param schema {@code parameters.schema}: the row value schema; null to take the manager's
 * @param topic {@code parameters.topic}: the table's topic; null for the default of {@code name}
 * @param cacheTtl {@code parameters.cache.ttl}: how long a looked-up row may be reused; null: every
 *     lookup reads the table
 * @param versioned {@code parameters.versioned}: the topic holds a versioned reference
 * @param parameters the other parameters as given: {@code join_on} ({@code key_schema_override}, accepted only
 *     when equal to the computation's {@code group_by_schema}) and anything unknown, which
 *     {@link PipelineSpec#validate()} warns about; {@code schema}, {@code topic}, {@code cache.ttl} and
 *     {@code versioned} are the fields above
 */
public record ExternalStateJoinerSpec(String name, String className, @Nullable Schema schema, @Nullable String topic,
        @Nullable Duration cacheTtl, boolean versioned, Map<String, Object> parameters) {

    /** flow-kafka's short class name of the joiner. */
    public static final String SIMPLE = "TSimpleExternalStateJoiner";

    /** Flow's visitor-driven static-table joiner: a sorted static table scanned beside a key visitor's state scan. */
    public static final String STATIC_TABLE_KEY_VISITOR = "TStaticTableKeyVisitorJoiner";

    /**
     * Checks the name and copies the parameters.
     *
     * @param name the accessor name; not null
     * @param className the joiner class; not null; Flow's namespace is dropped
     *     ({@link ExternalTables#shortClassName})
     * @param schema the row value schema, or null to take the manager's
     * @param topic the table's topic, or null for the default
     * @param cacheTtl the cache TTL, or null for no cache
     * @param versioned whether the topic holds a versioned reference
     * @param parameters the parameters as given; copied
     */
    public ExternalStateJoinerSpec {
        Objects.requireNonNull(name, "name");
        className = ExternalTables.shortClassName(Objects.requireNonNull(className, "className"));
        parameters = Map.copyOf(parameters);
    }

    /**
     * A simple joiner of the table its manager of the same name writes.
     *
     * @param name the accessor name, e.g. {@code /reference_state}
     * @return the joiner spec
     */
    public static ExternalStateJoinerSpec of(String name) {
        return new ExternalStateJoinerSpec(name, SIMPLE, null, null, null, false, Map.of());
    }

    /**
     * The same joiner reading {@code topic}, whose rows have {@code schema} (a table written outside the
     * pipeline, or by a manager writing that topic).
     *
     * @param topic the table's topic
     * @param schema the row value schema; null to take the manager's
     * @return a copy
     */
    public ExternalStateJoinerSpec withTopic(String topic, @Nullable Schema schema) {
        return new ExternalStateJoinerSpec(name, className, schema, topic, cacheTtl, versioned, parameters);
    }

    /**
     * The same joiner reusing a looked-up row for up to {@code ttl}.
     *
     * @param ttl the cache TTL
     * @return a copy
     */
    public ExternalStateJoinerSpec withCacheTtl(Duration ttl) {
        return new ExternalStateJoinerSpec(name, className, schema, topic, ttl, versioned, parameters);
    }

    /**
     * The same joiner reading a versioned reference (see {@code docs/external-state.md}).
     *
     * @return a copy with {@code versioned} set
     */
    public ExternalStateJoinerSpec asVersioned() {
        return new ExternalStateJoinerSpec(name, className, schema, topic, cacheTtl, true, parameters);
    }

    /**
     * The table's topic in pipeline {@code pipelineName}.
     *
     * @param pipelineName the pipeline's name
     * @return {@link #topic()}, or the default of {@link #name()}
     */
    public String tableTopic(String pipelineName) {
        return topic != null ? topic : ExternalTables.defaultTopic(pipelineName, name);
    }
}
