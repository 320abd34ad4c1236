package io.flowkafka.connectors.http;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

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
    private final AtomicInteger blocked = new AtomicInteger();

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
        Gauge.builder("flow.sink.http.blocked", blocked, AtomicInteger::get)
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

    void blocked(boolean now) {
        blocked.set(now ? 1 : 0);
    }
}
