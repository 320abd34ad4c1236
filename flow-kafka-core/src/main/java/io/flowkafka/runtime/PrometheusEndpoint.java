package io.flowkafka.runtime;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.composite.CompositeMeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * The Prometheus scrape endpoint of a pipeline: a JDK {@link HttpHandler} that answers {@code GET} with the text
 * exposition format ({@value #CONTENT_TYPE}) of a {@link PrometheusMeterRegistry}, meant to be mounted at
 * {@code /metrics} of an {@link com.sun.net.httpserver.HttpServer}. It owns no server and no port.
 *
 * <pre>{@code
 * PrometheusMeterRegistry prometheus = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
 * FlowRuntime runtime = FlowRuntime.create(spec, props, prometheus);
 * server.createContext("/metrics", PrometheusEndpoint.of(runtime));
 * server.createContext("/health", new HealthHandler(runtime));
 * }</pre>
 *
 * <p>Needs {@code io.micrometer:micrometer-registry-prometheus} on the class path (an optional dependency of
 * flow-kafka-core: add it to use this class).
 *
 * <p>Thread-safe: the server may call {@link #handle} from several threads at once.
 */
public final class PrometheusEndpoint implements HttpHandler {
    /** The content type of the answer: Prometheus' text format 0.0.4. */
    public static final String CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

    private final PrometheusMeterRegistry registry;

    /**
     * An endpoint serving {@code registry}.
     *
     * @param registry the registry to scrape
     * @throws NullPointerException if {@code registry} is null
     */
    public PrometheusEndpoint(PrometheusMeterRegistry registry) {
        this.registry = Objects.requireNonNull(registry, "registry");
    }

    /**
     * An endpoint serving the registry of {@code runtime}: the one given to
     * {@link FlowRuntime#create(io.flowkafka.spec.PipelineSpec, java.util.Properties, MeterRegistry)}, or a
     * {@link PrometheusMeterRegistry} inside the {@link CompositeMeterRegistry} given there.
     *
     * @param runtime the runtime, started or not
     * @return the endpoint
     * @throws IllegalArgumentException if the runtime's registry holds no {@link PrometheusMeterRegistry}
     */
    public static PrometheusEndpoint of(FlowRuntime runtime) {
        PrometheusMeterRegistry found = find(runtime.meterRegistry());
        if (found == null) {
            throw new IllegalArgumentException("pipeline '" + runtime.spec().name() + "': its metrics are in a "
                    + runtime.meterRegistry().getClass().getSimpleName() + ", which Prometheus cannot scrape; create "
                    + "the runtime with FlowRuntime.create(spec, props, new PrometheusMeterRegistry("
                    + "PrometheusConfig.DEFAULT)), or a CompositeMeterRegistry that holds one");
        }
        return new PrometheusEndpoint(found);
    }

    private static @Nullable PrometheusMeterRegistry find(MeterRegistry registry) {
        if (registry instanceof PrometheusMeterRegistry p) {
            return p;
        }
        if (registry instanceof CompositeMeterRegistry composite) {
            for (MeterRegistry r : composite.getRegistries()) {
                PrometheusMeterRegistry p = find(r);
                if (p != null) {
                    return p;
                }
            }
        }
        return null;
    }

    /**
     * Answers {@code GET} and {@code HEAD} with the scrape (200), any other method with 405.
     *
     * @throws IOException if the answer cannot be written
     */
    @Override
    public void handle(HttpExchange exchange) throws IOException {
        try (exchange) {
            String method = exchange.getRequestMethod();
            if (!"GET".equals(method) && !"HEAD".equals(method)) {
                exchange.getResponseHeaders().set("Allow", "GET, HEAD");
                exchange.sendResponseHeaders(405, -1);
                return;
            }
            ByteArrayOutputStream body = new ByteArrayOutputStream(16 * 1024);
            registry.scrape(body, CONTENT_TYPE);
            exchange.getResponseHeaders().set("Content-Type", CONTENT_TYPE);
            if ("HEAD".equals(method)) {
                exchange.sendResponseHeaders(200, -1);
                return;
            }
            exchange.sendResponseHeaders(200, body.size());
            try (OutputStream out = exchange.getResponseBody()) {
                body.writeTo(out);
            }
        }
    }
}
