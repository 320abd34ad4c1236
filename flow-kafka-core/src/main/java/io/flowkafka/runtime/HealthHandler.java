package io.flowkafka.runtime;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import java.io.IOException;
import java.io.OutputStream;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * The health check of one pipeline instance: a JDK {@link HttpHandler}, meant to be mounted at {@code /health}, that
 * answers 200 {@code {"status":"UP"}} only while the instance can make progress, and 503
 * {@code {"status":"DOWN","reason":"..."}} otherwise, the reason a sentence naming the pipeline. Can make progress
 * means:
 * <ol>
 *   <li>started, and not stopping, stopped or failed ({@link FlowRuntime#state()}; a paused, draining or completed
 *       runtime is UP: it does what it was asked to);
 *   <li>Kafka Streams {@code RUNNING} or {@code REBALANCING};
 *   <li>no sink stopped for good (a {@link StatusError} at {@code /sinks/<sink>/stopped} in
 *       {@link FlowRuntime#status()}); other status errors (a delivery being retried) are not fatal.
 * </ol>
 * The answer also carries {@code "state"}, the runtime's {@link FlowRuntime.State}.
 *
 * <p>Thread-safe: the server may call {@link #handle} from several threads at once.
 */
public final class HealthHandler implements HttpHandler {
    /** The content type of the answer. */
    public static final String CONTENT_TYPE = "application/json";

    private static final ObjectMapper JSON = new ObjectMapper();

    private final FlowRuntime runtime;

    /**
     * A health check of {@code runtime}.
     *
     * @param runtime the runtime, started or not
     * @throws NullPointerException if {@code runtime} is null
     */
    public HealthHandler(FlowRuntime runtime) {
        this.runtime = Objects.requireNonNull(runtime, "runtime");
    }

    /**
     * Answers {@code GET} and {@code HEAD} with 200 (UP) or 503 (DOWN), any other method with 405.
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
            String reason = runtime.notProgressing();
            Map<String, Object> answer = new LinkedHashMap<>();
            answer.put("status", reason == null ? "UP" : "DOWN");
            if (reason != null) {
                answer.put("reason", reason);
            }
            answer.put("state", runtime.state().name());
            byte[] body = JSON.writeValueAsBytes(answer);
            int code = reason == null ? 200 : 503;
            exchange.getResponseHeaders().set("Content-Type", CONTENT_TYPE);
            if ("HEAD".equals(method)) {
                exchange.sendResponseHeaders(code, -1);
                return;
            }
            exchange.sendResponseHeaders(code, body.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(body);
            }
        }
    }
}
