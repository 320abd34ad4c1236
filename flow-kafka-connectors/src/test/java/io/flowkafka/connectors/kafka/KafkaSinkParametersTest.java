package io.flowkafka.connectors.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowkafka.spec.PipelineSpec;
import io.flowkafka.spec.SinkSpec;
import io.flowkafka.spi.SinkProvider;
import io.flowkafka.testing.FlowTestDriver;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.Test;

/**
 * The sync {@code KafkaSink}'s record parameters, as in Flow's Kafka sink: {@code key_column},
 * {@code payload_column} (the value is that column's bytes instead of the whole record) and
 * {@code message_id_header} (the message id, the dedup key, in a header), and the connectors' Kafka sinks' parameter
 * checks.
 */
class KafkaSinkParametersTest {
    @Test
    void shouldWriteTheKeyColumnThePayloadColumnAndTheMessageIdHeader() {
        PipelineSpec spec = OutboxPipeline.spec("ks", "input", "output", "KafkaSink",
                Map.of("payload_column", "user", "message_id_header", "x-flow-id"));
        try (FlowTestDriver driver = FlowTestDriver.create(spec)) {
            driver.pipeSource("input", "u1", "{\"id\":\"e1\",\"user\":\"u1\"}");
            driver.pipeSource("input", "u2", "{\"id\":\"e2\",\"user\":\"u2\"}");
            List<TestRecord<byte[], byte[]>> out = driver.readTopic("output");
            assertThat(out).extracting(r -> new String(r.key(), StandardCharsets.UTF_8)).containsExactly("e1", "e2");
            assertThat(out).extracting(r -> new String(r.value(), StandardCharsets.UTF_8)).containsExactly("u1", "u2");
            assertThat(out).allSatisfy(r -> assertThat(r.headers().lastHeader("x-flow-id")).isNotNull());
            String id1 = new String(out.get(0).headers().lastHeader("x-flow-id").value(), StandardCharsets.UTF_8);
            String id2 = new String(out.get(1).headers().lastHeader("x-flow-id").value(), StandardCharsets.UTF_8);
            assertThat(id1).as("a message id per output").isNotEqualTo(id2).matches("[0-9a-f]+");
        }
        // the same input on a fresh driver gives the same ids: a consumer can deduplicate by the header
        try (FlowTestDriver again = FlowTestDriver.create(spec)) {
            again.pipeSource("input", "u1", "{\"id\":\"e1\",\"user\":\"u1\"}");
            try (FlowTestDriver first = FlowTestDriver.create(spec)) {
                first.pipeSource("input", "u1", "{\"id\":\"e1\",\"user\":\"u1\"}");
                assertThat(again.readTopic("output").get(0).headers().lastHeader("x-flow-id").value())
                        .isEqualTo(first.readTopic("output").get(0).headers().lastHeader("x-flow-id").value());
            }
        }
    }

    @Test
    void shouldRejectAnUnknownParameterOrTimestampOfTheConnectorsKafkaSinks() {
        KafkaSinkProvider provider = new KafkaSinkProvider();
        List<SinkProvider.Problem> async = provider.validate(new SinkSpec("s", "TKafkaSink", List.of("out"),
                Map.of("topic", "t", "delivery_gaurantee", "at_least_once", "timestamp", "processing")));
        assertThat(async).extracting(SinkProvider.Problem::field)
                .containsExactlyInAnyOrder("parameters.delivery_gaurantee", "parameters.timestamp");
        assertThat(async).filteredOn(p -> p.field().equals("parameters.delivery_gaurantee")).singleElement()
                .satisfies(p -> assertThat(p.message()).isEqualTo("unknown TKafkaSink parameter 'delivery_gaurantee'"));
        List<SinkProvider.Problem> sync = provider.validate(new SinkSpec("s", "TAtLeastOnceKafkaSink", List.of("out"),
                Map.of("topic", "t", "key_colum", "user", "max_batch_records", 5)));
        assertThat(sync).extracting(SinkProvider.Problem::field)
                .containsExactlyInAnyOrder("parameters.key_colum", "parameters.max_batch_records");
        assertThat(provider.validate(new SinkSpec("s", "TKafkaSink", List.of("out"), Map.of("topic", "t",
                "key_column", "user", "timestamp", "system", "delivery_guarantee", "at_least_once",
                "max_batch_records", 10, "message_id_header", "id")))).isEmpty();
    }
}
