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
    /**
     * A timer stream from its spec fields.
     *
     * @param id the timer stream id
     * @param parameters its settings, as in a spec file
     */
    public TimerStreamSpec {
        Objects.requireNonNull(id, "id");
        parameters = Map.copyOf(parameters);
    }

    /**
     * A typed builder for a timer stream: the same spec as {@code new TimerStreamSpec(id, parameters)}
     * with the parameters a spec file would give. E.g.
     * {@code TimerStreamSpec.builder("flush").timeType(TimeType.EVENT_TIME).streamWithDelay("clicks", Duration.ofMinutes(5)).build()}.
     *
     * @param id the timer stream id
     * @return a builder with no parameter set (every setting at its default)
     */
    public static Builder builder(String id) {
        return new Builder(id);
    }

    /**
     * Builds a {@link TimerStreamSpec} with typed setters; each sets one parameter under its spec
     * name. Nothing is checked before {@link PipelineSpec#validate()}.
     */
    public static final class Builder {
        private final String id;
        private final Map<String, Object> parameters = new LinkedHashMap<>();
        private final Map<String, Object> delays = new LinkedHashMap<>();

        private Builder(String id) {
            this.id = Objects.requireNonNull(id, "id");
        }

        /**
         * {@code time_type}: the scale the timers' trigger timestamps are compared on.
         *
         * @param timeType event time (the default), system time or real (wall-clock) time
         * @return this builder
         */
        public Builder timeType(TimeType timeType) {
            parameters.put("time_type", Objects.requireNonNull(timeType, "timeType").specName());
            return this;
        }

        /**
         * {@code streams}: appends streams whose watermark this timer stream waits on, with no delay.
         * Without {@code streams} and {@code streams_with_delays} it waits on every input.
         *
         * @param streamIds input stream ids of the computation
         * @return this builder
         */
        public Builder streams(String... streamIds) {
            @SuppressWarnings("unchecked")
            List<String> list = (List<String>) parameters.computeIfAbsent("streams", k -> new ArrayList<String>());
            list.addAll(List.of(streamIds));
            return this;
        }

        /**
         * {@code streams_with_delays}: waits on {@code streamId}'s watermark minus {@code delay}, so
         * that a timer fires only once that stream's events up to {@code delay} late have arrived.
         *
         * @param streamId an input stream id of the computation
         * @param delay the delay, at least zero; stored in milliseconds
         * @return this builder
         */
        public Builder streamWithDelay(String streamId, Duration delay) {
            delays.put(Objects.requireNonNull(streamId, "streamId"), Objects.requireNonNull(delay, "delay").toMillis());
            parameters.put("streams_with_delays", delays);
            return this;
        }

        /**
         * {@code deduplicate_equal_timestamps}: whether two timers of one key with the same trigger
         * timestamp fire once (default true).
         *
         * @param deduplicate false to fire each of them
         * @return this builder
         */
        public Builder deduplicateEqualTimestamps(boolean deduplicate) {
            parameters.put("deduplicate_equal_timestamps", deduplicate);
            return this;
        }

        /**
         * Builds the timer stream; the builder stays usable.
         *
         * @return the timer stream, with the parameters set so far
         */
        public TimerStreamSpec build() {
            Map<String, Object> out = new LinkedHashMap<>(parameters);
            out.computeIfPresent("streams", (k, v) -> List.copyOf((List<?>) v));
            out.computeIfPresent("streams_with_delays",
                    (k, v) -> java.util.Collections.unmodifiableMap(new LinkedHashMap<>((Map<?, ?>) v)));
            return new TimerStreamSpec(id, out);
        }
    }

    /**
     * {@code time_type}.
     *
     * @return the time the timers fire by; {@link TimeType#EVENT_TIME} when unset
     * @throws IllegalArgumentException for an unknown value
     */
    public TimeType timeType() {
        Object t = parameters.get("time_type");
        return t == null ? TimeType.EVENT_TIME : TimeType.parse(t.toString());
    }

    /**
     * {@code deduplicate_equal_timestamps}, default true.
     *
     * @return whether a key keeps at most one timer per trigger timestamp in this stream
     */
    public boolean deduplicateEqualTimestamps() {
        Object d = parameters.get("deduplicate_equal_timestamps");
        return d == null || Boolean.parseBoolean(d.toString());
    }

    /**
     * The streams this timer stream waits on with their delays: {@code streams} (delay 0) and
     * {@code streams_with_delays}; null when neither is set (then: every input of the computation).
     *
     * @return the watched stream ids, each with its delay (a number is milliseconds), in the
     *     order given; null when neither parameter is set
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
                if (!(s instanceof String name) || name.isBlank()) {
                    throw new IllegalArgumentException("timers." + id + ".streams must be a list of stream ids but "
                            + "holds " + (s == null ? "null" : "'" + s + "'"));
                }
                out.put(name, Duration.ZERO);
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

    /**
     * The known parameter names.
     *
     * @return a new, modifiable list of the parameter names of a timer stream
     */
    public static List<String> knownParameters() {
        return new ArrayList<>(List.of("time_type", "streams", "streams_with_delays", "deduplicate_equal_timestamps"));
    }
}
