package io.flowkafka.examples.guarantees;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowkafka.api.Message;
import io.flowkafka.api.OutputCollector;
import io.flowkafka.api.RowFunction;
import io.flowkafka.api.RuntimeContext;
import io.flowkafka.runtime.FlowRuntime;
import io.flowkafka.spec.ColumnType;
import io.flowkafka.spec.ComputationKind;
import io.flowkafka.spec.PipelineSpec;
import io.flowkafka.spec.WatermarkStrategy;
import io.flowkafka.testing.Await;
import io.flowkafka.testing.KafkaCluster;
import io.flowkafka.testing.TestNames;
import io.flowkafka.testing.WithKafka;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

/**
 * Flow's {@code watermark_alignment} (flow-catalog §5: "watermark_alignment with group_name,
 * drift_bound (20m)") on a real broker: two sources of different density, a dense one (one record
 * per second of event time) and a sparse one (one per 10 s), read as a backlog. Kafka Streams reads
 * them at about the same number of records per poll, so without alignment the sparse source runs
 * hours of event time ahead; with it, it stays within the drift bound (plus the records already
 * fetched when it is paused), on one instance and across two.
 */
@WithKafka
class WatermarkAlignmentIT {
    @TempDir(cleanup = CleanupMode.ON_SUCCESS)
    static Path tempRoot;

    static final Schema EVENT = SchemaBuilder.record("AEvent").namespace("align").fields()
            .requiredString("id").requiredLong("ts").endRecord();
    private static final int DENSE = 20_000;
    private static final int SPARSE = 2_000;
    private static final long DENSE_STEP_MS = 1_000;
    private static final long SPARSE_STEP_MS = 10_000;
    private static final Duration DRIFT = Duration.ofMinutes(10);
    /**
     * What may still be read after a pause: Kafka Streams' buffer and one poll (20 + 20 records here,
     * see props) of the sparse source, 10 s of event time each.
     */
    private static final Duration OVERSHOOT = Duration.ofSeconds(40 * SPARSE_STEP_MS / 1000);

    /** Per run: (stream, event time ms, stream thread) of every message the sources process, in processing order. */
    static final Map<String, Queue<Object[]>> SEEN = new ConcurrentHashMap<>();

    /** Notes each message it reads (in a Source computation) and passes it on. */
    public static final class Note implements RowFunction {
        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
            SEEN.computeIfAbsent((String) context.getParameters().get("run"), k -> new ConcurrentLinkedQueue<>())
                    .add(new Object[] {message.getStreamId(), (Long) message.getPayload().get("ts"),
                            Thread.currentThread().getName(), System.nanoTime(), message.getPayload().get("id").toString()});
            output.addMessage(context.createMessageBuilder(message.getStreamId().equals("dense_raw") ? "dense" : "sparse")
                    .setPayload(message.getPayload()).build());
        }
    }

    /** Per run: messages that reached the reader behind their stream's input watermark, and all it got. */
    static final Map<String, long[]> LATE = new ConcurrentHashMap<>();

    /** Reads both streams and counts the messages below their stream's input watermark (late data). */
    public static final class CountLate implements RowFunction {
        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
            long[] c = LATE.computeIfAbsent((String) context.getParameters().get("run"), k -> new long[2]);
            synchronized (c) {
                c[1]++;
                if (message.getEventTimestamp() < context.getInputWatermark(message.getStreamId())) {
                    c[0]++;
                }
            }
        }
    }

    static PipelineSpec spec(String name, String dense, String sparse, boolean aligned) {
        WatermarkStrategy ws = WatermarkStrategy.DEFAULT.withTimestampColumn("ts").withOutOfOrdernessBound(Duration.ZERO);
        WatermarkStrategy strategy = aligned ? ws.withAlignment("dense-and-sparse", DRIFT) : ws;
        return PipelineSpec.builder(name)
                .stream("dense_raw", EVENT).stream("dense", EVENT).stream("sparse_raw", EVENT).stream("sparse", EVENT)
                .computation("read_dense", c -> c.kind(ComputationKind.SOURCE).watermarkStrategy(strategy)
                        .source("dense_raw", "KafkaSource", Map.of("topics", dense))
                        .processingFunction(Note::new).parameter("run", name).outputStreamIds("dense"))
                .computation("read_sparse", c -> c.kind(ComputationKind.SOURCE).watermarkStrategy(strategy)
                        .source("sparse_raw", "KafkaSource", Map.of("topics", sparse))
                        .processingFunction(Note::new).parameter("run", name).outputStreamIds("sparse"))
                .build();
    }

    @Test
    @Timeout(240)
    void shouldKeepTheSparseSourceWithinTheDriftBoundOfTheDenseOne(KafkaCluster cluster, TestNames names)
            throws Exception {
        String name = names.name("aligned");
        String[] topics = backlog(cluster, names);
        double[] maxPaused = {0};
        try (FlowRuntime runtime = FlowRuntime.create(spec(name, topics[0], topics[1], true), props(cluster, "one"))) {
            runtime.start();
            Await.until(Duration.ofSeconds(120), "both sources read to the end", () -> {
                var gauge = runtime.meterRegistry().find("flow.watermark.alignment.paused").gauge();
                maxPaused[0] = Math.max(maxPaused[0], gauge == null ? 0 : gauge.value());
                return allRead(name);
            });
        }
        assertThat(maxLeadMs(name)).as("the sparse source's lead over the dense one (ms)")
                .isLessThanOrEqualTo(DRIFT.plus(OVERSHOOT).toMillis());
        assertThat(maxPaused[0]).as("the gauge showed the sparse partition paused").isEqualTo(1.0);
    }

    /**
     * A source partition paused by alignment has records waiting: it must not be reported idle to
     * the readers of its stream, which would skip it and then get its records behind their watermark.
     * Here the sparse source has two partitions (so a reader may skip one idle producer), the second
     * 5 minutes of event time ahead of the first, and an idle duration of 100 ms, far shorter than
     * the pauses alignment imposes on it while the dense source catches up.
     */
    /** The sparse source's idle duration in the paused-partition test. */
    private static final Duration IDLE = Duration.ofMillis(100);

    @Test
    @Timeout(240)
    void shouldNotLetAPausedPartitionLookIdleToTheReadersOfItsStream(KafkaCluster cluster, TestNames names)
            throws Exception {
        String name = names.name("nolate");
        String dense = names.topic("dense");
        String sparse = names.topic("sparse");
        cluster.createTopic(dense, 1);
        cluster.createTopic(sparse, 2);
        // dense: 60,000 records 100 ms apart; sparse: 100 per partition a minute apart, so that each time alignment
        // lets the sparse partitions read their ~40 records of read-ahead (40 minutes) the dense one needs 24,000
        // records to catch up: pauses far longer than the sparse source's 100 ms idle duration (a fast machine
        // catches up in about 300 ms)
        int denseCount = 60_000;
        int sparseCount = 100;
        produce(cluster, dense, 0, denseCount, 100, 0);
        produce(cluster, sparse, 0, sparseCount, 60_000, 0);
        produce(cluster, sparse, 1, sparseCount, 60_000, Duration.ofMinutes(5).toMillis());
        WatermarkStrategy ws = WatermarkStrategy.DEFAULT.withTimestampColumn("ts").withOutOfOrdernessBound(Duration.ZERO)
                .withAlignment("dense-and-sparse", DRIFT);
        PipelineSpec spec = PipelineSpec.builder(name)
                .stream("dense_raw", EVENT).stream("dense", EVENT).stream("sparse_raw", EVENT).stream("sparse", EVENT)
                .computation("read_dense", c -> c.kind(ComputationKind.SOURCE).watermarkStrategy(ws)
                        .source("dense_raw", "KafkaSource", Map.of("topics", dense))
                        .processingFunction(Note::new).parameter("run", name).outputStreamIds("dense"))
                .computation("read_sparse", c -> c.kind(ComputationKind.SOURCE)
                        .watermarkStrategy(ws.withIdlePartitions(IDLE, 0.5))
                        .source("sparse_raw", "KafkaSource", Map.of("topics", sparse))
                        .processingFunction(Note::new).parameter("run", name).outputStreamIds("sparse"))
                .computation("read_both", c -> c.inputStreamIds("dense", "sparse")
                        .groupBy("hash", ColumnType.UINT64, "farm_hash(id)").groupBy("id", ColumnType.STRING, null)
                        .processingFunction(CountLate::new).parameter("run", name).desiredPartitionCount(2))
                .build();
        try (FlowRuntime runtime = FlowRuntime.create(spec, props(cluster, "one"))) {
            runtime.start();
            Await.until(Duration.ofSeconds(120), "the reader got every message", () -> {
                long[] c = LATE.get(name);
                return c != null && c[1] >= denseCount + 2 * sparseCount;
            });
        }
        long longestPauseMs = 0;
        long last = Long.MIN_VALUE;
        for (Object[] e : SEEN.get(name)) {
            if (((String) e[4]).startsWith(sparse + "0-")) {
                long t = (Long) e[3];
                longestPauseMs = last == Long.MIN_VALUE ? 0 : Math.max(longestPauseMs, (t - last) / 1_000_000);
                last = t;
            }
        }
        assertThat(longestPauseMs).as("sparse partition 0 was held longer than its idle duration (ms)")
                .isGreaterThan(IDLE.toMillis());
        assertThat(LATE.get(name)[0]).as("messages behind their stream's watermark at the reader").isZero();
    }

    @Test
    @Timeout(240)
    void shouldLetTheSparseSourceRunHoursAheadWithoutAlignment(KafkaCluster cluster, TestNames names) throws Exception {
        String name = names.name("unaligned");
        String[] topics = backlog(cluster, names);
        try (FlowRuntime runtime = FlowRuntime.create(spec(name, topics[0], topics[1], false), props(cluster, "one"))) {
            runtime.start();
            awaitAllRead(name);
        }
        // how far ahead depends on how Kafka Streams interleaves the two partitions' fetches (0.9-5.5 h seen): at
        // least twice what the aligned runs may reach, so that those runs show alignment at work
        assertThat(maxLeadMs(name)).as("what alignment prevents: the sparse source's lead without it (ms)")
                .isGreaterThan(2 * DRIFT.plus(OVERSHOOT).toMillis());
    }

    @Test
    @Timeout(300)
    void shouldAlignSourcesReadByTwoInstances(KafkaCluster cluster, TestNames names) throws Exception {
        String name = names.name("two");
        String dense = names.topic("dense");
        String sparse = names.topic("sparse");
        cluster.createTopic(dense, 1);
        cluster.createTopic(sparse, 1);
        PipelineSpec spec = spec(name, dense, sparse, true);
        try (FlowRuntime a = FlowRuntime.create(spec, props(cluster, "a"));
                FlowRuntime b = FlowRuntime.create(spec, props(cluster, "b"))) {
            startBothThenProduce(cluster, a, b, dense, sparse);
            awaitAllRead(name);
        }
        List<Object[]> seen = List.copyOf(SEEN.get(name));
        String denseThread = threadOf(seen, "dense_raw");
        String sparseThread = threadOf(seen, "sparse_raw");
        assertThat(clientOf(denseThread)).as("Kafka Streams gave each instance one of the two source tasks")
                .isNotEqualTo(clientOf(sparseThread));
        // the sparse instance learns the dense one's progress only through its watermark changelog, which lags:
        // that makes it pause earlier, never later, so the local bound holds
        assertThat(maxLeadMs(name)).as("the sparse source's lead over the dense one on another instance (ms)")
                .isLessThanOrEqualTo(DRIFT.plus(OVERSHOOT).toMillis());
    }

    /**
     * A member whose instance stops: its last report stays in its changelog, so the other member is held
     * at that watermark plus the drift bound (not released, not blocked for good) until the task runs
     * again elsewhere, restored, and reports anew. Here the instance reading the dense source (the one
     * that holds the group back) stops a quarter of the way in; its task moves to the instance reading the
     * sparse one (at once: a stop leaves the consumer group), and both sources are read to the end
     * within the bound.
     */
    @Test
    @Timeout(480)
    void shouldKeepAligningWhenTheSlowMembersTaskMovesToAnotherInstance(KafkaCluster cluster, TestNames names)
            throws Exception {
        String name = names.name("moved");
        String dense = names.topic("dense");
        String sparse = names.topic("sparse");
        cluster.createTopic(dense, 1);
        cluster.createTopic(sparse, 1);
        PipelineSpec spec = spec(name, dense, sparse, true);
        try (FlowRuntime a = FlowRuntime.create(spec, quickFailoverProps(cluster, "a"));
                FlowRuntime b = FlowRuntime.create(spec, quickFailoverProps(cluster, "b"))) {
            startBothThenProduce(cluster, a, b, dense, sparse);
            Await.until(Duration.ofSeconds(120), "a quarter of the dense source read", () -> SEEN.containsKey(name)
                    && SEEN.get(name).stream().filter(e -> e[0].equals("dense_raw")).count() >= DENSE / 4);
            List<Object[]> before = List.copyOf(SEEN.get(name));
            List<String> denseClients = before.stream().filter(e -> e[0].equals("dense_raw"))
                    .map(e -> clientOf((String) e[2])).distinct().toList();
            assertThat(denseClients).as("one instance read the dense source so far").hasSize(1);
            assertThat(before.stream().filter(e -> e[0].equals("dense_raw")).count())
                    .as("the dense source is not read to its end yet").isLessThan(DENSE);
            String denseClient = denseClients.get(0);
            String sparseClient = clientOf(threadOf(before, "sparse_raw"));
            assertThat(denseClient).as("Kafka Streams gave each instance one of the two source tasks")
                    .isNotEqualTo(sparseClient);
            FlowRuntime denseInstance = denseClient.startsWith("align-a") ? a : b;
            assertThat(denseInstance.stop(Duration.ofSeconds(60))).isTrue();
            awaitAllRead(name);
        }
        List<Object[]> seen = List.copyOf(SEEN.get(name));
        assertThat(seen.stream().filter(e -> e[0].equals("dense_raw")).map(e -> clientOf((String) e[2])).distinct())
                .as("the dense source was read by both instances, one after the other").hasSize(2);
        assertThat(maxLeadMs(name)).as("the sparse source's lead over the dense one, across the move (ms)")
                .isLessThanOrEqualTo(DRIFT.plus(OVERSHOOT).toMillis());
    }

    /** {@link #props} with a short session timeout, in case a stopping instance cannot send its leave request. */
    private static Properties quickFailoverProps(KafkaCluster cluster, String instance) throws Exception {
        Properties p = props(cluster, instance);
        p.put("session.timeout.ms", "6000");
        p.put("heartbeat.interval.ms", "1000");
        return p;
    }

    /**
     * Starts both instances, then writes the backlog: the watermark changelogs exist once the tasks are
     * initialised, so each instance learns the other's source from its changelog while both read.
     */
    private static void startBothThenProduce(KafkaCluster cluster, FlowRuntime a, FlowRuntime b, String dense,
            String sparse) throws InterruptedException {
        a.start();
        b.start();
        assertThat(a.awaitState(FlowRuntime.State.RUNNING, Duration.ofSeconds(60))).isTrue();
        assertThat(b.awaitState(FlowRuntime.State.RUNNING, Duration.ofSeconds(60))).isTrue();
        produce(cluster, dense, DENSE, DENSE_STEP_MS);
        produce(cluster, sparse, SPARSE, SPARSE_STEP_MS);
    }

    private static String threadOf(List<Object[]> seen, String stream) {
        return seen.stream().filter(e -> e[0].equals(stream)).map(e -> (String) e[2]).findFirst().orElseThrow();
    }

    private static String clientOf(String thread) {
        return thread.substring(0, thread.indexOf("-StreamThread-"));
    }

    /** Over the run, in processing order: the largest lead of the sparse source's event time over the dense one's. */
    private static long maxLeadMs(String run) {
        long dense = 0; // where the dense source starts
        long lead = Long.MIN_VALUE;
        long denseEnd = (DENSE - 1) * DENSE_STEP_MS;
        for (Object[] e : SEEN.get(run)) {
            long ts = (Long) e[1];
            if (e[0].equals("dense_raw")) {
                dense = Math.max(dense, ts);
            } else if (dense < denseEnd) {
                lead = Math.max(lead, ts - dense);
            }
        }
        return lead;
    }

    private static void awaitAllRead(String run) {
        Await.until(Duration.ofSeconds(120), "both sources read to the end", () -> allRead(run));
    }

    private static boolean allRead(String run) {
        Queue<Object[]> q = SEEN.get(run);
        if (q == null) {
            return false;
        }
        long dense = q.stream().filter(e -> e[0].equals("dense_raw")).map(e -> (Long) e[1]).distinct().count();
        long sparse = q.stream().filter(e -> e[0].equals("sparse_raw")).map(e -> (Long) e[1]).distinct().count();
        return dense == DENSE && sparse == SPARSE;
    }

    private static String[] backlog(KafkaCluster cluster, TestNames names) {
        String dense = names.topic("dense");
        String sparse = names.topic("sparse");
        cluster.createTopic(dense, 1);
        cluster.createTopic(sparse, 1);
        produce(cluster, dense, DENSE, DENSE_STEP_MS);
        produce(cluster, sparse, SPARSE, SPARSE_STEP_MS);
        return new String[] {dense, sparse};
    }

    private static void produce(KafkaCluster cluster, String topic, int count, long stepMs) {
        produce(cluster, topic, 0, count, stepMs, 0);
    }

    private static void produce(KafkaCluster cluster, String topic, int partition, int count, long stepMs,
            long offsetMs) {
        Properties p = cluster.clientProperties();
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.LINGER_MS_CONFIG, "5");
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
            for (int i = 0; i < count; i++) {
                long ts = offsetMs + i * stepMs;
                producer.send(new ProducerRecord<>(topic, partition, "k" + i,
                        "{\"id\":\"" + topic + partition + "-" + i + "\",\"ts\":" + ts + "}"));
            }
        }
    }

    private static Properties props(KafkaCluster cluster, String instance) throws Exception {
        Properties p = cluster.clientProperties();
        p.put("state.dir", Files.createTempDirectory(tempRoot, "flow-align-it").toString());
        p.put("client.id", "align-" + instance);
        p.put("commit.interval.ms", "100");
        p.put("flow.watermark.interval.ms", "100");
        // a small read-ahead, so that a paused source stops within a few records (see OVERSHOOT)
        p.put("max.poll.records", "20");
        p.put("buffered.records.per.partition", "20");
        return p;
    }
}
