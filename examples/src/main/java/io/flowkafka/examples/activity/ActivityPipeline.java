package io.flowkafka.examples.activity;

import io.flowkafka.spec.ColumnType;
import io.flowkafka.spec.ComputationKind;
import io.flowkafka.spec.PipelineSpec;
import java.util.List;
import java.util.Map;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;

/**
 * The demo pipeline: per-user activity counters.
 *
 * <pre>
 *   topic user-events (JSON {"user", "action", "ts"})
 *     -> read (Source)            source stream user_events, output stream events
 *     -> count (Transform, state) stream activity_counts
 *     -> KafkaSink                topic user-activity-counts (JSON {"user", "count"})
 * </pre>
 */
public final class ActivityPipeline {
    /** Payload of the {@code events} stream. */
    public static final Schema EVENT_SCHEMA = SchemaBuilder.record("UserEvent").namespace("io.flowkafka.examples")
            .fields().requiredString("user").requiredString("action").requiredLong("ts").endRecord();
    /** Payload of the {@code activity_counts} stream. */
    public static final Schema COUNT_SCHEMA = SchemaBuilder.record("ActivityCount").namespace("io.flowkafka.examples")
            .fields().requiredString("user").requiredLong("count").endRecord();
    /** Value of the {@code totals} state. */
    public static final Schema TOTALS_SCHEMA = SchemaBuilder.record("Totals").namespace("io.flowkafka.examples")
            .fields().requiredLong("count").endRecord();

    private ActivityPipeline() {
    }

    /** The spec, reading {@code inputTopic} and writing {@code outputTopic}. */
    public static PipelineSpec spec(String name, String inputTopic, String outputTopic, int partitions) {
        // tag::spec[]
        return PipelineSpec.builder(name)
                .stream("user_events", EVENT_SCHEMA)
                .stream("events", EVENT_SCHEMA)
                .stream("activity_counts", COUNT_SCHEMA)
                .computation("read", c -> c.kind(ComputationKind.SOURCE)
                        .source("user_events", "KafkaSource", Map.of("topics", inputTopic, "event_timestamp_column", "ts"))
                        .outputStreamIds("events"))
                .computation("count", c -> c.inputStreamIds("events")
                        .groupBy("hash", ColumnType.UINT64, "farm_hash(user)")
                        .groupBy("user", ColumnType.STRING, null)
                        .state("totals", TOTALS_SCHEMA)
                        .processingFunction(ActivityCounter::new)
                        .outputStreamIds("activity_counts")
                        .sink("counts_topic", "KafkaSink", List.of("activity_counts"), Map.of("topic", outputTopic))
                        .desiredPartitionCount(partitions))
                .build();
        // end::spec[]
    }
}
