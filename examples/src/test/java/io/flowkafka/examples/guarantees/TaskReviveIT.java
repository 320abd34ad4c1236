package io.flowkafka.examples.guarantees;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.flowkafka.api.Message;
import io.flowkafka.api.OutputCollector;
import io.flowkafka.api.RowFunction;
import io.flowkafka.api.RuntimeContext;
import io.flowkafka.api.StateAccessor;
import io.flowkafka.api.Timer;
import io.flowkafka.runtime.FlowRuntime;
import io.flowkafka.spec.ColumnType;
import io.flowkafka.spec.PipelineSpec;
import io.flowkafka.spec.WatermarkStrategy;
import io.flowkafka.testing.Await;
import io.flowkafka.testing.ExactlyOnceChecker;
import io.flowkafka.testing.KafkaCluster;
import io.flowkafka.testing.TestNames;
import io.flowkafka.testing.WithKafka;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.reflect.Field;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

/**
 * A task revived by Kafka Streams, on a real broker. Under {@code exactly_once_v2} a commit whose transaction times
 * out ({@code TaskExecutor.commitOffsetsOrTransaction} catches the {@link TimeoutException}) throws
 * {@code TaskCorruptedException}; {@code TaskManager.handleCorruption} first commits the thread's other running
 * tasks, and when that commit times out too, closes the thread's active tasks dirty
 * ({@code RecordCollectorImpl.closeDirty} aborts the transaction) and revives them ({@code closeDirtyAndRevive}):
 * the same {@code StreamTask}, with the same {@code ProcessorTopology} and processor objects, is initialized again
 * ({@code StreamTask.initializeTopology}, {@code Processor.init}) on the same stream thread and producer, restores
 * its stores from their changelogs and replays from the last committed offsets. Whatever a processor kept in its
 * fields from the aborted attempt must not leak into the replay.
 *
 * <p>The pipeline: a finite, key-partitioned source (4 partitions, 4000 records, one event second apart) read by a
 * keyed Transform that counts each user's records and sets, per record, an event-time timer {@link #WAIT_MS} after
 * it; the timer emits one result, keyed by the record's id, carrying the user's count when it fired. Records of a
 * partition come in event-time order and the watermark has no out-of-orderness bound, so a timer that fires on time
 * has seen every record of its user before its trigger: a smaller count means it fired early.
 *
 * <p>The commit fails through {@link CommitTimeouts}, a wrapper of the stream thread's transactional producer.
 * {@code FlowRuntime} hands {@code KafkaStreams} its own client supplier ({@code DrainingClientSupplier}), so
 * Kafka Streams' {@code default.client.supplier} is never read; the wrapper is put in by reflection, on the stream
 * thread itself. It fails {@code commitTransaction} with a {@link TimeoutException} from a chosen commit on, until
 * the transaction is aborted, as a transaction coordinator that stays silent for a while would. A single failure
 * aborts nothing: {@code handleCorruption}'s commit of the other tasks commits the still open transaction, the
 * failed task's offsets included (they were sent before {@code commitTransaction}); the task is revived, but from
 * offsets that include everything it processed.
 */
@WithKafka
class TaskReviveIT {
    /** State directories of this class's runtimes; JUnit deletes it after the class if it passed. */
    @TempDir(cleanup = CleanupMode.ON_SUCCESS)
    static Path tempRoot;

    static final int PARTITIONS = 4;
    static final int USERS = 12;
    static final int RECORDS = 4_000;
    /** Event time of record 0; record i is {@code i * STEP_MS} later. */
    static final long BASE_MS = 1_767_225_600_000L;
    static final long STEP_MS = 1_000;
    /** How long a record's timer waits in event time: never a whole number of steps, so no trigger ties a record. */
    static final long WAIT_MS = 30_500;
    private static final long MS = 1_000_000L;

    static final Schema EVENT = SchemaBuilder.record("Event").namespace("revive").fields()
            .requiredString("id").requiredString("user").requiredLong("ts").endRecord();
    static final Schema RESULT = SchemaBuilder.record("Result").namespace("revive").fields()
            .requiredString("id").requiredString("user").requiredLong("count").requiredLong("watermark").endRecord();
    static final Schema TOTAL = SchemaBuilder.record("Total").namespace("revive").fields()
            .requiredLong("count").endRecord();

    /** Per task partition: the stream thread of each {@code open}, one per {@code init} of the task's processor. */
    static final Map<Integer, List<String>> OPENS = new ConcurrentHashMap<>();

    /**
     * Counts each user's records and waits {@link #WAIT_MS} of event time after each; the timer emits the record's
     * result with the user's count and the input watermark when it fired.
     */
    public static final class CountThenWait implements RowFunction {
        @Override
        public void open(RuntimeContext context) {
            OPENS.computeIfAbsent(context.getPartition(), p -> new CopyOnWriteArrayList<>())
                    .add(Thread.currentThread().getName());
        }

        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
            CommitTimeouts.hookThisStreamThread();
            StateAccessor<GenericRecord> total = context.getState("total");
            GenericRecord t = new GenericData.Record(TOTAL);
            t.put("count", count(context) + 1);
            total.set(t);
            long ts = (Long) message.getPayload().get("ts");
            output.addTimer((ts + WAIT_MS) * MS, ts * MS);
        }

        @Override
        public void onTimer(Timer timer, OutputCollector output, RuntimeContext context) {
            long index = (timer.getTriggerTimestamp() / MS - WAIT_MS - BASE_MS) / STEP_MS;
            output.addMessage(context.createMessageBuilder("results").set("id", id(index))
                    .set("user", timer.getKey().get("user").toString()).set("count", count(context))
                    .set("watermark", context.getInputWatermark("events")).build());
        }

        private static long count(RuntimeContext context) {
            return context.getState("total").get().map(t -> (Long) t.get("count")).orElse(0L);
        }
    }

    static PipelineSpec spec(String name, String input, String output) {
        return PipelineSpec.builder(name)
                .stream("events", EVENT).stream("results", RESULT)
                .computation("wait", c -> c
                        .watermarkStrategy(WatermarkStrategy.DEFAULT.withTimestampColumn("ts")
                                .withOutOfOrdernessBound(Duration.ZERO))
                        .source("events", "KafkaSource", Map.of("topics", input, "finite", true, "key_partitioned", true))
                        .groupBy("hash", ColumnType.UINT64, "farm_hash(user)").groupBy("user", ColumnType.STRING, null)
                        .state("total", TOTAL)
                        .timer("wait", Map.of("time_type", "event_time"))
                        .processingFunction(CountThenWait::new)
                        .outputStreamIds("results")
                        .sink("results_topic", "KafkaSink", List.of("results"),
                                Map.of("topic", output, "key_column", "id", "timestamp", "system")))
                .build();
    }

    /**
     * The commit that fails is the first to carry a source partition's offset up to the partition's end: the
     * aborted attempt read the whole finite partition, the replay must read its uncommitted tail again.
     */
    @Test
    @Timeout(120)
    void shouldProcessEveryRecordOnceWhenATaskIsRevivedAfterReadingItsFinitePartitionToTheEnd(KafkaCluster cluster,
            TestNames names) throws Exception {
        runAndCheck(cluster, names, CommitTimeouts.When.PARTITION_END);
    }

    /**
     * The commit that fails carries a source partition's offset past the first quarter of the partition, at least
     * {@link CommitTimeouts#MIN_REPLAY} records past its last committed one, and no partition to its end: the
     * replay reads those records again, and their timers must wait for the watermark of the replay.
     */
    @Test
    @Timeout(120)
    void shouldFireNoTimerEarlyWhenATaskIsRevivedInTheMiddleOfItsPartition(KafkaCluster cluster, TestNames names)
            throws Exception {
        runAndCheck(cluster, names, CommitTimeouts.When.PARTITION_MIDDLE);
    }

    private static void runAndCheck(KafkaCluster cluster, TestNames names, CommitTimeouts.When when) throws Exception {
        String input = names.topic("events");
        String output = names.topic("results");
        cluster.createTopic(input, PARTITIONS);
        produce(cluster, input);
        Map<TopicPartition, Long> ends = endOffsets(cluster, input);
        assertThat(ends.values()).as("the input, partition by partition").containsOnly((long) RECORDS / PARTITIONS);
        OPENS.clear();
        CommitTimeouts.arm(when, ends);
        Properties props = cluster.clientProperties();
        props.put("state.dir", Files.createTempDirectory(tempRoot, "task-revive-it").toString());
        // a partition takes several commits, also on a fast machine (at 100 ms one commit read 2,000 records, so no
        // commit ended in the middle of a partition without another partition reaching its end)
        props.put("commit.interval.ms", "10");
        props.put("consumer.max.poll.records", "50");
        long started = System.nanoTime();
        try (FlowRuntime runtime = FlowRuntime.create(spec(names.name("revive"), input, output), props)) {
            runtime.start();
            boolean completed = runtime.awaitCompletion(Duration.ofSeconds(60));
            FlowRuntime.State state = runtime.state();
            double seconds = (System.nanoTime() - started) / 1e9;
            assertThat(CommitTimeouts.hookError.get()).as("wrapping the stream thread's producer").isNull();
            assertThat(CommitTimeouts.injected.get()).as("commits failed with a TimeoutException (%s; commits: %s)",
                    when, CommitTimeouts.commits).isPositive();
            Set<String> expected = new TreeSet<>();
            for (int i = 0; i < RECORDS; i++) {
                expected.add(id(i));
            }
            ExactlyOnceChecker.Report report = ExactlyOnceChecker.check(cluster, output, expected,
                    Duration.ofSeconds(5), r -> new String(r.key(), StandardCharsets.UTF_8));
            Map<String, JsonNode> results = readCommitted(cluster, output);
            List<String> early = earlyTimers(results);
            Map<Integer, List<String>> opens = new TreeMap<>();
            OPENS.forEach((p, threads) -> opens.put(p, threads.stream()
                    .map(t -> t.substring(Math.max(0, t.lastIndexOf("StreamThread")))).toList()));
            String summary = String.format("TaskReviveIT %s: %d commit(s) failed with a TimeoutException, offsets by "
                    + "partition %s (committed before: %s), %d abort(s); processor opens by partition %s; state %s "
                    + "after %.1f s; results: %s; timers fired early: %d %s", when, CommitTimeouts.injected.get(),
                    CommitTimeouts.failedAt.get(), CommitTimeouts.committedBefore.get(), CommitTimeouts.aborted.get(),
                    opens, state, seconds, report, early.size(), early.stream().limit(5).collect(Collectors.toList()));
            System.out.println(summary);
            SoftAssertions softly = new SoftAssertions();
            softly.assertThat(CommitTimeouts.aborted.get()).as("the failed transaction was aborted; " + summary)
                    .isPositive();
            softly.assertThat(OPENS.values()).as("a task's processor initialized again on its stream thread (revived, "
                    + "not moved); " + summary).anyMatch(threads -> threads.size() >= 2
                            && threads.stream().distinct().count() < threads.size());
            softly.assertThat(completed).as("the pipeline completes; " + summary).isTrue();
            softly.assertThat(report.isExact()).as("every record has exactly one result: " + summary).isTrue();
            softly.assertThat(early.size()).as("timers that fired before the watermark passed them; " + summary).isZero();
            softly.assertAll();
        } finally {
            CommitTimeouts.disarm();
        }
    }

    static String id(long index) {
        return "e-" + index;
    }

    /**
     * Record i: user {@code u(i % USERS)}, partition {@code i % PARTITIONS} (so each user's records share a
     * partition), event time {@code BASE_MS + i * STEP_MS}; each partition is written in event-time order.
     */
    private static void produce(KafkaCluster cluster, String topic) {
        Properties p = cluster.clientProperties();
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        // one request in flight, as WaitClickJoinIT writes its input: a batch retried after NOT_LEADER_OR_FOLLOWER on
        // the new topic is never overtaken by the next ones (the broker then answered OUT_OF_ORDER_SEQUENCE_NUMBER
        // to each retry until the delivery timeout)
        p.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, "1");
        p.put(ProducerConfig.LINGER_MS_CONFIG, "5");
        AtomicReference<Exception> error = new AtomicReference<>();
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
            for (int i = 0; i < RECORDS; i++) {
                String user = user(i);
                producer.send(new ProducerRecord<>(topic, i % PARTITIONS, user, "{\"id\":\"" + id(i) + "\",\"user\":\""
                        + user + "\",\"ts\":" + (BASE_MS + i * STEP_MS) + "}"), (md, e) -> {
                            if (e != null) {
                                error.compareAndSet(null, e);
                            }
                        });
            }
            producer.flush();
        }
        assertThat(error.get()).as("input producer error").isNull();
    }

    static String user(long index) {
        return "u" + (index % USERS);
    }

    /**
     * The results whose timer fired before the watermark passed its trigger: the user's count is below the number of
     * the user's records before the trigger (all of them precede, in their partition, the first record past it).
     */
    private static List<String> earlyTimers(Map<String, JsonNode> results) {
        List<String> early = new ArrayList<>();
        for (Map.Entry<String, JsonNode> e : results.entrySet()) {
            long index = Long.parseLong(e.getKey().substring(2));
            long trigger = index * STEP_MS + WAIT_MS; // relative to BASE_MS
            long before = 0;
            for (long i = index % USERS; i < RECORDS && i * STEP_MS < trigger; i += USERS) {
                before++;
            }
            long count = e.getValue().get("count").asLong();
            if (count < before) {
                early.add(e.getKey() + " (count " + count + " < " + before + ", input watermark "
                        + (e.getValue().get("watermark").asLong() / MS - BASE_MS) / STEP_MS + " steps, trigger "
                        + trigger / (double) STEP_MS + ")");
            }
        }
        return early;
    }

    private static Map<TopicPartition, Long> endOffsets(KafkaCluster cluster, String topic) throws Exception {
        Map<TopicPartition, OffsetSpec> req = new HashMap<>();
        for (int p = 0; p < PARTITIONS; p++) {
            req.put(new TopicPartition(topic, p), OffsetSpec.latest());
        }
        Map<TopicPartition, Long> ends = new HashMap<>();
        cluster.admin().listOffsets(req).all().get().forEach((tp, info) -> ends.put(tp, info.offset()));
        return ends;
    }

    /** Every committed result up to the topic's end, by id (a duplicate's last value). */
    private static Map<String, JsonNode> readCommitted(KafkaCluster cluster, String topic) throws Exception {
        List<TopicPartition> partitions = cluster.admin().describeTopics(List.of(topic)).allTopicNames().get()
                .get(topic).partitions().stream().map(p -> new TopicPartition(topic, p.partition())).toList();
        Properties p = cluster.clientProperties();
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        ObjectMapper json = new ObjectMapper();
        Map<String, JsonNode> results = new HashMap<>();
        try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(p, new ByteArrayDeserializer(),
                new ByteArrayDeserializer())) {
            c.assign(partitions);
            c.seekToBeginning(partitions);
            Map<TopicPartition, Long> ends = c.endOffsets(partitions);
            Await.until(Duration.ofSeconds(30), "read " + topic + " read_committed up to " + ends, () -> {
                for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(200))) {
                    try {
                        results.put(new String(r.key(), StandardCharsets.UTF_8), json.readTree(r.value()));
                    } catch (IOException e) {
                        throw new UncheckedIOException(e);
                    }
                }
                return partitions.stream().allMatch(tp -> c.position(tp) >= ends.get(tp));
            });
        }
        return results;
    }

    /**
     * Makes the commit of a stream thread's transaction time out, as a transaction coordinator that does not answer
     * in {@code max.block.ms} would: from the chosen commit on, {@code commitTransaction} throws a
     * {@link TimeoutException} before reaching the producer, until the transaction is aborted.
     *
     * <p>Installed by {@link #hookThisStreamThread()} from the process function, on the stream thread: it wraps the
     * producer of the thread's {@code StreamsProducer} ({@code StreamThread.taskManager},
     * {@code TaskManager.streamsProducer()}, {@code StreamsProducer.producer}; Kafka Streams 4.4). Static: one test
     * at a time.
     */
    static final class CommitTimeouts {
        /** Which commit fails first. */
        enum When {
            /** The first to carry a source partition's offset to the partition's end. */
            PARTITION_END,
            /**
             * The first to carry a source partition's offset past the first quarter of the partition and at least
             * {@link #MIN_REPLAY} past its committed offset, with no partition to its end.
             */
            PARTITION_MIDDLE
        }

        /** Records of a partition the failed commit must carry past the committed ones (4 event seconds each). */
        static final int MIN_REPLAY = 24;

        static volatile When when;
        static volatile Map<TopicPartition, Long> ends = Map.of();
        static volatile boolean armed;
        /** Failing every commit until the transaction is aborted. */
        static volatile boolean failing;
        static final AtomicInteger injected = new AtomicInteger();
        static final AtomicInteger aborted = new AtomicInteger();
        /** The offsets of the first failed commit, and those committed before it, by partition number. */
        static final AtomicReference<Map<Integer, Long>> failedAt = new AtomicReference<>();
        static final AtomicReference<Map<Integer, Long>> committedBefore = new AtomicReference<>();
        static final AtomicReference<Throwable> hookError = new AtomicReference<>();
        /** Commits seen, successful or not (for the failure message). */
        static final AtomicInteger commits = new AtomicInteger();
        /** The offsets sent to the open transaction, and those committed. Stream thread only. */
        private static final Map<TopicPartition, Long> pending = new ConcurrentHashMap<>();
        private static final Map<TopicPartition, Long> committed = new ConcurrentHashMap<>();
        private static final ThreadLocal<Boolean> HOOKED = ThreadLocal.withInitial(() -> false);

        static void arm(When w, Map<TopicPartition, Long> partitionEnds) {
            when = w;
            ends = Map.copyOf(partitionEnds);
            injected.set(0);
            aborted.set(0);
            commits.set(0);
            failedAt.set(null);
            committedBefore.set(null);
            hookError.set(null);
            pending.clear();
            committed.clear();
            failing = false;
            armed = true;
        }

        static void disarm() {
            armed = false;
            failing = false;
        }

        /** Wraps the current stream thread's transactional producer, once per thread. */
        static void hookThisStreamThread() {
            if (HOOKED.get() || !armed) {
                return;
            }
            HOOKED.set(true);
            try {
                Thread thread = Thread.currentThread();
                Field taskManagerField = field(thread.getClass(), "taskManager");
                Object taskManager = taskManagerField.get(thread);
                Method streamsProducerOf = taskManager.getClass().getDeclaredMethod("streamsProducer");
                streamsProducerOf.setAccessible(true);
                Object streamsProducer = streamsProducerOf.invoke(taskManager);
                Field producerField = field(streamsProducer.getClass(), "producer");
                @SuppressWarnings("unchecked")
                Producer<byte[], byte[]> real = (Producer<byte[], byte[]>) producerField.get(streamsProducer);
                if (!Proxy.isProxyClass(real.getClass())) {
                    producerField.set(streamsProducer, wrap(real));
                }
            } catch (ReflectiveOperationException | RuntimeException e) {
                hookError.compareAndSet(null, e);
            }
        }

        private static Field field(Class<?> type, String name) throws NoSuchFieldException {
            for (Class<?> c = type; c != null; c = c.getSuperclass()) {
                try {
                    Field f = c.getDeclaredField(name);
                    f.setAccessible(true);
                    return f;
                } catch (NoSuchFieldException e) {
                    // look in the superclass
                }
            }
            throw new NoSuchFieldException(type.getName() + "." + name);
        }

        @SuppressWarnings("unchecked")
        private static Producer<byte[], byte[]> wrap(Producer<byte[], byte[]> real) {
            return (Producer<byte[], byte[]>) Proxy.newProxyInstance(Producer.class.getClassLoader(),
                    new Class<?>[] {Producer.class}, (proxy, method, args) -> {
                        switch (method.getName()) {
                            case "sendOffsetsToTransaction" -> ((Map<TopicPartition, OffsetAndMetadata>) args[0])
                                    .forEach((tp, o) -> pending.put(tp, o.offset()));
                            case "commitTransaction" -> {
                                commits.incrementAndGet();
                                if (failing || armed && injected.get() == 0 && due()) {
                                    if (!failing) {
                                        failedAt.set(byPartition(pending));
                                        committedBefore.set(byPartition(committed));
                                        failing = true;
                                    }
                                    injected.incrementAndGet();
                                    throw new TimeoutException("TaskReviveIT: injected timeout committing the "
                                            + "transaction with offsets " + pending);
                                }
                            }
                            case "abortTransaction" -> {
                                pending.clear();
                                if (failing) {
                                    failing = false;
                                    aborted.incrementAndGet();
                                }
                            }
                            default -> {
                            }
                        }
                        Object result;
                        try {
                            result = method.invoke(real, args);
                        } catch (InvocationTargetException e) {
                            throw e.getCause();
                        }
                        if (method.getName().equals("commitTransaction")) {
                            committed.putAll(pending);
                            pending.clear();
                        }
                        return result;
                    });
        }

        private static Map<Integer, Long> byPartition(Map<TopicPartition, Long> offsets) {
            Map<Integer, Long> numbered = new TreeMap<>();
            offsets.forEach((tp, o) -> numbered.put(tp.partition(), o));
            return numbered;
        }

        /** Whether the commit of the offsets in {@link #pending} is the one to fail. */
        private static boolean due() {
            boolean toEnd = false;
            boolean middle = false;
            for (Map.Entry<TopicPartition, Long> e : pending.entrySet()) {
                Long end = ends.get(e.getKey());
                if (end == null) {
                    continue;
                }
                long offset = e.getValue();
                long before = committed.getOrDefault(e.getKey(), 0L);
                toEnd |= offset >= end && before < end;
                middle |= offset < end && offset >= end / 4 && offset - before >= MIN_REPLAY;
            }
            return when == When.PARTITION_END ? toEnd : middle && !toEnd;
        }

        private CommitTimeouts() {
        }
    }
}
