package io.flowkafka.examples.guarantees;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flowkafka.api.FlowException;
import io.flowkafka.connectors.registry.ConfluentAvroSerde;
import io.flowkafka.runtime.FlowRuntime;
import io.flowkafka.runtime.StatusError;
import io.flowkafka.spec.PipelineSpec;
import io.flowkafka.testing.Await;
import io.flowkafka.testing.ExactlyOnceChecker;
import io.flowkafka.testing.SecureKafkaCluster;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import com.sun.net.httpserver.HttpServer;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A pipeline on a secured broker (SASL_SSL with SCRAM-SHA-512, the StandardAuthorizer) as a principal granted
 * only the ACLs of the table "Topics and ACLs" in {@code docs/operations.md}, built from that table's rows: the
 * two-hop pipeline (a source, an internal stream, per-user state, a Kafka sink, dead letters, the instances topic of
 * the status page) processes every input exactly once; without one row's grants it stops with one sentence naming the
 * resource and the operation missing, not a retry loop; and the principal's password shows nowhere (logs, dead
 * letters, status, the Prometheus scrape).
 *
 * <p>Each run without a row takes 5 to 20 s; the rows checked are the ones this pipeline uses (a source's
 * {@code group_id}, async sinks and a {@code TKafkaSink}'s target are not part of it).
 */
class SecureClusterIT {
    private static final String USER = "orders-app";
    private static final String PASSWORD = "sasl-" + UUID.randomUUID();
    private static final AtomicInteger RUNS = new AtomicInteger();
    private static final Duration FAILURE_BOUND = Duration.ofSeconds(Long.getLong("flow.security.failure.bound.s", 90));

    @TempDir(cleanup = CleanupMode.ON_SUCCESS)
    static Path tempRoot;

    private static final String HTTP_SECRET = "Bearer http-" + UUID.randomUUID();
    /** The schema registry's basic-authentication password (the sink's {@code ConfluentAvroSerde}). */
    private static final String REGISTRY_SECRET = "registry-" + UUID.randomUUID();
    private static final String REGISTRY_AUTH = "Basic " + Base64.getEncoder().encodeToString(
            ("orders-app:" + REGISTRY_SECRET).getBytes(StandardCharsets.UTF_8));

    static SecureKafkaCluster cluster;
    /** The HTTP sink's target: answers 200 and keeps each request's Authorization header and body. */
    static HttpServer hook;
    static final List<String[]> POSTED = new CopyOnWriteArrayList<>();
    static Path tokenFile;
    /**
     * A schema registry that registers any schema under id 1 for requests with {@link #REGISTRY_AUTH} and answers
     * 401 to others; counts both.
     */
    static HttpServer registry;
    static final AtomicInteger REGISTERED = new AtomicInteger();
    static final AtomicInteger REFUSED = new AtomicInteger();

    @BeforeAll
    static void startCluster() throws IOException {
        cluster = SecureKafkaCluster.start();
        cluster.createUser(USER, PASSWORD);
        tokenFile = Files.writeString(tempRoot.resolve("http-token"), HTTP_SECRET);
        hook = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        hook.createContext("/", exchange -> {
            byte[] body = exchange.getRequestBody().readAllBytes();
            POSTED.add(new String[] {String.valueOf(exchange.getRequestHeaders().getFirst("Authorization")),
                    new String(body, StandardCharsets.UTF_8), exchange.getRequestURI().getPath()});
            exchange.sendResponseHeaders(200, -1);
            exchange.close();
        });
        hook.start();
        registry = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        registry.createContext("/", exchange -> {
            exchange.getRequestBody().readAllBytes();
            boolean ok = REGISTRY_AUTH.equals(exchange.getRequestHeaders().getFirst("Authorization"));
            byte[] body = (ok ? "{\"id\":1}" : "{\"error_code\":401,\"message\":\"Unauthorized\"}")
                    .getBytes(StandardCharsets.UTF_8);
            (ok ? REGISTERED : REFUSED).incrementAndGet();
            exchange.getResponseHeaders().add("Content-Type", "application/vnd.schemaregistry.v1+json");
            exchange.sendResponseHeaders(ok && exchange.getRequestMethod().equals("POST")
                    && exchange.getRequestURI().getPath().endsWith("/versions") ? 200 : ok ? 404 : 401, body.length);
            exchange.getResponseBody().write(body);
            exchange.close();
        });
        registry.start();
    }

    @AfterAll
    static void stopCluster() {
        if (hook != null) {
            hook.stop(0);
        }
        if (registry != null) {
            registry.stop(0);
        }
        if (cluster != null) {
            cluster.close();
        }
    }

    /**
     * The two-hop pipeline with a second sink of its results, a {@code TAsyncHttpSink} with a secret header; its
     * Kafka sink writes Confluent Avro through the registry, with the registry's credentials.
     */
    private static PipelineSpec spec(Run run) {
        Map<String, Object> http = new HashMap<>(Map.of("url", "http://127.0.0.1:" + hook.getAddress().getPort()
                + "/hook/" + run.pipeline(), "key_column", "id", "max_batch_records", 10));
        http.put("secret_headers", Map.of("Authorization", Map.of("file", tokenFile.toString())));
        return TwoHopPipeline.spec(run.pipeline(), run.input(), run.output(), false, http,
                Map.of("value_serde", ConfluentAvroSerde.class.getName()));
    }

    /** One run's names; the grants of the table's rows for them. */
    private record Run(String pipeline, String input, String output) {
        static Run next() {
            int n = RUNS.incrementAndGet();
            String id = "sec" + n + "-" + UUID.randomUUID().toString().substring(0, 6);
            Run run = new Run(id, "in-" + id, "out-" + id); // not under the prefixes the table grants
            cluster.createTopic(run.input, 2);
            cluster.createTopic(run.output, 1);
            return run;
        }

        /** The application id: flow-kafka's default prefix is empty, so the pipeline's name. */
        String applicationId() {
            return pipeline;
        }

        /**
         * The resource a row of the table names, for this run; empty for a row this pipeline does not use. A row
         * the test does not know fails it: the table changed, and this test must learn the new row.
         */
        Optional<ResourcePattern> patternOf(AclTable.Row row) {
            String r = row.resource();
            if (r.equals("topics `<prefix><pipeline>.*`")) {
                return Optional.of(new ResourcePattern(ResourceType.TOPIC, pipeline + ".", PatternType.PREFIXED));
            } else if (r.equals("topics `<application.id>-*`")) {
                return Optional.of(new ResourcePattern(ResourceType.TOPIC, applicationId() + "-",
                        PatternType.PREFIXED));
            } else if (r.equals("source topics")) {
                return Optional.of(new ResourcePattern(ResourceType.TOPIC, input, PatternType.LITERAL));
            } else if (r.equals("sink topics")) {
                return Optional.of(new ResourcePattern(ResourceType.TOPIC, output, PatternType.LITERAL));
            } else if (r.equals("group `<application.id>`")) {
                return Optional.of(new ResourcePattern(ResourceType.GROUP, applicationId(), PatternType.LITERAL));
            } else if (r.equals("transactional ids `<application.id>-*`")) {
                return Optional.of(new ResourcePattern(ResourceType.TRANSACTIONAL_ID, applicationId() + "-",
                        PatternType.PREFIXED));
            } else if (r.startsWith("transactional id `<flow.topic.prefix><pipeline>.dynamic-spec`")) {
                return Optional.of(new ResourcePattern(ResourceType.TRANSACTIONAL_ID,
                        pipeline + ".dynamic-spec", PatternType.LITERAL));
            } else if (r.equals("cluster")) {
                return Optional.of(new ResourcePattern(ResourceType.CLUSTER, "kafka-cluster", PatternType.LITERAL));
            } else if (r.startsWith("group `<application.id>.outbox.<sink>`")) {
                return Optional.of(new ResourcePattern(ResourceType.GROUP, applicationId() + ".outbox.hook",
                        PatternType.LITERAL));
            } else if (r.startsWith("groups named by a source's `group_id`")
                    || r.startsWith("on a `TKafkaSink`'s target cluster")) {
                return Optional.empty(); // this pipeline has no such source or sink
            }
            throw new AssertionError("the ACL table has a row this test does not know: '" + r + "'; teach "
                    + "SecureClusterIT.Run.patternOf what it grants");
        }

        /** The grants of every row this pipeline uses, except {@code without}'s. */
        List<AclBinding> grants(List<AclTable.Row> rows, AclTable.Row without) {
            List<AclBinding> acls = new ArrayList<>();
            for (AclTable.Row row : rows) {
                if (!row.equals(without)) {
                    patternOf(row).ifPresent(p -> acls.addAll(SecureKafkaCluster.bindings(USER, p, row.operations())));
                }
            }
            return acls;
        }

        Properties runtimeProperties() throws IOException {
            Properties props = cluster.clientProperties(USER, PASSWORD);
            props.put("state.dir", Files.createTempDirectory(tempRoot, pipeline).toString());
            props.put("commit.interval.ms", "100");
            props.put("flow.bootstrap.timeout.ms", "20000");
            props.put("flow.serde.schema.registry.url", "http://127.0.0.1:" + registry.getAddress().getPort());
            props.put("flow.serde.basic.auth.credentials.source", "USER_INFO");
            props.put("flow.serde.basic.auth.user.info", "orders-app:" + REGISTRY_SECRET);
            return props;
        }

        void produce(int count) {
            Properties p = cluster.clientProperties();
            p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
            p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
            try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
                for (int i = 0; i < count; i++) {
                    String user = "u" + (i % 3);
                    producer.send(new ProducerRecord<>(input, user, "{\"id\":\"m-" + i + "\",\"user\":\"" + user + "\"}"));
                }
                producer.send(new ProducerRecord<>(input, "u0", "not json at all"));
            }
        }
    }

    private static final AclTable.Row NONE = new AclTable.Row("", "");

    /**
     * Rows the table says running does not need: the dynamic spec's transactional id (only to change the dynamic
     * spec) and the cluster's IdempotentWrite (only brokers before 2.8).
     */
    static boolean neededToRun(AclTable.Row row) {
        return !row.resource().startsWith("transactional id `<flow.topic.prefix><pipeline>.dynamic-spec`")
                && !row.resource().equals("cluster");
    }

    static Stream<AclTable.Row> rowsNeededToRun() throws IOException {
        Run probe = new Run("p", "in", "out");
        return AclTable.fromDocs().stream().filter(row -> probe.patternOf(row).isPresent() && neededToRun(row));
    }

    /** Opt-in ({@code -Dflow.security.allRows=true}): about 8 s per row on a loaded machine. */
    static Stream<AclTable.Row> rowsNotNeededToRun() throws IOException {
        if (!Boolean.getBoolean("flow.security.allRows")) {
            return Stream.empty();
        }
        Run probe = new Run("p", "in", "out");
        return AclTable.fromDocs().stream().filter(row -> probe.patternOf(row).isPresent() && !neededToRun(row));
    }

    /**
     * With exactly the table's grants the pipeline runs: every input once in the sink topic, the undecodable one in
     * the dead-letter topic; the password shows in none of the logs, dead letters, status and metrics.
     */
    @Test
    @Timeout(180)
    void shouldProcessExactlyOnceWithOnlyTheTableGrantsAndShowNoSecret() throws Exception {
        Run run = Run.next();
        cluster.grant(run.grants(AclTable.fromDocs(), NONE));
        run.produce(30);
        Properties props = run.runtimeProperties();
        props.put("flow.http.port", "0");
        props.put("flow.http.host", "127.0.0.1");
        PrometheusMeterRegistry prometheus = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        String statusJson;
        String scrape;
        List<ConsumerRecord<byte[], byte[]>> dead;
        FlowRuntime.State finalState;
        List<StatusError> status;
        StderrCapture logs = new StderrCapture();
        try (logs; FlowRuntime runtime = FlowRuntime.create(spec(run), props, prometheus)) {
            runtime.start();
            Set<String> expected = new HashSet<>();
            for (int i = 0; i < 30; i++) {
                expected.add("m-" + i);
            }
            ExactlyOnceChecker.Report report = ExactlyOnceChecker.check(cluster, run.output(), expected,
                    Duration.ofMinutes(2), r -> new String(r.key(), StandardCharsets.UTF_8));
            assertThat(report.isExact()).as(report.toString()).isTrue();
            dead = readAll(runtime.deadLetterTopic(), 1);
            Await.until(Duration.ofMinutes(1), "the HTTP sink posted every id of " + run.pipeline(),
                    () -> expected.stream().allMatch(id -> POSTED.stream().anyMatch(p ->
                            p[2].endsWith("/" + run.pipeline()) && p[1].contains("\"" + id + "\""))));
            String base = "http://127.0.0.1:" + runtime.httpAddress().orElseThrow().getPort();
            statusJson = Await.untilValue(Duration.ofSeconds(60), "the status page lists this instance",
                    () -> getOrEmpty(base + "/status.json"), body -> body.contains(run.pipeline()));
            scrape = get(base + "/metrics");
            finalState = runtime.state();
            status = runtime.status();
        }
        assertThat(finalState).isEqualTo(FlowRuntime.State.RUNNING);
        assertThat(dead).singleElement().satisfies(r ->
                assertThat(new String(r.value(), StandardCharsets.UTF_8)).isEqualTo("not json at all"));
        assertThat(scrape).contains("flow_");
        String log = logs.text();
        assertThat(log).as("the captured logs").contains(run.pipeline());
        assertThat(POSTED).as("the HTTP sink sent its secret header").allSatisfy(p ->
                assertThat(p[0]).isEqualTo(HTTP_SECRET));
        assertThat(REGISTERED.get()).as("the sink registered its schema with the registry's credentials")
                .isPositive();
        assertThat(REFUSED.get()).as("registry requests without the credentials").isZero();
        String httpSecret = HTTP_SECRET.substring("Bearer ".length());
        String[] secrets = {PASSWORD, httpSecret, REGISTRY_SECRET};
        assertThat(log).as("the captured logs").doesNotContain(secrets);
        assertThat(statusJson).doesNotContain(secrets);
        assertThat(scrape).doesNotContain(secrets);
        assertThat(status.toString()).doesNotContain(secrets);
        for (ConsumerRecord<byte[], byte[]> r : dead) {
            assertThat(new String(r.value(), StandardCharsets.UTF_8)).doesNotContain(secrets);
            for (Header h : r.headers()) {
                assertThat(new String(h.value(), StandardCharsets.UTF_8)).as(h.key()).doesNotContain(secrets);
            }
        }
    }

    /**
     * With a wrong registry password every output is a dead letter whose reason says which setting to check, and
     * the password shows in neither the dead letters nor the logs nor the status.
     */
    @Test
    @Timeout(180)
    void shouldNameTheSettingNotTheSecretWhenTheRegistryRefusesTheCredentials() throws Exception {
        Run run = Run.next();
        cluster.grant(run.grants(AclTable.fromDocs(), NONE));
        run.produce(5);
        String wrong = "wrong-" + UUID.randomUUID();
        Properties props = run.runtimeProperties();
        props.put("flow.serde.basic.auth.user.info", "orders-app:" + wrong);
        List<ConsumerRecord<byte[], byte[]>> dead;
        List<StatusError> status;
        int refusedBefore = REFUSED.get();
        StderrCapture logs = new StderrCapture();
        try (logs; FlowRuntime runtime = FlowRuntime.create(spec(run), props)) {
            runtime.start();
            dead = readAll(runtime.deadLetterTopic(), 6); // 5 outputs the sink cannot write, 1 undecodable input
            status = runtime.status();
        }
        assertThat(REFUSED.get()).as("registry requests refused").isGreaterThan(refusedBefore);
        String reasons = dead.stream().flatMap(r -> Stream.of(r.headers().toArray()))
                .map(h -> h.key() + "=" + new String(h.value(), StandardCharsets.UTF_8)).toList().toString();
        System.out.println("SecureClusterIT, registry refused: " + reasons.substring(0, Math.min(600, reasons.length())));
        assertThat(reasons).as("the dead letters' reasons").contains("basic.auth.user.info").doesNotContain(wrong);
        for (ConsumerRecord<byte[], byte[]> r : dead) {
            assertThat(new String(r.value(), StandardCharsets.UTF_8)).doesNotContain(wrong);
        }
        assertThat(logs.text()).as("the captured logs").doesNotContain(wrong);
        assertThat(status.toString()).doesNotContain(wrong);
    }

    /**
     * Without one row's grants the pipeline stops, at start or as the first client that needs them meets the
     * broker's refusal, with one sentence naming the resource and the operation missing.
     */
    @ParameterizedTest(name = "without {0}")
    @MethodSource("rowsNeededToRun")
    @Timeout(150)
    void shouldStopNamingTheMissingAclWhenARowIsNotGranted(AclTable.Row missing) throws Exception {
        Run run = Run.next();
        cluster.grant(run.grants(AclTable.fromDocs(), missing));
        run.produce(5);
        ResourcePattern pattern = run.patternOf(missing).orElseThrow();
        String why;
        try (FlowRuntime runtime = FlowRuntime.create(spec(run), run.runtimeProperties())) {
            try {
                runtime.start();
                Await.until(FAILURE_BOUND, "the pipeline without " + missing + " fails",
                        () -> runtime.state() == FlowRuntime.State.FAILED);
                why = runtime.status().stream().filter(StatusError::isError).map(StatusError::message).toList()
                        .toString();
            } catch (FlowException e) {
                why = e.getMessage();
                assertThat(runtime.state()).isEqualTo(FlowRuntime.State.FAILED);
            }
        }
        System.out.println("SecureClusterIT without " + missing + ": " + why);
        String resource = pattern.resourceType() == ResourceType.CLUSTER ? "cluster" : pattern.name();
        assertThat(why).as("the reason").contains(resource).contains("ACL")
                .containsAnyOf(missing.operations().stream().map(SecureClusterIT::displayName).toArray(String[]::new));
    }

    /**
     * Describe on the transactional ids but not Write: the start cannot ask the broker about Write, so the first
     * producer meets the refusal; the pipeline stops with the sentence on its status instead of replacing the
     * stream thread forever.
     */
    @Test
    @Timeout(150)
    void shouldStopNamingTheTransactionalIdsWhenTheProducerIsRefusedWrite() throws Exception {
        Run run = Run.next();
        List<AclTable.Row> rows = AclTable.fromDocs();
        AclTable.Row transactional = rows.stream()
                .filter(r -> r.resource().equals("transactional ids `<application.id>-*`")).findFirst().orElseThrow();
        List<AclBinding> grants = new ArrayList<>(run.grants(rows, transactional));
        grants.addAll(SecureKafkaCluster.bindings(USER, run.patternOf(transactional).orElseThrow(),
                List.of(AclOperation.DESCRIBE)));
        cluster.grant(grants);
        run.produce(5);
        try (FlowRuntime runtime = FlowRuntime.create(spec(run), run.runtimeProperties())) {
            runtime.start();
            Await.until(FAILURE_BOUND, "the pipeline without Write on its transactional ids fails",
                    () -> runtime.state() == FlowRuntime.State.FAILED);
            String why = runtime.status().stream().filter(StatusError::isError).map(StatusError::message).toList()
                    .toString();
            System.out.println("SecureClusterIT without Write on transactional ids: " + why);
            assertThat(why).contains("ACL Describe, Write on transactional ids '" + run.applicationId() + "-*'");
        }
    }

    /** A wrong SASL password: the start fails in one sentence that points at the settings and does not echo it. */
    @Test
    @Timeout(60)
    void shouldFailAtStartInOneSentenceWithAWrongPasswordAndNotRepeatIt() throws Exception {
        Run run = Run.next();
        String wrong = "wrong-" + UUID.randomUUID();
        Properties props = run.runtimeProperties();
        props.putAll(cluster.clientProperties(USER, wrong));
        try (FlowRuntime runtime = FlowRuntime.create(spec(run), props)) {
            assertThatThrownBy(runtime::start).isInstanceOf(FlowException.class)
                    .hasMessageContaining("pipeline '" + run.pipeline() + "'").hasMessageContaining("sasl")
                    .hasMessageNotContaining(wrong);
            assertThat(runtime.state()).isEqualTo(FlowRuntime.State.FAILED);
        }
    }

    /** Without a row the table says running does not need, the pipeline runs and processes every input. */
    @ParameterizedTest(name = "without {0}", allowZeroInvocations = true)
    @MethodSource("rowsNotNeededToRun")
    @Timeout(150)
    void shouldRunWithoutARowTheTableSaysRunningDoesNotNeed(AclTable.Row notNeeded) throws Exception {
        Run run = Run.next();
        cluster.grant(run.grants(AclTable.fromDocs(), notNeeded));
        run.produce(5);
        try (FlowRuntime runtime = FlowRuntime.create(spec(run), run.runtimeProperties())) {
            runtime.start();
            Set<String> expected = Set.of("m-0", "m-1", "m-2", "m-3", "m-4");
            ExactlyOnceChecker.Report report = ExactlyOnceChecker.check(cluster, run.output(), expected,
                    Duration.ofMinutes(1), r -> new String(r.key(), StandardCharsets.UTF_8));
            assertThat(report.isExact()).as(report.toString()).isTrue();
            assertThat(runtime.state()).isEqualTo(FlowRuntime.State.RUNNING);
        }
    }

    /**
     * Without the dynamic spec's transactional id row (running does not need it) a change of the dynamic spec is
     * refused before anything is sent, in one sentence naming the grant.
     */
    @Test
    @Timeout(150)
    void shouldRefuseADynamicSpecChangeNamingTheGrantItNeeds() throws Exception {
        Run run = Run.next();
        AclTable.Row dynamicSpecRow = AclTable.fromDocs().stream().filter(r -> r.resource()
                .startsWith("transactional id `<flow.topic.prefix><pipeline>.dynamic-spec`")).findFirst().orElseThrow();
        cluster.grant(run.grants(AclTable.fromDocs(), dynamicSpecRow));
        try (FlowRuntime runtime = FlowRuntime.create(spec(run), run.runtimeProperties())) {
            runtime.start();
            assertThat(runtime.awaitState(FlowRuntime.State.RUNNING, Duration.ofMinutes(1))).isTrue();
            assertThatThrownBy(() -> runtime.reconfigure(Map.of("paused", true)))
                    .isInstanceOf(FlowException.class)
                    .hasMessageContaining("the dynamic spec change was not published to " + run.pipeline()
                            + ".dynamic-spec")
                    .hasMessageContaining("grant the principal Write on topic")
                    .hasMessageNotContaining("org.apache.kafka");
            assertThat(runtime.state()).as("the refused change paused nothing").isEqualTo(FlowRuntime.State.RUNNING);
        }
    }

    private static String displayName(AclOperation op) {
        StringBuilder b = new StringBuilder();
        for (String part : op.name().split("_")) {
            b.append(part.charAt(0)).append(part.substring(1).toLowerCase(Locale.ROOT));
        }
        return b.toString();
    }

    private static List<ConsumerRecord<byte[], byte[]>> readAll(String topic, int count) {
        Properties p = cluster.clientProperties();
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        List<ConsumerRecord<byte[], byte[]>> out = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(p, new ByteArrayDeserializer(),
                new ByteArrayDeserializer())) {
            List<TopicPartition> parts = c.partitionsFor(topic).stream()
                    .map(i -> new TopicPartition(topic, i.partition())).toList();
            c.assign(parts);
            c.seekToBeginning(parts);
            Await.until(Duration.ofSeconds(60), count + " record(s) in " + topic, () -> {
                c.poll(Duration.ofMillis(200)).forEach(out::add);
                return out.size() >= count;
            });
        }
        return out;
    }

    private static String getOrEmpty(String url) {
        try {
            return get(url);
        } catch (IOException e) {
            return "";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "";
        }
    }

    private static String get(String url) throws IOException, InterruptedException {
        HttpClient http = HttpClient.newHttpClient();
        return http.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10)).build(),
                HttpResponse.BodyHandlers.ofString()).body();
    }

    /** Writes to two streams. */
    /** Copies what is written to {@code System.err} (the runtime's logs), from its creation until it is closed. */
    private static final class StderrCapture implements AutoCloseable {
        private final PrintStream original = System.err;
        private final ByteArrayOutputStream copy = new ByteArrayOutputStream();

        StderrCapture() {
            System.setErr(new PrintStream(new OutputStream() {
                @Override
                public void write(int c) {
                    original.write(c);
                    synchronized (copy) {
                        copy.write(c);
                    }
                }

                @Override
                public void write(byte[] buf, int off, int len) {
                    original.write(buf, off, len);
                    synchronized (copy) {
                        copy.write(buf, off, len);
                    }
                }
            }, true, StandardCharsets.UTF_8));
        }

        String text() {
            synchronized (copy) {
                return copy.toString(StandardCharsets.UTF_8);
            }
        }

        @Override
        public void close() {
            System.setErr(original);
        }
    }
}
