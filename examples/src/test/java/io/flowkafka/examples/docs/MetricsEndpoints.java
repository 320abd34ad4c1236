package io.flowkafka.examples.docs;

import com.sun.net.httpserver.HttpServer;
import io.flowkafka.runtime.FlowRuntime;
import io.flowkafka.runtime.HealthHandler;
import io.flowkafka.runtime.PrometheusEndpoint;
import io.flowkafka.spec.PipelineSpec;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.util.Properties;

/**
 * The metrics snippets of docs/operations.md as compiled code: a runtime on a Prometheus registry, and the scrape
 * and health handlers mounted on an HTTP server of your own (with {@code flow.http.port} the runtime mounts them).
 */
final class MetricsEndpoints {
    private MetricsEndpoints() {
    }

    static FlowRuntime withPrometheus(PipelineSpec spec, Properties props) {
        PrometheusMeterRegistry prometheus = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        FlowRuntime runtime = FlowRuntime.create(spec, props, prometheus);   // or any MeterRegistry
        return runtime;
    }

    static void mount(HttpServer server, FlowRuntime runtime) {
        server.createContext("/metrics", PrometheusEndpoint.of(runtime));
        server.createContext("/health", new HealthHandler(runtime));
    }
}
