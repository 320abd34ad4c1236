package io.flowkafka.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpServer;
import io.flowkafka.api.Message;
import io.flowkafka.api.OutputCollector;
import io.flowkafka.api.RowFunction;
import io.flowkafka.api.RuntimeContext;
import io.flowkafka.spec.ColumnType;
import io.flowkafka.spec.ComputationKind;
import io.flowkafka.spec.PipelineSpec;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.composite.CompositeMeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.Properties;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link PrometheusEndpoint} and {@link HealthHandler} on a JDK HTTP server (port 0), without a broker: the scrape
 * format and content type, the methods answered, a registry Prometheus cannot scrape, and DOWN before start. The
 * running pipeline (UP, then DOWN after close) is MetricsIT's, on a real broker.
 */
class MetricsHandlersTest {
    private static final Schema EVENT = SchemaBuilder.record("Event").namespace("test").fields()
            .requiredString("user").endRecord();

    /** Does nothing. */
    public static final class Noop implements RowFunction {
        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
        }
    }

    private HttpServer server;
    private final HttpClient http = HttpClient.newHttpClient();

    @BeforeEach
    void startServer() throws Exception {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.start();
    }

    @AfterEach
    void stopServer() {
        server.stop(0);
    }

    private static PipelineSpec spec() {
        return PipelineSpec.builder("health").stream("events", EVENT)
                .computation("read", c -> c.kind(ComputationKind.SOURCE)
                        .source("events", "KafkaSource", Map.of("topics", "in")).outputStreamIds("events"))
                .computation("count", c -> c.inputStreamIds("events").processingFunction(Noop::new)
                        .groupBy("hash", ColumnType.UINT64, "farm_hash(user)"))
                .build();
    }

    private static Properties props() {
        Properties p = new Properties();
        p.put("bootstrap.servers", "localhost:1");
        return p;
    }

    private HttpResponse<String> send(String path, String method) throws Exception {
        URI uri = URI.create("http://127.0.0.1:" + server.getAddress().getPort() + path);
        return http.send(HttpRequest.newBuilder(uri).method(method, HttpRequest.BodyPublishers.noBody())
                .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void shouldServeTheScrapeInPrometheusTextFormat() throws Exception {
        PrometheusMeterRegistry prometheus = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        Counter.builder("flow.dead_letters").tags("pipeline", "p", "computation", "c").register(prometheus)
                .increment(3);
        server.createContext("/metrics", new PrometheusEndpoint(prometheus));

        HttpResponse<String> r = send("/metrics", "GET");

        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.headers().firstValue("Content-Type")).hasValue("text/plain; version=0.0.4; charset=utf-8");
        assertThat(r.body()).contains("flow_dead_letters_total{computation=\"c\",pipeline=\"p\"} 3.0");
    }

    @Test
    void shouldAnswerOnlyGetAndHead() throws Exception {
        server.createContext("/metrics", new PrometheusEndpoint(new PrometheusMeterRegistry(PrometheusConfig.DEFAULT)));

        assertThat(send("/metrics", "HEAD").statusCode()).isEqualTo(200);
        HttpResponse<String> post = send("/metrics", "POST");
        assertThat(post.statusCode()).isEqualTo(405);
        assertThat(post.headers().firstValue("Allow")).hasValue("GET, HEAD");
    }

    @Test
    void shouldFindThePrometheusRegistryInsideACompositeOne() throws Exception {
        PrometheusMeterRegistry prometheus = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        CompositeMeterRegistry composite = new CompositeMeterRegistry();
        composite.add(new SimpleMeterRegistry());
        composite.add(prometheus);
        FlowRuntime runtime = FlowRuntime.create(spec(), props(), composite);
        server.createContext("/metrics", PrometheusEndpoint.of(runtime));

        assertThat(send("/metrics", "GET").body()).as("the runtime's own gauges, through the composite")
                .contains("flow_computation_guarantee{");
    }

    @Test
    void shouldRejectARuntimeWhoseRegistryPrometheusCannotScrapeNamingTheFix() {
        FlowRuntime runtime = FlowRuntime.create(spec(), props());

        assertThatThrownBy(() -> PrometheusEndpoint.of(runtime)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("pipeline 'health'").hasMessageContaining("SimpleMeterRegistry")
                .hasMessageContaining("new PrometheusMeterRegistry(PrometheusConfig.DEFAULT)");
    }

    @Test
    void shouldSayDownWithTheReasonBeforeStart() throws Exception {
        FlowRuntime runtime = FlowRuntime.create(spec(), props());
        server.createContext("/health", new HealthHandler(runtime));

        HttpResponse<String> r = send("/health", "GET");

        assertThat(r.statusCode()).isEqualTo(503);
        assertThat(r.headers().firstValue("Content-Type")).hasValue("application/json");
        assertThat(r.body()).isEqualTo(
                "{\"status\":\"DOWN\",\"reason\":\"pipeline 'health' is not started\",\"state\":\"CREATED\"}");
        assertThat(send("/health", "DELETE").statusCode()).isEqualTo(405);
    }
}
