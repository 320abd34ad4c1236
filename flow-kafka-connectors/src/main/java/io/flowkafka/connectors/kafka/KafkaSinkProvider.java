package io.flowkafka.connectors.kafka;

import io.flowkafka.spec.AtMostOnceStrategy;
import io.flowkafka.spec.SinkSpec;
import io.flowkafka.spi.OutboxDeliverer;
import io.flowkafka.spi.SinkContext;
import io.flowkafka.spi.SinkProvider;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;

/**
 * Flow's {@code TKafkaSink}: an async Kafka sink delivered from the transactional outbox to a topic
 * on any cluster (the pipeline's own by default, another one through
 * {@code flow.sink.<sink id>.bootstrap.servers} and the other {@code flow.sink.<sink id>.*} client
 * properties).
 *
 * <p>Parameters (the record encoding ones are those of the sync {@code KafkaSink}, applied when
 * the message is written to the outbox):
 * <ul>
 *   <li>{@code topic} (required): the target topic;</li>
 *   <li>{@code format} ({@code json} default, or {@code avro}), {@code key_column},
 *       {@code payload_column}, {@code message_id_header}, {@code timestamp}
 *       ({@code event} or {@code system}); or, instead of {@code format} and
 *       {@code payload_column}, {@code value_serde} (a {@code Serde<GenericRecord>} class such as
 *       {@code io.flowkafka.connectors.registry.ConfluentAvroSerde}, told the target topic) with
 *       {@code serde_config} (checked by core's spec validator);</li>
 *   <li>{@code delivery_guarantee}: {@code exactly_once} (default: Kafka transactions on the target
 *       with a progress marker in the same transaction; consumers must read
 *       {@code read_committed}) or {@code at_least_once} (an idempotent producer without
 *       transactions; a restart may write again what was already written);</li>
 *   <li>{@code progress_topic}: where exactly-once markers go (default
 *       {@code <topic>.flow-progress}, created compacted if missing);</li>
 *   <li>{@code max_batch_records} (default 500): the largest outbox batch; exactly once, the ready batches of an
 *       outbox partition (a backlog: up to 10) go in one target transaction with one progress marker.</li>
 * </ul>
 * With {@code at_most_once_strategy.enabled} the sink skips the outbox: messages go to a bounded
 * in-memory queue and are written with an idempotent producer without transactions; a full queue
 * drops messages ({@code flow.sink.dropped}).
 */
public final class KafkaSinkProvider implements SinkProvider {
    /** Flow's exactly-once (or, by parameter, at-least-once) async Kafka sink. */
    public static final String T_KAFKA_SINK = "TKafkaSink";
    /**
     * Flow's synchronous at-least-once Kafka sink: records sent from the calls to a topic on any
     * cluster, each epoch waiting for their acknowledgements (see {@link KafkaSyncWriter}).
     */
    public static final String T_AT_LEAST_ONCE_KAFKA_SINK = "TAtLeastOnceKafkaSink";

    /** The parameters of TAtLeastOnceKafkaSink: the record's encoding, read by core's output router, and the topic. */
    private static final List<String> SYNC_PARAMETERS = RECORD_PARAMETERS;
    /** The parameters of TKafkaSink: those and its delivery's. */
    private static final List<String> ASYNC_PARAMETERS = Stream.concat(RECORD_PARAMETERS.stream(),
            Stream.of("delivery_guarantee", "progress_topic", "max_batch_records")).toList();

    @Override
    public Set<String> sinkClassNames() {
        return Set.of(T_KAFKA_SINK, T_AT_LEAST_ONCE_KAFKA_SINK);
    }

    @Override
    public boolean synchronous(SinkSpec sink) {
        return T_AT_LEAST_ONCE_KAFKA_SINK.equals(sink.sinkClassName());
    }

    @Override
    public io.flowkafka.spi.SyncSinkWriter createWriter(SinkContext context) {
        return new KafkaSyncWriter(context);
    }

    @Override
    public List<Problem> validate(SinkSpec sink) {
        List<Problem> problems = new ArrayList<>();
        Object topic = sink.parameters().get("topic");
        if (!(topic instanceof String t) || t.isBlank()) {
            problems.add(new Problem("parameters.topic", sink.sinkClassName() + " '" + sink.id() + "' "
                    + (topic == null ? "has no 'topic' parameter" : "has an invalid 'topic' parameter " + topic),
                    "set sinks." + sink.id() + ".parameters.topic to the name of the Kafka topic to write"));
        }
        Object guarantee = sink.parameters().getOrDefault("delivery_guarantee", "exactly_once");
        if (synchronous(sink)) {
            for (String p : List.of("delivery_guarantee", "progress_topic", "max_batch_records")) {
                if (sink.parameters().containsKey(p)) {
                    problems.add(new Problem("parameters." + p, T_AT_LEAST_ONCE_KAFKA_SINK + " '" + sink.id()
                            + "' writes synchronously at least once and has no " + p,
                            "remove " + p + ", or use TKafkaSink for exactly-once delivery through the outbox"));
                }
            }
        } else if (!List.of("exactly_once", "at_least_once").contains(String.valueOf(guarantee))) {
            problems.add(new Problem("parameters.delivery_guarantee", "unknown delivery_guarantee '" + guarantee + "'",
                    "set delivery_guarantee to exactly_once (default) or at_least_once"));
        }
        Object format = sink.parameters().getOrDefault("format", "json");
        if (!List.of("json", "avro").contains(String.valueOf(format))) {
            problems.add(new Problem("parameters.format", "unknown format '" + format + "'", "set format to json or avro"));
        }
        Object timestamp = sink.parameters().getOrDefault("timestamp", "event");
        if (!List.of("event", "system").contains(String.valueOf(timestamp))) {
            problems.add(new Problem("parameters.timestamp", "unknown timestamp '" + timestamp + "'",
                    "set timestamp to event (the message's event time, default) or system"));
        }
        List<String> known = synchronous(sink) ? SYNC_PARAMETERS : ASYNC_PARAMETERS;
        for (String name : sink.parameters().keySet()) {
            if (!known.contains(name) && !(synchronous(sink) && ASYNC_PARAMETERS.contains(name))) {
                problems.add(new Problem("parameters." + name, "unknown " + sink.sinkClassName() + " parameter '"
                        + name + "'", "use one of " + known));
            }
        }
        Object max = sink.parameters().getOrDefault("max_batch_records", 500);
        try {
            if (Integer.parseInt(String.valueOf(max)) < 1) {
                throw new NumberFormatException();
            }
        } catch (NumberFormatException e) {
            problems.add(new Problem("parameters.max_batch_records", "max_batch_records must be a positive integer but was "
                    + max, "set max_batch_records to a number such as 500"));
        }
        Object progress = sink.parameters().get("progress_topic");
        if (progress != null && (!(progress instanceof String p) || p.isBlank())) {
            problems.add(new Problem("parameters.progress_topic", "progress_topic must be a topic name but was " + progress,
                    "remove progress_topic to use <topic>.flow-progress, or name a topic"));
        }
        if (!synchronous(sink)) {
            boolean atMostOnce;
            try {
                atMostOnce = AtMostOnceStrategy.of(sink).enabled();
            } catch (IllegalArgumentException e) {
                atMostOnce = false; // a malformed at_most_once_strategy: the spec's own check reports it
            }
            if (atMostOnce && sink.parameters().containsKey("delivery_guarantee")) {
                problems.add(new Problem("parameters.delivery_guarantee", sink.sinkClassName() + " '" + sink.id()
                        + "' has at_most_once_strategy enabled, so it delivers at most once whatever "
                        + "delivery_guarantee " + guarantee + " says", "remove delivery_guarantee, or disable "
                        + "at_most_once_strategy"));
            } else if (progress != null && (atMostOnce || "at_least_once".equals(String.valueOf(guarantee)))) {
                problems.add(new Problem("parameters.progress_topic", sink.sinkClassName() + " '" + sink.id()
                        + "' keeps progress markers only when it delivers exactly once, so progress_topic is never "
                        + "used", "remove progress_topic, or deliver exactly_once"));
            }
        }
        return problems;
    }

    @Override
    public boolean supportsAtMostOnce(SinkSpec sink) {
        return !synchronous(sink);
    }

    @Override
    public OutboxDeliverer createDeliverer(SinkContext context) {
        return new KafkaDeliverer(context);
    }
}
