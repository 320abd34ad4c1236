package io.flowkafka.connectors.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flowkafka.spec.InvalidSpecException;
import io.flowkafka.spec.PipelineSpec;
import io.flowkafka.testing.FlowTestDriver;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
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

    @Test
    void shouldRejectAtMostOnceOnATKafkaSinkAndOnTheSyncKafkaSink() {
        assertThatThrownBy(() -> OutboxPipeline.spec("tks", "input", "output",
                Map.of("at_most_once_strategy", Map.of("enabled", true))).validated())
                .isInstanceOf(InvalidSpecException.class)
                .hasMessageContaining("sinks.out.at_most_once_strategy")
                .hasMessageContaining("TKafkaSink 'out' does not support at_most_once_strategy");
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
