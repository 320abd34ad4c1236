package io.flowkafka.connectors.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.flowkafka.connectors.http.LoopbackHttpServer.Answer;
import io.flowkafka.connectors.http.LoopbackHttpServer.Received;
import io.flowkafka.runtime.FlowRuntime;
import io.flowkafka.runtime.StatusError;
import io.flowkafka.testing.Await;
import io.flowkafka.testing.ChildJvm;
import io.flowkafka.testing.KafkaCluster;
import io.flowkafka.testing.TestNames;
import io.flowkafka.testing.WithKafka;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.Future;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code TAsyncHttpSink} end to end: pipelines on the in-JVM broker posting to a real HTTP server on loopback in this
 * JVM, with injected faults. Reference 002, HTTP: "Asynchronous sink (TAsyncHttpSink): at-least-once — POST requests
 * run outside the epoch transaction, so the receiver must make the operation idempotent or deduplicate the stable
 * message ID sent in Idempotency-Key by default."
 */
@WithKafka
class HttpSinkIT {
    @TempDir(cleanup = CleanupMode.ON_SUCCESS)
    static Path tempRoot;

    private static final long SEED = Long.getLong("flow.it.seed", 20261203L);
    private static final String SECRET = "Bearer it-secret-7f3a9c-never-shown";
    /** The environment variable the child instances read the {@code X-Api-Key} secret header from. */
    static final String API_KEY_VARIABLE = "FLOW_IT_API_KEY";
    private static final String API_KEY = "it-api-key-41d8-never-shown";
    private static final ObjectMapper JSON = new ObjectMapper();

    /** The sink parameters of the tests' pipelines. */
    static Map<String, Object> sinkParameters(String url, String tokenFile) {
        Map<String, Object> p = new HashMap<>(Map.of("url", url, "max_batch_records", 50, "request_timeout", "500ms",
                "retry_backoff", "20ms", "max_retry_backoff", "200ms", "max_retries", 3, "concurrency", 4));
        p.put("secret_headers", Map.of("Authorization", Map.of("file", tokenFile)));
        return p;
    }

    @Test
    @Timeout(300)
    void shouldPostEveryMessageAtLeastOnceWithItsOwnKeyWhenAnInstanceIsKilledMidDelivery(KafkaCluster cluster,
            TestNames names) throws Exception {
        int records = 3_000;
        String pipeline = names.name("kill");
        String input = names.topic("input");
        cluster.createTopic(input, 4);
        produce(cluster, input, records);
        Path token = Files.writeString(tempRoot.resolve("token-kill"), SECRET);
        Path state = Files.createTempDirectory(tempRoot, "http-kill");
        long killAt = 300 + new Random(SEED).nextInt(1_500);
        try (LoopbackHttpServer server = new LoopbackHttpServer()) {
            Random faults = new Random(SEED + 1);
            server.plan(r -> {
                int f;
                synchronized (faults) {
                    f = faults.nextInt(100);
                }
                // slow service so that delivery is in progress when the instance dies; some injected faults
                return f < 5 ? Answer.status(503, "busy") : f < 8 ? Answer.closeWithoutAnswer()
                        : f < 10 ? Answer.slow(800) : new Answer(200, Map.of(), "ok", 1, false, false);
            });
            try (ChildJvm a = instance(cluster, pipeline, input, server, token, state, "a");
                    ChildJvm b = instance(cluster, pipeline, input, server, token, state, "b")) {
                Await.until(Duration.ofMinutes(2), killAt + " ids posted", () -> idsSeen(server).size() >= killAt);
                a.kill(); // SIGKILL mid-delivery: its uncommitted batches are delivered again by the others
                assertThat(a.isAlive()).isFalse();
                try (ChildJvm a2 = instance(cluster, pipeline, input, server, token, state, "a2")) {
                    Await.until(Duration.ofMinutes(2), "every id posted and answered 2xx",
                            () -> deliveredIds(server).size() == records);
                }
            }
            List<Received> got = server.received();
            Map<String, Set<String>> bodiesPerKey = new HashMap<>();
            Map<String, Set<String>> keysPerId = new HashMap<>();
            for (Received r : got) {
                bodiesPerKey.computeIfAbsent(r.key(), k -> new HashSet<>()).add(r.bodyText());
                keysPerId.computeIfAbsent(id(r), k -> new HashSet<>()).add(r.key());
                assertThat(r.header("Authorization")).isEqualTo(SECRET);
                assertThat(r.header("X-api-key")).as("the secret header from {env: FLOW_IT_API_KEY}")
                        .isEqualTo(API_KEY);
            }
            for (String name : List.of("a", "b", "a2")) {
                assertThat(Files.readString(state.resolve(name + ".log"))).as("instance " + name + "'s log")
                        .contains("RUNNING").doesNotContain("it-secret", API_KEY);
            }
            assertThat(keysPerId).as("every id seen").hasSize(records);
            assertThat(keysPerId).as("every repeat of a message carries the same Idempotency-Key")
                    .allSatisfy((id, keys) -> assertThat(keys).hasSize(1));
            assertThat(bodiesPerKey).as("every repeat of a key carries the same body")
                    .allSatisfy((key, bodies) -> assertThat(bodies).hasSize(1));
            long repeats = got.size() - keysPerId.size();
            System.out.println("HttpSinkIT: " + got.size() + " requests for " + records + " messages, " + repeats
                    + " repeats (retries and redeliveries after the kill at " + killAt + ")");
            assertThat(repeats).as("faults were injected, so some were sent again").isPositive();
        }
    }

    @Test
    @Timeout(120)
    void shouldBlockWithAStatusErrorDeadLetterTheRequestsOwnFaultsAndResumeWhenTheTargetRecovers(
            KafkaCluster cluster, TestNames names) throws Exception {
        String pipeline = names.name("block");
        String input = names.topic("input");
        cluster.createTopic(input, 1);
        produce(cluster, input, 20);
        Path token = Files.writeString(tempRoot.resolve("token-block"), SECRET);
        Properties props = cluster.clientProperties();
        props.put("state.dir", Files.createTempDirectory(tempRoot, "http-block").toString());
        props.put("commit.interval.ms", "100");
        try (LoopbackHttpServer server = new LoopbackHttpServer()) {
            // down for everything but e5, which it rejects as the request's fault, echoing the token back
            server.plan(r -> id(r).equals("e5") ? Answer.status(422, "invalid user; you sent " + r.header("Authorization"))
                    : Answer.status(503, "maintenance"));
            Map<String, Object> params = sinkParameters(server.uri().toString(), token.toString());
            try (FlowRuntime runtime = FlowRuntime.create(HttpPipeline.spec(pipeline, input, params), props)) {
                cluster.createTopic(runtime.deadLetterTopic(), 1);
                runtime.start();
                StatusError blocked = Await.untilValue(Duration.ofSeconds(60), "the sink's blocked status error",
                        () -> runtime.status().stream().filter(s -> s.message().contains("sink 'web'")
                                && s.message().contains("is blocked")).findFirst().orElse(null), s -> s != null);
                assertThat(blocked.message()).contains("HTTP 503", "\"maintenance\"", "Idempotency-Key",
                        "Fix the target at " + server.uri()).doesNotContain(SECRET);
                server.plan(r -> id(r).equals("e5") ? Answer.status(422, "invalid user; you sent "
                        + r.header("Authorization")) : Answer.ok()); // the target recovers
                Set<String> expected = new TreeSet<>();
                for (int i = 0; i < 20; i++) {
                    if (i != 5) {
                        expected.add("e" + i);
                    }
                }
                Await.until(Duration.ofSeconds(60), "every id but e5 delivered",
                        () -> deliveredIds(server).equals(expected));
                Await.until(Duration.ofSeconds(30), "the status error cleared", () -> runtime.status().stream()
                        .noneMatch(s -> s.message().contains("sink 'web'")));
                List<ConsumerRecord<byte[], byte[]>> dead = read(cluster, runtime.deadLetterTopic(), 1);
                assertThat(dead).singleElement().satisfies(r -> {
                    assertThat(JSON.readTree(r.value()).get("id").asText()).isEqualTo("e5");
                    assertThat(header(r, "flow.dlq.http.status")).isEqualTo("422");
                    assertThat(header(r, "flow.dlq.error.message")).contains("sink 'web'", "HTTP 422",
                            "<secret header Authorization>");
                    for (Header h : r.headers()) {
                        assertThat(new String(h.value(), StandardCharsets.UTF_8)).as(h.key()).doesNotContain("it-secret");
                    }
                    assertThat(new String(r.value(), StandardCharsets.UTF_8)).doesNotContain("it-secret");
                });
                assertThat(runtime.status().toString()).doesNotContain("it-secret");
            }
        }
    }

    private static ChildJvm instance(KafkaCluster cluster, String pipeline, String input, LoopbackHttpServer server,
            Path token, Path state, String name) {
        return ChildJvm.builder(HttpSinkMain.class)
                .environment(API_KEY_VARIABLE, API_KEY)
                .args(cluster.bootstrapServers(), pipeline, input, server.uri().toString(), token.toString(),
                        state.resolve(name).toString())
                .maxHeap("384m")
                .logFile(state.resolve(name + ".log"))
                .startAndAwaitOutputLine(l -> l.equals("RUNNING"), Duration.ofMinutes(2));
    }

    private static String id(Received r) {
        try {
            return JSON.readTree(r.body()).get("id").asText();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static Set<String> idsSeen(LoopbackHttpServer server) {
        Set<String> ids = new HashSet<>();
        server.received().forEach(r -> ids.add(id(r)));
        return ids;
    }

    private static Set<String> deliveredIds(LoopbackHttpServer server) {
        Set<String> keys = new HashSet<>(server.deliveredKeys());
        Set<String> ids = new TreeSet<>();
        server.received().stream().filter(r -> keys.contains(r.key())).forEach(r -> ids.add(id(r)));
        return ids;
    }

    private static void produce(KafkaCluster cluster, String topic, int count) throws Exception {
        Properties pp = cluster.clientProperties();
        pp.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        pp.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        pp.put(ProducerConfig.ACKS_CONFIG, "all");
        pp.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, "1");
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(pp)) {
            List<Future<?>> sent = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                String user = "u" + (i % 37);
                sent.add(producer.send(new ProducerRecord<>(topic, user, "{\"id\":\"e" + i + "\",\"user\":\"" + user
                        + "\"}")));
            }
            for (var f : sent) {
                f.get();
            }
        }
    }

    static List<ConsumerRecord<byte[], byte[]>> read(KafkaCluster cluster, String topic, int atLeast) {
        Properties props = cluster.clientProperties();
        props.put(ConsumerConfig.GROUP_ID_CONFIG, "reader-" + System.nanoTime());
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        List<ConsumerRecord<byte[], byte[]>> out = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(props, new ByteArrayDeserializer(),
                new ByteArrayDeserializer())) {
            c.subscribe(List.of(topic));
            Await.until(Duration.ofSeconds(30), atLeast + " records in " + topic, () -> {
                c.poll(Duration.ofMillis(200)).forEach(out::add);
                return out.size() >= atLeast;
            });
            c.poll(Duration.ofMillis(500)).forEach(out::add);
        }
        return out;
    }

    static String header(ConsumerRecord<byte[], byte[]> r, String name) {
        Header h = r.headers().lastHeader(name);
        return h == null ? null : new String(h.value(), StandardCharsets.UTF_8);
    }
}
