package io.flowkafka.internal.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.flowkafka.api.FlowException;
import io.flowkafka.spec.ColumnType;
import io.flowkafka.spec.ComputationKind;
import io.flowkafka.spec.PipelineSpec;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.junit.jupiter.api.Test;

/** The operations server's mounting by exact path, its answers to other paths and methods, and the status page. */
class OperationsServerTest {
    private static final Schema CLICK = SchemaBuilder.record("Click").namespace("ops.test").fields()
            .requiredString("user").endRecord();
    private final HttpClient http = HttpClient.newHttpClient();

    private HttpResponse<String> send(OperationsServer server, String method, String path) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://" + server.hostAndPort() + path))
                .method(method, HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void shouldServeAMountedPathExactlyAndAnswer404And405Otherwise() throws Exception {
        try (OperationsServer server = OperationsServer.start("p", "127.0.0.1", 0)) {
            assertThat(server.address().getPort()).isPositive();
            server.mount("/metrics", "text/plain", () -> "m 1\n".getBytes(StandardCharsets.UTF_8));

            HttpResponse<String> ok = send(server, "GET", "/metrics");
            assertThat(ok.statusCode()).isEqualTo(200);
            assertThat(ok.body()).isEqualTo("m 1\n");
            assertThat(ok.headers().firstValue("Content-Type")).hasValue("text/plain");
            assertThat(send(server, "GET", "/metrics/x").statusCode()).isEqualTo(404);
            assertThat(send(server, "GET", "/other").statusCode()).isEqualTo(404);
            assertThat(send(server, "POST", "/metrics").statusCode()).isEqualTo(405);
            assertThatThrownBy(() -> server.mount("metrics", "text/plain", () -> new byte[0]))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("must start with '/'");
        }
    }

    @Test
    void shouldNameThePropertiesToChangeWhenThePortIsTaken() {
        try (OperationsServer first = OperationsServer.start("p", "127.0.0.1", 0)) {
            assertThatThrownBy(() -> OperationsServer.start("p", "127.0.0.1", first.address().getPort()))
                    .isInstanceOf(FlowException.class).hasMessageContaining("pipeline 'p'")
                    .hasMessageContaining("flow.http.port").hasMessageContaining("flow.http.host");
        }
    }

    @Test
    void shouldServeThePageTheGraphAndTheViewOfEveryInstance() throws Exception {
        PipelineSpec spec = PipelineSpec.builder("shop").stream("raw", CLICK).stream("clicks", CLICK)
                .computation("read", c -> c.kind(ComputationKind.SOURCE)
                        .source("raw", "KafkaSource", Map.of("topics", "in")).outputStreamIds("clicks"))
                .computation("count", c -> c.inputStreamIds("clicks").groupBy("user", ColumnType.STRING, null)
                        .desiredPartitionCount(3).processingFunction("x.Y")
                        .sink("out", "KafkaSink", List.of("clicks"), Map.of("topic", "counts")))
                .build();
        ObjectMapper json = new ObjectMapper();
        try (OperationsServer server = OperationsServer.start("shop", "127.0.0.1", 0)) {
            StatusPage.mount(server, spec, () -> json.createObjectNode().put("pipeline", "shop"));

            HttpResponse<String> page = send(server, "GET", "/");
            assertThat(page.statusCode()).isEqualTo(200);
            assertThat(page.body()).contains("<script>").contains("status.json").contains("graph.json");
            assertThat(json.readTree(send(server, "GET", "/status.json").body()).path("pipeline").asText())
                    .isEqualTo("shop");
            JsonNode graph = json.readTree(send(server, "GET", "/graph.json").body());
            JsonNode read = graph.path("computations").get(0);
            JsonNode count = graph.path("computations").get(1);
            assertThat(read.path("id").asText()).isEqualTo("read");
            assertThat(read.path("partitions").isNull()).as("a source computation's partitions: its topics'").isTrue();
            assertThat(read.path("sources").get(0).path("topics").get(0).asText()).isEqualTo("in");
            assertThat(count.path("partitions").asInt()).isEqualTo(3);
            assertThat(count.path("inputs").get(0).asText()).isEqualTo("clicks");
            assertThat(count.path("sinks").get(0).path("topic").asText()).isEqualTo("counts");
        }
    }

    /**
     * A slow handler (a state query waiting on another instance) must not hold the threads that answer /health: a
     * liveness probe that times out restarts a healthy instance. Past its pool and queue, a slow path answers 503.
     */
    @Test
    void shouldAnswerHealthWhileSlowRequestsWait() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        Semaphore started = new Semaphore(0);
        try (OperationsServer server = OperationsServer.start("p", "127.0.0.1", 0)) {
            server.mountSlow("/states", exchange -> {
                started.release();
                try {
                    release.await(60, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                OperationsServer.respond(exchange, 200, "text/plain", "late\n".getBytes(StandardCharsets.UTF_8));
            }, Set.of("GET"));
            server.mount("/health", "text/plain", () -> "ok\n".getBytes(StandardCharsets.UTF_8));

            int held = OperationsServer.SLOW_THREADS + OperationsServer.SLOW_QUEUE;
            List<CompletableFuture<HttpResponse<String>>> slow = new ArrayList<>();
            for (int i = 0; i < held; i++) {
                slow.add(http.sendAsync(HttpRequest.newBuilder(URI.create("http://" + server.hostAndPort() + "/states"))
                        .build(), HttpResponse.BodyHandlers.ofString()));
            }
            assertThat(started.tryAcquire(OperationsServer.SLOW_THREADS, 30, TimeUnit.SECONDS)).isTrue();
            // the held requests are sent together; their connections reach the server in any order and time
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (server.slowRequestsWaiting() < OperationsServer.SLOW_QUEUE && System.nanoTime() < deadline) {
                Thread.onSpinWait();
            }
            assertThat(server.slowRequestsWaiting()).isEqualTo(OperationsServer.SLOW_QUEUE);

            // every slow thread busy and the queue full: the requests beyond are refused at once, not left hanging
            for (int i = 0; i < 3; i++) {
                HttpResponse<String> refused = http.send(HttpRequest.newBuilder(URI.create("http://"
                        + server.hostAndPort() + "/states")).timeout(Duration.ofSeconds(10)).build(),
                        HttpResponse.BodyHandlers.ofString());
                assertThat(refused.statusCode()).isEqualTo(503);
                assertThat(refused.headers().firstValue("Retry-After")).isPresent();
                assertThat(refused.body()).contains("busy");
            }

            HttpResponse<String> health = http.send(HttpRequest.newBuilder(URI.create("http://" + server.hostAndPort()
                    + "/health")).timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(health.statusCode()).isEqualTo(200);

            release.countDown();
            List<Integer> codes = new ArrayList<>();
            for (CompletableFuture<HttpResponse<String>> f : slow) {
                codes.add(f.get(30, TimeUnit.SECONDS).statusCode());
            }
            assertThat(codes).as("every held request is served once a thread frees").containsOnly(200).hasSize(held);
        }
    }
}
