package io.flowkafka.testing;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.jspecify.annotations.Nullable;

/**
 * An HTTP server in this JVM that answers like a Confluent Schema Registry by replaying recorded
 * request/response exchanges, so that a registry client is tested over a real socket without a
 * registry.
 *
 * <p>The server listens on {@code 127.0.0.1} on a free port. For each request it takes the first
 * recorded exchange whose method, path with query, required headers and request body match, and
 * sends its status and body with {@code Content-Type: application/vnd.schemaregistry.v1+json}.
 * Bodies are compared as JSON values, not as text: key order and whitespace do not matter, and a
 * string field whose text is JSON (the {@code "schema"} field of the registry API) is compared as
 * the JSON it contains. An exchange may be replayed any number of times.
 *
 * <p>A request that no exchange matches is answered with status 500 and a message naming the
 * request and the recorded exchanges (so the client under test fails with it), and it is kept:
 * {@link #assertNoUnexpectedRequests()} fails a test that made one.
 *
 * <p>Exchange files are JSON:
 * <pre>{@code
 * {
 *   "source": "where the exchange was taken from (a documentation URL)",
 *   "exchanges": [
 *     {
 *       "name": "register a schema under subject test",
 *       "request": {
 *         "method": "POST",
 *         "path": "/subjects/test/versions",
 *         "headers": {"Content-Type": "application/vnd.schemaregistry.v1+json"},
 *         "body": {"schema": "{\"type\": \"string\"}"}
 *       },
 *       "response": {"status": 200, "body": {"id": 1}, "delay_ms": 0}
 *     }
 *   ]
 * }
 * }</pre>
 * {@code headers}, {@code body} and {@code delay_ms} are optional; a request {@code body} that is
 * absent matches only a request without a body.
 *
 * <p>Thread-safe. The caller closes the server; {@link #close()} stops it at once.
 */
public final class SchemaRegistryReplayServer implements AutoCloseable {
    /** The registry's media type, sent as the content type of every response. */
    public static final String MEDIA_TYPE = "application/vnd.schemaregistry.v1+json";

    private static final ObjectMapper JSON = new ObjectMapper();

    private final HttpServer server;
    private final ExecutorService handlers;
    private final List<Exchange> exchanges;
    private final List<Request> requests = new CopyOnWriteArrayList<>();
    private final List<Request> unexpected = new CopyOnWriteArrayList<>();

    /**
     * A recorded exchange.
     *
     * @param name what the exchange shows; appears in failure messages
     * @param method the HTTP method, such as {@code GET}
     * @param path the raw path with its query, such as {@code /subjects/test/versions/latest}
     * @param headers request headers that must be present with these values (names compared
     *     ignoring case)
     * @param body the request body as JSON; null when the request has no body
     * @param status the response status
     * @param responseBody the response body as JSON; null for an empty body
     * @param delayMs how long to wait before answering, in milliseconds (to test timeouts)
     */
    public record Exchange(String name, String method, String path, Map<String, String> headers,
            @Nullable JsonNode body, int status, @Nullable JsonNode responseBody, long delayMs) {
        /**
         * Checks the fields and copies the headers.
         *
         * @param name what the exchange shows; appears in failure messages
         * @param method the HTTP method
         * @param path the raw path with its query; must start with {@code /}
         * @param headers request headers that must be present with these values
         * @param body the request body as JSON, or null
         * @param status the response status, 100 to 599
         * @param responseBody the response body as JSON, or null for an empty body
         * @param delayMs the delay before answering, milliseconds, not negative
         * @throws IllegalArgumentException if the path, status or delay is out of range
         */
        public Exchange {
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(method, "method");
            Objects.requireNonNull(path, "path");
            headers = Map.copyOf(headers);
            if (!path.startsWith("/")) {
                throw new IllegalArgumentException("exchange '" + name + "': path must start with / but was " + path);
            }
            if (status < 100 || status > 599) {
                throw new IllegalArgumentException("exchange '" + name + "': status must be 100..599 but was " + status);
            }
            if (delayMs < 0) {
                throw new IllegalArgumentException("exchange '" + name + "': delay_ms must be >= 0 but was " + delayMs);
            }
        }

        /**
         * {@code METHOD path}, as a request line shows it.
         *
         * @return the method and path, separated by a space
         */
        public String requestLine() {
            return method + " " + path;
        }
    }

    /**
     * A request the server received.
     *
     * @param method the HTTP method
     * @param path the raw path with its query
     * @param headers the request headers, names in lower case, first value of each
     * @param body the body as text; empty when there was none
     */
    public record Request(String method, String path, Map<String, String> headers, String body) {
        /**
         * Copies the headers.
         *
         * @param method the HTTP method
         * @param path the raw path with its query
         * @param headers the request headers
         * @param body the body as text
         */
        public Request {
            headers = Map.copyOf(headers);
        }

        /**
         * The value of a header, name compared ignoring case; null when absent.
         *
         * @param name the header's name, in any case
         * @return the header's first value, or null
         */
        public @Nullable String header(String name) {
            return headers.get(name.toLowerCase(Locale.ROOT));
        }

        @Override
        public String toString() {
            return method + " " + path + (body.isEmpty() ? "" : " " + body);
        }
    }

    private SchemaRegistryReplayServer(List<Exchange> exchanges) throws IOException {
        this.exchanges = List.copyOf(exchanges);
        this.server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext("/", this::handle);
        this.handlers = Executors.newCachedThreadPool(runnable -> {
            Thread thread = new Thread(runnable, "schema-registry-replay");
            thread.setDaemon(true);
            return thread;
        });
        server.setExecutor(handlers);
        server.start();
    }

    /**
     * Starts a server that replays {@code exchanges}, tried in order.
     *
     * @param exchanges the exchanges to replay; a request gets the first one it matches
     * @return the running server; close it to stop it
     * @throws UncheckedIOException if no port can be bound on 127.0.0.1
     */
    public static SchemaRegistryReplayServer start(List<Exchange> exchanges) {
        try {
            return new SchemaRegistryReplayServer(exchanges);
        } catch (IOException e) {
            throw new UncheckedIOException("could not start the schema-registry replay server on 127.0.0.1", e);
        }
    }

    /**
     * Starts a server that replays the exchanges of the given exchange files, in the order given.
     *
     * @param resources class-path resource names, such as {@code registry/exchanges/register.json}
     * @return the running server; close it to stop it
     * @throws IllegalArgumentException if a resource is missing or is not a valid exchange file;
     *     the message names the resource and the field
     * @throws UncheckedIOException if no port can be bound on 127.0.0.1
     */
    public static SchemaRegistryReplayServer startFromResources(String... resources) {
        List<Exchange> all = new ArrayList<>();
        for (String resource : resources) {
            all.addAll(loadResource(resource));
        }
        return start(all);
    }

    /**
     * Reads the exchanges of an exchange file on the class path (format in the class comment).
     *
     * @param resource a class-path resource name, such as {@code registry/exchanges/register.json}
     * @return the file's exchanges, in file order
     * @throws IllegalArgumentException if the resource is missing or is not a valid exchange file
     */
    public static List<Exchange> loadResource(String resource) {
        ClassLoader loader = Thread.currentThread().getContextClassLoader();
        if (loader == null) {
            loader = SchemaRegistryReplayServer.class.getClassLoader();
        }
        try (InputStream in = loader.getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalArgumentException("exchange file " + resource + " is not on the class path");
            }
            return parse(resource, JSON.readTree(in));
        } catch (IOException e) {
            throw new IllegalArgumentException("exchange file " + resource + " is not valid JSON: " + e.getMessage(), e);
        }
    }

    private static List<Exchange> parse(String resource, JsonNode root) {
        JsonNode list = root.path("exchanges");
        if (!list.isArray() || list.isEmpty()) {
            throw new IllegalArgumentException("exchange file " + resource + " needs a non-empty \"exchanges\" array");
        }
        List<Exchange> result = new ArrayList<>();
        for (JsonNode node : list) {
            String name = node.path("name").asText(resource + "#" + result.size());
            JsonNode request = node.path("request");
            JsonNode response = node.path("response");
            String where = "exchange file " + resource + ", exchange '" + name + "'";
            if (!request.path("method").isTextual() || !request.path("path").isTextual()) {
                throw new IllegalArgumentException(where + ": request needs \"method\" and \"path\" strings");
            }
            if (!response.path("status").isInt()) {
                throw new IllegalArgumentException(where + ": response needs an integer \"status\"");
            }
            Map<String, String> headers = new LinkedHashMap<>();
            request.path("headers").fields().forEachRemaining(e -> headers.put(e.getKey(), e.getValue().asText()));
            result.add(new Exchange(name, request.get("method").asText(), request.get("path").asText(), headers,
                    request.hasNonNull("body") ? request.get("body") : null, response.get("status").asInt(),
                    response.hasNonNull("body") ? response.get("body") : null, response.path("delay_ms").asLong(0)));
        }
        return result;
    }

    /**
     * The base URL to give a client, such as {@code http://127.0.0.1:40123}.
     *
     * @return the base URL, without a trailing slash
     */
    public String url() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    /**
     * Every request received so far, in arrival order, matched or not.
     *
     * @return the requests, empty if none
     */
    public List<Request> requests() {
        return List.copyOf(requests);
    }

    /**
     * The number of requests received so far.
     *
     * @return the number of requests
     */
    public int requestCount() {
        return requests.size();
    }

    /**
     * The requests that no exchange matched.
     *
     * @return the unmatched requests in arrival order, empty if none
     */
    public List<Request> unexpectedRequests() {
        return List.copyOf(unexpected);
    }

    /**
     * Fails if a request matched no exchange.
     *
     * @throws AssertionError naming each unexpected request
     */
    public void assertNoUnexpectedRequests() {
        if (!unexpected.isEmpty()) {
            throw new AssertionError("schema-registry replay server got " + unexpected.size()
                    + " request(s) matching no recorded exchange: " + unexpected);
        }
    }

    /** Stops the server at once; requests in flight are cut. */
    @Override
    public void close() {
        server.stop(0);
        handlers.shutdownNow();
    }

    private void handle(HttpExchange http) throws IOException {
        try (http) {
            String path = http.getRequestURI().getRawPath()
                    + (http.getRequestURI().getRawQuery() == null ? "" : "?" + http.getRequestURI().getRawQuery());
            Map<String, String> headers = new LinkedHashMap<>();
            http.getRequestHeaders().forEach((k, v) -> headers.put(k.toLowerCase(Locale.ROOT), v.isEmpty() ? "" : v.get(0)));
            String body = new String(http.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
            Request request = new Request(http.getRequestMethod(), path, headers, body);
            requests.add(request);

            Exchange match = null;
            for (Exchange exchange : exchanges) {
                if (matches(exchange, request)) {
                    match = exchange;
                    break;
                }
            }
            int status;
            byte[] out;
            if (match == null) {
                unexpected.add(request);
                status = 500;
                ObjectNode error = JSON.createObjectNode();
                error.put("message", "SchemaRegistryReplayServer has no recorded exchange for " + request
                        + "; recorded: " + exchanges.stream().map(Exchange::requestLine).toList());
                out = JSON.writeValueAsBytes(error);
            } else {
                if (match.delayMs() > 0) {
                    sleep(match.delayMs());
                }
                status = match.status();
                out = match.responseBody() == null ? new byte[0] : JSON.writeValueAsBytes(match.responseBody());
            }
            http.getResponseHeaders().set("Content-Type", MEDIA_TYPE);
            http.sendResponseHeaders(status, out.length == 0 ? -1 : out.length);
            if (out.length > 0) {
                http.getResponseBody().write(out);
            }
        }
    }

    private static boolean matches(Exchange exchange, Request request) {
        if (!exchange.method().equalsIgnoreCase(request.method()) || !exchange.path().equals(request.path())) {
            return false;
        }
        for (Map.Entry<String, String> header : exchange.headers().entrySet()) {
            if (!header.getValue().equals(request.header(header.getKey()))) {
                return false;
            }
        }
        if (exchange.body() == null) {
            return request.body().isBlank();
        }
        if (request.body().isBlank()) {
            return false;
        }
        try {
            return normalize(exchange.body()).equals(normalize(JSON.readTree(request.body())));
        } catch (IOException e) {
            return false;
        }
    }

    /** Replaces each string that holds a JSON object or array by the parsed value, recursively. */
    static JsonNode normalize(JsonNode node) {
        if (node.isObject()) {
            ObjectNode copy = JSON.createObjectNode();
            for (Iterator<Map.Entry<String, JsonNode>> it = node.fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> field = it.next();
                copy.set(field.getKey(), normalize(field.getValue()));
            }
            return copy;
        }
        if (node.isArray()) {
            ArrayNode copy = JSON.createArrayNode();
            node.forEach(element -> copy.add(normalize(element)));
            return copy;
        }
        if (node.isTextual()) {
            String text = node.asText().strip();
            if (text.startsWith("{") || text.startsWith("[")) {
                try {
                    return normalize(JSON.readTree(text));
                } catch (IOException notJson) {
                    return node;
                }
            }
        }
        return node;
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
