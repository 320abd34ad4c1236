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
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
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
 * The service-log source on a real broker (reference 002: "The service log is an infinite source that cycles
 * through the table. Exactly-once guarantees apply within each cycle."): 6000 rows written by the pipeline's own
 * manager, read back by two tasks cycle after cycle, on two instances in child JVMs; instance a is killed (SIGKILL)
 * mid-cycle and restarted. Every row goes to a sink topic in its call's transaction, read read_committed: per task
 * and cycle, no row twice, and every complete cycle after the table was loaded has every row of the task's range.
 */
@WithKafka
class ServiceLogIT {
    /** State directories of this class's runtimes; JUnit deletes it after the class if it passed. */
    @TempDir(cleanup = CleanupMode.ON_SUCCESS)
    static Path tempRoot;

    private static final int KEYS = 6000;

    @Test
    @Timeout(600)
    void shouldEmitEveryRowExactlyOncePerCycleThroughAKill(KafkaCluster cluster, TestNames names) throws Exception {
        String pipeline = names.name("servicelog");
        String input = names.topic("profiles");
        String output = names.topic("logged");
        Path state = Files.createTempDirectory(tempRoot, "flow-sl-it");
        cluster.createTopic(input, 2);
        long killedAt;
        try (CycleLog log = new CycleLog(cluster, output)) {
            ChildJvm a = instance(cluster, pipeline, input, output, state.resolve("a"));
            ChildJvm b = instance(cluster, pipeline, input, output, state.resolve("b"));
            List<ChildJvm> running = new ArrayList<>(List.of(a, b));
            try {
                log.start();
                produce(cluster, input);
                Await.until(Duration.ofMinutes(4), "every row read", () -> log.keysSeen() == KEYS);
                Await.until(Duration.ofMinutes(2), "two full cycles in both tasks", () -> log.fullCycles(2));
                a.kill(); // mid-cycle: at 3000 rows/s a task's 3000 rows take a second, the pause between cycles none
                killedAt = System.currentTimeMillis();
                running.add(instance(cluster, pipeline, input, output, state.resolve("a2")));
                Await.until(Duration.ofMinutes(3), "three cycles begun after the kill in both tasks",
                        () -> log.cyclesAfter(killedAt) >= 3);
            } finally {
                for (ChildJvm j : running) {
                    j.close();
                }
            }
            log.drain();
            int checked = 0;
            for (int p = 0; p < 2; p++) {
                Map<Long, Map<String, Integer>> cycles = log.cycles(p);
                Set<String> owned = new HashSet<>();
                cycles.values().forEach(c -> owned.addAll(c.keySet()));
                boolean loaded = false;
                long last = ((TreeMap<Long, Map<String, Integer>>) cycles).lastKey(); // possibly incomplete
                // the cycle under way when instance a was killed: it resumed, on a or on a2, and is complete
                long underWay = ((TreeMap<Long, Map<String, Integer>>) cycles).floorKey(killedAt * 1_000_000L);
                assertThat(underWay).as("task %d: a cycle under way at the kill, not the last", p).isLessThan(last);
                assertThat(cycles.get(underWay).keySet()).as("task %d: the cycle under way at the kill", p)
                        .containsExactlyInAnyOrderElementsOf(owned);
                for (Map.Entry<Long, Map<String, Integer>> e : cycles.entrySet()) {
                    assertThat(e.getValue().values()).as("task %d, cycle started at %d: no row twice", p, e.getKey())
                            .allMatch(n -> n == 1);
                    if (loaded && e.getKey() != last) {
                        assertThat(e.getValue().keySet()).as("task %d, cycle started at %d: every row", p, e.getKey())
                                .containsExactlyInAnyOrderElementsOf(owned);
                        checked++;
                    }
                    loaded |= e.getValue().size() == owned.size();
                }
            }
            assertThat(log.keysSeen()).isEqualTo(KEYS);
            assertThat(checked).as("complete cycles checked in full").isGreaterThanOrEqualTo(4);
            System.out.printf("ServiceLogIT: %d complete cycles checked in full%n", checked);
        }
    }

    private static void produce(KafkaCluster cluster, String topic) {
        Properties p = cluster.clientProperties();
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
            for (int i = 0; i < KEYS; i++) {
                String key = "k" + i;
                producer.send(new ProducerRecord<>(topic, key, "{\"key\":\"" + key + "\",\"value\":\"v" + i + "\"}"));
            }
        }
    }

    private static ChildJvm instance(KafkaCluster cluster, String pipeline, String input, String output, Path state)
            throws Exception {
        return ChildJvm.builder(ServiceLogMain.class).maxHeap("384m")
                .args(cluster.bootstrapServers(), pipeline, input, output, state.toString())
                .startAndAwaitOutputLine(l -> l.contains("RUNNING"), Duration.ofMinutes(2));
    }

    /** The sink topic read read_committed: per task, per cycle (its start), how often each key came. */
    private static final class CycleLog implements AutoCloseable {
        private final KafkaCluster cluster;
        private final String topic;
        private final ObjectMapper json = new ObjectMapper();
        private final AtomicBoolean stop = new AtomicBoolean();
        private final List<Map<Long, Map<String, Integer>>> byTask = List.of(new ConcurrentSkipListMap<>(),
                new ConcurrentSkipListMap<>());
        private final Set<String> keys = ConcurrentHashMap.newKeySet();
        private final Map<TopicPartition, Long> positions = new ConcurrentHashMap<>();
        private volatile RuntimeException failure;
        private Thread thread;

        CycleLog(KafkaCluster cluster, String topic) {
            this.cluster = cluster;
            this.topic = topic;
        }

        void start() {
            thread = new Thread(this::run, "cycle-log");
            thread.setDaemon(true);
            thread.start();
        }

        private void run() {
            try (KafkaConsumer<byte[], byte[]> c = cluster.committedConsumer(topic)) {
                while (!stop.get()) {
                    for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(200))) {
                        JsonNode n = json.readTree(r.value());
                        String key = n.get("key").asText();
                        byTask.get(n.get("partition").asInt()).computeIfAbsent(n.get("cycle_start").asLong(),
                                k -> new ConcurrentHashMap<>()).merge(key, 1, Integer::sum);
                        keys.add(key);
                    }
                    for (TopicPartition tp : c.assignment()) {
                        positions.put(tp, c.position(tp));
                    }
                }
            } catch (Exception e) {
                failure = new IllegalStateException("the cycle log failed", e);
            }
        }

        private void check() {
            if (failure != null) {
                throw failure;
            }
        }

        int keysSeen() {
            check();
            return keys.size();
        }

        /** Whether both tasks have {@code n} cycles holding every key they own (as far as seen). */
        boolean fullCycles(int n) {
            check();
            for (Map<Long, Map<String, Integer>> cycles : byTask) {
                Set<String> owned = new HashSet<>();
                cycles.values().forEach(c -> owned.addAll(c.keySet()));
                if (owned.isEmpty() || cycles.values().stream().filter(c -> c.size() == owned.size()).count() < n) {
                    return false;
                }
            }
            return true;
        }

        /** The fewest cycles begun after {@code ms} (nanosecond cycle starts) over the two tasks. */
        long cyclesAfter(long ms) {
            check();
            return byTask.stream().mapToLong(c -> c.keySet().stream().filter(s -> s / 1_000_000L > ms).count()).min()
                    .orElse(0);
        }

        Map<Long, Map<String, Integer>> cycles(int task) {
            return new TreeMap<>(byTask.get(task));
        }

        /** Reads on until the log read everything committed to the topic (the instances are stopped). */
        void drain() throws Exception {
            Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
            cluster.admin().describeTopics(List.of(topic)).allTopicNames().get(30, TimeUnit.SECONDS).get(topic)
                    .partitions().forEach(p -> latest.put(new TopicPartition(topic, p.partition()),
                            OffsetSpec.latest()));
            Map<TopicPartition, Long> ends = new HashMap<>();
            cluster.admin().listOffsets(latest, new ListOffsetsOptions(IsolationLevel.READ_COMMITTED)).all()
                    .get(30, TimeUnit.SECONDS).forEach((tp, info) -> ends.put(tp, info.offset()));
            Await.until(Duration.ofMinutes(1), "the sink topic read to its committed end " + ends, () -> {
                check();
                return ends.entrySet().stream().allMatch(e -> positions.getOrDefault(e.getKey(), 0L) >= e.getValue());
            });
            check();
        }

        @Override
        public void close() throws InterruptedException {
            stop.set(true);
            if (thread != null) {
                thread.join(10_000);
            }
        }
    }
}
