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
 *     comma-separated string), {@code format} ({@code json} default, or {@code avro}),
 *     {@code event_timestamp_column} (optional; the record timestamp otherwise),
 *     {@code event_timestamp_unit} ({@code ms} default, {@code us}, {@code ns}, {@code s})
 */
public record SourceSpec(String streamId, String sourceClassName, Map<String, Object> parameters) {
    public SourceSpec {
        Objects.requireNonNull(streamId, "streamId");
        Objects.requireNonNull(sourceClassName, "sourceClassName");
        parameters = Map.copyOf(parameters);
    }
}
