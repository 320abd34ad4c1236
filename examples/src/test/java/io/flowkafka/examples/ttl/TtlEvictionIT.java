package io.flowkafka.examples.ttl;

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
 * The TTL example on a real broker: stale users are evicted without a report, fresh users get one
 * daily total per pass, read read_committed from the sink topic.
 */
@WithKafka
class TtlEvictionIT {
    /** State directories of this class's runtimes (and child JVMs); JUnit deletes it after the class if it passed. */
    @TempDir(cleanup = CleanupMode.ON_SUCCESS)
    static Path tempRoot;

    @Test
    @Timeout(180)
    void shouldReportFreshUsersOncePerPassAndEvictStaleOnes(KafkaCluster cluster, TestNames names) throws Exception {
        String events = names.topic("spend");
        String totals = names.topic("totals");
        cluster.createTopic(events, 2);
        Properties props = new Properties();
        props.put("bootstrap.servers", cluster.bootstrapServers());
        props.put("state.dir", Files.createTempDirectory(tempRoot, "flow-ttl-it").toString());
        props.put("commit.interval.ms", "100");
        // the events are in before the tasks start: each is read in their first poll, long before pass 1 begins
        long now = System.currentTimeMillis();
        Properties p = cluster.clientProperties();
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
            for (int i = 0; i < 20; i++) {
                long ts = i < 10 ? now - Duration.ofDays(8).toMillis() : now;
                producer.send(new ProducerRecord<>(events, "u" + i,
                        "{\"user\":\"u" + i + "\",\"amount\":" + i + ",\"ts\":" + ts + "}"));
            }
        }
        try (FlowRuntime runtime = FlowRuntime.create(TtlPipeline.spec(names.name("ttl"), events, totals, "7d", "3s", 2),
                props)) {
            runtime.start();
            Properties c = cluster.clientProperties();
            c.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
            c.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
            c.put(ConsumerConfig.GROUP_ID_CONFIG, names.name("verify"));
            c.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
            c.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
            ObjectMapper json = new ObjectMapper();
            Map<String, Map<Long, Integer>> reports = new HashMap<>();
            Map<String, Long> sums = new HashMap<>();
            try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(c)) {
                consumer.subscribe(List.of(totals));
                // every fresh user reported in pass 3: passes 1 and 2, which began after the events were in, are complete
                // (pass 0 starts with the task and may pass a user's position before its event arrives)
                Await.until(Duration.ofMinutes(2), "daily totals of pass 3", () -> {
                    for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                        JsonNode n;
                        try {
                            n = json.readTree(r.value());
                        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
                            throw new IllegalStateException("not a daily total: " + r.value(), e);
                        }
                        reports.computeIfAbsent(n.get("user").asText(), u -> new HashMap<>())
                                .merge(n.get("pass").asLong(), 1, Integer::sum);
                        sums.merge(n.get("user").asText(), n.get("sum").asLong(), Long::sum);
                    }
                    return reports.values().stream().filter(m -> m.containsKey(3L)).count() == 10;
                });
            }
            assertThat(reports).containsOnlyKeys("u10", "u11", "u12", "u13", "u14", "u15", "u16", "u17", "u18", "u19");
            for (var e : reports.entrySet()) {
                assertThat(e.getValue()).as("passes of %s", e.getKey()).containsEntry(1L, 1).containsEntry(2L, 1);
                assertThat(e.getValue().values()).as("reports per pass of %s", e.getKey()).allMatch(n -> n == 1);
                int i = Integer.parseInt(e.getKey().substring(1));
                assertThat(sums.get(e.getKey())).as("the event of %s counted once", e.getKey()).isEqualTo((long) i);
            }
        }
    }
}
