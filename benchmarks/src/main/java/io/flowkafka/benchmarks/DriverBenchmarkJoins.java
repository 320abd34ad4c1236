package io.flowkafka.benchmarks;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.flowkafka.spec.PipelineSpec;
import io.flowkafka.spec.WatermarkStrategy;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;

/**
 * The two jobs of {@link DriverBenchmark}: the wait-click join as the example's flow-kafka pipeline
 * ({@code io.flowkafka.examples.waitclick.WaitClickJoin}) and the same join as a hand-written Kafka
 * Streams Processor API processor.
 */
public final class DriverBenchmarkJoins {
    static final String IMPRESSIONS = "impressions";
    static final String CLICKS = "clicks";
    static final String RESULTS = "results";
    /** How long an impression waits for its click, in event time. */
    static final Duration WAIT = io.flowkafka.examples.waitclick.WaitClickJoin.WAIT;
    /** Flow's default out-of-orderness bound of a source's event watermark. */
    static final long OUT_OF_ORDERNESS_MS = WatermarkStrategy.DEFAULT.outOfOrdernessBound().toMillis();

    private DriverBenchmarkJoins() {
    }

    /** A click counts when it comes within the wait after the impression. */
    static boolean clickCounts(long impressionTs, long clickTs) {
        return io.flowkafka.examples.waitclick.WaitClickJoin.clickCounts(impressionTs, clickTs);
    }

    // ------------------------------------------------------------------ flow-kafka: the example itself

    /** The example's pipeline, {@code WaitClickJoin.spec(name, impressions, clicks, results, partitions, false)}. */
    static PipelineSpec flowSpec(String name, int partitions) {
        return io.flowkafka.examples.waitclick.WaitClickJoin.spec(name, IMPRESSIONS, CLICKS, RESULTS, partitions, false);
    }

    /** The example's keyed-source shape, {@code WaitClickJoin.keyedSpec(name, impressions, clicks, results, false)}. */
    static PipelineSpec keyedFlowSpec(String name) {
        return io.flowkafka.examples.waitclick.WaitClickJoin.keyedSpec(name, IMPRESSIONS, CLICKS, RESULTS, false);
    }

    // ------------------------------------------------------------------ plain Kafka Streams: a hand-written processor

    /** Tasks of this JVM that read their finite input to its end and fired every timer. */
    public static int finishedTasks() {
        return PlainJoin.FINISHED_TASKS.get();
    }

    /**
     * Source topics {@code impressions} and {@code clicks} (keyed by impression id, JSON values) ->
     * processor {@code join} (in-memory stores {@code join-state} and {@code join-timers}, without
     * changelogs, as FlowTestDriver compiles its stores) -> sink topic {@code results}.
     */
    static Topology plainTopology() {
        return plainTopology(IMPRESSIONS, CLICKS, RESULTS, false, Map.of());
    }

    /**
     * The plain join with the two-hop pipeline's shape, as a Kafka Streams user writes a join whose inputs are not
     * keyed by the join key (CountingBenchmark's {@code plain-repartition}): each input topic -> a processor that
     * parses the JSON value and keys the record by its {@code impression_id} -> a repartition topic -> the same
     * {@code join}. In-memory stores without changelogs, as {@link #plainTopology()}.
     */
    static Topology plainTwoHopTopology() {
        String impressionsHop = IMPRESSIONS + REPARTITION;
        String clicksHop = CLICKS + REPARTITION;
        Topology t = new Topology();
        for (String[] in : new String[][] {{IMPRESSIONS, impressionsHop}, {CLICKS, clicksHop}}) {
            t.addSource(in[0] + "-source", new ByteArrayDeserializer(), new ByteArrayDeserializer(), in[0]);
            t.addProcessor(in[0] + "-key", KeyByImpressionId::new, in[0] + "-source");
            t.addSink(in[0] + "-hop-sink", in[1], new ByteArraySerializer(), new ByteArraySerializer(), in[0] + "-key");
            t.addSource(in[1] + "-source", new ByteArrayDeserializer(), new ByteArrayDeserializer(), in[1]);
        }
        t.addProcessor("join", () -> new PlainJoin(impressionsHop, Map.of()), impressionsHop + "-source",
                clicksHop + "-source");
        t.addStateStore(Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore(PlainJoin.STATE), Serdes.String(),
                Serdes.ByteArray()).withLoggingDisabled(), "join");
        t.addStateStore(Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore(PlainJoin.TIMERS), Serdes.Bytes(),
                Serdes.ByteArray()).withLoggingDisabled(), "join");
        t.addSink("results-sink", RESULTS, new ByteArraySerializer(), new ByteArraySerializer(), "join");
        return t;
    }

    /** The suffix of {@link #plainTwoHopTopology()}'s internal topics. */
    static final String REPARTITION = "-repartition";

    /** Keys a JSON input record by its {@code impression_id} (the first hop of {@link #plainTwoHopTopology()}). */
    static final class KeyByImpressionId implements Processor<byte[], byte[], byte[], byte[]> {
        private static final ObjectMapper JSON = new ObjectMapper();
        private ProcessorContext<byte[], byte[]> context;

        @Override
        public void init(ProcessorContext<byte[], byte[]> context) {
            this.context = context;
        }

        @Override
        public void process(Record<byte[], byte[]> record) {
            try {
                String id = JSON.readTree(record.value()).get("impression_id").asText();
                context.forward(record.withKey(id.getBytes(StandardCharsets.UTF_8)));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }

    /**
     * The plain join over the given topics. {@code persistent}: RocksDB stores with changelogs, the
     * state store behind Kafka Streams' record cache and the timer store without it, as flow-kafka
     * compiles the join's stores; otherwise in-memory stores without changelogs (the test driver, as
     * FlowTestDriver compiles them). {@code endOffsets}: for a finite input, the end offset of every
     * input partition; a task that has read both of its partitions to their ends fires all its
     * remaining timers (empty: an endless input).
     */
    public static Topology plainTopology(String impressions, String clicks, String results, boolean persistent,
            Map<TopicPartition, Long> endOffsets) {
        Topology t = new Topology();
        t.addSource("impressions-source", new ByteArrayDeserializer(), new ByteArrayDeserializer(), impressions);
        t.addSource("clicks-source", new ByteArrayDeserializer(), new ByteArrayDeserializer(), clicks);
        t.addProcessor("join", () -> new PlainJoin(impressions, endOffsets), "impressions-source", "clicks-source");
        var state = Stores.keyValueStoreBuilder(persistent ? Stores.persistentKeyValueStore(PlainJoin.STATE)
                : Stores.inMemoryKeyValueStore(PlainJoin.STATE), Serdes.String(), Serdes.ByteArray());
        var timers = Stores.keyValueStoreBuilder(persistent ? Stores.persistentKeyValueStore(PlainJoin.TIMERS)
                : Stores.inMemoryKeyValueStore(PlainJoin.TIMERS), Serdes.Bytes(), Serdes.ByteArray());
        t.addStateStore(persistent ? state.withCachingEnabled() : state.withLoggingDisabled(), "join");
        t.addStateStore(persistent ? timers : timers.withLoggingDisabled(), "join");
        t.addSink("results-sink", results, new ByteArraySerializer(), new ByteArraySerializer(), "join");
        return t;
    }

    /**
     * The wait-click join in the Processor API, {@code WaitClickJoin}'s rules: per impression id a
     * state (user, impression time, click time, joined) in a key-value store; "timers" are rows
     * {@code (trigger ms big-endian, impression id)} of a second store, fired in trigger order by a
     * wall-clock punctuator every 50 ms (Flow's {@code flow.timers.punctuation.interval.ms}) once
     * the event watermark, min over the two inputs of (largest payload {@code ts} seen - 1 min),
     * exceeds the trigger. The per-input maxima live in fields, not in a store: after a restart the
     * watermark starts low again, so timers fire late, never early. With end offsets (a finite
     * input), a task that read both of its partitions to their ends fires every remaining timer and
     * counts itself in {@link #FINISHED_TASKS}.
     */
    static final class PlainJoin implements Processor<byte[], byte[], byte[], byte[]> {
        /** Tasks of this JVM that read their finite input to its end and fired every timer. */
        static final java.util.concurrent.atomic.AtomicInteger FINISHED_TASKS =
                new java.util.concurrent.atomic.AtomicInteger();
        static final String STATE = "join-state";
        static final String TIMERS = "join-timers";
        private static final ObjectMapper JSON = new ObjectMapper();
        private static final byte[] EMPTY = new byte[0];
        private static final byte HAS_IMPRESSION = 1;
        private static final byte HAS_CLICK = 2;
        private static final byte JOINED = 4;
        private ProcessorContext<byte[], byte[]> context;
        private KeyValueStore<String, byte[]> state;
        private KeyValueStore<Bytes, byte[]> timers;
        private final String impressionsTopic;
        private final Map<TopicPartition, Long> endOffsets;
        private long maxImpressionTs = Long.MIN_VALUE;
        private long maxClickTs = Long.MIN_VALUE;
        /** Input partitions of this task still to be read to their end offsets; null for an endless input. */
        private java.util.Set<TopicPartition> unread;
        private boolean finished;

        PlainJoin(String impressionsTopic, Map<TopicPartition, Long> endOffsets) {
            this.impressionsTopic = impressionsTopic;
            this.endOffsets = endOffsets;
        }

        /** A join state: what has been seen of one impression id so far. */
        private static final class JoinState {
            byte flags;
            long impressionTs;
            long clickTs;
            String user = "";

            byte[] encode() {
                byte[] u = user.getBytes(StandardCharsets.UTF_8);
                return ByteBuffer.allocate(17 + u.length).put(flags).putLong(impressionTs).putLong(clickTs).put(u)
                        .array();
            }

            static JoinState decode(byte[] bytes) {
                ByteBuffer b = ByteBuffer.wrap(bytes);
                JoinState s = new JoinState();
                s.flags = b.get();
                s.impressionTs = b.getLong();
                s.clickTs = b.getLong();
                s.user = new String(bytes, 17, bytes.length - 17, StandardCharsets.UTF_8);
                return s;
            }

            boolean has(byte flag) {
                return (flags & flag) != 0;
            }
        }

        @Override
        public void init(ProcessorContext<byte[], byte[]> context) {
            this.context = context;
            this.state = context.getStateStore(STATE);
            this.timers = context.getStateStore(TIMERS);
            if (!endOffsets.isEmpty()) {
                unread = new java.util.HashSet<>();
                endOffsets.forEach((tp, end) -> {
                    if (tp.partition() == context.taskId().partition() && end > 0) {
                        unread.add(tp);
                    }
                });
            }
            context.schedule(Duration.ofMillis(50), PunctuationType.WALL_CLOCK_TIME, now -> fireDueTimers());
        }

        @Override
        public void process(Record<byte[], byte[]> record) {
            JsonNode node;
            try {
                node = JSON.readTree(record.value());
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            String id = node.get("impression_id").asText();
            long ts = node.get("ts").asLong();
            var meta = context.recordMetadata().orElseThrow();
            boolean impression = meta.topic().equals(impressionsTopic);
            if (unread != null) {
                Long end = endOffsets.get(new TopicPartition(meta.topic(), meta.partition()));
                if (end != null && meta.offset() >= end - 1) {
                    unread.remove(new TopicPartition(meta.topic(), meta.partition()));
                }
            }
            if (impression) {
                maxImpressionTs = Math.max(maxImpressionTs, ts);
            } else {
                maxClickTs = Math.max(maxClickTs, ts);
            }
            byte[] stored = state.get(id);
            JoinState s = stored == null ? new JoinState() : JoinState.decode(stored);
            if (impression) {
                if (s.has(HAS_IMPRESSION)) {
                    return; // a duplicate impression: the first one already waits
                }
                s.user = node.get("user").asText();
                s.impressionTs = ts;
                s.flags |= HAS_IMPRESSION;
                if (s.has(HAS_CLICK) && clickCounts(ts, s.clickTs)) { // the click was processed first
                    emit(id, s, "joined");
                    s.flags |= JOINED;
                }
                addTimer(ts + WAIT.toMillis(), id);
            } else if (s.has(HAS_IMPRESSION)) {
                if (!s.has(JOINED) && clickCounts(s.impressionTs, ts)) {
                    s.clickTs = ts;
                    s.flags |= HAS_CLICK;
                    emit(id, s, "joined");
                    s.flags |= JOINED;
                }
            } else if (!s.has(HAS_CLICK)) {
                s.clickTs = ts; // a click ahead of its impression: wait for it, then forget it
                s.flags |= HAS_CLICK;
                addTimer(ts + WAIT.toMillis(), id);
            }
            state.put(id, s.encode());
        }

        private void addTimer(long triggerMs, String id) {
            byte[] i = id.getBytes(StandardCharsets.UTF_8);
            timers.put(Bytes.wrap(ByteBuffer.allocate(8 + i.length).putLong(triggerMs).put(i).array()), EMPTY);
        }

        /** Fires, in trigger order, every timer whose trigger is below the event watermark. */
        private void fireDueTimers() {
            if (finished) {
                return;
            }
            boolean allRead = unread != null && unread.isEmpty();
            long low = Math.min(maxImpressionTs, maxClickTs);
            if (low == Long.MIN_VALUE && !allRead) {
                return;
            }
            long watermark = allRead ? Long.MAX_VALUE : low - OUT_OF_ORDERNESS_MS;
            // keys (trigger, id) with trigger < watermark sort below the 8 bytes of the watermark alone
            List<Bytes> due = new ArrayList<>();
            try (KeyValueIterator<Bytes, byte[]> it = timers.range(Bytes.wrap(new byte[8]),
                    Bytes.wrap(ByteBuffer.allocate(8).putLong(watermark).array()))) {
                while (it.hasNext()) {
                    KeyValue<Bytes, byte[]> kv = it.next();
                    due.add(kv.key);
                }
            }
            for (Bytes key : due) {
                ByteBuffer b = ByteBuffer.wrap(key.get());
                long trigger = b.getLong();
                String id = new String(key.get(), 8, key.get().length - 8, StandardCharsets.UTF_8);
                timers.delete(key);
                onTimer(id, trigger);
            }
            if (allRead) {
                finished = true;
                FINISHED_TASKS.incrementAndGet();
            }
        }

        private void onTimer(String id, long triggerMs) {
            byte[] stored = state.get(id);
            if (stored == null) {
                return;
            }
            JoinState s = JoinState.decode(stored);
            if (!s.has(HAS_IMPRESSION)) {
                state.delete(id); // an orphan click's wait is over
            } else if (triggerMs == s.impressionTs + WAIT.toMillis()) {
                if (!s.has(JOINED)) {
                    emit(id, s, "no_click");
                }
                state.delete(id);
            }
            // else: the orphan-click timer of an impression that arrived since; its own timer decides
        }

        private void emit(String id, JoinState s, String result) {
            ObjectNode out = JSON.createObjectNode();
            out.put("impression_id", id);
            out.put("user", s.user);
            out.put("result", result);
            out.put("impression_ts", s.impressionTs);
            if ("joined".equals(result)) {
                out.put("click_ts", s.clickTs);
            } else {
                out.putNull("click_ts");
            }
            try {
                context.forward(new Record<>(id.getBytes(StandardCharsets.UTF_8), JSON.writeValueAsBytes(out),
                        context.currentSystemTimeMs()));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }
}
