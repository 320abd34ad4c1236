package io.flowkafka.examples.guarantees;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowkafka.testing.Await;
import io.flowkafka.testing.ChildJvm;
import io.flowkafka.testing.KafkaCluster;
import io.flowkafka.testing.TestNames;
import io.flowkafka.testing.WithKafka;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.Set;
import org.apache.kafka.clients.consumer.ConsumerConfig;
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
 * {@code system_time} and {@code real_time} timers under SIGKILL, on a real broker (the crash tests of
 * {@code RandomCrashIT} use event-time timers). watermarks-and-timers.md: a firing's effects and the timer's deletion
 * commit in one transaction, for every time type. Two instances set two timers per input over 20k inputs; one is
 * killed while timers are pending and firing, and restarted. Read read_committed, each timer fired exactly once.
 */
@WithKafka
class TimersCrashIT {
    @TempDir(cleanup = CleanupMode.ON_SUCCESS)
    static Path tempRoot;

    private static final int MESSAGES = 20_000;
    private static final int USERS = 200;
    private static final long SEED = Long.getLong("flow.it.seed", 20261207L);

    @Test
    @Timeout(600)
    void shouldFireEverySystemAndRealTimeTimerOnceWhenAnInstanceIsKilled(KafkaCluster cluster, TestNames names)
            throws Exception {
        String pipeline = names.name("timers");
        String input = names.topic("input");
        String output = names.topic("output");
        cluster.createTopic(input, 4);
        Path state = Files.createTempDirectory(tempRoot, "timers");
        Set<String> expected = new HashSet<>();
        for (int i = 0; i < MESSAGES; i++) {
            expected.add("sys-m" + i);
            expected.add("wall-m" + i);
        }
        long killAt = 5_000 + new Random(SEED).nextInt(20_000);
        Map<String, Integer> seen = new HashMap<>();
        try (ChildJvm a = instance(cluster, pipeline, input, output, state, "a");
                ChildJvm b = instance(cluster, pipeline, input, output, state, "b");
                KafkaConsumer<byte[], byte[]> reader = reader(cluster, pipeline, output)) {
            produce(cluster, input);
            Await.until(Duration.ofMinutes(3), killAt + " timers fired", () -> read(reader, seen) >= killAt);
            a.kill(); // SIGKILL: its pending timers move with its tasks; its open transaction's firings abort
            assertThat(a.isAlive()).isFalse();
            int firedAtKill = read(reader, seen);
            System.out.println("TimersCrashIT: killed with " + firedAtKill + " of " + expected.size() + " timers fired");
            assertThat(firedAtKill).as("timers still pending at the kill").isLessThan(expected.size());
            try (ChildJvm a2 = instance(cluster, pipeline, input, output, state, "a2")) {
                Await.until(Duration.ofMinutes(3), "all " + expected.size() + " timers fired",
                        () -> read(reader, seen) >= expected.size());
                reader.poll(Duration.ofSeconds(2)).forEach(r -> seen.merge(new String(r.key(),
                        StandardCharsets.UTF_8), 1, Integer::sum)); // a second firing after the last would be here
            }
        }
        assertThat(seen.keySet()).as("timers fired").isEqualTo(expected);
        assertThat(seen.entrySet().stream().filter(e -> e.getValue() > 1).toList()).as("timers fired more than once")
                .isEmpty();
    }

    private static ChildJvm instance(KafkaCluster cluster, String pipeline, String input, String output, Path state,
            String name) {
        return ChildJvm.builder(TimersMain.class).maxHeap("384m")
                .args(cluster.bootstrapServers(), pipeline, input, output, state.resolve(name).toString())
                .logFile(state.resolve(name + ".log"))
                .startAndAwaitOutputLine(l -> l.contains("RUNNING"), Duration.ofMinutes(2));
    }

    private static void produce(KafkaCluster cluster, String input) {
        Properties p = cluster.clientProperties();
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        Random r = new Random(SEED + 1);
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
            for (int i = 0; i < MESSAGES; i++) {
                String user = "u" + r.nextInt(USERS);
                producer.send(new ProducerRecord<>(input, user, "{\"id\":\"m" + i + "\",\"user\":\"" + user + "\"}"));
            }
        }
    }

    private static KafkaConsumer<byte[], byte[]> reader(KafkaCluster cluster, String pipeline, String output) {
        Properties p = cluster.clientProperties();
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.GROUP_ID_CONFIG, pipeline + "-verify");
        p.put(ConsumerConfig.METADATA_MAX_AGE_CONFIG, "500"); // finds the sink topic once the pipeline created it
        KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer());
        c.subscribe(List.of(output));
        return c;
    }

    /** Reads what is there, counting each timer's firings; returns the number of distinct timers fired. */
    private static int read(KafkaConsumer<byte[], byte[]> reader, Map<String, Integer> seen) {
        reader.poll(Duration.ofMillis(200)).forEach(r -> seen.merge(new String(r.key(), StandardCharsets.UTF_8), 1,
                Integer::sum));
        return seen.size();
    }
}
