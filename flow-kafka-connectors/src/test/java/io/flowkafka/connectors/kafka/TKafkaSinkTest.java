package io.flowkafka.connectors.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flowkafka.spec.InvalidSpecException;
import io.flowkafka.spec.PipelineSpec;
import io.flowkafka.testing.FlowTestDriver;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.Test;

/** TKafkaSink on the test driver (the outbox side) and its spec checks. */
class TKafkaSinkTest {
    @Test
    void shouldWriteEachSinkMessageToTheOutboxInsideTheTransaction() {
        PipelineSpec spec = OutboxPipeline.spec("tks", "input", "output", Map.of());
        try (FlowTestDriver driver = FlowTestDriver.create(spec)) {
            driver.pipeSource("input", "u1", "{\"id\":\"e1\",\"user\":\"u1\"}");
            driver.pipeSource("input", "u1", "{\"id\":\"e2\",\"user\":\"u1\"}");
            List<TestRecord<byte[], byte[]>> outbox = driver.readTopic("tks.outbox.out");
            assertThat(outbox).hasSize(2);
            assertThat(outbox).extracting(r -> new String(r.key(), StandardCharsets.UTF_8)).containsExactly("e1", "e2");
            assertThat(new String(outbox.get(1).value(), StandardCharsets.UTF_8))
                    .isEqualTo("{\"id\":\"e2\",\"user\":\"u1\",\"count\":2}");
            Header id = outbox.get(0).headers().lastHeader("flow-message-id");
            assertThat(id).as("message_id_header, as the sink will write it").isNotNull();
            assertThat(outbox.get(0).headers().lastHeader("flow.meta")).as("the message id for the deliverer").isNotNull();
            assertThat(outbox.get(0).headers().lastHeader("flow.outbox.partition")).isNotNull();
            assertThat(driver.readTopic("tks.outbox.out")).as("consumed").isEmpty();
        }
    }

    @Test
    void shouldWriteTheSynchronousAtLeastOnceSinkToItsTopicOnTheDriver() {
        // on the test driver a TAtLeastOnceKafkaSink is written like the sync KafkaSink (no external producer)
        PipelineSpec spec = OutboxPipeline.spec("tks", "input", "output", "TAtLeastOnceKafkaSink", Map.of());
        try (FlowTestDriver driver = FlowTestDriver.create(spec)) {
            driver.pipeSource("input", "u1", "{\"id\":\"e1\",\"user\":\"u1\"}");
            assertThat(driver.readSinkJson("output")).containsExactly("{\"id\":\"e1\",\"user\":\"u1\",\"count\":1}");
        }
        // the deployment's properties, with the sink's own cluster, run on the driver too
        Properties props = new Properties();
        props.put("flow.sink.out.bootstrap.servers", "other:9092");
        try (FlowTestDriver driver = FlowTestDriver.create(spec, props)) {
            driver.pipeSource("input", "u1", "{\"id\":\"e1\",\"user\":\"u1\"}");
            assertThat(driver.readSinkJson("output")).hasSize(1);
        }
        props.put("flow.sink.oot.bootstrap.servers", "other:9092");
        assertThatThrownBy(() -> FlowTestDriver.create(spec, props))
                .hasMessageContaining("no sink 'oot' reads flow.sink.<sink id>.* settings; did you mean 'flow.sink.out.'?");
        assertThatThrownBy(() -> OutboxPipeline.spec("tks", "input", "output", "TAtLeastOnceKafkaSink",
                Map.of("delivery_guarantee", "exactly_once")).validated())
                .hasMessageContaining("TAtLeastOnceKafkaSink 'out' writes synchronously at least once and has no "
                        + "delivery_guarantee");
    }

    @Test
    void shouldRejectBadParametersBeforeStart() {
        assertThatThrownBy(() -> OutboxPipeline.spec("tks", "input", "output",
                Map.of("delivery_guarantee", "maybe", "max_batch_records", 0)).validated())
                .isInstanceOf(InvalidSpecException.class)
                .hasMessageContaining("count")
                .hasMessageContaining("sinks.out.parameters.delivery_guarantee")
                .hasMessageContaining("unknown delivery_guarantee 'maybe'")
                .hasMessageContaining("set delivery_guarantee to exactly_once (default) or at_least_once")
                .hasMessageContaining("sinks.out.parameters.max_batch_records");
    }

    /** Docs/code audit: both were accepted and had no effect. */
    @Test
    void shouldRejectSettingsTheChosenGuaranteeNeverUses() {
        assertThatThrownBy(() -> OutboxPipeline.spec("tks", "input", "output", Map.of("delivery_guarantee",
                "exactly_once", "at_most_once_strategy", Map.of("enabled", true))).validated())
                .hasMessageContaining("sinks.out.parameters.delivery_guarantee")
                .hasMessageContaining("has at_most_once_strategy enabled, so it delivers at most once");
        assertThatThrownBy(() -> OutboxPipeline.spec("tks", "input", "output", Map.of("delivery_guarantee",
                "at_least_once", "progress_topic", "p")).validated())
                .hasMessageContaining("sinks.out.parameters.progress_topic")
                .hasMessageContaining("keeps progress markers only when it delivers exactly once");
        OutboxPipeline.spec("tks", "input", "output", Map.of("progress_topic", "p")).validated();
    }

    @Test
    void shouldQueueAtMostOnceMessagesOutsideTheOutboxAndCountWhatTheFullQueueDrops() {
        // reference 002: "messages are placed in an internal queue. If the queue is full (total_queue_bytes_limit),
        // new messages are dropped without an error."
        PipelineSpec spec = OutboxPipeline.spec("tks", "input", "output",
                Map.of("at_most_once_strategy", Map.of("enabled", true, "total_queue_bytes_limit", 300)));
        try (FlowTestDriver driver = FlowTestDriver.create(spec)) {
            for (int i = 0; i < 10; i++) {
                driver.pipeSource("input", "u1", "{\"id\":\"e" + i + "\",\"user\":\"u1\"}");
            }
            // a message enters the queue once its epoch committed (a replayed epoch must not queue it twice); the
            // driver commits after each record, so the last one waits for the next commit (a watermark heartbeat)
            driver.advanceWallClockTime(Duration.ofSeconds(3));
            assertThatThrownBy(() -> driver.readTopic("tks.outbox.out")).as("no outbox: nothing inside the transaction")
                    .hasMessageContaining("writes no topic 'tks.outbox.out'");
            double dropped = driver.meterRegistry().get("flow.sink.dropped").tag("sink", "out").counter().count();
            // each message is about 80 bytes (key, JSON value, headers): the 300-byte queue (nothing delivers it on
            // the driver) holds 3, the other 7 are dropped
            assertThat(dropped).isEqualTo(7.0);
            driver.reconfigure(Map.of("computations", Map.of("count", Map.of("sinks", Map.of("out",
                    Map.of("at_most_once_strategy", Map.of("total_queue_bytes_limit", 10_000)))))));
            driver.pipeSource("input", "u1", "{\"id\":\"e10\",\"user\":\"u1\"}");
            driver.advanceWallClockTime(Duration.ofSeconds(3));
            assertThat(driver.meterRegistry().get("flow.sink.queue_messages").tag("sink", "out").gauge().value())
                    .as("3 held before, 1 more now").isEqualTo(4.0);
            assertThat(driver.meterRegistry().get("flow.sink.dropped").tag("sink", "out").counter().count())
                    .as("the raised limit applies at once").isEqualTo(7.0);
        }
    }

    @Test
    void shouldRejectAtMostOnceOnTheSyncKafkaSinkAndMalformedSettings() {
        PipelineSpec.Builder b = PipelineSpec.builder("p")
                .stream("raw", OutboxPipeline.EVENT).stream("events", OutboxPipeline.EVENT)
                .stream("counted", OutboxPipeline.COUNTED)
                .computation("read", c -> c.kind(io.flowkafka.spec.ComputationKind.SOURCE)
                        .source("raw", "KafkaSource", Map.of("topics", "in")).outputStreamIds("events"));
        assertThatThrownBy(() -> b.computation("count", c -> c.inputStreamIds("events")
                        .groupBy("hash", io.flowkafka.spec.ColumnType.UINT64, "farm_hash(user)")
                        .groupBy("user", io.flowkafka.spec.ColumnType.STRING, null)
                        .processingFunction(OutboxPipeline.Count::new).state("total", OutboxPipeline.TOTAL)
                        .outputStreamIds("counted")
                        .sink("sync", "KafkaSink", List.of("counted"), Map.of("topic", "t",
                                "at_most_once_strategy", Map.of("enabled", true)))
                        .sink("async", "TKafkaSink", List.of("counted"), Map.of("topic", "t2",
                                "at_most_once_strategy", Map.of("enabled", true, "total_queue_bytes_limit", -5))))
                .build().validated())
                .isInstanceOf(InvalidSpecException.class)
                .hasMessageContaining("sinks.sync.at_most_once_strategy")
                .hasMessageContaining("KafkaSink 'sync' is synchronous")
                .hasMessageContaining("sinks.async.at_most_once_strategy.total_queue_bytes_limit must be a positive number"
                        + " of bytes but was -5");
    }

    @Test
    void shouldRejectTheSameExternalSinkIdInTwoComputations() {
        PipelineSpec spec = PipelineSpec.builder("p")
                .stream("raw", OutboxPipeline.EVENT).stream("events", OutboxPipeline.EVENT)
                .stream("counted", OutboxPipeline.COUNTED).stream("counted2", OutboxPipeline.COUNTED)
                .computation("read", c -> c.kind(io.flowkafka.spec.ComputationKind.SOURCE)
                        .source("raw", "KafkaSource", Map.of("topics", "in")).outputStreamIds("events"))
                .computation("count", c -> c.inputStreamIds("events")
                        .groupBy("hash", io.flowkafka.spec.ColumnType.UINT64, "farm_hash(user)")
                        .groupBy("user", io.flowkafka.spec.ColumnType.STRING, null)
                        .processingFunction(OutboxPipeline.Count::new).state("total", OutboxPipeline.TOTAL)
                        .outputStreamIds("counted")
                        .sink("out", "TKafkaSink", List.of("counted"), Map.of("topic", "t1")))
                .computation("count2", c -> c.inputStreamIds("events")
                        .groupBy("hash", io.flowkafka.spec.ColumnType.UINT64, "farm_hash(user)")
                        .groupBy("user", io.flowkafka.spec.ColumnType.STRING, null)
                        .processingFunction(OutboxPipeline.Count::new).state("total", OutboxPipeline.TOTAL)
                        .outputStreamIds("counted2")
                        .sink("out", "TKafkaSink", List.of("counted2"), Map.of("topic", "t2")))
                .build();
        assertThatThrownBy(spec::validated).isInstanceOf(InvalidSpecException.class)
                .hasMessageContaining("count2")
                .hasMessageContaining("sink id 'out' is also used by computation 'count'")
                .hasMessageContaining("rename one of the two sinks");
    }

    @Test
    void shouldSuggestTheSinkClassForATypo() {
        PipelineSpec spec = PipelineSpec.builder("p")
                .stream("raw", OutboxPipeline.EVENT).stream("events", OutboxPipeline.EVENT)
                .stream("counted", OutboxPipeline.COUNTED)
                .computation("read", c -> c.kind(io.flowkafka.spec.ComputationKind.SOURCE)
                        .source("raw", "KafkaSource", Map.of("topics", "in")).outputStreamIds("events"))
                .computation("count", c -> c.inputStreamIds("events")
                        .groupBy("hash", io.flowkafka.spec.ColumnType.UINT64, "farm_hash(user)")
                        .groupBy("user", io.flowkafka.spec.ColumnType.STRING, null)
                        .processingFunction(OutboxPipeline.Count::new).state("total", OutboxPipeline.TOTAL)
                        .outputStreamIds("counted")
                        .sink("out", "TKafkaSinc", List.of("counted"), Map.of("topic", "t")))
                .build();
        assertThatThrownBy(spec::validated).isInstanceOf(InvalidSpecException.class)
                .hasMessageContaining("unknown sink_class_name 'TKafkaSinc'")
                .hasMessageContaining("did you mean 'TKafkaSink'?");
    }
}
