package io.flowkafka.spec;

import java.util.Map;
import java.util.Objects;

/**
 * A source of a computation ({@code source_streams} entry): where the messages of
 * {@code streamId} come from.
 *
 * @param streamId the stream the source writes (declared in {@code streams})
 * @param sourceClassName Flow's {@code source_class_name}, e.g. {@code KafkaSource}
 * @param parameters source parameters; for {@code KafkaSource}: {@code topics} (list or
 *     comma-separated string), {@code format} ({@code json} default, or {@code avro}) or
 *     {@code value_serde} (a {@code Serde<GenericRecord>} class, configured by {@code serde_config}
 *     and the deployment properties {@code flow.serde.*}), {@code key_column},
 *     {@code event_timestamp_column} (optional; the record timestamp otherwise),
 *     {@code event_timestamp_unit} ({@code ms} default, {@code us}, {@code ns}, {@code s}),
 *     {@code starting_position} ({@code earliest} default, or {@code latest}), {@code finite},
 *     {@code group_id} with {@code use_consumer_group_offset} (seed the starting offsets from
 *     another consumer group), {@code partition_filter} (e.g. {@code [0, 1, "4-7"]}); unknown
 *     parameters are warned about
 */
public record SourceSpec(String streamId, String sourceClassName, Map<String, Object> parameters) {
    /**
     * Checks the fields and copies the parameters.
     *
     * @param streamId the stream the source writes; not null
     * @param sourceClassName Flow's {@code source_class_name}; not null
     * @param parameters source parameters; copied (no null keys or values)
     */
    public SourceSpec {
        Objects.requireNonNull(streamId, "streamId");
        Objects.requireNonNull(sourceClassName, "sourceClassName");
        parameters = Map.copyOf(parameters);
    }
}
