package io.flowkafka.connectors.http;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * The meters of one {@code TAsyncHttpSink}, tagged {@code pipeline} and {@code sink} like the outbox service's
 * {@code flow.sink.*} meters: requests by outcome, retries, latency, dead letters and whether the sink is blocked.
 * No tag or value carries a header, a body or a secret.
 *
 * <p>Threading: safe from any thread.
 */
final class HttpSinkMeters {
    private final MeterRegistry registry;
    private final Tags tags;
    private final Counter retries;
    private final Counter deadLetters;
    private final Timer latency;
    /** The outbox partitions blocked now: the sink is blocked while any is (one partition's success says nothing of another's). */
    private final Set<Integer> blocked = ConcurrentHashMap.newKeySet();

    HttpSinkMeters(MeterRegistry registry, String pipeline, String sink) {
        this.registry = registry;
        this.tags = Tags.of("pipeline", pipeline, "sink", sink);
        this.retries = Counter.builder("flow.sink.http.retries").description("HTTP requests sent again after a failure")
                .tags(tags).register(registry);
        this.deadLetters = Counter.builder("flow.sink.http.dead_letters")
                .description("messages the target rejected as the request's fault, sent to the dead-letter topic")
                .tags(tags).register(registry);
        this.latency = Timer.builder("flow.sink.http.latency").description("time from sending a request to its response")
                .tags(tags).register(registry);
        Gauge.builder("flow.sink.http.blocked", blocked, b -> b.isEmpty() ? 0 : 1)
                .description("1 while the sink is blocked: a message's retries were used up and the target must recover")
                .tags(tags).register(registry);
    }

    /**
     * Counts one request.
     *
     * @param outcome {@code 2xx}, {@code 3xx}, {@code 4xx}, {@code 5xx}, {@code timeout} or {@code io_error}
     * @param nanos how long it took
     */
    void request(String outcome, long nanos) {
        Counter.builder("flow.sink.http.requests").description("HTTP requests sent, by outcome").tags(tags)
                .tag("outcome", outcome).register(registry).increment();
        latency.record(nanos, TimeUnit.NANOSECONDS);
    }

    void retry() {
        retries.increment();
    }

    void deadLetter() {
        deadLetters.increment();
    }

    /** Whether outbox partition {@code partition} is blocked now; a partition given up (revoked) is not. */
    void blocked(int partition, boolean now) {
        if (now) {
            blocked.add(partition);
        } else {
            blocked.remove(partition);
        }
    }
}
