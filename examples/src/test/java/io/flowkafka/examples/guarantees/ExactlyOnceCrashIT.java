package io.flowkafka.examples.guarantees;

import static org.assertj.core.api.Assertions.assertThat;

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
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

/**
 * Exactly-once under failure, on a real broker: two instances of a source -> stateful count ->
 * transform -> sink pipeline run as child JVMs over 100k messages in 4 partitions; one is killed
 * mid-stream and restarted (and, in the first case, the other then stopped and restarted). A read_committed
 * consumer must see every expected output exactly once,
 * and each user's counts must be exactly 1..n (no lost or double-applied state update). In the kill cases the input
 * also holds poison (records that are no JSON, and messages the count function throws on): each must be in the
 * dead-letter topic exactly once, as dead letters are written in the pipeline's transactions (guarantees.md).
 */
@WithKafka
class ExactlyOnceCrashIT {
    /** State directories of this class's runtimes (and child JVMs); JUnit deletes it after the class if it passed. */
    @TempDir(cleanup = CleanupMode.ON_SUCCESS)
    static Path tempRoot;

    private static final int MESSAGES = 100_000;
    private static final int USERS = 500;
    private static final long SEED = Long.getLong("flow.it.seed", 20261129L);

    @Test
    @Timeout(600)
    void shouldDeliverEveryOutputExactlyOnceWhenAnInstanceIsKilledMidStream(KafkaCluster cluster, TestNames names)
            throws Exception {
        killMidStreamAndCheck(new Run(cluster, names), SEED, true);
    }

    /**
     * Two instances; one is killed once the sink holds a seeded number of outputs and restarted. With
     * {@code thenStop}, the other one is then stopped (SIGTERM: {@code FlowRuntime.close()}) while messages are still
     * in the internal streams, and restarted: they stay there for the next start, nothing lost (operations.md).
     */
    private static void killMidStreamAndCheck(Run run, long seed, boolean thenStop) throws Exception {
        long killAt = 20_000 + new Random(seed).nextInt(50_000);
        run.poison = true;
        try (ChildJvm a = run.instance("a", null); ChildJvm b = run.instance("b", null)) {
            run.produceInput();
            Await.until(Duration.ofMinutes(3), "the sink holds " + killAt + " outputs", () -> run.outputCount() >= killAt);
            a.kill();
            assertThat(a.isAlive()).isFalse();
            try (ChildJvm a2 = run.instance("a2", null)) {
                if (thenStop) {
                    long stopAt = killAt + 10_000;
                    Await.until(Duration.ofMinutes(3), "the sink holds " + stopAt + " outputs",
                            () -> run.outputCount() >= stopAt);
                    assertThat(b.stop()).as("b's exit code: SIGTERM, after its runtime closed").isEqualTo(143);
                    assertThat(Files.readString(b.logFile())).as("b's log").doesNotContain("did not close within");
                    try (ChildJvm b2 = run.instance("b2", null)) {
                        run.awaitAllOutputsAndCheck();
                        run.checkDeadLettersOnce();
                    }
                } else {
                    run.awaitAllOutputsAndCheck();
                    run.checkDeadLettersOnce();
                }
            }
        }
    }

    /**
     * The same kill on the keyed-source shape: the count computation reads the user-keyed input topic
     * directly (key_partitioned), its state and the source offsets commit in one transaction.
     */
    @Test
    @Timeout(600)
    void shouldDeliverEveryOutputExactlyOnceWhenAnInstanceReadingAKeyedSourceIsKilled(KafkaCluster cluster,
            TestNames names) throws Exception {
        Run run = new Run(cluster, names);
        run.keyedSource = true;
        killMidStreamAndCheck(run, SEED + 2, false);
    }

    @Test
    @Timeout(600)
    void shouldDeliverEveryOutputExactlyOnceWhenAStreamThreadDiesOfAnException(KafkaCluster cluster, TestNames names)
            throws Exception {
        Run run = new Run(cluster, names);
        String throwAt = "m-" + (10_000 + new Random(SEED).nextInt(60_000));
        try (ChildJvm a = run.instance("a", throwAt); ChildJvm b = run.instance("b", throwAt)) {
            run.produceInput();
            run.awaitAllOutputsAndCheck();
            boolean thrown = Files.readString(a.logFile()).contains("injected failure at " + throwAt)
                    || Files.readString(b.logFile()).contains("injected failure at " + throwAt);
            assertThat(thrown).as("the injected exception was thrown and killed a stream thread").isTrue();
        }
    }

    /** One test's topics, instances and checks. */
    private static final class Run {
        final KafkaCluster cluster;
        final String pipeline;
        final String input;
        final String output;
        final Path stateRoot;
        final Map<String, String> userOf = new HashMap<>();
        final Map<String, Integer> perUser = new HashMap<>();
        /** What identifies each poison record in the dead-letter topic: its value, or its call's error message. */
        final Set<String> poisonSent = new HashSet<>();
        boolean keyedSource;
        boolean poison;

        Run(KafkaCluster cluster, TestNames names) throws Exception {
            this.cluster = cluster;
            this.pipeline = names.name("pipeline");
            this.input = names.topic("input");
            this.output = names.topic("output");
            this.stateRoot = Files.createTempDirectory(tempRoot, "flow-it-state");
            cluster.createTopic(input, 4);
        }

        ChildJvm instance(String id, String throwOnceAt) throws Exception {
            ChildJvm.Builder b = ChildJvm.builder(TwoHopMain.class).maxHeap("384m")
                    .args(cluster.bootstrapServers(), pipeline, input, output, stateRoot.resolve(id).toString())
                    .systemProperty("flow.it.keyedSource", Boolean.toString(keyedSource));
            if (throwOnceAt != null) {
                b.arg(throwOnceAt);
            }
            return b.startAndAwaitOutputLine(l -> l.contains("RUNNING"), Duration.ofMinutes(2));
        }

        void produceInput() {
            Properties p = cluster.clientProperties();
            p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
            p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
            p.put(ProducerConfig.LINGER_MS_CONFIG, "5");
            Random r = new Random(SEED + 1);
            try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
                for (int i = 0; i < MESSAGES; i++) {
                    String id = "m-" + i;
                    String user = "u" + r.nextInt(USERS);
                    userOf.put(id, user);
                    perUser.merge(user, 1, Integer::sum);
                    producer.send(new ProducerRecord<>(input, user, "{\"id\":\"" + id + "\",\"user\":\"" + user + "\"}"));
                    if (poison && i % 1_000 == 500) {
                        String notJson = "not json at " + id; // the source cannot decode it
                        producer.send(new ProducerRecord<>(input, user, notJson));
                        String bad = TwoHopPipeline.BAD_USER + i; // the count function throws on it
                        producer.send(new ProducerRecord<>(input, bad, "{\"id\":\"b-" + i + "\",\"user\":\"" + bad + "\"}"));
                        poisonSent.add(notJson);
                        poisonSent.add("bad user " + bad);
                    }
                }
            }
        }

        long outputCount() {
            Properties p = cluster.clientProperties();
            try (var admin = org.apache.kafka.clients.admin.Admin.create(p)) {
                var parts = admin.describeTopics(List.of(output)).allTopicNames().get().get(output).partitions();
                Map<org.apache.kafka.common.TopicPartition, org.apache.kafka.clients.admin.OffsetSpec> req = new HashMap<>();
                parts.forEach(tp -> req.put(new org.apache.kafka.common.TopicPartition(output, tp.partition()),
                        org.apache.kafka.clients.admin.OffsetSpec.latest()));
                long sum = 0;
                for (var e : admin.listOffsets(req).all().get().values()) {
                    sum += e.offset();
                }
                return sum; // includes transaction markers: an upper bound of the outputs
            } catch (Exception e) {
                return 0;
            }
        }

        /** Every poison record is in the dead-letter topic once: none lost, none written again by a replay. */
        void checkDeadLettersOnce() {
            Properties p = cluster.clientProperties();
            p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
            p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
            p.put(ConsumerConfig.GROUP_ID_CONFIG, pipeline + "-verify-dlq");
            p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
            p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
            List<String> dead = new ArrayList<>();
            try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(p)) {
                c.subscribe(List.of(pipeline + ".dlq"));
                Await.until(Duration.ofMinutes(2), poisonSent.size() + " dead letters", () -> {
                    c.poll(Duration.ofMillis(200)).forEach(r -> dead.add(poisonId(r)));
                    return dead.size() >= poisonSent.size();
                });
                c.poll(Duration.ofSeconds(2)).forEach(r -> dead.add(poisonId(r))); // a duplicate would be here too
            }
            assertThat(dead).as("dead letters, each poison record once").hasSize(poisonSent.size())
                    .containsExactlyInAnyOrderElementsOf(poisonSent);
        }

        private static String poisonId(ConsumerRecord<byte[], byte[]> r) {
            var error = r.headers().lastHeader("flow.dlq.error.message");
            String message = error == null ? "" : new String(error.value(), StandardCharsets.UTF_8);
            return message.startsWith("bad user ") ? message : new String(r.value(), StandardCharsets.UTF_8);
        }

        void awaitAllOutputsAndCheck() throws Exception {
            Set<String> expected = new HashSet<>(userOf.keySet());
            ExactlyOnceChecker.Report report = ExactlyOnceChecker.check(cluster, output, expected, Duration.ofMinutes(4),
                    rec -> new String(rec.key(), StandardCharsets.UTF_8));
            assertThat(report.isExact()).as(report.toString()).isTrue();
            // final state: each user's counts are exactly 1..n
            Map<String, TreeSet<Long>> counts = new HashMap<>();
            Properties p = cluster.clientProperties();
            p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
            p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
            p.put(ConsumerConfig.GROUP_ID_CONFIG, pipeline + "-verify");
            p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
            p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
            com.fasterxml.jackson.databind.ObjectMapper json = new com.fasterxml.jackson.databind.ObjectMapper();
            int read = 0;
            try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(p)) {
                c.subscribe(List.of(output));
                long deadline = System.nanoTime() + Duration.ofMinutes(2).toNanos();
                while (read < MESSAGES && System.nanoTime() < deadline) {
                    for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(500))) {
                        var n = json.readTree(r.value());
                        counts.computeIfAbsent(n.get("user").asText(), u -> new TreeSet<>()).add(n.get("count").asLong());
                        read++;
                    }
                }
            }
            for (Map.Entry<String, Integer> e : perUser.entrySet()) {
                TreeSet<Long> seen = counts.getOrDefault(e.getKey(), new TreeSet<>());
                assertThat(seen).as("counts of user %s", e.getKey()).hasSize(e.getValue());
                assertThat(seen.first()).isEqualTo(1L);
                assertThat(seen.last()).isEqualTo((long) e.getValue());
            }
        }
    }
}
