package io.flowkafka.connectors.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowkafka.api.MessageId;
import io.flowkafka.spec.SinkSpec;
import io.flowkafka.spi.OutboxRecord;
import io.flowkafka.spi.SinkContext;
import io.flowkafka.testing.KafkaCluster;
import io.flowkafka.testing.TestNames;
import io.flowkafka.testing.WithKafka;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.junit.jupiter.api.Test;

/**
 * The HTTP sink's dead letters on a real broker: a message the target refused for good that the dead-letter topic
 * cannot take either (too large) is dead-lettered without its bytes, saying so, instead of blocking the sink.
 */
@WithKafka
class HttpDeadLettersIT {
    @Test
    void shouldDeadLetterAMessageTooLargeForTheDeadLetterTopicWithoutItsBytes(KafkaCluster cluster, TestNames names)
            throws Exception {
        String dlq = names.topic("dlq");
        cluster.createTopic(dlq, 1, Map.of("max.message.bytes", "2000"));
        SinkSpec spec = new SinkSpec("web", HttpSinkProvider.T_ASYNC_HTTP_SINK, List.of("out"), Map.of("url",
                "http://127.0.0.1:1/x"));
        Map<String, Object> client = new HashMap<>();
        cluster.clientProperties().forEach((k, v) -> client.put(k.toString(), v));
        SinkContext context = new SinkContext("pipe", "pipe-app", "compute", spec, client, Map.of(),
                new SimpleMeterRegistry(), dlq);
        byte[] body = "x".repeat(10_000).getBytes(StandardCharsets.UTF_8);
        OutboxRecord r = new OutboxRecord(7, MessageId.of("m7".getBytes(StandardCharsets.UTF_8)),
                "k".getBytes(StandardCharsets.UTF_8), body, new RecordHeaders(), 0L);
        try (HttpDeadLetters deadLetters = new HttpDeadLetters(context)) {
            deadLetters.write(r, 413, "sink 'web': the target rejected message m7: HTTP 413");
        }
        List<ConsumerRecord<byte[], byte[]>> dead = HttpSinkIT.read(cluster, dlq, 1);
        assertThat(dead).singleElement().satisfies(d -> {
            assertThat(d.value()).isNull();
            assertThat(HttpSinkIT.header(d, "flow.dlq.http.status")).isEqualTo("413");
            assertThat(HttpSinkIT.header(d, "flow.dlq.outbox_offset")).isEqualTo("7");
            assertThat(HttpSinkIT.header(d, "flow.dlq.omitted")).contains("10000 bytes", "refused");
        });
    }
}
