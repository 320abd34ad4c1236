package io.flowkafka.spi;

import io.flowkafka.spec.ComputationSpec;
import io.flowkafka.spec.SinkSpec;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.avro.Schema;

/**
 * A family of external sinks ({@code sink_class_name}s): async ones delivered through the
 * transactional outbox, or {@link #synchronous} ones written by a {@link SyncSinkWriter};
 * found with {@link java.util.ServiceLoader} (register the implementation in
 * {@code META-INF/services/io.flowkafka.spi.SinkProvider}). {@code flow-kafka-connectors} provides
 * {@code TKafkaSink}; the spec validator and the runtime look providers up by class name.
 */
public interface SinkProvider {
    /**
     * The parameters of a Kafka sink's record that core's output router reads (its encoding, key, id header and
     * timestamp), and {@code at_most_once_strategy}: every Kafka sink accepts them.
     */
    List<String> RECORD_PARAMETERS = List.of("topic", "format", "value_serde", "serde_config", "key_column",
            "payload_column", "message_id_header", "timestamp", "at_most_once_strategy");

    /**
     * The {@code sink_class_name}s this provider serves, e.g. {@code TKafkaSink}.
     *
     * @return the class names, not empty
     */
    Set<String> sinkClassNames();

    /**
     * Checks a sink's parameters at spec load, before anything starts.
     *
     * @param sink a sink whose {@code sink_class_name} this provider serves
     * @return one entry per problem: the field (e.g. {@code parameters.topic}), what is wrong,
     *     and the fix; empty when the sink is valid
     */
    List<Problem> validate(SinkSpec sink);

    /**
     * Checks a sink against the computation that writes it and its input streams, at spec load: what the sink needs
     * of its input that its parameters alone do not show (message ids that increase, a column of the input's schema).
     * By default {@link #validate(SinkSpec)}.
     *
     * @param computation the computation that declares the sink
     * @param sink a sink whose {@code sink_class_name} this provider serves
     * @param inputSchemas the schema of each input stream the spec declares with one
     * @return one entry per problem, as {@link #validate(SinkSpec)}
     */
    default List<Problem> validate(ComputationSpec computation, SinkSpec sink, Map<String, Schema> inputSchemas) {
        return validate(sink);
    }

    /**
     * Whether the sink may set {@code at_most_once_strategy.enabled} (else the spec is rejected).
     *
     * @param sink a sink whose {@code sink_class_name} this provider serves
     * @return true if the sink supports at-most-once delivery
     */
    boolean supportsAtMostOnce(SinkSpec sink);

    /**
     * A deliverer of the sink in one runtime instance, created when the runtime starts.
     *
     * @param context the sink's spec and deployment settings in this instance
     * @return a new deliverer, owned (and closed) by the runtime
     */
    OutboxDeliverer createDeliverer(SinkContext context);

    /**
     * Whether the sink is synchronous: written from the process-function calls by a
     * {@link SyncSinkWriter}, every epoch waiting for its acknowledgements, instead of through the
     * outbox. False by default.
     *
     * @param sink a sink whose {@code sink_class_name} this provider serves
     * @return true if the sink is written by {@link #createWriter}, false if through the outbox
     */
    default boolean synchronous(SinkSpec sink) {
        return false;
    }

    /**
     * Whether the sink is a {@link #synchronous} one written exactly once by a {@link StagedSinkWriter}: the writing
     * task records what each epoch staged in a changelogged store of its own. False by default.
     *
     * @param sink a sink whose {@code sink_class_name} this provider serves
     * @return true if {@link #createWriter} returns a {@link StagedSinkWriter}
     */
    default boolean staged(SinkSpec sink) {
        return false;
    }

    /**
     * The writer of a {@link #synchronous} sink in one runtime instance, created when the runtime starts.
     *
     * @param context the sink's spec and deployment settings in this instance
     * @return a new writer, owned (and closed) by the runtime
     * @throws UnsupportedOperationException by default: the provider has no synchronous sinks
     */
    default SyncSinkWriter createWriter(SinkContext context) {
        throw new UnsupportedOperationException(getClass().getName() + " has no synchronous sinks");
    }

    /**
     * A problem with a sink's spec.
     *
     * @param field the field relative to the sink, e.g. {@code parameters.topic}
     * @param message what is wrong, naming the offending value
     * @param fix how to fix it
     */
    record Problem(String field, String message, String fix) {
    }
}
