package io.flowkafka.examples.auditor;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.flowkafka.runtime.FlowRuntime;
import io.flowkafka.testing.Await;
import io.flowkafka.testing.KafkaCluster;
import io.flowkafka.testing.TestNames;
import io.flowkafka.testing.WithKafka;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

/**
 * The auditor example on a real broker: the visitor-only computation gets its tasks (4, through its control topic),
 * scans the table its joiner reads pass after pass ({@code finite: false}), and reports each idle user once per
 * pass, read read_committed from the sink topic; the pipeline keeps running.
 */
@WithKafka
class AuditorIT {
    /** State directories of this class's runtimes; JUnit deletes it after the class if it passed. */
    @TempDir(cleanup = CleanupMode.ON_SUCCESS)
    static Path tempRoot;

    @Test
    @Timeout(240)
    void shouldReportIdleUsersOncePerPassForThePipelinesLifetime(KafkaCluster cluster, TestNames names)
            throws Exception {
        String logins = names.topic("logins");
        String idle = names.topic("idle");
        cluster.createTopic(logins, 2);
        Properties props = new Properties();
        props.put("bootstrap.servers", cluster.bootstrapServers());
        props.put("state.dir", Files.createTempDirectory(tempRoot, "flow-audit-it").toString());
        props.put("commit.interval.ms", "100");
        String pipeline = names.name("audit");
        try (FlowRuntime runtime = FlowRuntime.create(AuditorPipeline.spec(pipeline, logins, idle, "1h", "3s", 4),
                props)) {
            runtime.start();
            assertThat(runtime.internalTopics()).containsEntry(pipeline + ".control." + AuditorPipeline.AUDITOR, 4);
            long now = System.currentTimeMillis();
            Properties p = cluster.clientProperties();
            p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
            p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
            try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
                for (int i = 0; i < 40; i++) {
                    long ts = i < 20 ? now - Duration.ofHours(2).toMillis() : now;
                    producer.send(new ProducerRecord<>(logins, "u" + i, "{\"user\":\"u" + i + "\",\"ts\":" + ts + "}"));
                }
            }
            Properties c = cluster.clientProperties();
            c.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
            c.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
            c.put(ConsumerConfig.GROUP_ID_CONFIG, names.name("verify"));
            c.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
            c.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
            ObjectMapper json = new ObjectMapper();
            Map<String, Map<Long, Integer>> reports = new HashMap<>();
            try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(c)) {
                consumer.subscribe(List.of(idle));
                // each idle user reported in three passes (the auditor's tasks number their passes each on its own)
                Await.until(Duration.ofMinutes(3), "every idle user reported in three passes", () -> {
                    for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                        JsonNode n;
                        try {
                            n = json.readTree(r.value());
                        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
                            throw new IllegalStateException("not an idle user: " + r.value(), e);
                        }
                        reports.computeIfAbsent(n.get("user").asText(), u -> new HashMap<>())
                                .merge(n.get("pass").asLong(), 1, Integer::sum);
                    }
                    return reports.size() == 20 && reports.values().stream().allMatch(m -> m.size() >= 3);
                });
            }
            for (var e : reports.entrySet()) {
                assertThat(Integer.parseInt(e.getKey().substring(1))).as("only idle users").isLessThan(20);
                assertThat(e.getValue().values()).as("reports per pass of %s", e.getKey()).allMatch(n -> n == 1);
            }
            assertThat(runtime.state()).isEqualTo(FlowRuntime.State.RUNNING);
        }
    }
}
