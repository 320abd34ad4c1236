package io.flowkafka.connectors.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowkafka.api.MessageId;
import io.flowkafka.spec.SinkSpec;
import io.flowkafka.spi.OutboxRecord;
import io.flowkafka.spi.SinkContext;
import io.flowkafka.testing.Await;
import io.flowkafka.testing.KafkaCluster;
import io.flowkafka.testing.TestNames;
import io.flowkafka.testing.WithKafka;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
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
        Map<String, Object> client = new java.util.HashMap<>();
        cluster.clientProperties().forEach((k, v) -> client.put(k.toString(), v));
        SinkContext context = new SinkContext("pipe", "pipe-app", "compute", spec, client, Map.of(),
                new SimpleMeterRegistry(), dlq);
        byte[] body = "x".repeat(10_000).getBytes(StandardCharsets.UTF_8);
        OutboxRecord r = new OutboxRecord(7, MessageId.of("m7".getBytes(StandardCharsets.UTF_8)),
                "k".getBytes(StandardCharsets.UTF_8), body, new RecordHeaders(), 0L);
        try (HttpDeadLetters deadLetters = new HttpDeadLetters(context)) {
            deadLetters.write(r, 413, "sink 'web': the target rejected message m7: HTTP 413");
        }
        List<ConsumerRecord<byte[], byte[]>> dead = read(cluster, dlq);
        assertThat(dead).singleElement().satisfies(d -> {
            assertThat(d.value()).isNull();
            assertThat(header(d, "flow.dlq.http.status")).isEqualTo("413");
            assertThat(header(d, "flow.dlq.outbox_offset")).isEqualTo("7");
            assertThat(header(d, "flow.dlq.omitted")).contains("10000 bytes", "refused");
        });
    }

    private static List<ConsumerRecord<byte[], byte[]>> read(KafkaCluster cluster, String topic) {
        Properties props = cluster.clientProperties();
        props.put(ConsumerConfig.GROUP_ID_CONFIG, "reader-" + System.nanoTime());
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        List<ConsumerRecord<byte[], byte[]>> out = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(props, new ByteArrayDeserializer(),
                new ByteArrayDeserializer())) {
            c.subscribe(List.of(topic));
            Await.until(Duration.ofSeconds(30), "a dead letter in " + topic, () -> {
                c.poll(Duration.ofMillis(200)).forEach(out::add);
                return !out.isEmpty();
            });
        }
        return out;
    }

    private static String header(ConsumerRecord<byte[], byte[]> r, String name) {
        Header h = r.headers().lastHeader(name);
        return h == null ? null : new String(h.value(), StandardCharsets.UTF_8);
    }
}
