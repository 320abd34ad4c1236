package io.flowkafka.examples.waitclick;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.flowkafka.runtime.FlowRuntime;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
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
 * The README's demo: Flow's wait-click join on an in-JVM Kafka broker (or {@code
 * --bootstrap-servers}). Produces seeded impressions and clicks, runs the pipeline with
 * exactly-once over finite sources until it completes, and checks every impression got exactly
 * one result, the one a reference computation expects.
 */
public final class WaitClickDemo {
    static final io.flowkafka.examples.DemoLauncher.Cli CLI = new io.flowkafka.examples.DemoLauncher.Cli("./demo.sh",
            "Runs Flow's wait-click join with exactly-once over finite sources: produces impressions and their clicks "
            + "(about 70% of impressions get one), joins each impression with its click within 30 minutes of event "
            + "time, waits until the pipeline completes and checks every result against a reference computation.",
            "--impressions", "How many impressions to produce", 20_000);

    private WaitClickDemo() {
    }

    public static void main(String[] args) throws Exception {
        io.flowkafka.examples.DemoLauncher.main(args, CLI, WaitClickDemo::run);
    }

    static int run(String bootstrap, int n) throws Exception {
        String run = Long.toString(System.currentTimeMillis(), 36);
        String pipeline = "wait-click-demo-" + run;
        String impressionsTopic = "impressions-" + run;
        String clicksTopic = "clicks-" + run;
        String resultsTopic = "join-results-" + run;
        Properties common = new Properties();
        common.put("bootstrap.servers", bootstrap);
        try (Admin admin = Admin.create(common)) {
            admin.createTopics(List.of(new NewTopic(impressionsTopic, 4, (short) -1),
                    new NewTopic(clicksTopic, 4, (short) -1))).all().get();
        }
        WaitClickData data = WaitClickData.generate(n, 0.7, 1_767_225_600_000L, 200, 42);
        long minutes = n * 200L / 60_000;
        System.out.printf("Producing %d impressions and %d clicks (event time spans %d minute%s)...%n", n,
                data.clicks().size(), minutes, minutes == 1 ? "" : "s");
        Properties pp = new Properties();
        pp.putAll(common);
        pp.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        pp.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(pp)) {
            data.impressions().entrySet().stream().sorted(Map.Entry.comparingByValue()).forEach(e -> producer.send(
                    new ProducerRecord<>(impressionsTopic, e.getKey(), WaitClickData.impressionJson(e.getKey(), e.getValue()))));
            data.clicks().forEach(c -> producer.send(
                    new ProducerRecord<>(clicksTopic, c.getKey(), WaitClickData.clickJson(c.getKey(), c.getValue()))));
        }
        Path stateDir = Files.createTempDirectory("flow-kafka-demo");
        Properties props = new Properties();
        props.putAll(common);
        props.put("state.dir", stateDir.toString());
        props.put("flow.http.port", System.getProperty("flow.demo.http.port", "0")); // the status page
        System.out.printf("Running pipeline '%s' (exactly_once_v2, finite sources): impressions + clicks -> join "
                + "(30 min event-time timers) -> %s%n", pipeline, resultsTopic);
        long started = System.nanoTime();
        try (FlowRuntime runtime = FlowRuntime.create(
                WaitClickJoin.spec(pipeline, impressionsTopic, clicksTopic, resultsTopic, 4, true), props)) {
            runtime.start();
            runtime.httpAddress().ifPresent(a -> System.out.printf("Status page: http://%s:%d/ (while it runs)%n",
                    a.getHostString(), a.getPort()));
            long inputs = n + data.clicks().size();
            long deadline = System.nanoTime() + Duration.ofMinutes(3).toNanos();
            boolean completed = false;
            try (Admin progressAdmin = Admin.create(common)) {
                while (!completed && System.nanoTime() < deadline) {
                    completed = runtime.awaitCompletion(Duration.ofSeconds(2));
                    long read = committedInput(progressAdmin, runtime.applicationId(), impressionsTopic, clicksTopic);
                    System.out.printf("  %-9s %3d%% of the input committed (%,d of %,d records)%n", runtime.state(),
                            100 * read / Math.max(1, inputs), read, inputs);
                }
            }
            if (!completed) {
                System.out.println("FAILED: the pipeline did not complete (state " + runtime.state() + ")");
                runtime.status().forEach(e -> System.out.println("  " + e.severity() + " " + e.computation() + "/"
                        + e.partition() + " " + e.path() + ": " + e.message()));
                return 1;
            }
            double seconds = (System.nanoTime() - started) / 1e9;
            Map<String, String> results = readResults(bootstrap, resultsTopic, n);
            Map<String, String> expected = data.expectedResults();
            long joined = results.values().stream().filter("joined"::equals).count();
            long mismatches = expected.entrySet().stream()
                    .filter(e -> !e.getValue().equals(results.get(e.getKey()))).count();
            System.out.println();
            System.out.printf("completed in %.1f s%n", seconds);
            System.out.printf("impressions        %7d%n", n);
            System.out.printf("results            %7d (one per impression: %s)%n", results.size(), results.size() == n);
            System.out.printf("  joined           %7d%n", joined);
            System.out.printf("  no_click         %7d%n", results.size() - joined);
            System.out.printf("differ from reference %4d%n", mismatches);
            boolean ok = results.size() == n && mismatches == 0 && !duplicates;
            System.out.println(ok ? "OK: every impression got exactly one result, the expected one."
                    : "FAILED: results differ from the reference.");
            return ok ? 0 : 1;
        }
    }

    private static boolean duplicates;

    /** The source records the pipeline has committed so far: its progress, as its consumer group shows it. */
    private static long committedInput(Admin admin, String group, String... topics) {
        try {
            List<String> wanted = List.of(topics);
            return admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get().entrySet().stream()
                    .filter(e -> e.getValue() != null && wanted.contains(e.getKey().topic()))
                    .mapToLong(e -> e.getValue().offset()).sum();
        } catch (Exception e) {
            return 0; // progress is informative only
        }
    }

    private static Map<String, String> readResults(String bootstrap, String topic, int expected) throws Exception {
        Properties cp = new Properties();
        cp.put("bootstrap.servers", bootstrap);
        cp.put(ConsumerConfig.GROUP_ID_CONFIG, "demo-reader-" + topic);
        cp.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        cp.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        cp.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        cp.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        ObjectMapper json = new ObjectMapper();
        Map<String, String> results = new TreeMap<>();
        long deadline = System.nanoTime() + Duration.ofMinutes(1).toNanos();
        int read = 0;
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(cp)) {
            consumer.subscribe(List.of(topic));
            while (System.nanoTime() < deadline) {
                var records = consumer.poll(Duration.ofMillis(300));
                for (ConsumerRecord<String, String> r : records) {
                    JsonNode node = json.readTree(r.value());
                    if (results.put(node.get("impression_id").asText(), node.get("result").asText()) != null) {
                        duplicates = true;
                    }
                    read++;
                }
                if (read >= expected && records.isEmpty()) {
                    break;
                }
            }
        }
        return results;
    }
}
