package io.flowkafka.spec;

import java.util.Map;
import java.util.Objects;

/**
 * A key-visitor stream of a computation ({@code key_visitor_streams.<id>}).
 *
 * @param id the visitor stream id
 * @param parameters its settings ({@code names}, {@code external_names}, {@code upstream_streams},
 *     {@code period}, ...); interpreted by the key-visitor engine
 */
public record KeyVisitorStreamSpec(String id, Map<String, Object> parameters) {
    public KeyVisitorStreamSpec {
        Objects.requireNonNull(id, "id");
        parameters = Map.copyOf(parameters);
    }
}
