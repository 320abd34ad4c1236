package io.flowkafka.connectors.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowkafka.runtime.FlowRuntime;
import io.flowkafka.testing.Await;
import io.flowkafka.testing.KafkaCluster;
import io.flowkafka.testing.TestNames;
import io.flowkafka.testing.WithKafka;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

/**
 * A synchronous external sink's epoch barrier on a real broker: every commit waits for the sink
 * (reference 002, TAtLeastOnceKafkaSink: "each epoch waits for Kafka to acknowledge its records. If
 * the epoch does not commit after a successful write, the same records are written again on
 * restart"). The test sink fails one barrier; the epoch must not commit, and its records must be
 * written again, none lost.
 */
@WithKafka
class SyncSinkBarrierIT {
    /** State directories of this class's runtimes (and child JVMs); JUnit deletes it after the class if it passed. */
    @TempDir(cleanup = CleanupMode.ON_SUCCESS)
    static Path tempRoot;

    @Test
    @Timeout(300)
    void shouldReplayAnEpochWhoseAcknowledgementsFailedAndLoseNothing(KafkaCluster cluster, TestNames names)
            throws Exception {
        FailingAckTestSink.reset(false);
        String input = names.topic("input");
        cluster.createTopic(input, 2);
        int records = 300;
        Properties pp = cluster.clientProperties();
        pp.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        pp.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        pp.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, "1");
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(pp)) {
            for (int i = 0; i < records; i++) {
                producer.send(new ProducerRecord<>(input, "u" + (i % 5), "{\"id\":\"e" + i + "\",\"user\":\"u" + (i % 5)
                        + "\"}")).get();
            }
        }
        Properties props = cluster.clientProperties();
        props.put("state.dir", Files.createTempDirectory(tempRoot, "sync-barrier").toString());
        props.put("commit.interval.ms", "100");
        try (FlowRuntime runtime = FlowRuntime.create(OutboxPipeline.spec(names.name("sb"), input, "unused",
                "FailingAckTestSink", Map.of()), props)) {
            runtime.start();
            // the failed barrier's epoch is aborted: its records must come again, so once the barrier failed, more
            // than one write per id shows the replay
            Await.until(Duration.ofMinutes(2), "a barrier failed, its epoch replayed and every id written",
                    () -> FailingAckTestSink.FAILED.get() && FailingAckTestSink.WRITTEN.size() > records
                            && new HashSet<>(FailingAckTestSink.WRITTEN).size() >= records);
            Set<String> ids = new HashSet<>(FailingAckTestSink.WRITTEN);
            assertThat(ids).hasSize(records);
            assertThat(FailingAckTestSink.WRITTEN.size()).as("the failed epoch's records were written again")
                    .isGreaterThan(records);
            assertThat(FailingAckTestSink.FLUSHES.get()).as("commits waited for the sink").isGreaterThan(1);
        }
    }

    @Test
    @Timeout(300)
    void shouldStopWithTheReasonWhenTheTargetRejectsARecordForGood(KafkaCluster cluster, TestNames names)
            throws Exception {
        // a replay would fail the same way forever: the pipeline stops with a sentence instead of looping
        FailingAckTestSink.reset(true);
        String input = names.topic("input");
        cluster.createTopic(input, 1);
        Properties pp = cluster.clientProperties();
        pp.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        pp.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(pp)) {
            producer.send(new ProducerRecord<>(input, "u1", "{\"id\":\"e1\",\"user\":\"u1\"}")).get();
        }
        Properties props = cluster.clientProperties();
        props.put("state.dir", Files.createTempDirectory(tempRoot, "sync-fatal").toString());
        try (FlowRuntime runtime = FlowRuntime.create(OutboxPipeline.spec(names.name("sf"), input, "unused",
                "FailingAckTestSink", Map.of()), props)) {
            runtime.start();
            assertThat(runtime.awaitState(FlowRuntime.State.FAILED, Duration.ofMinutes(2))).as(runtime.state().toString())
                    .isTrue();
            assertThat(runtime.status()).anySatisfy(e -> {
                assertThat(e.path()).isEqualTo("/sinks/out/stopped");
                assertThat(e.message()).contains("injected: the target rejected a record for good");
            });
        }
    }

    /**
     * A record the sink refuses in the call that produced it ({@code SyncSinkWriter.check}): that input goes to the
     * dead-letter topic with the sink's reason, every other input's record is written, the pipeline keeps running.
     */
    @Test
    @Timeout(300)
    void shouldDeadLetterTheInputOfARecordTheSinkRefusesInItsCall(KafkaCluster cluster, TestNames names)
            throws Exception {
        FailingAckTestSink.refusing("e2");
        String input = names.topic("input");
        cluster.createTopic(input, 1);
        Rejections.send(cluster, input, "u1", "{\"id\":\"e1\",\"user\":\"u1\"}",
                "u2", "{\"id\":\"e2\",\"user\":\"u2\"}", "u3", "{\"id\":\"e3\",\"user\":\"u3\"}");
        Properties props = cluster.clientProperties();
        props.put("state.dir", Files.createTempDirectory(tempRoot, "sync-refused").toString());
        props.put("commit.interval.ms", "100");
        try (FlowRuntime runtime = FlowRuntime.create(OutboxPipeline.spec(names.name("sq"), input, "unused",
                "FailingAckTestSink", Map.of()), props);
                org.apache.kafka.clients.consumer.KafkaConsumer<byte[], byte[]> dead =
                        Rejections.reader(cluster, runtime.deadLetterTopic())) {
            runtime.start();
            java.util.List<org.apache.kafka.clients.consumer.ConsumerRecord<byte[], byte[]>> dlq =
                    new java.util.ArrayList<>();
            Await.until(Duration.ofMinutes(2), "e1 and e3 written, the input of e2 dead-lettered", () -> {
                dead.poll(Duration.ofMillis(100)).forEach(dlq::add);
                return FailingAckTestSink.WRITTEN.containsAll(Set.of("e1", "e3")) && !dlq.isEmpty();
            });
            dead.poll(Duration.ofMillis(500)).forEach(dlq::add); // a second dead letter would arrive soon after
            assertThat(FailingAckTestSink.WRITTEN).containsExactlyInAnyOrder("e1", "e3");
            assertThat(dlq).singleElement().satisfies(r -> {
                // the input of the failed call: the internal stream's message (Avro), holding e2's id
                assertThat(new String(r.value(), java.nio.charset.StandardCharsets.UTF_8)).contains("e2");
                assertThat(Rejections.header(r, "flow.dlq.computation")).isEqualTo("count");
                assertThat(Rejections.header(r, "flow.dlq.error.message")).contains("FailingAckTestSink never writes e2");
            });
            assertThat(runtime.state()).isEqualTo(FlowRuntime.State.RUNNING);
        }
    }

    /**
     * TAtLeastOnceKafkaSink to a topic that rejects one output for good (larger than its {@code max.message.bytes}):
     * the epoch is replayed, the input producing that output goes to the dead-letter topic with the reason, and
     * every other input's output is written; the pipeline keeps running.
     */
    @Test
    @Timeout(300)
    void shouldDeadLetterTheInputOfARecordTheTargetRejectsForGoodAndGoOn(KafkaCluster cluster, TestNames names)
            throws Exception {
        String input = names.topic("input");
        String output = names.topic("output");
        cluster.createTopic(input, 1);
        cluster.createTopic(output, 1, Map.of("max.message.bytes", "2000"));
        String big = Rejections.incompressible(11);
        Rejections.send(cluster, input, "u1", "{\"id\":\"e1\",\"user\":\"u1\"}",
                "big", "{\"id\":\"e2\",\"user\":\"" + big + "\"}", "u3", "{\"id\":\"e3\",\"user\":\"u3\"}");
        Properties props = cluster.clientProperties();
        props.put("state.dir", Files.createTempDirectory(tempRoot, "sync-rejected").toString());
        props.put("commit.interval.ms", "100");
        // longer than the waits below: the replaced stream thread's member must leave the group, not time out
        props.put("session.timeout.ms", "300000");
        try (FlowRuntime runtime = FlowRuntime.create(OutboxPipeline.spec(names.name("sr"), input, output,
                "TAtLeastOnceKafkaSink", Map.of()), props);
                org.apache.kafka.clients.consumer.KafkaConsumer<byte[], byte[]> out =
                        Rejections.reader(cluster, output);
                org.apache.kafka.clients.consumer.KafkaConsumer<byte[], byte[]> dead =
                        Rejections.reader(cluster, runtime.deadLetterTopic())) {
            runtime.start();
            Set<String> ids = new HashSet<>();
            java.util.List<org.apache.kafka.clients.consumer.ConsumerRecord<byte[], byte[]>> dlq =
                    new java.util.ArrayList<>();
            Await.until(Duration.ofMinutes(2), "e1 and e3 written, the input of e2 dead-lettered", () -> {
                out.poll(Duration.ofMillis(100)).forEach(r -> ids.add(new String(r.key(),
                        java.nio.charset.StandardCharsets.UTF_8)));
                dead.poll(Duration.ofMillis(100)).forEach(dlq::add);
                return ids.containsAll(Set.of("e1", "e3")) && !dlq.isEmpty();
            });
            // a second dead letter (or a stray e2) would arrive soon after
            out.poll(Duration.ofSeconds(1)).forEach(r -> ids.add(new String(r.key(),
                    java.nio.charset.StandardCharsets.UTF_8)));
            dead.poll(Duration.ofMillis(500)).forEach(dlq::add);
            assertThat(ids).as("at least once: e1 may come twice, e2 never").containsExactlyInAnyOrder("e1", "e3");
            assertThat(dlq).singleElement().satisfies(r -> {
                assertThat(new String(r.value(), java.nio.charset.StandardCharsets.UTF_8)).contains(big);
                assertThat(Rejections.header(r, "flow.dlq.computation")).isEqualTo("count");
                assertThat(Rejections.header(r, "flow.dlq.error.message"))
                        .contains("sink 'out' rejected this record for good")
                        .contains("RecordTooLargeException");
            });
            assertThat(runtime.state()).isEqualTo(FlowRuntime.State.RUNNING);
        }
    }


}
