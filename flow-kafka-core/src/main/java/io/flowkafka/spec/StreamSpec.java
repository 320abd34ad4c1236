package io.flowkafka.spec;

import java.util.Objects;
import org.apache.avro.Schema;
import org.jspecify.annotations.Nullable;

/**
 * A declared stream: its id and the Avro schema of its payloads.
 *
 * @param id the stream id; the Kafka topic is {@code <pipeline>.<id>}
 * @param schema the payload schema (an Avro record); null only in a spec that failed validation
 */
public record StreamSpec(String id, @Nullable Schema schema) {
    /**
     * Checks the id.
     *
     * @param id the stream id; not null
     * @param schema the payload schema; null only in a spec that failed validation
     */
    public StreamSpec {
        Objects.requireNonNull(id, "id");
    }
}
