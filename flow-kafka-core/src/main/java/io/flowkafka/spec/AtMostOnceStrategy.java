package io.flowkafka.spec;

import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * An async sink's {@code at_most_once_strategy} (reference 002, "At-most-once semantics"): the
 * sink's messages skip the transactional outbox and go to an in-memory queue of at most
 * {@code total_queue_bytes_limit} bytes; a message that does not fit is dropped (counted by the
 * metric {@code flow.sink.dropped}, with a warning). When the runtime stops, the queue is
 * delivered for at most {@code suspend_destruction_duration}, then dropped. Only sinks that
 * support it accept it (e.g. {@code TKafkaSink}); the spec is rejected otherwise.
 *
 * <p>Spec shape, as in Flow (flow-kafka also accepts it inside the sink's parameters):
 * {@code "sinks": {"s": {"at_most_once_strategy": {"enabled": true, "total_queue_bytes_limit":
 * 104857600, "suspend_destruction_duration": 60000}, ...}}}. {@code total_queue_bytes_limit} is
 * dynamic: {@code FlowRuntime.reconfigure({"computations": {"c": {"sinks": {"s":
 * {"at_most_once_strategy": {"total_queue_bytes_limit": 1048576}}}}}})}.
 *
 * @param enabled whether the sink runs at most once
 * @param totalQueueBytesLimit the queue's bound in bytes (default 100 MiB)
 * @param suspendDestructionDuration how long a stopping runtime keeps delivering the queue (default 1 min)
 */
public record AtMostOnceStrategy(boolean enabled, long totalQueueBytesLimit, Duration suspendDestructionDuration) {
    /** The default queue bound: 100 MiB. */
    public static final long DEFAULT_TOTAL_QUEUE_BYTES_LIMIT = 100L * 1024 * 1024;
    /** The default time a stopping runtime keeps delivering: 1 minute. */
    public static final Duration DEFAULT_SUSPEND_DESTRUCTION_DURATION = Duration.ofMinutes(1);
    /** Disabled (the default). */
    public static final AtMostOnceStrategy DISABLED = new AtMostOnceStrategy(false, DEFAULT_TOTAL_QUEUE_BYTES_LIMIT,
            DEFAULT_SUSPEND_DESTRUCTION_DURATION);
    private static final List<String> FIELDS = List.of("enabled", "total_queue_bytes_limit", "suspend_destruction_duration");

    /**
     * The strategy of a sink ({@code parameters.at_most_once_strategy}).
     *
     * @param sink the sink whose parameters are read
     * @return the parsed strategy; {@link #DISABLED} when the sink sets none
     * @throws IllegalArgumentException naming the field of the first malformed value
     */
    public static AtMostOnceStrategy of(SinkSpec sink) {
        Object v = sink.parameters().get("at_most_once_strategy");
        if (v == null) {
            return DISABLED;
        }
        String field = "sinks." + sink.id() + ".at_most_once_strategy";
        if (!(v instanceof Map<?, ?> m)) {
            throw new IllegalArgumentException(field + " must be a map like {\"enabled\": true} but was " + v);
        }
        for (Object k : m.keySet()) {
            if (!FIELDS.contains(String.valueOf(k))) {
                throw new IllegalArgumentException(field + "." + k + " is not a field of at_most_once_strategy; use "
                        + FIELDS);
            }
        }
        Object enabled = m.containsKey("enabled") ? m.get("enabled") : false;
        if (!(enabled instanceof Boolean) && !"true".equals(String.valueOf(enabled))
                && !"false".equals(String.valueOf(enabled))) {
            throw new IllegalArgumentException(field + ".enabled must be true or false but was " + enabled);
        }
        return new AtMostOnceStrategy(Boolean.parseBoolean(String.valueOf(enabled)),
                bytes(m.get("total_queue_bytes_limit"), field + ".total_queue_bytes_limit"),
                m.containsKey("suspend_destruction_duration")
                        ? Durations.parse(m.get("suspend_destruction_duration"), field + ".suspend_destruction_duration")
                        : DEFAULT_SUSPEND_DESTRUCTION_DURATION);
    }

    /**
     * A {@code total_queue_bytes_limit} value: a positive number of bytes.
     *
     * @param value a number or its text; null for the default
     * @param field the field's name, for the error message
     * @return the limit in bytes; {@link #DEFAULT_TOTAL_QUEUE_BYTES_LIMIT} when {@code value} is null
     * @throws IllegalArgumentException naming {@code field} if {@code value} is not a positive number
     */
    public static long bytes(Object value, String field) {
        if (value == null) {
            return DEFAULT_TOTAL_QUEUE_BYTES_LIMIT;
        }
        try {
            long n = value instanceof Number num ? num.longValue() : Long.parseLong(String.valueOf(value).trim());
            if (n > 0) {
                return n;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new IllegalArgumentException(field + " must be a positive number of bytes but was " + value);
    }
}
