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
}
