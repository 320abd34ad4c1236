package io.flowkafka.examples.waitclick;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.flowkafka.testing.Await;
import io.flowkafka.testing.ChildJvm;
import io.flowkafka.testing.ExactlyOnceChecker;
import io.flowkafka.testing.KafkaCluster;
import io.flowkafka.testing.TestNames;
import io.flowkafka.testing.WithKafka;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

/**
 * The wait-click join on a real broker over 4 partitions with two instances as child JVMs; one is
 * killed with SIGKILL at a seeded point while results (joins from messages, timeouts from timers)
 * are being written, or kills itself with SIGKILL inside a timer-firing punctuation at a seeded timer, and is
 * restarted. Every impression must get exactly one result, the one the reference expects.
 */
@WithKafka
class WaitClickJoinIT {
    /** State directories of this class's runtimes (and child JVMs); JUnit deletes it after the class if it passed. */
    @TempDir(cleanup = CleanupMode.ON_SUCCESS)
    static Path tempRoot;

    private static final int IMPRESSIONS = 20_000;
    private static final long SEED = Long.getLong("flow.it.seed", 20261129L);

    /**
     * Regression (found this way): results were once "lost" here because the sink wrote them with
     * their event time (a backfill of old impressions) and the broker's time-based retention, first
     * run 30 s after it starts, deleted those records from the results topic. The example's sink
     * now writes system time; the diagnostics below tell such a loss from a processing one.
     */
    @Test
    @Timeout(600)
    void shouldGiveEveryImpressionExactlyOneResultWhenAnInstanceIsKilled(KafkaCluster cluster, TestNames names)
            throws Exception {
        Setup t = Setup.create(cluster, names, "wcj");
        String pipeline = t.pipeline();
        String impressions = t.impressions();
        String clicks = t.clicks();
        String results = t.results();
        WaitClickData data = t.data();
        Path state = t.state();
        long killAt = 2_000 + new Random(SEED).nextInt(12_000);
        Map<String, String> failFast = Map.of("session.timeout.ms", "6000"); // a's tasks move 6 s after the kill
        try (ChildJvm a = instance(cluster, pipeline, impressions, clicks, results, state.resolve("a"), failFast);
                ChildJvm b = instance(cluster, pipeline, impressions, clicks, results, state.resolve("b"), failFast)) {
            Await.until(Duration.ofMinutes(3), killAt + " results written", () -> endOffsets(cluster, results) >= killAt);
            a.kill();
            assertThat(a.isAlive()).isFalse();
            try (ChildJvm a2 = instance(cluster, pipeline, impressions, clicks, results, state.resolve("a2"),
                    failFast)) {
                ExactlyOnceChecker.Report report = ExactlyOnceChecker.check(cluster, results,
                        data.impressions().keySet(), Duration.ofMinutes(4),
                        r -> new String(r.key(), StandardCharsets.UTF_8));
                if (!report.isExact()) {
                    Map<String, String> expected = reference(data);
                    System.out.println("DIAG lost by expected result: " + report.lost().stream()
                            .collect(java.util.stream.Collectors.groupingBy(expected::get, java.util.stream.Collectors.counting())));
                    diagnose(cluster, pipeline, report);
                }
                assertThat(report.isExact()).as(report.toString()).isTrue();
                assertThat(readResults(cluster, results)).isEqualTo(reference(data));
            }
        }
    }

    /**
     * The keyed-source shape ({@link WaitClickJoin#keyedSpec}): the join reads both topics (keyed by
     * impression id, 4 partitions each) directly; each task's timers follow its own partitions'
     * watermarks. Two instances; every impression gets exactly one result, the reference's.
     */
    @Test
    @Timeout(600)
    void shouldGiveEveryImpressionExactlyOneResultWithTwoInstancesReadingKeyedSources(KafkaCluster cluster,
            TestNames names) throws Exception {
        Setup t = Setup.create(cluster, names, "wcjk");
        Map<String, String> keyed = Map.of("keyed", "true");
        try (ChildJvm a = instance(cluster, t, "a", keyed); ChildJvm b = instance(cluster, t, "b", keyed)) {
            ExactlyOnceChecker.Report report = ExactlyOnceChecker.check(cluster, t.results(),
                    t.data().impressions().keySet(), Duration.ofMinutes(2),
                    r -> new String(r.key(), StandardCharsets.UTF_8));
            assertThat(report.isExact()).as(report.toString()).isTrue();
            assertThat(readResults(cluster, t.results())).isEqualTo(reference(t.data()));
        }
    }

    /**
     * Instance a kills itself with SIGKILL inside {@code onTimer} in the middle of a timer-firing punctuation step: at
     * the first timer at or after a seeded one that has a seeded number of timers of its step fired
     * before it, results among them forwarded to the producer and on the broker, uncommitted (see
     * {@link HaltingWaitClickJoin}). b keeps running and takes a's tasks over; a restarted a2 joins.
     * The halted step's timers must fire again, and their results from the open transaction must
     * never be read read_committed: every impression gets exactly one result, the reference's.
     */
    @Test
    @Timeout(300)
    void shouldGiveEveryImpressionExactlyOneResultWhenAnInstanceDiesMidPunctuation(KafkaCluster cluster,
            TestNames names) throws Exception {
        long started = System.nanoTime();
        Setup t = Setup.create(cluster, names, "wcjp");
        Random random = new Random(SEED * 31 + 7);
        long haltAtTimer = 200 + random.nextInt(2_000);
        int haltInStep = 10 + random.nextInt(50);
        Map<String, String> failFast = Map.of("session.timeout.ms", "6000");
        Map<String, String> halting = new HashMap<>(failFast);
        halting.put("halt.at.timer", Long.toString(haltAtTimer));
        halting.put("halt.in.step", Integer.toString(haltInStep));
        try (ChildJvm a = instance(cluster, t, "a", halting); ChildJvm b = instance(cluster, t, "b", failFast)) {
            Await.until(Duration.ofMinutes(2), "instance a halts inside a timer-firing punctuation at or after timer "
                    + haltAtTimer + ", timer " + haltInStep + " of its step", () -> !a.isAlive());
            long halted = System.nanoTime();
            String haltLog = Files.readString(a.logFile());
            assertThat(a.exitCode()).as("a's exit status (%s): killed with SIGKILL", a.logFile())
                    .hasValue(HaltingWaitClickJoin.KILLED_STATUS);
            String haltLine = haltLog.lines().filter(l -> l.startsWith(HaltingWaitClickJoin.HALT_LINE)).findFirst()
                    .orElseThrow(() -> new AssertionError("a died without halting inside a punctuation; "
                            + a.logFile()));
            List<String> stepResults = haltLog.lines().filter(l -> l.startsWith(HaltingWaitClickJoin.STEP_RESULTS_LINE))
                    .findFirst().map(l -> l.substring(HaltingWaitClickJoin.STEP_RESULTS_LINE.length()))
                    .filter(l -> !l.isEmpty()).map(l -> List.of(l.split(","))).orElse(List.of());
            assertThat(stepResults).as("results of the halted step on the broker, uncommitted: " + haltLine)
                    .isNotEmpty();
            assertThat(b.isAlive()).as("b keeps running").isTrue();
            try (ChildJvm a2 = instance(cluster, t, "a2", failFast)) {
                ExactlyOnceChecker.Report report = ExactlyOnceChecker.check(cluster, t.results(),
                        t.data().impressions().keySet(), Duration.ofMinutes(3),
                        r -> new String(r.key(), StandardCharsets.UTF_8));
                if (!report.isExact()) {
                    diagnose(cluster, t.pipeline(), report);
                }
                assertThat(report.isExact()).as(report.toString()).isTrue();
                assertThat(readResults(cluster, t.results())).isEqualTo(reference(t.data()));
                Map<String, Integer> uncommitted = countReadUncommitted(cluster, t.results());
                assertThat(stepResults).as("results of the halted step read read_uncommitted: the aborted copy and "
                        + "(at least) the committed one").allMatch(id -> uncommitted.getOrDefault(id, 0) >= 2);
                System.out.printf("WaitClickJoinIT mid-punctuation: seed %d, halt at timer >= %d, >= %d of its step; "
                        + "%s; %d results of the step aborted and written again; %d records read_uncommitted for %d "
                        + "impressions; halt after %.1f s, exact after %.1f s more%n", SEED, haltAtTimer, haltInStep,
                        haltLine, stepResults.size(), uncommitted.values().stream().mapToInt(i -> i).sum(), IMPRESSIONS,
                        (halted - started) / 1e9, (System.nanoTime() - halted) / 1e9);
            }
        }
    }

    /** Topics, seeded input (already written) and a state directory for one test. */
    private record Setup(String pipeline, String impressions, String clicks, String results, WaitClickData data,
            Path state) {
        static Setup create(KafkaCluster cluster, TestNames names, String pipelineSuffix) throws Exception {
            Setup t = new Setup(names.name(pipelineSuffix), names.topic("impressions"), names.topic("clicks"),
                    names.topic("results"), WaitClickData.generate(IMPRESSIONS, 0.7, 1_767_225_600_000L, 200, SEED),
                    Files.createTempDirectory(tempRoot, "flow-wcj-it"));
            cluster.createTopic(t.impressions(), 4);
            cluster.createTopic(t.clicks(), 4);
            Properties pp = cluster.clientProperties();
            pp.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
            pp.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
            produce(pp, t.impressions(), t.clicks(), t.data());
            return t;
        }
    }

    /** Writes the input, one request in flight, failing on any send error (a lost input would look like a lost output). */
    static void produce(Properties pp, String impressions, String clicks, WaitClickData data) {
        pp.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, "1");
        pp.put(ProducerConfig.ACKS_CONFIG, "all");
        java.util.concurrent.atomic.AtomicReference<Exception> error = new java.util.concurrent.atomic.AtomicReference<>();
        org.apache.kafka.clients.producer.Callback check = (md, e) -> {
            if (e != null) {
                error.compareAndSet(null, e);
            }
        };
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(pp)) {
            data.impressions().entrySet().stream().sorted(Map.Entry.comparingByValue()).forEach(e -> producer.send(
                    new ProducerRecord<>(impressions, e.getKey(), WaitClickData.impressionJson(e.getKey(), e.getValue())),
                    check));
            data.clicks().forEach(c -> producer.send(
                    new ProducerRecord<>(clicks, c.getKey(), WaitClickData.clickJson(c.getKey(), c.getValue())), check));
            producer.flush();
        }
        assertThat(error.get()).as("input producer error").isNull();
    }

    /** Prints where the lost impressions' messages can be found (debugging aid for a failing run). */
    private static void diagnose(KafkaCluster cluster, String pipeline, ExactlyOnceChecker.Report report) {
        java.util.Set<String> lost = new java.util.HashSet<>(report.lost());
        for (String stream : List.of("impressions", "clicks", "results", "dlq")) {
            Properties p = cluster.clientProperties();
            p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
            p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
            p.put(ConsumerConfig.GROUP_ID_CONFIG, pipeline + "-diag-" + stream);
            p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
            p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
            int total = 0;
            int found = 0;
            Map<Integer, Integer> byPartition = new java.util.TreeMap<>();
            try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(p)) {
                c.subscribe(List.of(pipeline + "." + stream));
                long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
                while (System.nanoTime() < deadline) {
                    for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(300))) {
                        if (r.headers().lastHeader("flow.control") != null) {
                            continue;
                        }
                        total++;
                        String id = stream.equals("dlq") ? "" : new String(r.value(), 1, (r.value()[0] & 0xff) / 2,
                                StandardCharsets.UTF_8);
                        if (stream.equals("dlq") || lost.contains(id)) {
                            found++;
                            byPartition.merge(r.partition(), 1, Integer::sum);
                        }
                    }
                }
            }
            System.out.println("DIAG " + stream + ": " + total + " records, " + found + " mention lost ids, by partition "
                    + byPartition);
        }
    }

    private static ChildJvm instance(KafkaCluster cluster, Setup t, String name, Map<String, String> properties) {
        return instance(cluster, t.pipeline(), t.impressions(), t.clicks(), t.results(), t.state().resolve(name),
                properties);
    }

    private static ChildJvm instance(KafkaCluster cluster, String pipeline, String impressions, String clicks,
            String results, Path stateDir, Map<String, String> properties) {
        ChildJvm.Builder builder = ChildJvm.builder(WaitClickMain.class).maxHeap("384m").systemProperty("purge.ms", "0")
                .systemProperty("cache.bytes", System.getProperty("cache.bytes", "10485760"));
        properties.forEach(builder::systemProperty);
        return builder.args(cluster.bootstrapServers(), pipeline, impressions, clicks, results, stateDir.toString())
                .startAndAwaitOutputLine(l -> l.contains("RUNNING"), Duration.ofMinutes(2));
    }

    /** Every record of {@code topic} up to its end, aborted ones included, counted by key. */
    private static Map<String, Integer> countReadUncommitted(KafkaCluster cluster, String topic) throws Exception {
        Map<TopicPartition, OffsetSpec> req = new HashMap<>();
        for (var p : cluster.admin().describeTopics(List.of(topic)).allTopicNames().get().get(topic).partitions()) {
            req.put(new TopicPartition(topic, p.partition()), OffsetSpec.latest());
        }
        Map<TopicPartition, Long> ends = new HashMap<>();
        cluster.admin().listOffsets(req).all().get().forEach((tp, info) -> ends.put(tp, info.offset()));
        Properties p = cluster.clientProperties();
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_uncommitted");
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        Map<String, Integer> counts = new HashMap<>();
        try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(p, new ByteArrayDeserializer(),
                new ByteArrayDeserializer())) {
            c.assign(ends.keySet());
            c.seekToBeginning(ends.keySet());
            Await.until(Duration.ofMinutes(1), "read " + topic + " read_uncommitted up to " + ends, () -> {
                for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(200))) {
                    if (r.offset() < ends.get(new TopicPartition(r.topic(), r.partition()))) {
                        counts.merge(new String(r.key(), StandardCharsets.UTF_8), 1, Integer::sum);
                    }
                }
                return ends.entrySet().stream().allMatch(e -> c.position(e.getKey()) >= e.getValue());
            });
        }
        return counts;
    }

    private static long endOffsets(KafkaCluster cluster, String topic) {
        try {
            Map<TopicPartition, OffsetSpec> req = new HashMap<>();
            for (var p : cluster.admin().describeTopics(List.of(topic)).allTopicNames().get().get(topic).partitions()) {
                req.put(new TopicPartition(topic, p.partition()), OffsetSpec.latest());
            }
            return cluster.admin().listOffsets(req).all().get().values().stream().mapToLong(i -> i.offset()).sum();
        } catch (Exception e) {
            return 0; // the sink topic does not exist yet
        }
    }

    private static Map<String, String> readResults(KafkaCluster cluster, String topic) throws Exception {
        ObjectMapper json = new ObjectMapper();
        Map<String, String> out = new java.util.TreeMap<>();
        try (KafkaConsumer<byte[], byte[]> c = cluster.committedConsumer(topic)) {
            Await.until(Duration.ofMinutes(2), IMPRESSIONS + " results read", () -> {
                for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(300))) {
                    try {
                        var n = json.readTree(r.value());
                        out.put(n.get("impression_id").asText(), n.get("result").asText());
                    } catch (java.io.IOException e) {
                        throw new java.io.UncheckedIOException(e);
                    }
                }
                return out.size() >= IMPRESSIONS;
            });
        }
        return out;
    }

    /**
     * The results the test expects, computed here from the input rather than by the example's code: Flow's
     * flagship example, "an impression waits up to 30 minutes of event time for its click": {@code joined} when a
     * click comes at or after the impression and at most 30 minutes later, {@code no_click} otherwise.
     */
    private static Map<String, String> reference(WaitClickData data) {
        long wait = Duration.ofMinutes(30).toMillis();
        Map<String, List<Long>> clicksOf = new HashMap<>();
        data.clicks().forEach(c -> clicksOf.computeIfAbsent(c.getKey(), k -> new ArrayList<>()).add(c.getValue()));
        Map<String, String> expected = new java.util.TreeMap<>();
        data.impressions().forEach((id, ts) -> expected.put(id, clicksOf.getOrDefault(id, List.of()).stream()
                .anyMatch(click -> click >= ts && click - ts <= wait) ? "joined" : "no_click"));
        assertThat(expected).as("the input has both outcomes").containsValues("joined", "no_click");
        return expected;
    }
}
