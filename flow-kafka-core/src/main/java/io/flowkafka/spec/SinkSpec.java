package io.flowkafka.spec;

import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * A sink of a computation ({@code sinks} entry).
 *
 * @param id the sink id
 * @param sinkClassName Flow's {@code sink_class_name}, e.g. {@code KafkaSink}
 * @param inputStreamIds the streams it writes out; outputs of the same computation
 * @param parameters sink parameters; for {@code KafkaSink}: {@code topic}, {@code format}
 *     ({@code json} default, or {@code avro}), {@code key_column} (optional),
 *     {@code payload_column} (optional), {@code message_id_header} (optional), or instead of
 *     {@code format} and {@code payload_column} {@code value_serde} (a {@code Serde<GenericRecord>}
 *     class, configured by {@code serde_config} and the deployment properties
 *     {@code flow.serde.*}); async sinks ({@code TKafkaSink}) encode records the same way
 */
public record SinkSpec(String id, String sinkClassName, List<String> inputStreamIds, Map<String, Object> parameters) {
    /**
     * Checks the fields and copies the collections.
     *
     * @param id the sink id; not null
     * @param sinkClassName Flow's {@code sink_class_name}; not null
     * @param inputStreamIds the streams it writes out; copied
     * @param parameters sink parameters; copied (no null keys or values)
     */
    public SinkSpec {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(sinkClassName, "sinkClassName");
        inputStreamIds = List.copyOf(inputStreamIds);
        parameters = Map.copyOf(parameters);
    }
}
