package io.flowkafka.examples.guarantees;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowkafka.api.Message;
import io.flowkafka.api.OutputCollector;
import io.flowkafka.api.RowFunction;
import io.flowkafka.api.RuntimeContext;
import io.flowkafka.api.Timer;
import io.flowkafka.avro.ControlRecord;
import io.flowkafka.avro.FlowAvroClasses;
import io.flowkafka.runtime.FlowConfig;
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
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.avro.io.DecoderFactory;
import org.apache.avro.specific.SpecificDatumReader;
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
 * Watermarks on a real broker (TopologyTestDriver has one partition): the minimum over
 * producers, idle partitions, monotonicity across a takeover with an empty state directory, and
 * completion of a finite pipeline.
 */
@WithKafka
class WatermarkIT {
    /** State directories of this class's runtimes (and child JVMs); JUnit deletes it after the class if it passed. */
    @TempDir(cleanup = CleanupMode.ON_SUCCESS)
    static Path tempRoot;

    static final Schema EVENT = SchemaBuilder.record("WEvent").namespace("wm").fields()
            .requiredString("id").requiredLong("ts").endRecord();
    private static final long MS = 1_000_000L;

    /** Copies each message to the output stream. */
    public static final class Copy implements RowFunction {
        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
            output.addMessage(context.createMessageBuilder("out").setPayload(message.getPayload()).build());
        }
    }

    static PipelineSpec spec(String name, String input, WatermarkStrategy strategy, boolean finite) {
        return PipelineSpec.builder(name)
                .stream("raw", EVENT).stream("events", EVENT).stream("out", EVENT)
                .computation("read", c -> c.kind(ComputationKind.SOURCE)
                        .source("raw", "KafkaSource", Map.of("topics", input, "finite", finite))
                        .watermarkStrategy(strategy.withTimestampColumn("ts"))
                        .outputStreamIds("events"))
                .computation("mid", c -> c.inputStreamIds("events")
                        .groupBy("hash", ColumnType.UINT64, "farm_hash(id)").groupBy("id", ColumnType.STRING, null)
                        .processingFunction(Copy::new).outputStreamIds("out").desiredPartitionCount(2))
                .build();
    }

    @Test
    @Timeout(180)
    void shouldTakeTheMinimumOverEveryProducerPartition(KafkaCluster cluster, TestNames names) throws Exception {
        String input = names.topic("in");
        cluster.createTopic(input, 4);
        WatermarkStrategy strategy = WatermarkStrategy.DEFAULT.withOutOfOrdernessBound(Duration.ZERO)
                .withIdlePartitions(Duration.ofMinutes(10), 0.4);
        PipelineSpec spec = spec(names.name("min"), input, strategy, false);
        try (FlowRuntime runtime = FlowRuntime.create(spec, props(cluster));
                ControlReader out = new ControlReader(cluster, spec.name() + ".out")) {
            runtime.start();
            produce(cluster, input, 0, 1000);
            for (int p = 1; p < 4; p++) {
                produce(cluster, input, p, 5000);
            }
            out.awaitEventWatermark(1000 * MS);
            assertThat(out.maxEventWatermark()).as("partition 0 holds the stream at its 1000 ms").isEqualTo(1000 * MS);
            produce(cluster, input, 0, 9000);
            out.awaitEventWatermark(5000 * MS);
            assertThat(out.maxEventWatermark()).as("now the minimum is the other partitions' 5000 ms").isEqualTo(5000 * MS);
        }
    }

    @Test
    @Timeout(180)
    void shouldStopHoldingBackForIdlePartitionsUpToMaxRatio(KafkaCluster cluster, TestNames names) throws Exception {
        String input = names.topic("in");
        cluster.createTopic(input, 4);
        // 4 partitions, max_ratio 0.4: at most ceil(1.6) = 2 may be skipped as idle
        WatermarkStrategy strategy = WatermarkStrategy.DEFAULT.withOutOfOrdernessBound(Duration.ZERO)
                .withIdlePartitions(Duration.ofSeconds(2), 0.4);
        PipelineSpec spec = spec(names.name("idle"), input, strategy, false);
        try (FlowRuntime runtime = FlowRuntime.create(spec, props(cluster));
                ControlReader out = new ControlReader(cluster, spec.name() + ".out")) {
            runtime.start();
            produce(cluster, input, 0, 1000);
            produce(cluster, input, 1, 2000);
            produce(cluster, input, 2, 3000); // partition 3 never receives anything
            out.awaitEventWatermark(2000 * MS);
            assertThat(out.maxEventWatermark()).as("the two lowest idle partitions (3: none, 0: 1000) are skipped; "
                    + "the third idle one (1: 2000) still counts").isEqualTo(2000 * MS);
            assertThat(out.sawIdleHoldBack()).as("before partitions went idle, partition 3 held the stream back").isTrue();
        }
    }

    /**
     * idle_partitions.duration counts time without records, and a paused runtime reads none: its source
     * partitions' records wait in the topic. A pause longer than the idle duration must not make them idle
     * when it ends (readers would skip them and get their waiting records behind the watermark); their
     * idle time goes on from where it was when the pause began. Each control record of an idle, quiet
     * source carries the clock of its emission as its system watermark, which dates the first idle one.
     */
    @Test
    @Timeout(180)
    void shouldNotCountTheTimeTheRuntimeWasPausedAsIdleTime(KafkaCluster cluster, TestNames names) throws Exception {
        String input = names.topic("in");
        cluster.createTopic(input, 4);
        long idleMs = 8_000; // leaves 7 s on a loaded machine for the records to be read before the pause
        WatermarkStrategy strategy = WatermarkStrategy.DEFAULT.withOutOfOrdernessBound(Duration.ZERO)
                .withIdlePartitions(Duration.ofMillis(idleMs), 0.4);
        PipelineSpec spec = spec(names.name("pause"), input, strategy, false);
        try (FlowRuntime runtime = FlowRuntime.create(spec, props(cluster));
                ControlReader events = new ControlReader(cluster, spec.name() + ".events")) {
            runtime.start();
            events.awaitControlRecords(1); // the source tasks run
            long produced = System.currentTimeMillis();
            for (int p = 0; p < 4; p++) {
                produce(cluster, input, p, 1000L * (p + 1));
            }
            Await.until(Duration.ofMinutes(1), "every source partition's record read", () -> {
                events.poll();
                for (int p = 0; p < 4; p++) {
                    int partition = p;
                    if (events.seen.stream().noneMatch(c -> c.getComputation().equals("read") && c.getPartition() == partition
                            && c.getEventWatermark() >= 1000L * (partition + 1) * MS)) {
                        return false;
                    }
                }
                return true;
            });
            long pausedAt = System.currentTimeMillis();
            long quietBeforePause = pausedAt - produced;
            assertThat(quietBeforePause).as("the test needs the pause to begin well within the idle duration")
                    .isLessThan(idleMs - 1_000);
            runtime.pause();
            Await.until(Duration.ofSeconds(30), "a pause longer than the idle duration",
                    () -> System.currentTimeMillis() >= pausedAt + idleMs + 1_000);
            long resumedAt = System.currentTimeMillis();
            runtime.resume();
            int before = events.seen.size();
            Await.until(Duration.ofMinutes(1), "a source partition idle after the resume", () -> {
                events.poll();
                return events.seen.subList(before, events.seen.size()).stream()
                        .anyMatch(c -> c.getComputation().equals("read") && c.getIdle());
            });
            // idle at the earliest once the silence before the pause and after the resume add up to the idle duration
            long earliestIdleMs = resumedAt + idleMs - quietBeforePause;
            List<String> early = new ArrayList<>();
            for (ControlRecord c : events.seen) {
                if (c.getComputation().equals("read") && c.getIdle() && c.getSystemWatermark() / MS < earliestIdleMs - 200) {
                    early.add("partition " + c.getPartition() + " idle at " + (c.getSystemWatermark() / MS - resumedAt)
                            + " ms after the resume");
                }
            }
            assertThat(early).as("no source partition idle before " + (earliestIdleMs - resumedAt)
                    + " ms after the resume (a " + (resumedAt - pausedAt) + " ms pause)").isEmpty();
        }
    }

    @Test
    @Timeout(240)
    void shouldNeverGoBackWhenAnInstanceWithAnEmptyStateDirectoryTakesOver(KafkaCluster cluster, TestNames names)
            throws Exception {
        String input = names.topic("in");
        cluster.createTopic(input, 4);
        WatermarkStrategy strategy = WatermarkStrategy.DEFAULT.withOutOfOrdernessBound(Duration.ZERO)
                .withIdlePartitions(Duration.ofMinutes(10), 0.4);
        PipelineSpec spec = spec(names.name("takeover"), input, strategy, false);
        try (ControlReader out = new ControlReader(cluster, spec.name() + ".out")) {
            try (FlowRuntime first = FlowRuntime.create(spec, props(cluster))) {
                first.start();
                for (int p = 0; p < 4; p++) {
                    produce(cluster, input, p, 7000);
                }
                out.awaitEventWatermark(7000 * MS);
            }
            // a new instance with an empty state directory: it restores the watermark stores from their changelogs
            try (FlowRuntime second = FlowRuntime.create(spec, props(cluster))) {
                second.start();
                produce(cluster, input, 0, 8000); // only partition 0 moves: the minimum stays 7000
                out.awaitControlRecords(out.count() + 4);
                for (int p = 1; p < 4; p++) {
                    produce(cluster, input, p, 8000);
                }
                out.awaitEventWatermark(8000 * MS);
            }
            assertThat(out.decreases()).as("per producer, no control record goes back").isEmpty();
        }
    }

    @Test
    @Timeout(180)
    void shouldCompleteAFiniteBackfill(KafkaCluster cluster, TestNames names) throws Exception {
        String input = names.topic("in");
        cluster.createTopic(input, 3);
        for (int i = 0; i < 300; i++) {
            produce(cluster, input, i % 3, 1000 + i);
        }
        PipelineSpec spec = spec(names.name("finite"), input, WatermarkStrategy.DEFAULT, true);
        try (FlowRuntime runtime = FlowRuntime.create(spec, props(cluster));
                ControlReader out = new ControlReader(cluster, spec.name() + ".out")) {
            runtime.start();
            assertThat(runtime.awaitCompletion(Duration.ofMinutes(2))).as("state " + runtime.state()).isTrue();
            assertThat(runtime.state()).isEqualTo(FlowRuntime.State.COMPLETED);
            produce(cluster, input, 0, 99_999); // beyond the finite range: ignored
            out.awaitCompleted(2);
            assertThat(out.dataRecords()).as("exactly the 300 records of the finite range").isEqualTo(300);
        }
    }

    /**
     * A task that completes asks Kafka Streams to commit at once: with a commit interval far longer than the test's
     * bound, the source task's last records and its completion reach the next computation, whose completion reaches
     * the runtime, only because each task commits when it completes.
     */
    @Test
    @Timeout(180)
    void shouldCommitWhenATaskCompletesInsteadOfWaitingForTheCommitInterval(KafkaCluster cluster, TestNames names)
            throws Exception {
        String input = names.topic("in");
        cluster.createTopic(input, 3);
        for (int i = 0; i < 30; i++) {
            produce(cluster, input, i % 3, 1000 + i);
        }
        PipelineSpec spec = spec(names.name("prompt"), input, WatermarkStrategy.DEFAULT, true);
        Properties p = tenMinuteCommitProps(cluster);
        try (FlowRuntime runtime = FlowRuntime.create(spec, p);
                ControlReader out = new ControlReader(cluster, spec.name() + ".out")) {
            runtime.start();
            assertThat(runtime.awaitCompletion(Duration.ofSeconds(60)))
                    .as("completed long before the 10-minute commit interval; state " + runtime.state()).isTrue();
            out.awaitCompleted(2);
            assertThat(out.dataRecords()).as("every record of the finite range, committed").isEqualTo(30);
        }
    }

    @Test
    @Timeout(180)
    void shouldCommitWhenAnOutputWithItsOwnDependenciesCompletesBeforeTheTask(KafkaCluster cluster, TestNames names)
            throws Exception {
        // "early" depends only on the input "events", from a finite source (streams_dependency): it completes once
        // that range is read, while the task's main output "out" also follows "others", an infinite source
        String finite = names.topic("finite");
        String infinite = names.topic("infinite");
        cluster.createTopic(finite, 2);
        cluster.createTopic(infinite, 2);
        for (int i = 0; i < 10; i++) {
            produce(cluster, finite, i % 2, 1000 + i);
            produce(cluster, infinite, i % 2, 1000 + i);
        }
        PipelineSpec spec = PipelineSpec.builder(names.name("own"))
                .stream("raw", EVENT).stream("raw2", EVENT).stream("events", EVENT).stream("others", EVENT)
                .stream("out", EVENT).stream("early", EVENT)
                .computation("read", c -> c.kind(ComputationKind.SOURCE)
                        .source("raw", "KafkaSource", Map.of("topics", finite, "finite", true))
                        .watermarkStrategy(WatermarkStrategy.DEFAULT.withTimestampColumn("ts"))
                        .outputStreamIds("events"))
                .computation("read2", c -> c.kind(ComputationKind.SOURCE)
                        .source("raw2", "KafkaSource", Map.of("topics", infinite))
                        .watermarkStrategy(WatermarkStrategy.DEFAULT.withTimestampColumn("ts"))
                        .outputStreamIds("others"))
                .computation("mid", c -> c.inputStreamIds("events", "others")
                        .groupBy("hash", ColumnType.UINT64, "farm_hash(id)").groupBy("id", ColumnType.STRING, null)
                        .processingFunction(Copy::new).outputStreamIds("out", "early").desiredPartitionCount(2)
                        .streamsDependency("early", List.of("events")))
                .build();
        Properties p = tenMinuteCommitProps(cluster);
        try (FlowRuntime runtime = FlowRuntime.create(spec, p);
                ControlReader early = new ControlReader(cluster, spec.name() + ".early")) {
            runtime.start();
            early.awaitCompleted(2); // within a minute: long before the 10-minute commit interval
            assertThat(runtime.state()).as("the main output never completes").isEqualTo(FlowRuntime.State.RUNNING);
        }
    }

    /** Registers a timer per input (event time ts + 100 s, trigger ts + 1000 s); inputs go to progress, timers to late. */
    public static final class Waiter implements RowFunction {
        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
            long ts = (Long) message.getPayload().get("ts");
            output.addTimer((ts + 1_000_000) * MS, (ts + 100_000) * MS);
            output.addMessage(context.createMessageBuilder("progress").setPayload(message.getPayload()).build());
        }

        @Override
        public void onTimer(Timer timer, OutputCollector output, RuntimeContext context) {
            output.addMessage(context.createMessageBuilder("late").set("id", "fired-" + timer.getKey().get("id"))
                    .set("ts", timer.getEventTimestamp() / MS).build());
        }
    }

    /** Passes on each fired timer's message of {@code late}, to {@code behind} too if the watermark had passed it. */
    public static final class Reader implements RowFunction {
        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
            output.addMessage(context.createMessageBuilder("seen").setPayload(message.getPayload()).build());
            if (context.getInputWatermark("late") > (Long) message.getPayload().get("ts") * MS) {
                output.addMessage(context.createMessageBuilder("behind").setPayload(message.getPayload()).build());
            }
        }
    }

    private static PipelineSpec holdsSpec(String name, String input, boolean withReader) {
        PipelineSpec.Builder b = PipelineSpec.builder(name)
                .stream("raw", EVENT).stream("events", EVENT).stream("late", EVENT).stream("progress", EVENT)
                .computation("read", c -> c.kind(ComputationKind.SOURCE)
                        .source("raw", "KafkaSource", Map.of("topics", input))
                        .watermarkStrategy(WatermarkStrategy.DEFAULT.withOutOfOrdernessBound(Duration.ZERO)
                                .withIdlePartitions(Duration.ofMinutes(10), 0.4).withTimestampColumn("ts"))
                        .outputStreamIds("events"))
                .computation("waiter", c -> {
                    c.inputStreamIds("events")
                            .groupBy("hash", ColumnType.UINT64, "farm_hash(id)").groupBy("id", ColumnType.STRING, null)
                            .processingFunction(Waiter::new).outputStreamIds("late", "progress").timer("t", Map.of())
                            .desiredPartitionCount(2)
                            .sink("progress_sink", "KafkaSink", List.of("progress"), Map.of("topic", name + "-progress"));
                    if (!withReader) { // late goes only to a sink: nobody reads the waiter's output watermark
                        c.sink("late_sink", "KafkaSink", List.of("late"), Map.of("topic", name + "-late-out"));
                    }
                });
        if (withReader) {
            b.stream("seen", EVENT).stream("behind", EVENT)
                    .computation("reader", c -> c.inputStreamIds("late")
                            .groupBy("hash", ColumnType.UINT64, "farm_hash(id)").groupBy("id", ColumnType.STRING, null)
                            .processingFunction(Reader::new).outputStreamIds("seen", "behind").desiredPartitionCount(2));
        }
        return b.build();
    }

    /**
     * A new pipeline version gives a computation with pending timers its first reader: its holds index (kept only
     * where an output watermark is read) is built from the restored timers by the timer punctuations, in steps, and
     * until then the output watermark does not move. Then it holds at the smallest pending EventTimestamp, and
     * every fired timer's message reaches the reader ahead of the watermark.
     */
    @Test
    @Timeout(240)
    void shouldBuildTheHoldsIndexWhenANewVersionAddsAReader(KafkaCluster cluster, TestNames names) throws Exception {
        String input = names.topic("in");
        cluster.createTopic(input, 4);
        int timers = 2_000;
        String name = names.name("holds");
        Properties p = props(cluster);
        p.put(FlowConfig.TIMERS_MAX_PER_STEP_CONFIG, "10"); // holds built 100 per step: about 20 steps
        try (ControlReader late = new ControlReader(cluster, name + ".late");
                ControlReader progress = new ControlReader(cluster, name + "-progress")) {
            try (FlowRuntime v1 = FlowRuntime.create(holdsSpec(name, input, false), p)) {
                v1.start();
                produceMany(cluster, input, 1_000, timers);
                Await.until(Duration.ofMinutes(2), "every input processed by version 1",
                        () -> progress.dataRecords() >= timers);
            }
            try (FlowRuntime v2 = FlowRuntime.create(holdsSpec(name, input, true), p);
                    ControlReader seen = new ControlReader(cluster, name + ".seen");
                    ControlReader behind = new ControlReader(cluster, name + ".behind")) {
                v2.start();
                for (int partition = 0; partition < 4; partition++) {
                    produce(cluster, input, partition, 500_000); // the input passes every event time, no trigger
                }
                // both waiter tasks write control records to both partitions: wait for all four writers, as a
                // task still building its holds index keeps its output watermark where it was
                late.awaitEveryProducerAtLeast(4, 101_000 * MS);
                // each waiter task holds at its own smallest pending EventTimestamp; key n0 (1000 + 100 s) is the least
                assertThat(late.lastPerProducer.values().stream().mapToLong(Long::longValue).min().orElseThrow())
                        .as("held at the smallest pending EventTimestamp").isEqualTo(101_000 * MS);
                assertThat(late.maxEventWatermark()).as("below the last pending EventTimestamp, not at the input's")
                        .isLessThan((100_000 + 1_000 + timers - 1) * MS);
                for (int partition = 0; partition < 4; partition++) {
                    produce(cluster, input, partition, 2_000_000); // passes every trigger
                }
                late.awaitEventWatermark(2_000_000 * MS);
                int fired = timers + 4; // and the timers of the four records at 500 s (trigger 1500 s)
                Await.until(Duration.ofMinutes(1), "every fired timer's message read", () -> seen.dataRecords() >= fired);
                assertThat(seen.dataRecords()).isEqualTo(fired);
                assertThat(behind.dataRecords()).as("fired messages the watermark had already passed").isZero();
            }
            assertThat(late.decreases()).as("per producer, no control record goes back").isEmpty();
        }
    }

    private static void produceMany(KafkaCluster cluster, String topic, long fromTsMs, int count) {
        Properties p = cluster.clientProperties();
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
            for (int i = 0; i < count; i++) {
                long ts = fromTsMs + i;
                producer.send(new ProducerRecord<>(topic, i % 4, "k", "{\"id\":\"n" + i + "\",\"ts\":" + ts + "}"));
            }
        }
    }

    /** {@link #props} with a 10-minute commit interval: only an explicit commit publishes within a test. */
    private static Properties tenMinuteCommitProps(KafkaCluster cluster) throws Exception {
        Properties p = props(cluster);
        p.put("commit.interval.ms", "600000");
        p.put("producer.transaction.timeout.ms", "900000"); // no transaction times out while nothing commits
        return p;
    }

    private static Properties props(KafkaCluster cluster) throws Exception {
        Properties p = cluster.clientProperties();
        Path dir = Files.createTempDirectory(tempRoot, "flow-wm-it");
        p.put("state.dir", dir.toString());
        p.put("commit.interval.ms", "100");
        p.put("flow.watermark.interval.ms", "100");
        p.put("flow.watermark.heartbeat.ms", "500");
        return p;
    }

    private static void produce(KafkaCluster cluster, String topic, int partition, long tsMs) {
        Properties p = cluster.clientProperties();
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
            producer.send(new ProducerRecord<>(topic, partition, "k",
                    "{\"id\":\"p" + partition + "-" + tsMs + "\",\"ts\":" + tsMs + "}"));
        }
    }

    /** Reads control records of an internal topic, read_committed, in a background-free way. */
    static final class ControlReader implements AutoCloseable {
        private final KafkaConsumer<byte[], byte[]> consumer;
        private final List<ControlRecord> seen = new ArrayList<>();
        private final Map<String, Long> lastPerProducer = new HashMap<>();
        private final List<String> decreases = new ArrayList<>();
        private final Map<Integer, Long> latestByPartition = new HashMap<>();
        private int data;
        private boolean idleHoldBack;
        private final SpecificDatumReader<ControlRecord> reader;

        ControlReader(KafkaCluster cluster, String topic) {
            FlowAvroClasses.trust();
            reader = new SpecificDatumReader<>(ControlRecord.class);
            Properties p = cluster.clientProperties();
            p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
            p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
            p.put(ConsumerConfig.GROUP_ID_CONFIG, topic + "-control-reader");
            p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
            p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
            consumer = new KafkaConsumer<>(p);
            consumer.subscribe(List.of(topic));
        }

        void poll() {
            for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(100))) {
                if (r.headers().lastHeader("flow.control") == null) {
                    data++;
                    continue;
                }
                try {
                    ControlRecord c = reader.read(null, DecoderFactory.get().binaryDecoder(r.value(), null));
                    seen.add(c);
                    String producer = c.getComputation() + "/" + c.getPartition() + "@" + r.partition();
                    Long last = lastPerProducer.put(producer, c.getEventWatermark());
                    if (last != null && c.getEventWatermark() < last) {
                        decreases.add(producer + ": " + last + " -> " + c.getEventWatermark());
                    }
                    latestByPartition.merge(r.partition(), c.getEventWatermark(), Math::max);
                    if (c.getEventWatermark() == Long.MIN_VALUE) {
                        idleHoldBack = true;
                    }
                } catch (java.io.IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            }
        }

        void awaitEventWatermark(long expected) {
            Await.until(Duration.ofMinutes(1), "event watermark " + expected + " on every partition", () -> {
                poll();
                return latestByPartition.size() == 2 && latestByPartition.values().stream().allMatch(v -> v >= expected);
            });
        }

        void awaitEveryProducerAtLeast(int producers, long expected) {
            Await.until(Duration.ofMinutes(1), "event watermark " + expected + " from " + producers + " writers", () -> {
                poll();
                return lastPerProducer.size() == producers
                        && lastPerProducer.values().stream().allMatch(v -> v >= expected);
            });
        }

        void awaitControlRecords(int n) {
            Await.until(Duration.ofMinutes(1), n + " control records", () -> {
                poll();
                return seen.size() >= n;
            });
        }

        void awaitCompleted(int partitions) {
            Await.until(Duration.ofMinutes(1), "completion on " + partitions + " partitions", () -> {
                poll();
                return seen.stream().filter(ControlRecord::getCompleted).map(ControlRecord::getPartition).distinct().count()
                        >= 1 && latestByPartition.size() == partitions
                        && latestByPartition.values().stream().allMatch(v -> v == Long.MAX_VALUE);
            });
        }

        long maxEventWatermark() {
            poll();
            return seen.stream().mapToLong(ControlRecord::getEventWatermark).max().orElse(Long.MIN_VALUE);
        }

        boolean sawIdleHoldBack() {
            return idleHoldBack;
        }

        int count() {
            poll();
            return seen.size();
        }

        int dataRecords() {
            poll();
            return data;
        }

        List<String> decreases() {
            poll();
            return decreases;
        }

        @Override
        public void close() {
            consumer.close();
        }
    }
}
