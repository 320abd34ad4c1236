package io.flowkafka.spi;

import io.flowkafka.spec.SinkSpec;
import java.util.List;
import java.util.Set;

/**
 * A family of external sinks ({@code sink_class_name}s): async ones delivered through the
 * transactional outbox, or {@link #synchronous} ones written by a {@link SyncSinkWriter};
 * found with {@link java.util.ServiceLoader} (register the implementation in
 * {@code META-INF/services/io.flowkafka.spi.SinkProvider}). {@code flow-kafka-connectors} provides
 * {@code TKafkaSink}; the spec validator and the runtime look providers up by class name.
 */
public interface SinkProvider {
    /** The {@code sink_class_name}s this provider serves, e.g. {@code TKafkaSink}. */
    Set<String> sinkClassNames();

    /**
     * Checks a sink's parameters at spec load, before anything starts.
     *
     * @return one entry per problem: the field (e.g. {@code parameters.topic}), what is wrong,
     *     and the fix; empty when the sink is valid
     */
    List<Problem> validate(SinkSpec sink);

    /** Whether the sink may set {@code at_most_once_strategy.enabled} (else the spec is rejected). */
    boolean supportsAtMostOnce(SinkSpec sink);

    /** A deliverer of the sink in one runtime instance, created when the runtime starts. */
    OutboxDeliverer createDeliverer(SinkContext context);

    /**
     * Whether the sink is synchronous: written from the process-function calls by a
     * {@link SyncSinkWriter}, every epoch waiting for its acknowledgements, instead of through the
     * outbox. False by default.
     */
    default boolean synchronous(SinkSpec sink) {
        return false;
    }

    /** The writer of a {@link #synchronous} sink in one runtime instance, created when the runtime starts. */
    default SyncSinkWriter createWriter(SinkContext context) {
        throw new UnsupportedOperationException(getClass().getName() + " has no synchronous sinks");
    }

    /** A problem with a sink's spec. */
    record Problem(String field, String message, String fix) {
    }
}
