package io.flowkafka.internal.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpContext;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import com.sun.net.httpserver.HttpServer;
import io.flowkafka.avro.KeyVisitorCoverage;
import io.flowkafka.internal.partition.RangePartitioner;
import io.flowkafka.internal.serde.JsonRecords;
import io.flowkafka.internal.serde.KeyCodec;
import io.flowkafka.internal.state.KeyStates;
import io.flowkafka.internal.state.StateDeletes;
import io.flowkafka.internal.timers.KeyTimers;
import io.flowkafka.internal.timers.PendingTimer;
import io.flowkafka.internal.visitor.KeyVisitor;
import io.flowkafka.spec.ComputationSpec;
import io.flowkafka.spec.PipelineSpec;
import io.flowkafka.spi.PipelineCodecs;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.URLDecoder;
import java.net.URLEncoder;
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
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.KeyQueryMetadata;
import org.apache.kafka.streams.errors.InvalidStateStoreException;
import org.apache.kafka.streams.state.HostInfo;
import org.jspecify.annotations.Nullable;

/**
 * Serves {@code /states}: a key's states, or the keys of a hash range with their states, read (GET) or deleted
 * (DELETE) on the instances that own them. Owns the routing rule: a key's partition is the pipeline's range partition
 * of its hash ({@link StateKey}), a range's parts are the partitions it touches ({@link HashRange}), and each is
 * answered by the active host Kafka Streams' metadata names for that partition of the computation's state store
 * (each instance's {@code application.server}); a request goes at most one hop (the forwarded request carries
 * {@value #FORWARDED_HEADER} and is never forwarded again), and while no instance is active for a partition (a
 * rebalance) the answer is 503 with a sentence.
 *
 * <ul>
 *   <li>{@code ?computation=<id>&key=<JSON>}: 200 {@code {"pipeline", "computation", "key", "partition", "instance",
 *       "states": {"<name>": <JSON or null>}, "key_visitors": {"<stream>": <coverage or null>}, "timers": [...],
 *       "timers_complete"}} (visitors and timers only for a computation that has them; the timers store is ordered by
 *       trigger time, so a key's timers are searched among at most {@link PartitionStates#MAX_TIMER_ROWS} rows);
 *       404 when the key has no state.
 *   <li>{@code ?computation=<id>&hash_from=<h>&hash_to=<h>&limit=<n>}: 200 {@code {..., "keys": [{"key", "hash",
 *       "partition", "instance", "states"}], "truncated", "next_hash_from"}}, at most {@code limit} keys (default
 *       {@value #DEFAULT_LIMIT}, at most {@value #MAX_LIMIT}) in hash order; the next page starts at
 *       {@code next_hash_from}.
 *   <li>DELETE with either form deletes the rows the GET would show. Keeps the rule that state changes only in the
 *       stream thread: the owner hands the rows to its task ({@link StateDeletes}), which deletes them on its next
 *       punctuation in its own transaction; the answer comes once a read no longer finds them (the task committed),
 *       or 503 after {@link #DELETE_BOUND} (retry: a delete is idempotent). Rows written after the read are kept.
 * </ul>
 *
 * <p>400 with a sentence for an unknown computation or a bad parameter; 405 for other methods.
 *
 * <p>Threading: any number of server threads; the codecs, which are not thread-safe, are used under a lock.
 */
public final class StateQueryHandler implements HttpHandler {
    /** The query parameters served. */
    private static final List<String> PARAMETERS = List.of("computation", "key", "hash_from", "hash_to", "limit",
            "partition");
    /** The path the handler is mounted at. */
    public static final String PATH = "/states";
    /** Header of a request forwarded to the owner of the key: such a request is answered locally or not at all. */
    public static final String FORWARDED_HEADER = "X-Flow-Forwarded-By";
    /** Keys a range answer holds unless {@code limit} says otherwise. */
    static final int DEFAULT_LIMIT = 100;
    /** The largest {@code limit}. */
    static final int MAX_LIMIT = 10_000;
    /** How long a delete waits for the task to apply and commit it. */
    static final Duration DELETE_BOUND = Duration.ofSeconds(30);

    private static final ObjectMapper MAPPER = new ObjectMapper();

    private final PipelineSpec spec;
    private final PipelineCodecs codecs;
    private final Supplier<@Nullable KafkaStreams> streams;
    private final @Nullable HostInfo self;
    private final @Nullable StateDeletes deletes;
    private final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    /**
     * A handler for one runtime.
     *
     * @param spec the pipeline spec
     * @param props the deployment properties (for {@code flow.topic.prefix})
     * @param streams the runtime's Kafka Streams client; null before it starts
     * @param applicationServer this instance's {@code application.server} ({@code host:port} of the server this
     *     handler is mounted on), or null when not set: then only keys of partitions active here are answered
     * @param deletes the runtime's tasks' delete queues; null: DELETE is refused
     */
    public StateQueryHandler(PipelineSpec spec, Properties props, Supplier<@Nullable KafkaStreams> streams,
            @Nullable String applicationServer, @Nullable StateDeletes deletes) {
        this.spec = Objects.requireNonNull(spec, "spec");
        this.codecs = PipelineCodecs.of(spec, props);
        this.streams = Objects.requireNonNull(streams, "streams");
        this.self = applicationServer == null || applicationServer.isBlank() ? null
                : HostInfo.buildFromEndpoint(applicationServer.trim());
        this.deletes = deletes;
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

    /** One request, parsed. */
    private record Request(String method, String rawQuery, Map<String, String> params, boolean forwarded,
            ComputationSpec computation, KafkaStreams streams, String store) {
        boolean delete() {
            return "DELETE".equals(method);
        }
    }

    private Answer answer(HttpExchange exchange) {
        String method = exchange.getRequestMethod();
        if (!"GET".equals(method) && !"HEAD".equals(method) && !"DELETE".equals(method)) {
            return Answer.error(405, method + " is not served: read states with GET, delete them with DELETE");
        }
        if ("DELETE".equals(method) && deletes == null) {
            return Answer.error(405, "this handler deletes no states: it was made outside a FlowRuntime");
        }
        String rawQuery = exchange.getRequestURI().getRawQuery();
        Map<String, String> params = params(rawQuery);
        String computation = params.get("computation");
        String keyJson = params.get("key");
        boolean range = params.containsKey("hash_from") || params.containsKey("hash_to");
        for (String name : params.keySet()) {
            if (!PARAMETERS.contains(name)) {
                return Answer.error(400, "unknown parameter '" + name + "'; " + PATH + " takes " + PARAMETERS);
            }
            if (keyJson != null && (name.equals("limit") || name.equals("partition"))) {
                return Answer.error(400, "parameter '" + name + "' pages a hash range; a key query has one key: "
                        + "leave it out");
            }
        }
        if (computation == null || (keyJson == null) == !range) {
            return Answer.error(400, "give the computation and either a key or a hash range: " + PATH
                    + "?computation=<id>&key=<JSON object of the key columns>, or " + PATH
                    + "?computation=<id>&hash_from=<hash>&hash_to=<hash>&limit=<n>; computations with states are "
                    + statefulComputations());
        }
        ComputationSpec c = spec.computations().get(computation);
        if (c != null && c.readsKeyedSource() && !c.states().isEmpty()) {
            return Answer.error(400, "computation '" + computation + "' reads a keyed source (key_partitioned): its "
                    + "keys are in the partitions the topic's producer chose, which a state query cannot compute; "
                    + "query a computation that reads an internal stream (its keys are partitioned by hash), or read "
                    + "the state store's changelog topic");
        }
        if (c == null || c.states().isEmpty() || !c.sourceStreams().isEmpty()) {
            return Answer.error(400, "pipeline '" + spec.name() + "' has no keyed computation '" + computation
                    + "' with states" + (c == null ? "" : c.states().isEmpty() ? " (it declares none)"
                    : " (a Source computation: its states are not partitioned by key)")
                    + "; fix the computation parameter: computations with states are " + statefulComputations());
        }
        String store;
        synchronized (codecs) {
            store = codecs.stateStoreName(computation);
        }
        KafkaStreams ks = streams.get();
        if (ks == null) {
            return Answer.error(503, "pipeline '" + spec.name() + "' is not started on this instance; retry once it runs");
        }
        Request r = new Request(method, rawQuery, params,
                exchange.getRequestHeaders().getFirst(FORWARDED_HEADER) != null, c, ks, store);
        try {
            return keyJson != null ? keyAnswer(r, keyJson) : rangeAnswer(r);
        } catch (IllegalStateException | InvalidStateStoreException e) {
            return Answer.error(503, "pipeline '" + spec.name() + "' cannot answer state queries now ("
                    + ks.state() + "): " + e.getMessage() + "; retry once it runs");
        }
    }

    private Answer keyAnswer(Request r, String keyJson) {
        ComputationSpec c = r.computation();
        StateKey key;
        Map<String, Bytes> storeKeys = new LinkedHashMap<>();
        synchronized (codecs) {
            try {
                key = StateKey.parse(codecs, c.id(), keyJson);
            } catch (IllegalArgumentException e) {
                return Answer.error(400, "bad key parameter: " + e.getMessage());
            }
            for (String state : c.states().keySet()) {
                storeKeys.put(state, codecs.stateStoreKey(c.id(), key.key(), state));
            }
        }
        KeyQueryMetadata owner = r.streams().queryMetadataForKey(r.store(), key.encoded(), StateKey.PARTITIONER);
        Answer routed = route(r, owner == null ? null : owner.activeHost(), r.rawQuery(), "the key's partition");
        if (routed != null) {
            return routed;
        }
        int partition = owner != null && owner.partition() >= 0 ? owner.partition()
                : key.partition(c.desiredPartitionCount()); // no application.server: no metadata
        LocalStates.Read read = LocalStates.read(r.streams(), r.store(), partition, storeKeys);
        if (read instanceof LocalStates.Unavailable u) {
            return unavailable(c, u);
        }
        Map<String, byte @Nullable []> values = ((LocalStates.Found) read).values();
        ObjectNode body = MAPPER.createObjectNode();
        body.put("pipeline", spec.name());
        body.put("computation", c.id());
        body.set("key", json(JsonRecords.toJson(key.key())));
        body.put("partition", partition);
        body.put("instance", self == null ? "" : endpoint(self));
        if (LocalStates.allAbsent(values.values())) {
            body.put("error", "computation '" + c.id() + "' has no state for key " + body.get("key") + " (partition "
                    + partition + (self == null ? "" : ", instance " + endpoint(self)) + ")");
            return new Answer(404, body);
        }
        ObjectNode states = body.putObject("states");
        synchronized (codecs) {
            values.forEach((name, v) -> states.set(name, stateJson(c, name, v)));
        }
        if (r.delete()) {
            Map<String, Bytes> present = new LinkedHashMap<>();
            storeKeys.forEach((name, k) -> {
                if (values.get(name) != null) {
                    present.put(name, k);
                }
            });
            Answer failed = delete(r, partition, present);
            if (failed != null) {
                return failed;
            }
            body.put("deleted_rows", present.size());
            return new Answer(200, body);
        }
        if (!c.keyVisitorStreams().isEmpty()) {
            Map<String, Bytes> rows = new LinkedHashMap<>();
            c.keyVisitorStreams().keySet().forEach(stream -> rows.put(stream, KeyVisitor.coverageKey(stream)));
            if (LocalStates.read(r.streams(), KeyVisitor.storeName(c.id()), partition, rows)
                    instanceof LocalStates.Found coverage) { // else moved since the states were read: leave it out
                ObjectNode visitors = body.putObject("key_visitors");
                coverage.values().forEach((stream, v) -> visitors.set(stream, coverageJson(v)));
            }
        }
        if (!c.timers().isEmpty()) {
            KeyTimers.Found found = PartitionStates.timers(r.streams(), c.id(), partition, key.encoded());
            ArrayNode timers = body.putArray("timers");
            for (PendingTimer t : found.timers()) {
                timers.addObject().put("stream", c.timers().get(t.streamIndex()).id())
                        .put("trigger_timestamp_ns", t.triggerTs()).put("event_timestamp_ns", t.eventTs());
            }
            body.put("timers_complete", found.complete());
        }
        return new Answer(200, body);
    }

    private Answer rangeAnswer(Request r) {
        ComputationSpec c = r.computation();
        HashRange range;
        int limit;
        Integer only;
        try {
            range = HashRange.parse(r.params().get("hash_from"), r.params().get("hash_to"));
            limit = intParam(r.params(), "limit", DEFAULT_LIMIT, 1, MAX_LIMIT);
            only = r.params().containsKey("partition")
                    ? intParam(r.params(), "partition", 0, 0, c.desiredPartitionCount() - 1) : null;
        } catch (IllegalArgumentException e) {
            return Answer.error(400, e.getMessage());
        }
        List<HashRange.Part> parts = only != null ? List.of(new HashRange.Part(only, range))
                : range.split(c.desiredPartitionCount());
        ObjectNode body = MAPPER.createObjectNode();
        body.put("pipeline", spec.name());
        body.put("computation", c.id());
        body.put("hash_from", Long.toUnsignedString(range.from()));
        if (range.to() != null) {
            body.put("hash_to", Long.toUnsignedString(range.to()));
        }
        body.put("limit", limit);
        ArrayNode keys = body.putArray("keys");
        String next = null;
        long deletedRows = 0;
        for (HashRange.Part part : parts) {
            int remaining = limit - keys.size();
            if (remaining == 0) {
                next = Long.toUnsignedString(part.range().from());
                break;
            }
            KeyQueryMetadata owner = r.streams().queryMetadataForKey(r.store(), new byte[8],
                    StateKey.fixedPartition(part.partition()));
            String subQuery = "computation=" + URLEncoder.encode(c.id(), StandardCharsets.UTF_8) + "&"
                    + part.range().params() + "&limit=" + remaining + "&partition=" + part.partition();
            Answer sub = route(r, owner == null ? null : owner.activeHost(), subQuery,
                    "partition " + part.partition());
            if (sub == null) {
                sub = localRange(r, part, remaining);
            }
            if (sub.status() != 200) {
                return sub;
            }
            sub.body().path("keys").forEach(keys::add);
            deletedRows += sub.body().path("deleted_rows").asLong();
            if (sub.body().hasNonNull("next_hash_from")) {
                next = sub.body().get("next_hash_from").asText();
                break;
            }
        }
        body.put("truncated", next != null);
        if (next != null) {
            body.put("next_hash_from", next);
        }
        if (r.delete()) {
            body.put("deleted_rows", deletedRows);
        }
        return new Answer(200, body);
    }

    /** Reads (and with DELETE deletes) the keys of one partition's part of a range, on this instance. */
    private Answer localRange(Request r, HashRange.Part part, int limit) {
        ComputationSpec c = r.computation();
        LocalStates.Read read = PartitionStates.range(r.streams(), r.store(), part.partition(), part.range(), limit,
                c.states().keySet());
        if (read instanceof LocalStates.Unavailable u) {
            return unavailable(c, u);
        }
        PartitionStates.Range found = (PartitionStates.Range) read;
        ObjectNode body = MAPPER.createObjectNode();
        ArrayNode keys = body.putArray("keys");
        Map<String, Bytes> rows = new LinkedHashMap<>();
        synchronized (codecs) {
            KeyCodec keyCodec = KeyCodec.of(c.groupBySchema(), c.id());
            for (PartitionStates.KeyRows k : found.keys()) {
                ObjectNode entry = keys.addObject();
                entry.set("key", json(JsonRecords.toJson(keyCodec.decode(k.encodedKey()))));
                entry.put("hash", Long.toUnsignedString(RangePartitioner.hashOf(k.encodedKey())));
                entry.put("partition", part.partition());
                entry.put("instance", self == null ? "" : endpoint(self));
                ObjectNode states = entry.putObject("states");
                k.rows().forEach((name, v) -> {
                    states.set(name, stateJson(c, name, v));
                    rows.put(rows.size() + "", KeyStates.storeKey(k.encodedKey(), name));
                });
            }
        }
        if (found.nextHash() != null) {
            body.put("next_hash_from", Long.toUnsignedString(found.nextHash()));
        }
        if (r.delete() && !rows.isEmpty()) {
            Answer failed = delete(r, part.partition(), rows);
            if (failed != null) {
                return failed;
            }
            body.put("deleted_rows", rows.size());
        }
        return new Answer(200, body);
    }

    /**
     * Hands {@code rows} of partition {@code partition} to the owning task to delete and waits until a read no
     * longer finds them; null when done, else the answer that says why not.
     */
    private @Nullable Answer delete(Request r, int partition, Map<String, Bytes> rows) {
        String c = r.computation().id();
        StateDeletes.Request request;
        try {
            request = Objects.requireNonNull(deletes).ask(c, partition, List.copyOf(rows.values()), DELETE_BOUND);
        } catch (IllegalArgumentException | IllegalStateException e) {
            return Answer.error(409, "computation '" + c + "': " + e.getMessage());
        }
        long deadline = System.nanoTime() + DELETE_BOUND.toNanos();
        try {
            request.applied().get(DELETE_BOUND.toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException | TimeoutException e) {
            return Answer.error(503, "computation '" + c + "', partition " + partition + ": the task did not apply the "
                    + "delete within " + DELETE_BOUND.toSeconds() + " s (it is busy, or moving to another instance); "
                    + "nothing was deleted; retry");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Answer.error(503, "interrupted while waiting for the delete");
        }
        while (!(LocalStates.read(r.streams(), r.store(), partition, rows) instanceof LocalStates.Found f
                && LocalStates.allAbsent(f.values().values()))) {
            if (System.nanoTime() - deadline > 0) {
                return Answer.error(503, "computation '" + c + "', partition " + partition + ": the task applied the "
                        + "delete, but its commit was not seen within " + DELETE_BOUND.toSeconds() + " s (a revive "
                        + "aborts it); read the states again and retry the delete if they are still there");
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50));
        }
        return null;
    }

    /**
     * Null when this instance answers for a partition whose active host is {@code owner}; else the answer: the
     * owner's (forwarded {@code query}) or a 503 with a sentence.
     */
    private @Nullable Answer route(Request r, @Nullable HostInfo owner, String query, String what) {
        if (self == null) {
            return null;
        }
        if (owner == null || owner.port() < 0 || KeyQueryMetadata.NOT_AVAILABLE.activeHost().equals(owner)) {
            return Answer.error(503, "no instance of pipeline '" + spec.name() + "' owns " + what + " of "
                    + "computation '" + r.computation().id() + "' right now (a rebalance); retry");
        }
        if (owner.equals(self)) {
            return null;
        }
        if (r.forwarded()) {
            return Answer.error(503, "instance " + endpoint(self) + " was asked for " + what + " it no longer owns "
                    + "(its owner is " + endpoint(owner) + " now: a rebalance); retry");
        }
        return forward(owner, r.method(), query);
    }

    private Answer unavailable(ComputationSpec c, LocalStates.Unavailable u) {
        return Answer.error(503, "pipeline '" + spec.name() + "', computation '" + c.id() + "': " + u.reason()
                + (self == null && u.moved() ? "; this instance has no application.server, so it cannot route "
                + "the query to the key's owner: set application.server on every instance" : ""));
    }

    private static int intParam(Map<String, String> params, String name, int absent, int min, int max) {
        String v = params.get(name);
        if (v == null) {
            return absent;
        }
        try {
            int n = Integer.parseInt(v.strip());
            if (n >= min && n <= max) {
                return n;
            }
        } catch (NumberFormatException e) {
            // the sentence below
        }
        throw new IllegalArgumentException(name + " '" + v + "' must be a whole number in [" + min + ", " + max + "]");
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

    /** Asks the owner; relays its answer as is. */
    private Answer forward(HostInfo owner, String method, String rawQuery) {
        URI uri = URI.create("http://" + endpoint(owner) + PATH + "?" + rawQuery);
        HttpRequest request = HttpRequest.newBuilder(uri)
                .timeout("DELETE".equals(method) ? DELETE_BOUND.plusSeconds(40) : Duration.ofSeconds(10))
                .header(FORWARDED_HEADER, self == null ? "?" : endpoint(self))
                .method("HEAD".equals(method) ? "GET" : method, HttpRequest.BodyPublishers.noBody()).build();
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
