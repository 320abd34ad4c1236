package io.flowkafka.connectors.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowkafka.runtime.FlowRuntime;
import io.flowkafka.runtime.StatusError;
import io.flowkafka.testing.Await;
import io.flowkafka.testing.ChildJvm;
import io.flowkafka.testing.EmbeddedKafkaCluster;
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
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.Set;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code TKafkaSink} across two in-JVM clusters: the pipeline runs on the shared cluster (its
 * source, internal topics, outbox), the sink writes to a second cluster. Reference 002: "messages
 * are stored in output_messages and written after epoch commit in Kafka transactions together with
 * a progress marker, and a restarted sink skips the messages the marker covers. Consumers must read
 * with isolation.level = read_committed. If the marker is lost while messages may already be
 * committed, the sink stops instead of writing possible duplicates. With delivery_guarantee =
 * at_least_once, the sink writes with an idempotent producer without transactions, and a restart
 * may write again messages that are already in Kafka."
 */
@WithKafka
class TKafkaSinkIT {
    /** State directories of this class's runtimes (and child JVMs); JUnit deletes it after the class if it passed. */
    @TempDir(cleanup = CleanupMode.ON_SUCCESS)
    static Path tempRoot;

    private static final long SEED = Long.getLong("flow.it.seed", 20261201L);
    private static EmbeddedKafkaCluster target;

    @BeforeAll
    static void startTarget() {
        target = EmbeddedKafkaCluster.start();
    }

    @AfterAll
    static void stopTarget() {
        if (target != null) {
            target.close();
        }
    }

    @Test
    @Timeout(600)
    void shouldDeliverEveryMessageExactlyOnceToAnotherClusterWhenAnInstanceIsKilled(KafkaCluster cluster,
            TestNames names) throws Exception {
        Run run = Run.create(cluster, names, "eo", 20_000);
        long killAt = 2_000 + new Random(SEED).nextInt(10_000);
        try (ChildJvm a = instance(cluster, run, "a", "exactly_once");
                ChildJvm b = instance(cluster, run, "b", "exactly_once")) {
            Await.until(Duration.ofMinutes(3), killAt + " records in the target topic (uncommitted included)",
                    () -> endOffsets(target, run.output()) >= killAt);
            a.kill(); // SIGKILL, mid-delivery: its open target transaction is aborted when its partitions are taken over
            assertThat(a.isAlive()).isFalse();
            try (ChildJvm a2 = instance(cluster, run, "a2", "exactly_once")) {
                ExactlyOnceChecker.Report report = ExactlyOnceChecker.check(target, run.output(), run.ids(),
                        Duration.ofMinutes(4), r -> new String(r.key(), StandardCharsets.UTF_8));
                assertThat(report.isExact()).as(report.toString()).isTrue();
                assertThat(countsPerUser(target, run.output())).as("every user's counts are 1..n, each once")
                        .allSatisfy((user, counts) -> assertThat(counts).containsExactlyInAnyOrderElementsOf(
                                java.util.stream.LongStream.rangeClosed(1, counts.size()).boxed().toList()));
            }
        }
    }

    @Test
    @Timeout(600)
    void shouldLoseNothingAtLeastOnceWhenAnInstanceIsKilled(KafkaCluster cluster, TestNames names) throws Exception {
        Run run = Run.create(cluster, names, "alo", 10_000);
        long killAt = 1_000 + new Random(SEED + 1).nextInt(6_000);
        try (ChildJvm a = instance(cluster, run, "a", "at_least_once");
                ChildJvm b = instance(cluster, run, "b", "at_least_once")) {
            Await.until(Duration.ofMinutes(3), killAt + " records in the target topic",
                    () -> endOffsets(target, run.output()) >= killAt);
            a.kill();
            try (ChildJvm a2 = instance(cluster, run, "a2", "at_least_once")) {
                ExactlyOnceChecker.Report report = ExactlyOnceChecker.check(target, run.output(), run.ids(),
                        Duration.ofMinutes(4), r -> new String(r.key(), StandardCharsets.UTF_8));
                assertThat(report.lost()).as(report.toString()).isEmpty();
            }
        }
    }

    @Test
    @Timeout(600)
    void shouldLoseNothingWithTheSynchronousAtLeastOnceSinkWhenAnInstanceIsKilled(KafkaCluster cluster,
            TestNames names) throws Exception {
        // reference 002, TAtLeastOnceKafkaSink: "each epoch waits for Kafka to acknowledge its records. If the epoch
        // does not commit after a successful write, the same records are written again on restart."
        Run run = Run.create(cluster, names, "sync", 10_000);
        long killAt = 1_000 + new Random(SEED + 2).nextInt(6_000);
        try (ChildJvm a = instance(cluster, run, "a", "sync"); ChildJvm b = instance(cluster, run, "b", "sync")) {
            Await.until(Duration.ofMinutes(3), killAt + " records in the target topic",
                    () -> endOffsets(target, run.output()) >= killAt);
            a.kill();
            try (ChildJvm a2 = instance(cluster, run, "a2", "sync")) {
                ExactlyOnceChecker.Report report = ExactlyOnceChecker.check(target, run.output(), run.ids(),
                        Duration.ofMinutes(4), r -> new String(r.key(), StandardCharsets.UTF_8));
                assertThat(report.lost()).as(report.toString()).isEmpty();
            }
        }
    }

    @Test
    @Timeout(300)
    void shouldStopInsteadOfWritingDuplicatesWhenTheProgressMarkerIsLost(KafkaCluster cluster, TestNames names)
            throws Exception {
        Run run = Run.create(cluster, names, "lost", 200);
        Properties props = props(cluster, run, "first");
        try (FlowRuntime runtime = FlowRuntime.create(spec(run, "exactly_once"), props)) {
            runtime.start();
            Await.until(Duration.ofMinutes(2), "200 records delivered",
                    () -> ExactlyOnceChecker.check(target, run.output(), run.ids(), Duration.ofSeconds(5),
                            r -> new String(r.key(), StandardCharsets.UTF_8)).isExact());
        }
        // the marker is lost: its topic deleted on the target cluster
        target.admin().deleteTopics(List.of(run.output() + ".flow-progress")).all().get();
        Await.until(Duration.ofSeconds(30), "the progress topic is gone",
                () -> {
                    try {
                        return !target.admin().listTopics().names().get().contains(run.output() + ".flow-progress");
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                });
        produce(cluster, run.input(), 200, 100);
        try (FlowRuntime runtime = FlowRuntime.create(spec(run, "exactly_once"), props(cluster, run, "second"))) {
            runtime.start();
            Await.until(Duration.ofMinutes(2), "the sink reports that it stopped",
                    () -> runtime.status().stream().anyMatch(e -> e.path().equals("/sinks/out/stopped")));
            StatusError stopped = runtime.status().stream().filter(e -> e.path().equals("/sinks/out/stopped"))
                    .findFirst().orElseThrow();
            assertThat(stopped.message()).contains("progress marker", "is missing", "refusing to write them again",
                    run.output());
            assertThat(runtime.state()).as("the pipeline itself goes on").isIn(FlowRuntime.State.RUNNING,
                    FlowRuntime.State.STARTING);
        }
        ExactlyOnceChecker.Report report = ExactlyOnceChecker.check(target, run.output(), run.ids(),
                Duration.ofSeconds(20), r -> new String(r.key(), StandardCharsets.UTF_8));
        assertThat(report.isExact()).as("nothing written twice: " + report).isTrue();

        // the fix the message names: reset the delivery group to the offset to resume from (here: where it is), as
        // kafka-consumer-groups --reset-offsets does, without metadata
        String group = outboxGroup(cluster, run);
        var offsets = cluster.admin().listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get();
        Map<TopicPartition, OffsetAndMetadata> reset = new HashMap<>();
        offsets.forEach((tp, o) -> reset.put(tp, new OffsetAndMetadata(o.offset())));
        cluster.admin().alterConsumerGroupOffsets(group, reset).all().get();
        for (int i = 200; i < 300; i++) {
            run.ids().add("e" + i);
        }
        try (FlowRuntime runtime = FlowRuntime.create(spec(run, "exactly_once"), props(cluster, run, "third"))) {
            runtime.start();
            ExactlyOnceChecker.Report after = ExactlyOnceChecker.check(target, run.output(), run.ids(),
                    Duration.ofMinutes(2), r -> new String(r.key(), StandardCharsets.UTF_8));
            assertThat(after.isExact()).as("delivery resumed at the reset offset: " + after).isTrue();
            assertThat(runtime.status()).as("no delivery error").noneMatch(e -> e.path().startsWith("/sinks/out/"));
        }
    }

    /** The delivery group of sink {@code out}. */
    private static String outboxGroup(KafkaCluster cluster, Run run) throws Exception {
        return cluster.admin().listConsumerGroups().all().get().stream().map(g -> g.groupId())
                .filter(g -> g.contains(run.pipeline()) && g.endsWith(".outbox.out")).findFirst().orElseThrow();
    }

    @Test
    @Timeout(300)
    void shouldResumeExactlyOnceAfterTheGroupCommittedPastWatermarkRecords(KafkaCluster cluster, TestNames names)
            throws Exception {
        // an idle input's computation keeps writing its system watermark to the outbox; the delivery group commits
        // past those records, but the sink's progress marker stays at its last batch: a restart must take that as
        // consistent (not "the progress topic is not caught up"), skip the watermark records and deliver the rest once
        Run run = Run.create(cluster, names, "wm", 200);
        try (FlowRuntime runtime = FlowRuntime.create(spec(run, "exactly_once"), props(cluster, run, "first"))) {
            runtime.start();
            Await.until(Duration.ofMinutes(2), "200 records delivered",
                    () -> ExactlyOnceChecker.check(target, run.output(), run.ids(), Duration.ofSeconds(5),
                            r -> new String(r.key(), StandardCharsets.UTF_8)).isExact());
            long delivered = outboxCommitted(cluster, run);
            // no message follows: a later commit is past watermark records only
            Await.until(Duration.ofMinutes(1), "a delivery commit past watermark records",
                    () -> outboxCommitted(cluster, run) > delivered);
        }
        produce(cluster, run.input(), 200, 100);
        for (int i = 200; i < 300; i++) {
            run.ids().add("e" + i);
        }
        try (FlowRuntime runtime = FlowRuntime.create(spec(run, "exactly_once"), props(cluster, run, "second"))) {
            runtime.start();
            ExactlyOnceChecker.Report report = ExactlyOnceChecker.check(target, run.output(), run.ids(),
                    Duration.ofMinutes(2), r -> new String(r.key(), StandardCharsets.UTF_8));
            assertThat(report.isExact()).as(report.toString()).isTrue();
            assertThat(runtime.status()).as("no delivery error").noneMatch(e -> e.path().startsWith("/sinks/out/"));
        }
    }

    /** The sum of the offsets the sink's delivery group committed on the pipeline cluster. */
    private static long outboxCommitted(KafkaCluster cluster, Run run) {
        try {
            var admin = cluster.admin();
            long sum = 0;
            for (var g : admin.listConsumerGroups().all().get()) {
                if (g.groupId().contains(run.pipeline()) && g.groupId().endsWith(".outbox.out")) {
                    for (var o : admin.listConsumerGroupOffsets(g.groupId()).partitionsToOffsetAndMetadata().get()
                            .values()) {
                        sum += o.offset();
                    }
                }
            }
            return sum;
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    @Timeout(300)
    void shouldDeliverAtMostOnceToAnotherClusterWithoutDuplicatesOrDropsUnderItsLimit(KafkaCluster cluster,
            TestNames names) throws Exception {
        // reference 002: at_most_once_strategy "messages are placed in an internal queue. If the queue is full
        // (total_queue_bytes_limit), new messages are dropped"; below the limit nothing is dropped, and a message is
        // never written twice
        Run run = Run.create(cluster, names, "amo", 2_000);
        Properties props = props(cluster, run, "amo");
        try (FlowRuntime runtime = FlowRuntime.create(OutboxPipeline.spec(run.pipeline(), run.input(), run.output(),
                Map.of("at_most_once_strategy", Map.of("enabled", true, "total_queue_bytes_limit", 64 * 1024 * 1024))),
                props)) {
            runtime.start();
            ExactlyOnceChecker.Report report = ExactlyOnceChecker.check(target, run.output(), run.ids(),
                    Duration.ofMinutes(2), r -> new String(r.key(), StandardCharsets.UTF_8));
            assertThat(report.isExact()).as(report.toString()).isTrue();
            assertThat(runtime.meterRegistry().get("flow.sink.dropped").tag("sink", "out").counter().count()).isZero();
            assertThat(cluster.admin().listTopics().names().get()).as("no outbox topic: nothing in the transaction")
                    .doesNotContain(run.pipeline() + ".outbox.out");
        }
    }

    @Test
    @Timeout(600)
    void shouldNeverDeliverAMessageTwiceAtMostOnceWhenAnInstanceIsKilled(KafkaCluster cluster, TestNames names)
            throws Exception {
        // reference 002: "At-most-once guarantees that each message is processed no more than once, but allows
        // message loss." The queue takes an epoch's messages once it committed; a replay after the kill reprocesses
        // only uncommitted ones, so what the killed queue held is lost and nothing is written twice
        Run run = Run.create(cluster, names, "amok", 10_000);
        long killAt = 1_000 + new Random(SEED + 3).nextInt(6_000);
        try (ChildJvm a = instance(cluster, run, "a", "at_most_once");
                ChildJvm b = instance(cluster, run, "b", "at_most_once")) {
            Await.until(Duration.ofMinutes(3), killAt + " records in the target topic",
                    () -> endOffsets(target, run.output()) >= killAt);
            a.kill(); // SIGKILL: what its queue held is lost
            try (ChildJvm a2 = instance(cluster, run, "a2", "at_most_once")) {
                ExactlyOnceChecker.Report report = ExactlyOnceChecker.check(target, run.output(), run.ids(),
                        Duration.ofSeconds(30), r -> new String(r.key(), StandardCharsets.UTF_8));
                System.out.println("TKafkaSinkIT at most once, killed at " + killAt + ": " + report);
                assertThat(report.duplicated()).as(report.toString()).isEmpty();
                assertThat(report.unexpected()).as(report.toString()).isEmpty();
                assertThat(report.total()).as("delivered after the kill too").isGreaterThan(killAt);
            }
        }
    }

    private static io.flowkafka.spec.PipelineSpec spec(Run run, String guarantee) {
        return OutboxPipeline.spec(run.pipeline(), run.input(), run.output(),
                Map.of("delivery_guarantee", guarantee, "max_batch_records", 50));
    }

    private static Properties props(KafkaCluster cluster, Run run, String instance) throws Exception {
        Properties props = cluster.clientProperties();
        props.put("flow.sink.out.bootstrap.servers", target.bootstrapServers());
        props.put("state.dir", Files.createTempDirectory(tempRoot, "tks-" + instance).toString());
        props.put("commit.interval.ms", "100");
        return props;
    }

    private static ChildJvm instance(KafkaCluster cluster, Run run, String name, String guarantee) {
        return ChildJvm.builder(OutboxSinkMain.class)
                .args(cluster.bootstrapServers(), target.bootstrapServers(), run.pipeline(), run.input(), run.output(),
                        run.state().resolve(name).toString(), guarantee)
                .maxHeap("384m")
                .logFile(run.state().resolve(name + ".log"))
                .startAndAwaitOutputLine(l -> l.equals("RUNNING"), Duration.ofMinutes(2));
    }

    /** Topics, input (already written) and a state directory for one test. */
    private record Run(String pipeline, String input, String output, Set<String> ids, Path state) {
        static Run create(KafkaCluster cluster, TestNames names, String suffix, int records) throws Exception {
            Run run = new Run(names.name(suffix), names.topic("input"), names.topic("output"), new LinkedHashSet<>(),
                    Files.createTempDirectory(tempRoot, "flow-tks-it"));
            cluster.createTopic(run.input(), 4);
            target.createTopic(run.output(), 4, Map.of());
            for (int i = 0; i < records; i++) {
                run.ids().add("e" + i);
            }
            produce(cluster, run.input(), 0, records);
            return run;
        }

        @Override
        public Set<String> ids() {
            return ids;
        }
    }

    private static void produce(KafkaCluster cluster, String topic, int from, int count) throws Exception {
        Properties pp = cluster.clientProperties();
        pp.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        pp.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        pp.put(ProducerConfig.ACKS_CONFIG, "all");
        // one request in flight: an idempotent producer that meets NOT_LEADER_OR_FOLLOWER on a just-created partition
        // can otherwise retry into OUT_OF_ORDER_SEQUENCE_NUMBER for its whole delivery timeout (seen here)
        pp.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, "1");
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(pp)) {
            List<java.util.concurrent.Future<?>> sent = new ArrayList<>();
            for (int i = from; i < from + count; i++) {
                String user = "u" + (i % 97);
                sent.add(producer.send(new ProducerRecord<>(topic, user,
                        "{\"id\":\"e" + i + "\",\"user\":\"" + user + "\"}")));
            }
            for (var f : sent) {
                f.get();
            }
        }
    }

    private static long endOffsets(KafkaCluster cluster, String topic) {
        try {
            return endOffsetsOrThrow(cluster, topic);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private static long endOffsetsOrThrow(KafkaCluster cluster, String topic) throws Exception {
        var admin = cluster.admin();
        var parts = admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic).partitions();
        Map<TopicPartition, OffsetSpec> request = new java.util.HashMap<>();
        parts.forEach(p -> request.put(new TopicPartition(topic, p.partition()), OffsetSpec.latest()));
        return admin.listOffsets(request).all().get().values().stream().mapToLong(i -> i.offset()).sum();
    }

    /** Every committed output's count, per user. */
    private static Map<String, List<Long>> countsPerUser(KafkaCluster cluster, String topic) {
        Properties props = cluster.clientProperties();
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        Map<String, List<Long>> out = new java.util.TreeMap<>();
        com.fasterxml.jackson.databind.ObjectMapper json = new com.fasterxml.jackson.databind.ObjectMapper();
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props, new ByteArrayDeserializer(),
                new ByteArrayDeserializer())) {
            List<TopicPartition> parts = consumer.partitionsFor(topic).stream()
                    .map(p -> new TopicPartition(topic, p.partition())).toList();
            consumer.assign(parts);
            consumer.seekToBeginning(parts);
            Map<TopicPartition, Long> end = consumer.endOffsets(parts);
            long deadline = System.nanoTime() + Duration.ofMinutes(1).toNanos();
            while (parts.stream().anyMatch(p -> consumer.position(p) < end.get(p)) && System.nanoTime() < deadline) {
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                    var node = json.readTree(r.value());
                    out.computeIfAbsent(node.get("user").asText(), u -> new ArrayList<>()).add(node.get("count").asLong());
                }
            }
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        return out;
    }
}
