package io.flowkafka.spec;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A timer stream of a computation ({@code timers} entry; {@code timer_streams} is an alias), with
 * Flow's settings as typed accessors over its parameters.
 *
 * @param id the timer stream id
 * @param parameters its settings: {@code time_type} ({@code event_time} default,
 *     {@code system_time}, {@code real_time}), {@code streams} (the streams whose watermark it
 *     waits on; default every input), {@code streams_with_delays} (stream to a delay subtracted
 *     from that stream's watermark), {@code deduplicate_equal_timestamps} (default true)
 */
public record TimerStreamSpec(String id, Map<String, Object> parameters) {
    public TimerStreamSpec {
        Objects.requireNonNull(id, "id");
        parameters = Map.copyOf(parameters);
    }

    /**
     * {@code time_type}.
     *
     * @throws IllegalArgumentException for an unknown value
     */
    public TimeType timeType() {
        Object t = parameters.get("time_type");
        return t == null ? TimeType.EVENT_TIME : TimeType.parse(t.toString());
    }

    /** {@code deduplicate_equal_timestamps}, default true. */
    public boolean deduplicateEqualTimestamps() {
        Object d = parameters.get("deduplicate_equal_timestamps");
        return d == null || Boolean.parseBoolean(d.toString());
    }

    /**
     * The streams this timer stream waits on with their delays: {@code streams} (delay 0) and
     * {@code streams_with_delays}; null when neither is set (then: every input of the computation).
     *
     * @throws IllegalArgumentException for a malformed list, map or duration
     */
    public @Nullable Map<String, Duration> watchedStreams() {
        Object streams = parameters.get("streams");
        Object delays = parameters.get("streams_with_delays");
        if (streams == null && delays == null) {
            return null;
        }
        Map<String, Duration> out = new LinkedHashMap<>();
        if (streams != null) {
            if (!(streams instanceof Collection<?> c)) {
                throw new IllegalArgumentException("timers." + id + ".streams must be a list of stream ids but was " + streams);
            }
            for (Object s : c) {
                out.put(s.toString(), Duration.ZERO);
            }
        }
        if (delays != null) {
            if (!(delays instanceof Map<?, ?> m)) {
                throw new IllegalArgumentException("timers." + id + ".streams_with_delays must be a map of stream id to "
                        + "duration but was " + delays);
            }
            for (Map.Entry<?, ?> e : m.entrySet()) {
                Object v = e.getValue();
                Duration d = v instanceof Number n ? Duration.ofMillis(n.longValue())
                        : v instanceof Duration dd ? dd
                        : Durations.parse(String.valueOf(v), "timers." + id + ".streams_with_delays." + e.getKey());
                out.put(e.getKey().toString(), d);
            }
        }
        return out;
    }

    /** The known parameter names. */
    public static List<String> knownParameters() {
        return new ArrayList<>(List.of("time_type", "streams", "streams_with_delays", "deduplicate_equal_timestamps"));
    }
}
