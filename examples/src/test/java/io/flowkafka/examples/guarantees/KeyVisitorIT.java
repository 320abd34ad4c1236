package io.flowkafka.examples.guarantees;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.flowkafka.testing.Await;
import io.flowkafka.testing.ChildJvm;
import io.flowkafka.testing.KafkaCluster;
import io.flowkafka.testing.TestNames;
import io.flowkafka.testing.WithKafka;
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
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

/**
 * The key-visitor guarantees that need a real broker (reference 000, "Guarantees"):
 * <ul>
 *   <li>"Each key per period | You get exactly one visit per key (no duplicates or omissions)."</li>
 *   <li>"Worker restart | Coverage is preserved; rotation is atomic, and a crash keeps the old pass."</li>
 *   <li>"Partition rebalance | The new worker sees the committed coverage via key_visitor_states."</li>
 * </ul>
 * 100k keys over 4 partitions, two instances as child JVMs; instance a halts itself inside a visit
 * (mid-punctuation, no shutdown hooks) at a seeded visit, its tasks move to b and back to a
 * restarted a; later b is killed with SIGKILL and restarted. Every visit writes one record to a
 * sink topic in the visit's transaction, read read_committed: per (key, pass) the count must be 1
 * for keys present through the pass, 0 for deleted keys in passes begun after the delete, and
 * never more than 1; pass numbers continue across restarts (coverage is not reset).
 */
@WithKafka
class KeyVisitorIT {
    /** State directories of this class's runtimes (and child JVMs); JUnit deletes it after the class if it passed. */
    @TempDir(cleanup = CleanupMode.ON_SUCCESS)
    static Path tempRoot;

    private static final int KEYS = 100_000;
    private static final int DELETED = 2_000;
    private static final long SEED = Long.getLong("flow.it.seed", 20261130L);

    @Test
    @Timeout(900)
    void shouldVisitEachKeyExactlyOncePerPassThroughCrashesAndRebalances(KafkaCluster cluster, TestNames names)
            throws Exception {
        Random random = new Random(SEED);
        long haltAt = 60_000 + random.nextInt(50_000);
        String pipeline = names.name("visits");
        String input = names.topic("commands");
        String output = names.topic("visits");
        Path state = Files.createTempDirectory(tempRoot, "flow-kv-it");
        cluster.createTopic(input, 4);
        VisitLog log = new VisitLog(cluster, output);
        try (log) {
            ChildJvm a = instance(cluster, pipeline, input, output, state.resolve("a"), haltAt);
            ChildJvm b = instance(cluster, pipeline, input, output, state.resolve("b"), -1);
            List<ChildJvm> running = new ArrayList<>(List.of(a, b));
            try {
                log.start();
                produce(cluster, input, 0, KEYS, "put");
                Await.until(Duration.ofMinutes(4), "instance a halts inside visit " + haltAt, () -> !a.isAlive());
                assertThat(Files.readString(a.logFile())).contains("HALTING inside visit " + haltAt);
                running.add(instance(cluster, pipeline, input, output, state.resolve("a2"), -1));

                Await.until(Duration.ofMinutes(3), "every key was visited", () -> log.keysSeen() == KEYS);
                Map<Integer, Long> loaded = log.maxPassByPartition();
                produce(cluster, input, 0, DELETED, "del");
                Map<Integer, Long> deletedAt = log.maxPassByPartition();
                Await.until(Duration.ofMinutes(2), "a pass after the deletes", () -> log.minPassAbove(deletedAt, 1));
                b.kill();
                running.add(instance(cluster, pipeline, input, output, state.resolve("b2"), -1));
                Await.until(Duration.ofMinutes(4), "three more passes in every partition",
                        () -> log.minPassAbove(deletedAt, 5));
            } finally {
                for (ChildJvm j : running) {
                    j.close();
                }
            }
            log.drain(Duration.ofMinutes(1));

            Map<Integer, Long> loaded = log.loaded;
            Map<String, Integer> partitionOf = log.partitionOf();
            assertThat(partitionOf).hasSize(KEYS);
            int checkedPasses = 0;
            Map<Integer, Set<String>> goneBefore = new HashMap<>(); // deleted keys a complete pass went without
            for (int p = 0; p < 4; p++) {
                TreeSet<Long> passes = log.passes(p);
                // the first passes may visit nothing: they start with the task, before the keys arrive (on a loaded
                // machine five 10-s passes went by before the first key); from the first visit on, none is skipped
                assertThat(passes.last() - passes.first() + 1).as("pass numbers of partition %d continue across "
                        + "restarts and rebalances (coverage is never reset)", p).isEqualTo(passes.size());
                long last = passes.last(); // possibly incomplete
                for (long pass = 0; pass < last; pass++) {
                    Map<String, Integer> counts = log.counts(p, pass);
                    assertThat(counts.values()).as("partition %d pass %d: no key visited twice", p, pass)
                            .allMatch(n -> n == 1);
                    if (pass < loaded.get(p) + 2) {
                        continue; // keys were still arriving
                    }
                    // passes begun after the deletes were processed visit no deleted key; when that was is known
                    // only up to the pipeline's and the log's lag (a loaded machine delayed it past two 10-s passes),
                    // so: no deleted key comes back once a complete pass went without it, and none is left in the
                    // passes from the fourth after the log's view at the deletes
                    boolean afterDeletes = pass >= log.deletedAt.get(p) + 4;
                    List<String> missing = new ArrayList<>();
                    List<String> deletedButVisited = new ArrayList<>();
                    for (Map.Entry<String, Integer> e : partitionOf.entrySet()) {
                        if (e.getValue() != p) {
                            continue;
                        }
                        boolean deleted = Integer.parseInt(e.getKey().substring(1)) < DELETED;
                        if (!deleted && !counts.containsKey(e.getKey())) {
                            missing.add(e.getKey());
                        }
                        if (deleted && counts.containsKey(e.getKey())
                                && (afterDeletes || goneBefore.getOrDefault(p, Set.of()).contains(e.getKey()))) {
                            deletedButVisited.add(e.getKey());
                        }
                        if (deleted && !counts.containsKey(e.getKey())) {
                            goneBefore.computeIfAbsent(p, x -> new HashSet<>()).add(e.getKey());
                        }
                    }
                    assertThat(missing).as("partition %d pass %d: keys present through the pass not visited", p, pass)
                            .isEmpty();
                    assertThat(deletedButVisited).as("partition %d pass %d: deleted keys visited", p, pass).isEmpty();
                    checkedPasses++;
                }
            }
            assertThat(checkedPasses).as("complete passes checked in full").isGreaterThanOrEqualTo(8);
            System.out.printf("KeyVisitorIT: seed %d, halt at visit %d, passes per partition %s, %d complete passes "
                    + "checked in full%n", SEED, haltAt, log.maxPass, checkedPasses);
        }
    }

    /** A visitor-only computation: no inputs, no sources; it visits its own state. */
    public static final class Auditor implements io.flowkafka.api.RowFunction {
        @Override
        public void onMessage(io.flowkafka.api.Message message, io.flowkafka.api.OutputCollector output,
                io.flowkafka.api.RuntimeContext context) {
        }
    }

    @Test
    @Timeout(180)
    void shouldCommitConsumedOffsetsForATaskWhoseOnlyWorkIsVisiting(KafkaCluster cluster, TestNames names)
            throws Exception {
        // DESIGN.md: "Every transaction that carries output also carries consumed offsets: each task reads a control
        // partition, so the consumer-group generation check fences a zombie even for work that consumes nothing
        // (visitor-only computations ...)". The task heartbeats into its own control partition and reads it back.
        String pipeline = names.name("auditor");
        io.flowkafka.spec.PipelineSpec spec = io.flowkafka.spec.PipelineSpec.builder(pipeline)
                .stream("unused", VisitPipeline.SEEN)
                .computation("auditor", c -> c.groupBy("hash", io.flowkafka.spec.ColumnType.UINT64, null)
                        .processingFunction(Auditor::new).state("seen", VisitPipeline.SEEN).desiredPartitionCount(2)
                        .keyVisitorStream("v", Map.of("period", "2s", "finite", false)))
                .build();
        Properties props = new Properties();
        props.put("bootstrap.servers", cluster.bootstrapServers());
        props.put("state.dir", Files.createTempDirectory(tempRoot, "flow-kv-audit").toString());
        props.put("commit.interval.ms", "100");
        props.put("flow.watermark.heartbeat.ms", "200");
        try (io.flowkafka.runtime.FlowRuntime runtime = io.flowkafka.runtime.FlowRuntime.create(spec, props)) {
            runtime.start();
            String control = pipeline + ".control.auditor";
            assertThat(runtime.internalTopics()).containsEntry(control, 2);
            try (Admin admin = Admin.create(cluster.clientProperties())) {
                Await.until(Duration.ofMinutes(2), "committed offsets on both control partitions", () -> {
                    try {
                        var offsets = admin.listConsumerGroupOffsets(runtime.applicationId())
                                .partitionsToOffsetAndMetadata().get();
                        for (int p = 0; p < 2; p++) {
                            var o = offsets.get(new TopicPartition(control, p));
                            if (o == null || o.offset() < 3) {
                                return false;
                            }
                        }
                        return true;
                    } catch (Exception e) {
                        return false;
                    }
                });
            }
            assertThat(runtime.state()).isEqualTo(io.flowkafka.runtime.FlowRuntime.State.RUNNING);
        }
    }

    /** {@link VisitPipeline.Keeper}, but the visit of key "k-block" on a thread named zombie-a* waits for a latch. */
    public static final class Stalling implements io.flowkafka.api.RowFunction {
        static final java.util.concurrent.CountDownLatch RELEASE = new java.util.concurrent.CountDownLatch(1);
        static final java.util.concurrent.atomic.AtomicBoolean STALLED = new java.util.concurrent.atomic.AtomicBoolean();
        private final VisitPipeline.Keeper keeper = new VisitPipeline.Keeper();

        @Override
        public void onMessage(io.flowkafka.api.Message message, io.flowkafka.api.OutputCollector output,
                io.flowkafka.api.RuntimeContext context) {
            keeper.onMessage(message, output, context);
        }

        @Override
        public void onVisit(io.flowkafka.api.Visit visit, io.flowkafka.api.OutputCollector output,
                io.flowkafka.api.RuntimeContext context) {
            if (visit.getKey().get("key").toString().equals("k-block") && Thread.currentThread().getName()
                    .startsWith("zombie-a") && STALLED.compareAndSet(false, true)) {
                try {
                    // a stall (a long GC, a stuck call): the instance falls out of the group, its task moves on
                    RELEASE.await(3, java.util.concurrent.TimeUnit.MINUTES);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            output.addMessage(context.createMessageBuilder("visits").set("key", visit.getKey().get("key").toString())
                    .set("pass", visit.getPass()).set("partition", context.getPartition()).build());
        }
    }

    @Test
    @Timeout(300)
    void shouldFenceAZombieWhoseOnlyWorkIsVisiting(KafkaCluster cluster, TestNames names) throws Exception {
        // DESIGN.md: "the consumer-group generation check fences a zombie even for work that consumes nothing".
        // Instance a stalls inside a visit past max.poll.interval.ms; b takes the task over and visits the key
        // again from the committed coverage; when a wakes up, its visit and coverage must not commit.
        String pipeline = names.name("zombie");
        String input = names.topic("commands");
        String output = names.topic("visits");
        cluster.createTopic(input, 1);
        io.flowkafka.spec.PipelineSpec spec = io.flowkafka.spec.PipelineSpec.builder(pipeline)
                .stream("raw", VisitPipeline.COMMAND).stream("commands", VisitPipeline.COMMAND)
                .stream("visits", VisitPipeline.VISITED)
                .computation("read", c -> c.kind(io.flowkafka.spec.ComputationKind.SOURCE)
                        .source("raw", "KafkaSource", Map.of("topics", input)).outputStreamIds("commands"))
                .computation("keeper", c -> c.inputStreamIds("commands").desiredPartitionCount(1)
                        .groupBy("hash", io.flowkafka.spec.ColumnType.UINT64, "farm_hash(key)")
                        .groupBy("key", io.flowkafka.spec.ColumnType.STRING, null)
                        .state("seen", VisitPipeline.SEEN).processingFunction(Stalling::new).outputStreamIds("visits")
                        .keyVisitorStream("v", Map.of("period", "3s", "bucket_count", 1, "finite", false))
                        .streamsDependency("visits", List.of("v"))
                        .sink("out", "KafkaSink", List.of("visits"), Map.of("topic", output, "key_column", "key")))
                .build();
        VisitLog log = new VisitLog(cluster, output, 1);
        try (log; io.flowkafka.runtime.FlowRuntime a = io.flowkafka.runtime.FlowRuntime.create(spec,
                zombieProps(cluster, "zombie-a"))) {
            a.start();
            log.start();
            List<String> keys = new ArrayList<>(List.of("k-block"));
            for (int i = 0; i < 30; i++) {
                keys.add("k" + i);
            }
            produceKeys(cluster, input, keys);
            Await.until(Duration.ofMinutes(2), "instance a stalls inside the visit of k-block", Stalling.STALLED::get);
            try (io.flowkafka.runtime.FlowRuntime b = io.flowkafka.runtime.FlowRuntime.create(spec,
                    zombieProps(cluster, "zombie-b"))) {
                b.start();
                Await.until(Duration.ofMinutes(2), "instance b took the task over and visited k-block",
                        () -> log.visitsOf("k-block") >= 1);
                long passOfTakeover = log.maxPassByPartition().get(0);
                Stalling.RELEASE.countDown(); // the zombie wakes up and tries to commit
                Await.until(Duration.ofMinutes(2), "two more passes after the zombie woke up",
                        () -> log.minPassAbove(Map.of(0, passOfTakeover), 2));
                log.drain(Duration.ofMinutes(1));
                TreeSet<Long> passes = log.passes(0);
                for (long pass = passes.first(); pass < passes.last(); pass++) {
                    Map<String, Integer> counts = log.counts(0, pass);
                    assertThat(counts.values()).as("pass %d: no key visited twice, the zombie's visit included", pass)
                            .allMatch(n -> n == 1);
                    if (pass > passes.first()) {
                        assertThat(counts.keySet()).as("pass %d", pass).containsExactlyInAnyOrderElementsOf(keys);
                    }
                }
            }
        }
    }

    private static Properties zombieProps(KafkaCluster cluster, String clientId) throws Exception {
        Properties p = new Properties();
        p.put("bootstrap.servers", cluster.bootstrapServers());
        p.put("state.dir", Files.createTempDirectory(tempRoot, "flow-kv-zombie").toString());
        p.put("client.id", clientId);
        p.put("commit.interval.ms", "100");
        p.put("max.poll.interval.ms", "6000");
        p.put("consumer.session.timeout.ms", "6000");
        p.put("consumer.heartbeat.interval.ms", "1000");
        return p;
    }

    private static void produceKeys(KafkaCluster cluster, String topic, List<String> keys) {
        Properties p = cluster.clientProperties();
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
            for (String key : keys) {
                producer.send(new ProducerRecord<>(topic, key, "{\"key\":\"" + key + "\",\"cmd\":\"put\"}"));
            }
        }
    }

    private static ChildJvm instance(KafkaCluster cluster, String pipeline, String input, String output, Path state,
            long haltAt) throws Exception {
        ChildJvm.Builder b = ChildJvm.builder(VisitMain.class).maxHeap("384m")
                .args(cluster.bootstrapServers(), pipeline, input, output, state.toString(), "10s");
        if (haltAt > 0) {
            b.arg(Long.toString(haltAt));
        }
        return b.startAndAwaitOutputLine(l -> l.contains("RUNNING"), Duration.ofMinutes(2));
    }

    private static void produce(KafkaCluster cluster, String topic, int from, int to, String cmd) {
        Properties p = cluster.clientProperties();
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.LINGER_MS_CONFIG, "5");
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
            for (int i = from; i < to; i++) {
                String key = "k" + i;
                producer.send(new ProducerRecord<>(topic, key, "{\"key\":\"" + key + "\",\"cmd\":\"" + cmd + "\"}"));
            }
        }
    }

    /** Reads the visit records read_committed on a background thread. */
    private static final class VisitLog implements AutoCloseable {
        private final KafkaCluster cluster;
        private final String topic;
        private final ObjectMapper json = new ObjectMapper();
        private final AtomicBoolean stop = new AtomicBoolean();
        /** (partition, pass) -> key -> visits. */
        private final Map<Long, Map<String, Integer>> counts = new ConcurrentHashMap<>();
        private final Map<String, Integer> partitionOf = new ConcurrentHashMap<>();
        private final Map<Integer, Long> maxPass = new ConcurrentHashMap<>();
        private final Map<TopicPartition, Long> positions = new ConcurrentHashMap<>();
        private volatile RuntimeException failure;
        private Thread thread;
        Map<Integer, Long> loaded;
        Map<Integer, Long> deletedAt;

        private final int partitions;
        private final Map<String, Integer> visitsPerKey = new ConcurrentHashMap<>();

        VisitLog(KafkaCluster cluster, String topic) {
            this(cluster, topic, 4);
        }

        VisitLog(KafkaCluster cluster, String topic, int partitions) {
            this.cluster = cluster;
            this.topic = topic;
            this.partitions = partitions;
        }

        int visitsOf(String key) {
            check();
            return visitsPerKey.getOrDefault(key, 0);
        }

        void start() {
            thread = new Thread(this::run, "visit-log");
            thread.setDaemon(true);
            thread.start();
        }

        private void run() {
            try (KafkaConsumer<byte[], byte[]> c = cluster.committedConsumer(topic)) {
                while (!stop.get()) {
                    for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(200))) {
                        JsonNode n = json.readTree(r.value());
                        String key = n.get("key").asText();
                        long pass = n.get("pass").asLong();
                        int partition = n.get("partition").asInt();
                        counts.computeIfAbsent(partition * 1_000_000L + pass, k -> new ConcurrentHashMap<>())
                                .merge(key, 1, Integer::sum);
                        partitionOf.put(key, partition);
                        visitsPerKey.merge(key, 1, Integer::sum);
                        maxPass.merge(partition, pass, Math::max);
                    }
                    for (TopicPartition tp : c.assignment()) {
                        positions.put(tp, c.position(tp));
                    }
                }
            } catch (Exception e) {
                failure = new IllegalStateException("the visit log failed", e);
            }
        }

        private void check() {
            if (failure != null) {
                throw failure;
            }
        }

        int keysSeen() {
            check();
            return partitionOf.size();
        }

        Map<Integer, Long> maxPassByPartition() {
            check();
            Map<Integer, Long> m = new HashMap<>(maxPass);
            if (loaded == null) {
                loaded = m;
            } else if (deletedAt == null) {
                deletedAt = m;
            }
            return m;
        }

        /** Whether every partition's visits reached pass {@code base + n}. */
        boolean minPassAbove(Map<Integer, Long> base, long n) {
            check();
            for (int p = 0; p < partitions; p++) {
                if (maxPass.getOrDefault(p, -1L) < base.getOrDefault(p, 0L) + n) {
                    return false;
                }
            }
            return true;
        }

        /** Waits until the log read everything committed to the topic. */
        void drain(Duration bound) throws Exception {
            Map<TopicPartition, OffsetSpec> req = new HashMap<>();
            for (int p = 0; p < partitions; p++) {
                req.put(new TopicPartition(topic, p), OffsetSpec.latest());
            }
            Map<TopicPartition, Long> ends = new HashMap<>();
            try (Admin admin = Admin.create(cluster.clientProperties())) {
                admin.listOffsets(req, new ListOffsetsOptions(IsolationLevel.READ_COMMITTED)).all().get()
                        .forEach((tp, info) -> ends.put(tp, info.offset()));
            }
            Await.until(bound, "the visit log read every committed visit " + ends, () -> {
                check();
                for (Map.Entry<TopicPartition, Long> e : ends.entrySet()) {
                    if (positions.getOrDefault(e.getKey(), 0L) < e.getValue()) {
                        return false;
                    }
                }
                return true;
            });
        }

        Map<String, Integer> partitionOf() {
            return partitionOf;
        }

        TreeSet<Long> passes(int partition) {
            TreeSet<Long> out = new TreeSet<>();
            for (long k : counts.keySet()) {
                if (k / 1_000_000L == partition) {
                    out.add(k % 1_000_000L);
                }
            }
            return out;
        }

        Map<String, Integer> counts(int partition, long pass) {
            return counts.getOrDefault(partition * 1_000_000L + pass, Map.of());
        }

        @Override
        public void close() throws Exception {
            stop.set(true);
            if (thread != null) {
                thread.join(10_000);
            }
        }
    }
}
