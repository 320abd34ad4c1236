package io.flowkafka.internal.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpContext;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import com.sun.net.httpserver.HttpServer;
import io.flowkafka.avro.KeyVisitorCoverage;
import io.flowkafka.internal.serde.JsonRecords;
import io.flowkafka.internal.visitor.KeyVisitor;
import io.flowkafka.spec.ComputationSpec;
import io.flowkafka.spec.PipelineSpec;
import io.flowkafka.spi.PipelineCodecs;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.URLDecoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;
import java.util.function.Supplier;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.KeyQueryMetadata;
import org.apache.kafka.streams.state.HostInfo;
import org.jspecify.annotations.Nullable;

/**
 * Serves {@code GET /states?computation=<id>&key=<JSON>}: a key's states, read on the instance that owns the key.
 * Owns the routing rule: the key's partition is the pipeline's range partition of its hash ({@link StateKey}), its
 * owner the active host Kafka Streams' metadata names for that partition of the computation's state store (each
 * instance's {@code application.server}); a request goes at most one hop (the forwarded request carries
 * {@value #FORWARDED_HEADER} and is never forwarded again), and while no instance is active for the partition
 * (a rebalance) the answer is 503 with a sentence.
 *
 * <p>Answers: 200 {@code {"pipeline", "computation", "key", "partition", "instance", "states": {"<name>": <JSON or
 * null>}, "key_visitors": {"<stream>": <coverage of the key's partition or null>}}} (key visitors only for a
 * computation that has some; timers are not shown: their store is ordered by trigger time, not by key); 404 when the key has no state; 400 with a sentence for an unknown computation or a bad key; 405 for any
 * method but GET (state is never deleted from outside the stream thread: that would break exactly-once).
 *
 * <p>Threading: any number of server threads; the codecs, which are not thread-safe, are used under a lock.
 */
public final class StateQueryHandler implements HttpHandler {
    /** The path the handler is mounted at. */
    public static final String PATH = "/states";
    /** Header of a request forwarded to the owner of the key: such a request is answered locally or not at all. */
    public static final String FORWARDED_HEADER = "X-Flow-Forwarded-By";

    private static final ObjectMapper MAPPER = new ObjectMapper();

    private final PipelineSpec spec;
    private final PipelineCodecs codecs;
    private final Supplier<@Nullable KafkaStreams> streams;
    private final @Nullable HostInfo self;
    private final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    /**
     * A handler for one runtime.
     *
     * @param spec the pipeline spec
     * @param props the deployment properties (for {@code flow.topic.prefix})
     * @param streams the runtime's Kafka Streams client; null before it starts
     * @param applicationServer this instance's {@code application.server} ({@code host:port} of the server this
     *     handler is mounted on), or null when not set: then only keys of partitions active here are answered
     */
    public StateQueryHandler(PipelineSpec spec, Properties props, Supplier<@Nullable KafkaStreams> streams,
            @Nullable String applicationServer) {
        this.spec = Objects.requireNonNull(spec, "spec");
        this.codecs = PipelineCodecs.of(spec, props);
        this.streams = Objects.requireNonNull(streams, "streams");
        this.self = applicationServer == null || applicationServer.isBlank() ? null
                : HostInfo.buildFromEndpoint(applicationServer.trim());
    }

    /**
     * Mounts {@code handler} at {@link #PATH} on {@code server}.
     *
     * @return the context created
     */
    public static HttpContext mount(HttpServer server, HttpHandler handler) {
        return server.createContext(PATH, handler);
    }

    /** An answer: HTTP status and JSON body. */
    record Answer(int status, JsonNode body) {
        static Answer error(int status, String sentence) {
            return new Answer(status, MAPPER.createObjectNode().put("error", sentence));
        }
    }

    @Override
    public void handle(HttpExchange exchange) throws IOException {
        try (exchange) {
            Answer a;
            try {
                a = answer(exchange);
            } catch (RuntimeException e) {
                a = Answer.error(500, "pipeline '" + spec.name() + "': the state query failed: " + e);
            }
            byte[] body = MAPPER.writerWithDefaultPrettyPrinter().writeValueAsBytes(a.body());
            exchange.getResponseHeaders().set("Content-Type", "application/json; charset=utf-8");
            exchange.getResponseHeaders().set("Cache-Control", "no-store");
            if ("HEAD".equals(exchange.getRequestMethod())) { // a HEAD answer has no body
                exchange.sendResponseHeaders(a.status(), -1);
                return;
            }
            exchange.sendResponseHeaders(a.status(), body.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(body);
            }
        }
    }

    private Answer answer(HttpExchange exchange) {
        if (!"GET".equals(exchange.getRequestMethod())) {
            return Answer.error(405, exchange.getRequestMethod() + " is not served: states are read here with GET; "
                    + "they are never deleted from outside the pipeline (that would break exactly-once): clear a "
                    + "state in the process function (e.g. on a tombstone message), or stop the pipeline and reset it");
        }
        String rawQuery = exchange.getRequestURI().getRawQuery();
        Map<String, String> params = params(rawQuery);
        String computation = params.get("computation");
        String keyJson = params.get("key");
        if (computation == null || keyJson == null) {
            return Answer.error(400, "give both parameters: " + PATH + "?computation=<id>&key=<JSON object of the key "
                    + "columns>; computations with states are " + statefulComputations());
        }
        ComputationSpec c = spec.computations().get(computation);
        if (c == null || c.states().isEmpty() || !c.sourceStreams().isEmpty()) {
            return Answer.error(400, "pipeline '" + spec.name() + "' has no keyed computation '" + computation
                    + "' with states" + (c == null ? "" : c.states().isEmpty() ? " (it declares none)"
                    : " (a Source computation: its states are not partitioned by key)")
                    + "; fix the computation parameter: computations with states are " + statefulComputations());
        }
        StateKey key;
        Map<String, Bytes> storeKeys = new LinkedHashMap<>();
        String store;
        synchronized (codecs) {
            try {
                key = StateKey.parse(codecs, computation, keyJson);
            } catch (IllegalArgumentException e) {
                return Answer.error(400, "bad key parameter: " + e.getMessage());
            }
            for (String state : c.states().keySet()) {
                storeKeys.put(state, codecs.stateStoreKey(computation, key.key(), state));
            }
            store = codecs.stateStoreName(computation);
        }
        KafkaStreams ks = streams.get();
        if (ks == null) {
            return Answer.error(503, "pipeline '" + spec.name() + "' is not started on this instance; retry once it runs");
        }
        KeyQueryMetadata owner;
        try {
            owner = ks.queryMetadataForKey(store, key.encoded(), StateKey.PARTITIONER);
        } catch (RuntimeException e) { // not running (yet, or any more)
            return Answer.error(503, "pipeline '" + spec.name() + "' cannot answer state queries now ("
                    + ks.state() + "); retry once it runs");
        }
        boolean forwarded = exchange.getRequestHeaders().getFirst(FORWARDED_HEADER) != null;
        if (self != null) {
            if (owner == null || owner.activeHost() == null || KeyQueryMetadata.NOT_AVAILABLE.equals(owner)
                    || owner.activeHost().port() < 0) {
                return Answer.error(503, "no instance of pipeline '" + spec.name() + "' owns the key's partition of "
                        + "computation '" + computation + "' right now (a rebalance); retry");
            }
            if (!owner.activeHost().equals(self)) {
                if (forwarded) {
                    return Answer.error(503, "instance " + endpoint(self) + " was asked by "
                            + exchange.getRequestHeaders().getFirst(FORWARDED_HEADER) + " for a key it no longer owns "
                            + "(its owner is " + endpoint(owner.activeHost()) + " now: a rebalance); retry");
                }
                return forward(owner.activeHost(), rawQuery);
            }
        }
        int partition = owner != null && owner.partition() >= 0 ? owner.partition()
                : key.partition(c.desiredPartitionCount()); // no application.server: no metadata
        LocalStates.Read read = LocalStates.read(ks, store, partition, storeKeys);
        if (read instanceof LocalStates.Unavailable u) {
            return Answer.error(503, "pipeline '" + spec.name() + "', computation '" + computation + "': " + u.reason()
                    + (self == null && u.moved() ? "; this instance has no application.server, so it cannot route "
                    + "the query to the key's owner: set application.server on every instance" : ""));
        }
        Map<String, byte @Nullable []> values = ((LocalStates.Found) read).values();
        ObjectNode body = MAPPER.createObjectNode();
        body.put("pipeline", spec.name());
        body.put("computation", computation);
        body.set("key", json(JsonRecords.toJson(key.key())));
        body.put("partition", partition);
        body.put("instance", self == null ? "" : endpoint(self));
        if (LocalStates.allAbsent(values.values())) {
            body.put("error", "computation '" + computation + "' has no state for key " + body.get("key") + " (partition "
                    + partition + (self == null ? "" : ", instance " + endpoint(self)) + ")");
            return new Answer(404, body);
        }
        ObjectNode states = body.putObject("states");
        synchronized (codecs) {
            values.forEach((name, v) -> states.set(name, stateJson(c, name, v)));
        }
        if (!c.keyVisitorStreams().isEmpty()) {
            Map<String, Bytes> rows = new LinkedHashMap<>();
            c.keyVisitorStreams().keySet().forEach(stream -> rows.put(stream, KeyVisitor.coverageKey(stream)));
            if (LocalStates.read(ks, KeyVisitor.storeName(computation), partition, rows)
                    instanceof LocalStates.Found coverage) { // else moved since the states were read: leave it out
                ObjectNode visitors = body.putObject("key_visitors");
                coverage.values().forEach((stream, v) -> visitors.set(stream, coverageJson(v)));
            }
        }
        return new Answer(200, body);
    }

    private JsonNode stateJson(ComputationSpec c, String name, byte @Nullable [] value) {
        if (value == null) {
            return MAPPER.nullNode();
        }
        if (c.states().get(name).schema() == null) { // a state with a user serde: its bytes
            return MAPPER.createObjectNode().put("base64", Base64.getEncoder().encodeToString(value));
        }
        return json(JsonRecords.toJson(codecs.decodeState(c.id(), name, value).orElseThrow()));
    }

    /** A key visitor's coverage of the key's partition: where its current pass is; null before its first step. */
    private static JsonNode coverageJson(byte @Nullable [] value) {
        if (value == null) {
            return MAPPER.nullNode();
        }
        KeyVisitorCoverage c = KeyVisitor.decodeCoverage(value);
        long done = c.getBucketsDone().stream().filter(Boolean::booleanValue).count();
        return MAPPER.createObjectNode().put("pass", c.getPass()).put("pass_start_nanos", c.getPassStartNanos())
                .put("visits_in_pass", c.getVisitsInPass()).put("buckets_done", done)
                .put("bucket_count", c.getBucketCount()).put("final_pass", c.getFinalPass())
                .put("completed", c.getCompleted()).put("last_pass_duration_nanos", c.getLastPassDurationNanos());
    }

    /** Asks the key's owner; relays its answer as is. */
    private Answer forward(HostInfo owner, String rawQuery) {
        URI uri = URI.create("http://" + endpoint(owner) + PATH + "?" + rawQuery);
        HttpRequest request = HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(10))
                .header(FORWARDED_HEADER, self == null ? "?" : endpoint(self)).GET().build();
        try {
            HttpResponse<byte[]> response = client.send(request, HttpResponse.BodyHandlers.ofByteArray());
            try {
                return new Answer(response.statusCode(), json(response.body()));
            } catch (UncheckedIOException notJson) {
                return Answer.error(502, "the key's owner " + endpoint(owner) + " answered " + response.statusCode()
                        + " without JSON: " + new String(response.body(), StandardCharsets.UTF_8).strip()
                        + " (is its state query handler mounted at " + PATH + "?)");
            }
        } catch (IOException | RuntimeException e) {
            return Answer.error(503, "the key's owner " + endpoint(owner) + " did not answer (" + e.getMessage()
                    + "); retry, or ask it directly at " + uri);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Answer.error(503, "interrupted while asking the key's owner " + endpoint(owner));
        }
    }

    private List<String> statefulComputations() {
        return spec.computations().values().stream().filter(x -> !x.states().isEmpty() && x.sourceStreams().isEmpty())
                .map(ComputationSpec::id).toList();
    }

    private static String endpoint(HostInfo h) {
        return h.host() + ":" + h.port();
    }

    private static JsonNode json(byte[] bytes) {
        try {
            return MAPPER.readTree(bytes);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static Map<String, String> params(@Nullable String rawQuery) {
        Map<String, String> out = new LinkedHashMap<>();
        if (rawQuery == null) {
            return out;
        }
        for (String pair : rawQuery.split("&")) {
            int eq = pair.indexOf('=');
            if (eq > 0) {
                out.put(URLDecoder.decode(pair.substring(0, eq), StandardCharsets.UTF_8),
                        URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8));
            }
        }
        return out;
    }
}
