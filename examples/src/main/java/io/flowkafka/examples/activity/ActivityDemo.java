package io.flowkafka.examples.activity;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.flowkafka.runtime.FlowRuntime;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.TreeMap;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * The README's demo: starts an in-JVM Kafka broker (or uses {@code --bootstrap-servers}),
 * produces sample user events, runs the {@link ActivityPipeline} with exactly-once, prints each
 * user's activity count as the pipeline reports it, and exits 0 once every event is counted.
 *
 * <p>Run: {@code ./demo.sh} (or {@code ./demo.sh --bootstrap-servers host:9092}).
 */
public final class ActivityDemo {
    private static final String[] USERS = {"alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi"};
    private static final String[] ACTIONS = {"view", "click", "purchase"};

    static final io.flowkafka.examples.DemoLauncher.Cli CLI = new io.flowkafka.examples.DemoLauncher.Cli(
            "java io.flowkafka.examples.activity.ActivityDemo",
            "Counts events per user with exactly-once: produces user events, runs the activity pipeline and "
            + "prints each user's count as the pipeline reports it until every event is counted.",
            "--events", "How many user events to produce", 20_000);

    private ActivityDemo() {
    }

    public static void main(String[] args) throws Exception {
        io.flowkafka.examples.DemoLauncher.main(args, CLI, ActivityDemo::run);
    }

    static int run(String bootstrap, int events) throws Exception {
        String run = Long.toString(System.currentTimeMillis(), 36);
        String pipeline = "activity-demo-" + run;
        String input = "user-events-" + run;
        String output = "user-activity-counts-" + run;
        Properties common = new Properties();
        common.put("bootstrap.servers", bootstrap);
        try (Admin admin = Admin.create(common)) {
            admin.createTopics(List.of(new NewTopic(input, 4, (short) -1))).all().get();
        }
        System.out.printf("Producing %d events for %d users to topic %s...%n", events, USERS.length, input);
        Map<String, Long> expected = new TreeMap<>();
        Properties pp = new Properties();
        pp.putAll(common);
        pp.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        pp.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        Random random = new Random(42);
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(pp)) {
            for (int i = 0; i < events; i++) {
                String user = USERS[random.nextInt(USERS.length)];
                String action = ACTIONS[random.nextInt(ACTIONS.length)];
                expected.merge(user, 1L, Long::sum);
                producer.send(new ProducerRecord<>(input, user,
                        "{\"user\":\"" + user + "\",\"action\":\"" + action + "\",\"ts\":" + (1_700_000_000_000L + i) + "}"));
            }
        }
        Path stateDir = Files.createTempDirectory("flow-kafka-demo");
        Properties props = new Properties();
        props.putAll(common);
        props.put("state.dir", stateDir.toString());
        props.put("commit.interval.ms", "200");
        System.out.printf("Running pipeline '%s' (exactly_once_v2): %s -> read -> count -> %s%n", pipeline, input, output);
        long started = System.nanoTime();
        try (FlowRuntime runtime = FlowRuntime.create(ActivityPipeline.spec(pipeline, input, output, 4), props)) {
            runtime.start();
            Map<String, Long> seen = awaitCounts(bootstrap, output, expected, Duration.ofMinutes(2));
            double seconds = (System.nanoTime() - started) / 1e9;
            System.out.println();
            System.out.println("user      events  counted");
            System.out.println("--------  ------  -------");
            boolean ok = true;
            for (Map.Entry<String, Long> e : expected.entrySet()) {
                long got = seen.getOrDefault(e.getKey(), 0L);
                ok &= got == e.getValue();
                System.out.printf("%-8s  %6d  %7d%s%n", e.getKey(), e.getValue(), got, got == e.getValue() ? "" : "  <- MISMATCH");
            }
            System.out.printf("%nCounted %d events in %.1f s; state in %s, dead letters in %s.%n", events, seconds,
                    stateDir, runtime.deadLetterTopic());
            System.out.println(ok ? "OK: every event counted exactly once." : "FAILED: counts differ.");
            return ok ? 0 : 1;
        }
    }

    private static Map<String, Long> awaitCounts(String bootstrap, String topic, Map<String, Long> expected,
            Duration bound) throws Exception {
        Properties cp = new Properties();
        cp.put("bootstrap.servers", bootstrap);
        cp.put(ConsumerConfig.GROUP_ID_CONFIG, "demo-reader-" + topic);
        cp.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        cp.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        cp.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        cp.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        ObjectMapper json = new ObjectMapper();
        Map<String, Long> latest = new TreeMap<>();
        long deadline = System.nanoTime() + bound.toNanos();
        long lastPrint = 0;
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(cp)) {
            consumer.subscribe(List.of(topic));
            while (System.nanoTime() < deadline) {
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                    JsonNode n = json.readTree(r.value());
                    latest.merge(n.get("user").asText(), n.get("count").asLong(), Math::max);
                }
                if (latest.equals(expected)) {
                    return latest;
                }
                if (System.nanoTime() - lastPrint > 1_000_000_000L) {
                    lastPrint = System.nanoTime();
                    System.out.println("  counts so far: " + latest);
                }
            }
        }
        return latest;
    }
}
