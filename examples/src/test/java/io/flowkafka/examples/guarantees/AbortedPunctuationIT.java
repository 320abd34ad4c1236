package io.flowkafka.examples.guarantees;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.flowkafka.runtime.FlowRuntime;
import io.flowkafka.testing.Await;
import io.flowkafka.testing.CommitFaults;
import io.flowkafka.testing.KafkaCluster;
import io.flowkafka.testing.TestNames;
import io.flowkafka.testing.WithKafka;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicBoolean;
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
 * A task that only punctuated in a transaction that aborted replays from its last commit too. Kafka Streams marks
 * corrupted, after a commit that timed out under exactly_once_v2, only the tasks that had consumed offsets in it; when
 * the retried commit fails as well and the transaction aborts, a task that only punctuated (a key visitor's partition
 * without input, a partition whose timers fire) would keep in its stores what the aborted transaction wrote: its
 * visits' outputs gone, its coverage saying they were made. The runtime's producer turns a timed-out commit into a
 * lost thread, so every task of the thread is restored. Reference 000, key visitor guarantees: "Each key per period
 * | You get exactly one visit per key (no duplicates or omissions)".
 *
 * <p>The pipeline ({@link VisitPipeline}): 100 keys over 4 partitions, then input for one key only, so three
 * partitions only punctuate; five commits fail until aborted ({@link CommitFaults#onDemand}). Every key of those
 * partitions must be visited once in every pass.
 */
@WithKafka
class AbortedPunctuationIT {
    @TempDir(cleanup = CleanupMode.ON_SUCCESS)
    static Path tempRoot;

    static final int KEYS = 100;
    static final int FAULTS = 5;

    @Test
    @Timeout(240)
    void shouldVisitEveryKeyOncePerPassWhenATransactionOfPunctuationsAborts(KafkaCluster cluster, TestNames names)
            throws Exception {
        String input = names.topic("input");
        String output = names.topic("output");
        cluster.createTopic(input, 1);
        cluster.createTopic(output, 1);
        CommitFaults faults = CommitFaults.onDemand(true);
        Properties props = cluster.clientProperties();
        props.put("state.dir", Files.createTempDirectory(tempRoot, "aborted-punctuation").toString());
        props.put("commit.interval.ms", "100");
        // watermarks go to every partition of an internal stream: rarely, so the partitions without input consume
        // nothing between most commits, as a partition of a quiet source does
        props.put("flow.watermark.interval.ms", "60000");
        props.put("flow.watermark.heartbeat.ms", "60000");
        faults.install(props);
        Visits visits = new Visits();
        AtomicBoolean hot = new AtomicBoolean(true);
        try (KafkaProducer<String, String> producer = producer(cluster);
                KafkaConsumer<byte[], byte[]> consumer = cluster.committedConsumer(output);
                FlowRuntime runtime = FlowRuntime.create(VisitPipeline.spec(names.name("ap"), input, output, "1s"),
                        props)) {
            for (int i = 0; i < KEYS; i++) {
                put(producer, input, "k" + i);
            }
            runtime.start();
            Await.until(Duration.ofMinutes(2), "every key visited once", () -> {
                visits.poll(consumer);
                return visits.partitionOf.size() == KEYS;
            });
            // from now on only k0 gets input: its partition's task has offsets in every commit, the others none
            Thread traffic = new Thread(() -> {
                while (hot.get()) {
                    put(producer, input, "k0");
                    try {
                        Thread.sleep(20); // pacing of the traffic, not a wait for a condition
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            }, "k0-traffic");
            traffic.start();
            try {
                for (int f = 1; f <= FAULTS; f++) {
                    Map<Integer, Long> before = visits.maxPass();
                    Await.until(Duration.ofMinutes(1), "a pass on every partition before fault " + f, () -> {
                        visits.poll(consumer);
                        return visits.advanced(before, 1);
                    });
                    faults.trigger();
                    int aborted = f;
                    Await.until(Duration.ofMinutes(1), "fault " + f + " aborted its transaction", () -> {
                        visits.poll(consumer);
                        return faults.aborted() >= aborted;
                    });
                }
                Map<Integer, Long> atLastFault = visits.maxPass();
                Await.until(Duration.ofMinutes(1), "two passes on every partition after the last fault", () -> {
                    visits.poll(consumer);
                    return visits.advanced(atLastFault, 2);
                });
            } finally {
                hot.set(false);
                traffic.join();
            }
            int hotPartition = visits.partitionOf.get("k0");
            List<String> problems = new ArrayList<>();
            int checked = 0;
            for (Map.Entry<Integer, TreeMap<Long, Map<String, Integer>>> p : visits.byPartition.entrySet()) {
                if (p.getKey() == hotPartition) {
                    continue;
                }
                TreeSet<String> keys = new TreeSet<>();
                visits.partitionOf.forEach((k, part) -> {
                    if (part.equals(p.getKey())) {
                        keys.add(k);
                    }
                });
                // the first pass may have begun before the keys were read; the last may still run
                TreeMap<Long, Map<String, Integer>> passes = p.getValue();
                for (long pass = passes.firstKey() + 1; pass < passes.lastKey(); pass++) {
                    Map<String, Integer> counts = passes.getOrDefault(pass, Map.of());
                    for (String key : keys) {
                        checked++;
                        int n = counts.getOrDefault(key, 0);
                        if (n != 1) {
                            problems.add("partition " + p.getKey() + " pass " + pass + ": " + key + " visited " + n
                                    + " times");
                        }
                    }
                }
            }
            String summary = String.format("AbortedPunctuationIT: %d commits failed, %d transactions aborted; %d "
                    + "(key, pass) visits of partitions without input checked; problems %s", faults.injected(),
                    faults.aborted(), checked, problems.subList(0, Math.min(10, problems.size())));
            System.out.println(summary);
            assertThat(faults.aborted()).as(summary).isGreaterThanOrEqualTo(FAULTS);
            assertThat(checked).as(summary).isGreaterThan(0);
            assertThat(problems).as(summary).isEmpty();
        }
    }

    /** The visit records read read_committed: partition -> pass -> key -> visits. */
    private static final class Visits {
        final Map<Integer, TreeMap<Long, Map<String, Integer>>> byPartition = new TreeMap<>();
        final Map<String, Integer> partitionOf = new HashMap<>();
        private final ObjectMapper json = new ObjectMapper();

        void poll(KafkaConsumer<byte[], byte[]> consumer) {
            for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                JsonNode n;
                try {
                    n = json.readTree(r.value());
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
                int partition = n.get("partition").asInt();
                String key = n.get("key").asText();
                byPartition.computeIfAbsent(partition, x -> new TreeMap<>())
                        .computeIfAbsent(n.get("pass").asLong(), x -> new HashMap<>()).merge(key, 1, Integer::sum);
                partitionOf.put(key, partition);
            }
        }

        Map<Integer, Long> maxPass() {
            Map<Integer, Long> max = new HashMap<>();
            byPartition.forEach((p, passes) -> max.put(p, passes.lastKey()));
            return max;
        }

        boolean advanced(Map<Integer, Long> from, int passes) {
            Map<Integer, Long> now = maxPass();
            return now.size() == 4 && now.entrySet().stream()
                    .allMatch(e -> e.getValue() >= from.getOrDefault(e.getKey(), 0L) + passes);
        }
    }

    private static KafkaProducer<String, String> producer(KafkaCluster cluster) {
        Properties p = cluster.clientProperties();
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        return new KafkaProducer<>(p);
    }

    private static void put(KafkaProducer<String, String> producer, String topic, String key) {
        producer.send(new ProducerRecord<>(topic, key, "{\"key\":\"" + key + "\",\"cmd\":\"put\"}"));
    }

}
