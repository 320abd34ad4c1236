package io.flowkafka.connectors.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowkafka.runtime.FlowRuntime;
import io.flowkafka.testing.Await;
import io.flowkafka.testing.KafkaCluster;
import io.flowkafka.testing.TestNames;
import io.flowkafka.testing.WithKafka;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

/**
 * TKafkaSink to a topic that rejects one record for good (larger than its {@code max.message.bytes}): the record
 * goes to the pipeline's dead-letter topic with the reason, every other record reaches the target (exactly once
 * with the default guarantee), and the sink keeps delivering.
 */
@WithKafka
class TKafkaSinkRejectedIT {
    @TempDir(cleanup = CleanupMode.ON_SUCCESS)
    static Path tempRoot;

    @Test
    @Timeout(240)
    void shouldDeadLetterARecordTheTargetRejectsAndDeliverTheRestExactlyOnce(KafkaCluster cluster, TestNames names)
            throws Exception {
        run(cluster, names, Map.of(), false);
    }

    @Test
    @Timeout(240)
    void shouldDeadLetterARecordTheTargetRejectsAtLeastOnceToo(KafkaCluster cluster, TestNames names) throws Exception {
        run(cluster, names, Map.of("delivery_guarantee", "at_least_once"), false);
    }

    /**
     * The dead-letter topic cannot take the rejected record either: the dead letter goes without the record's bytes,
     * saying so in {@code flow.dlq.omitted}, instead of the sink retrying it for ever.
     */
    @Test
    @Timeout(240)
    void shouldDeadLetterARecordTheDeadLetterTopicRejectsTooWithoutItsBytes(KafkaCluster cluster, TestNames names)
            throws Exception {
        run(cluster, names, Map.of(), true);
    }

    /**
     * A record whose timestamp both the target and the dead-letter topic refuse (older than their
     * {@code message.timestamp.before.max.ms}): the dead letter goes whole with the producer's timestamp, the
     * record's own in {@code flow.dlq.timestamp}, instead of without its bytes.
     */
    @Test
    @Timeout(240)
    void shouldDeadLetterARecordWhoseTimestampBothTopicsRefuseWholeWithTheProducersTimestamp(KafkaCluster cluster,
            TestNames names) throws Exception {
        String input = names.topic("input");
        String output = names.topic("output");
        String pipeline = names.name("ts");
        Map<String, String> recentOnly = Map.of("message.timestamp.before.max.ms", "3600000");
        cluster.createTopic(input, 1);
        cluster.createTopic(output, 1, recentOnly);
        cluster.createTopic(pipeline + ".dlq", 1, recentOnly);
        long old = System.currentTimeMillis() - Duration.ofDays(30).toMillis();
        Properties pp = cluster.clientProperties();
        pp.put("key.serializer", org.apache.kafka.common.serialization.StringSerializer.class.getName());
        pp.put("value.serializer", org.apache.kafka.common.serialization.StringSerializer.class.getName());
        try (var producer = new org.apache.kafka.clients.producer.KafkaProducer<String, String>(pp)) {
            // e1 and e3 share a user: one task, one outbox partition, in this order; e2's event time is a month old
            producer.send(new org.apache.kafka.clients.producer.ProducerRecord<>(input, "u",
                    "{\"id\":\"e1\",\"user\":\"u\"}")).get();
            producer.send(new org.apache.kafka.clients.producer.ProducerRecord<>(input, null, old, "u",
                    "{\"id\":\"e2\",\"user\":\"u\"}")).get();
            producer.send(new org.apache.kafka.clients.producer.ProducerRecord<>(input, "u",
                    "{\"id\":\"e3\",\"user\":\"u\"}")).get();
        }
        Properties props = cluster.clientProperties();
        props.put("state.dir", Files.createTempDirectory(tempRoot, "tkafka-old").toString());
        props.put("commit.interval.ms", "100");
        long testStart = System.currentTimeMillis();
        try (FlowRuntime runtime = FlowRuntime.create(OutboxPipeline.spec(pipeline, input, output,
                Map.of("timestamp", "event")), props);
                KafkaConsumer<byte[], byte[]> out = Rejections.reader(cluster, output);
                KafkaConsumer<byte[], byte[]> dead = Rejections.reader(cluster, runtime.deadLetterTopic())) {
            runtime.start();
            List<String> ids = new ArrayList<>();
            List<ConsumerRecord<byte[], byte[]>> dlq = new ArrayList<>();
            awaitE1E3AndADeadLetter(out, dead, ids, dlq);
            assertThat(ids).containsExactly("e1", "e3");
            assertThat(dlq).singleElement().satisfies(r -> {
                assertThat(new String(r.key(), StandardCharsets.UTF_8)).isEqualTo("e2");
                assertThat(new String(r.value(), StandardCharsets.UTF_8)).contains("\"id\":\"e2\"");
                assertThat(Rejections.header(r, "flow.dlq.omitted")).isNull();
                assertThat(Long.parseLong(Rejections.header(r, "flow.dlq.timestamp"))).isEqualTo(old);
                assertThat(r.timestamp()).as("the producer's").isGreaterThanOrEqualTo(testStart);
                assertThat(Rejections.header(r, "flow.dlq.error.class")).endsWith("InvalidTimestampException");
                assertThat(Rejections.header(r, "flow-message-id")).as("the sink's own headers are kept").isNotBlank();
            });
        }
    }

    /** Reads the target's keys into {@code ids} and the dead letters into {@code dlq} until e1, e3 and one letter came. */
    private static void awaitE1E3AndADeadLetter(KafkaConsumer<byte[], byte[]> out, KafkaConsumer<byte[], byte[]> dead,
            List<String> ids, List<ConsumerRecord<byte[], byte[]>> dlq) {
        Await.until(Duration.ofMinutes(2), "e1 and e3 delivered, e2 dead-lettered", () -> {
            out.poll(Duration.ofMillis(100)).forEach(r -> ids.add(new String(r.key(), StandardCharsets.UTF_8)));
            dead.poll(Duration.ofMillis(100)).forEach(dlq::add);
            return ids.contains("e1") && ids.contains("e3") && !dlq.isEmpty();
        });
    }

    private static void run(KafkaCluster cluster, TestNames names, Map<String, Object> sinkParameters,
            boolean deadLettersLimited) throws Exception {
        String input = names.topic("input");
        String output = names.topic("output");
        cluster.createTopic(input, 1);
        cluster.createTopic(output, 1, Map.of("max.message.bytes", "2000"));
        long testStart = System.currentTimeMillis();
        String pipeline = names.name("tr");
        if (deadLettersLimited) {
            cluster.createTopic(pipeline + ".dlq", 1, Map.of("max.message.bytes", "2000"));
        }
        String big = Rejections.incompressible(13);
        // e1 and e3 share a user: one task, one outbox partition, in this order
        Rejections.send(cluster, input, "u", "{\"id\":\"e1\",\"user\":\"u\"}",
                "u", "{\"id\":\"e2\",\"user\":\"u" + big + "\"}", "u", "{\"id\":\"e3\",\"user\":\"u\"}");
        Properties props = cluster.clientProperties();
        props.put("state.dir", Files.createTempDirectory(tempRoot, "tkafka-rejected").toString());
        props.put("commit.interval.ms", "100");
        try (FlowRuntime runtime = FlowRuntime.create(OutboxPipeline.spec(pipeline, input, output,
                sinkParameters), props);
                KafkaConsumer<byte[], byte[]> out = Rejections.reader(cluster, output);
                KafkaConsumer<byte[], byte[]> dead = Rejections.reader(cluster, runtime.deadLetterTopic())) {
            runtime.start();
            List<String> ids = new ArrayList<>();
            List<ConsumerRecord<byte[], byte[]>> dlq = new ArrayList<>();
            awaitE1E3AndADeadLetter(out, dead, ids, dlq);
            // nothing more arrives soon after (a second copy would)
            out.poll(Duration.ofSeconds(1)).forEach(r -> ids.add(new String(r.key(), StandardCharsets.UTF_8)));
            dead.poll(Duration.ofMillis(500)).forEach(dlq::add);
            assertThat(ids).as("each once, in order; e2 never").containsExactly("e1", "e3");
            assertThat(dlq).singleElement().satisfies(r -> {
                if (deadLettersLimited) {
                    assertThat(r.key()).isNull();
                    assertThat(r.value()).isNull();
                    assertThat(Rejections.header(r, "flow.dlq.omitted")).startsWith("the record's key (2 bytes), value (")
                            .contains("the dead-letter topic rejected them too").contains("RecordTooLargeException");
                    // the record's own time (its system time: the sink's "timestamp": "system"), before the dead
                    // letter's, which the producer stamped
                    assertThat(Long.parseLong(Rejections.header(r, "flow.dlq.timestamp"))).as("the record's own time")
                            .isBetween(testStart, r.timestamp());
                    assertThat(Rejections.header(r, "flow.dlq.error.message"))
                            .contains("the target rejected this record for good");
                    assertThat(Rejections.header(r, "flow.dlq.outbox_offset")).isNotBlank();
                    return;
                }
                assertThat(new String(r.key(), StandardCharsets.UTF_8)).isEqualTo("e2");
                assertThat(new String(r.value(), StandardCharsets.UTF_8)).contains(big);
                assertThat(Rejections.header(r, "flow.dlq.computation")).isEqualTo("count");
                assertThat(Rejections.header(r, "flow.dlq.stage")).isEqualTo("deliver to sink 'out'");
                assertThat(Rejections.header(r, "flow.dlq.error.class")).endsWith("RecordTooLargeException");
                assertThat(Rejections.header(r, "flow.dlq.error.message"))
                        .contains("the target rejected this record for good");
                assertThat(Rejections.header(r, "flow.dlq.outbox_offset")).isNotBlank();
                assertThat(Rejections.header(r, "flow-message-id")).as("the sink's own headers are kept").isNotBlank();
            });
            assertThat(runtime.status()).noneSatisfy(e -> assertThat(e.path()).isEqualTo("/sinks/out/stopped"));
        }
    }
}
