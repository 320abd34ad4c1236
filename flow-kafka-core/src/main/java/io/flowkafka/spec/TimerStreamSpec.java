package io.flowkafka.spec;

import java.util.Map;
import java.util.Objects;

/**
 * A timer stream of a computation ({@code timers} entry; {@code timer_streams} is an alias).
 *
 * @param id the timer stream id
 * @param parameters its settings ({@code time_type}, {@code streams}, {@code streams_with_delays},
 *     {@code deduplicate_equal_timestamps}); interpreted by the timer engine
 */
public record TimerStreamSpec(String id, Map<String, Object> parameters) {
    public TimerStreamSpec {
        Objects.requireNonNull(id, "id");
        parameters = Map.copyOf(parameters);
    }
}
