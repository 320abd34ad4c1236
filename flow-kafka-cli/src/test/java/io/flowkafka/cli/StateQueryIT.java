package io.flowkafka.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpServer;
import io.flowkafka.api.Message;
import io.flowkafka.api.OutputCollector;
import io.flowkafka.api.RowFunction;
import io.flowkafka.api.RuntimeContext;
import io.flowkafka.api.StateAccessor;
import io.flowkafka.cli.FlowKafkaCliIT.Run;
import io.flowkafka.runtime.FlowRuntime;
import io.flowkafka.spec.PipelineSpec;
import io.flowkafka.spec.PipelineSpecLoader;
import io.flowkafka.testing.Await;
import io.flowkafka.testing.KafkaCluster;
import io.flowkafka.testing.TestNames;
import io.flowkafka.testing.WithKafka;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * State queries on a real broker with two instances of a counting pipeline, each serving {@code /states} on its own
 * HTTP server at its {@code application.server}: asked of either instance, a key's states come from the instance that
 * owns the key (with its pending timers), a hash range comes from both, and the CLI's {@code read-states} and
 * {@code delete-states} find a key on the other instance and delete it through its task.
 */
@WithKafka
class StateQueryIT {
    private static final ObjectMapper MAPPER = new ObjectMapper();
    private static final HttpClient HTTP = HttpClient.newHttpClient();

    @TempDir
    Path dir;

    /** Counts the events of each user in state 'count'; each event sets a reminder timer an hour later. */
    public static final class CountPerUser implements RowFunction {
        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
            output.addTimer("remind", message.getEventTimestamp() + HOUR_NS, message.getEventTimestamp());
            StateAccessor<GenericRecord> count = context.getState("count");
            GenericRecord n = count.get().orElseGet(() -> {
                GenericRecord fresh = new GenericData.Record(StateQueryIT.COUNT_SCHEMA);
                fresh.put("n", 0L);
                return fresh;
            });
            n.put("n", (Long) n.get("n") + 1);
            count.set(n);
        }
    }

    static final long HOUR_NS = 3_600_000_000_000L;

    static final Schema COUNT_SCHEMA = new Schema.Parser().parse(
            "{\"type\": \"record\", \"name\": \"Count\", \"namespace\": \"t\", \"fields\": [{\"name\": \"n\", \"type\": \"long\"}]}");

    /** One instance: its runtime and the HTTP server at its application.server (null: the runtime's own). */
    record Instance(FlowRuntime runtime, @Nullable HttpServer server, String address) implements AutoCloseable {
        @Override
        public void close() {
            runtime.close();
            if (server != null) {
                server.stop(0);
            }
        }
    }

    /** One answer of GET /states. */
    record Answer(int status, JsonNode body) {
    }

    @Test
    @Timeout(300)
    void shouldAnswerEachKeyFromItsOwnerWhicheverInstanceIsAskedAndReadStatesThroughTheCli(KafkaCluster cluster,
            TestNames names) throws Exception {
        String pipeline = names.name("states");
        String input = names.topic("in");
        cluster.createTopic(input, 4);
        PipelineSpec spec = PipelineSpecLoader.fromYaml("""
                name: %s
                streams:
                  events: {schema: {type: record, name: E, namespace: t, fields: [{name: user, type: string}]}}
                computations:
                  read:
                    computation_class_name: Source
                    output_stream_ids: [events]
                    source_streams:
                      events: {source_class_name: KafkaSource, parameters: {topics: %s}}
                  count:
                    computation_class_name: Transform
                    processing_function: %s
                    input_stream_ids: [events]
                    desired_partition_count: 4
                    group_by_schema:
                      - {name: hash, type: uint64, expression: farm_hash(user)}
                      - {name: user, type: string}
                    states:
                      count: {schema: {type: record, name: Count, namespace: t, fields: [{name: n, type: long}]}}
                    timers:
                      remind: {time_type: event_time, deduplicate_equal_timestamps: false}
                    key_visitor_streams:
                      sweep: {period: 1s, finite: false}
                """.formatted(pipeline, input, CountPerUser.class.getName()));
        Map<String, Long> expected = new HashMap<>();
        for (int i = 0; i < 24; i++) {
            expected.put("u" + i, (long) (i % 3 + 1));
        }

        // b serves /states on the runtime's own operations server (flow.http.port), GET and DELETE alike
        try (Instance a = start(spec, cluster, "a"); Instance b = startWithOperationsServer(spec, cluster, "b")) {
            produce(cluster, input, expected);
            Set<String> owners = new HashSet<>();
            Await.until(Duration.ofMinutes(3), "every user's count answered, from both instances", () -> {
                owners.clear();
                for (Map.Entry<String, Long> e : expected.entrySet()) {
                    Answer r = get(a.address(), "count", "{\"user\": \"" + e.getKey() + "\"}");
                    if (r.status() != 200 || r.body().path("states").path("count").path("n").asLong() != e.getValue()) {
                        return false;
                    }
                    owners.add(r.body().path("instance").asText());
                }
                return owners.size() == 2;
            });
            assertThat(owners).containsExactlyInAnyOrder(a.address(), b.address());
            String onA = ownedBy(a, expected, a.address());
            String onB = ownedBy(a, expected, b.address());

            Answer forwardedToB = get(a.address(), "count", "{\"user\": \"" + onB + "\"}");
            assertThat(forwardedToB.status()).isEqualTo(200);
            assertThat(forwardedToB.body().path("instance").asText()).as("answered by the owner").isEqualTo(b.address());
            assertThat(forwardedToB.body().path("states").path("count").path("n").asLong()).isEqualTo(expected.get(onB));
            assertThat(forwardedToB.body().path("key").path("user").asText()).isEqualTo(onB);
            assertThat(forwardedToB.body().path("computation").asText()).isEqualTo("count");
            Await.until(Duration.ofMinutes(1), "the sweep visitor's coverage of " + onB + "'s partition", () -> get(
                    a.address(), "count", "{\"user\": \"" + onB + "\"}").body().path("key_visitors").path("sweep")
                    .path("bucket_count").asInt() > 0);
            Answer forwardedToA = get(b.address(), "count", "{\"user\": \"" + onA + "\"}");
            assertThat(forwardedToA.status()).isEqualTo(200);
            assertThat(forwardedToA.body().path("instance").asText()).isEqualTo(a.address());
            assertThat(forwardedToA.body().path("states").path("count").path("n").asLong()).isEqualTo(expected.get(onA));
            assertThat(forwardedToA.body().path("partition").asInt())
                    .isEqualTo(get(a.address(), "count", "{\"user\": \"" + onA + "\"}").body().path("partition").asInt());

            Answer unknown = get(a.address(), "count", "{\"user\": \"nobody\"}");
            assertThat(unknown.status()).isEqualTo(404);
            assertThat(unknown.body().path("error").asText()).contains("has no state for key");
            Answer badComputation = get(a.address(), "cnt", "{\"user\": \"u1\"}");
            assertThat(badComputation.status()).isEqualTo(400);
            assertThat(badComputation.body().path("error").asText()).contains("no keyed computation 'cnt'", "[count]");
            Answer badKey = get(b.address(), "count", "{\"usr\": \"u1\"}");
            assertThat(badKey.status()).isEqualTo(400);
            assertThat(badKey.body().path("error").asText()).contains("no key column 'usr'", "[hash, user]");
            Answer keyWithLimit = send(URI.create(uri(a.address(), "count", "{\"user\": \"u1\"}") + "&limit=5"));
            assertThat(keyWithLimit.status()).as("a limit is no key query's parameter").isEqualTo(400);
            assertThat(keyWithLimit.body().path("error").asText()).contains("parameter 'limit' pages a hash range");
            Answer misspelt = range(a.address(), "hash_from=0&limt=5");
            assertThat(misspelt.status()).as("a misspelt parameter").isEqualTo(400);
            assertThat(misspelt.body().path("error").asText()).contains("unknown parameter 'limt'");
            HttpResponse<String> put = HTTP.send(HttpRequest.newBuilder(uri(a.address(), "count", "{\"user\": \"u1\"}"))
                    .PUT(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(put.statusCode()).isEqualTo(405);
            assertThat(put.body()).contains("read states with GET, delete them with DELETE");

            // a key's pending timers: one per event, an hour after it
            JsonNode timers = forwardedToB.body().path("timers");
            assertThat(timers).hasSize(expected.get(onB).intValue());
            assertThat(timers.get(0).path("stream").asText()).isEqualTo("remind");
            assertThat(timers.get(0).path("trigger_timestamp_ns").asLong() - timers.get(0).path("event_timestamp_ns")
                    .asLong()).isEqualTo(HOUR_NS);
            assertThat(forwardedToB.body().path("timers_complete").asBoolean()).isTrue();

            // a key range: every key once, from both instances, in pages
            JsonNode all = range(a.address(), "hash_from=0&limit=100").body();
            assertThat(all.path("truncated").asBoolean()).isFalse();
            Map<String, Long> ranged = new HashMap<>();
            Set<String> rangeInstances = new HashSet<>();
            all.path("keys").forEach(k -> {
                assertThat(ranged.put(k.path("key").path("user").asText(), k.path("states").path("count").path("n")
                        .asLong())).as("each key once").isNull();
                rangeInstances.add(k.path("instance").asText());
            });
            assertThat(ranged).isEqualTo(expected);
            assertThat(rangeInstances).containsExactlyInAnyOrder(a.address(), b.address());
            Map<String, Long> paged = new HashMap<>();
            String from = "0";
            for (int page = 0; from != null; page++) {
                assertThat(page).as("pages of 5 keys").isLessThan(10);
                JsonNode p = range(b.address(), "hash_from=" + from + "&limit=5").body();
                assertThat(p.path("keys").size()).isLessThanOrEqualTo(5);
                p.path("keys").forEach(k -> assertThat(paged.put(k.path("key").path("user").asText(),
                        k.path("states").path("count").path("n").asLong())).isNull());
                from = p.path("truncated").asBoolean() ? p.path("next_hash_from").asText() : null;
            }
            assertThat(paged).isEqualTo(expected);
            Answer badRange = range(a.address(), "hash_from=5&hash_to=2");
            assertThat(badRange.status()).isEqualTo(400);
            assertThat(badRange.body().path("error").asText()).contains("hash_from 5 is not below hash_to 2");

            Run read = FlowKafkaCliIT.cli("read-states", "-p", pipeline, "--computation", "count",
                    "--key", "{\"user\": \"" + onB + "\"}", "--instance", a.address());
            assertThat(read.exit()).as(read.err()).isZero();
            JsonNode printed = MAPPER.readTree(read.out());
            assertThat(printed.path("instance").asText()).isEqualTo(b.address());
            assertThat(printed.path("states").path("count").path("n").asLong()).isEqualTo(expected.get(onB));
            Run none = FlowKafkaCliIT.cli("read-states", "-p", pipeline, "-c", "count", "-k",
                    "{\"user\": \"nobody\"}", "-i", b.address());
            assertThat(none.exit()).as(none.err()).isEqualTo(3);
            assertThat(none.err()).contains("has no state for key").doesNotContain("\tat ");
            Run wrongPipeline = FlowKafkaCliIT.cli("read-states", "-p", "other", "-c", "count", "-k",
                    "{\"user\": \"" + onA + "\"}", "-i", b.address());
            assertThat(wrongPipeline.exit()).isEqualTo(1);
            assertThat(wrongPipeline.err()).contains("runs pipeline '" + pipeline + "', not 'other'");

            Run dryRun = FlowKafkaCliIT.cli("delete-states", "-p", pipeline, "-c", "count", "-k",
                    "{\"user\": \"" + onB + "\"}", "-i", a.address());
            assertThat(dryRun.exit()).as(dryRun.err()).isZero();
            assertThat(dryRun.out()).contains("dry run: would delete state(s) [count]", "instance " + b.address(),
                    "nothing was deleted");
            assertThat(get(a.address(), "count", "{\"user\": \"" + onB + "\"}").body().path("states").path("count")
                    .path("n").asLong()).as("nothing deleted").isEqualTo(expected.get(onB));
            Run rangeRead = FlowKafkaCliIT.cli("read-states", "-p", pipeline, "-c", "count",
                    "--hash-from", "0", "-i", b.address());
            assertThat(rangeRead.exit()).as(rangeRead.err()).isZero();
            assertThat(MAPPER.readTree(rangeRead.out()).path("keys")).hasSize(expected.size());

            // a delete through the owner's task: committed, and the key counts from zero again
            Run deleted = FlowKafkaCliIT.cli("delete-states", "-p", pipeline, "-c", "count", "-k",
                    "{\"user\": \"" + onB + "\"}", "-i", a.address(), "--no-dry-run");
            assertThat(deleted.exit()).as(deleted.err()).isZero();
            assertThat(deleted.out()).contains("deleted state(s) [count]", "1 state row(s), committed");
            assertThat(get(a.address(), "count", "{\"user\": \"" + onB + "\"}").status()).isEqualTo(404);
            produce(cluster, input, Map.of(onB, 1L));
            Await.until(Duration.ofMinutes(1), onB + " counted from zero after the delete", () -> get(a.address(),
                    "count", "{\"user\": \"" + onB + "\"}").body().path("states").path("count").path("n")
                    .asLong() == 1);

            // a range delete: the lower half of the hash space, on both instances; the upper half stays
            JsonNode lowerHalf = range(a.address(), "hash_from=0&hash_to=0x8000000000000000&limit=100").body();
            Run halfDeleted = FlowKafkaCliIT.cli("delete-states", "-p", pipeline, "-c", "count",
                    "--hash-to", "0x8000000000000000", "-i", b.address(), "--no-dry-run");
            assertThat(halfDeleted.exit()).as(halfDeleted.err()).isZero();
            assertThat(halfDeleted.out()).contains("deleted " + lowerHalf.path("keys").size() + " key(s)");
            Set<String> left = new HashSet<>();
            range(a.address(), "hash_from=0").body().path("keys").forEach(k -> left.add(k.path("key").path("user")
                    .asText()));
            Set<String> deletedUsers = new HashSet<>();
            lowerHalf.path("keys").forEach(k -> deletedUsers.add(k.path("key").path("user").asText()));
            assertThat(deletedUsers).isNotEmpty();
            assertThat(left).doesNotContainAnyElementsOf(deletedUsers).hasSize(expected.size() - deletedUsers.size());
        }
    }

    private Instance start(PipelineSpec spec, KafkaCluster cluster, String name) throws IOException {
        HttpServer server = HttpServer.create(new InetSocketAddress("localhost", 0), 0);
        String address = "localhost:" + server.getAddress().getPort();
        Properties props = cluster.clientProperties();
        props.put("state.dir", dir.resolve("state-" + name).toString());
        props.put("commit.interval.ms", "100");
        props.put("application.server", address);
        FlowRuntime runtime = FlowRuntime.create(spec, props);
        server.createContext("/states", runtime.stateQueryHandler());
        server.start();
        runtime.start();
        return new Instance(runtime, server, address);
    }

    private Instance startWithOperationsServer(PipelineSpec spec, KafkaCluster cluster, String name)
            throws IOException {
        int port;
        try (ServerSocket free = new ServerSocket(0)) {
            port = free.getLocalPort();
        }
        String address = "localhost:" + port;
        Properties props = cluster.clientProperties();
        props.put("state.dir", dir.resolve("state-" + name).toString());
        props.put("commit.interval.ms", "100");
        props.put("application.server", address);
        props.put("flow.http.port", String.valueOf(port));
        props.put("flow.http.host", "localhost");
        FlowRuntime runtime = FlowRuntime.create(spec, props);
        runtime.start();
        return new Instance(runtime, null, address);
    }

    /** A user whose states live on {@code owner}. */
    private static String ownedBy(Instance asked, Map<String, Long> users, String owner) throws Exception {
        for (String user : users.keySet()) {
            if (get(asked.address(), "count", "{\"user\": \"" + user + "\"}").body().path("instance").asText()
                    .equals(owner)) {
                return user;
            }
        }
        throw new AssertionError("no user on " + owner);
    }

    private static URI uri(String instance, String computation, String key) {
        return URI.create("http://" + instance + "/states?computation=" + computation + "&key="
                + URLEncoder.encode(key, StandardCharsets.UTF_8));
    }

    private static Answer get(String instance, String computation, String key) {
        return send(uri(instance, computation, key));
    }

    private static Answer range(String instance, String query) {
        return send(URI.create("http://" + instance + "/states?computation=count&" + query));
    }

    private static Answer send(URI uri) {
        try {
            HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(uri).GET().build(),
                    HttpResponse.BodyHandlers.ofString());
            return new Answer(r.statusCode(), MAPPER.readTree(r.body()));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private static void produce(KafkaCluster cluster, String topic, Map<String, Long> counts) {
        Properties pp = cluster.clientProperties();
        pp.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        pp.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(pp)) {
            counts.forEach((user, n) -> {
                for (long i = 0; i < n; i++) {
                    producer.send(new ProducerRecord<>(topic, user, "{\"user\": \"" + user + "\"}"));
                }
            });
            producer.flush();
        }
    }
}
