package io.flowkafka.connectors.http;

import io.flowkafka.spi.OutboxDeliveryException;
import io.flowkafka.spi.SinkDeadLetters;
import io.flowkafka.spi.OutboxRecord;
import io.flowkafka.spi.SinkContext;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.jspecify.annotations.Nullable;

/**
 * Writes a message the HTTP target rejected as the request's fault to the pipeline's dead-letter topic (on the
 * pipeline's cluster), as {@code TKafkaSink} does: the message's key and body, its outbox headers, and why in
 * {@code flow.dlq.*} headers. It owns the rule that a dead letter carries no request header (so no secret) and only
 * redacted response text.
 *
 * <p>Threading: safe from the sink's request threads; the producer is created on first use.
 */
final class HttpDeadLetters implements AutoCloseable {
    private static final long TIMEOUT_MS = 60_000;
    private final SinkContext context;
    private @Nullable KafkaProducer<byte[], byte[]> producer;

    HttpDeadLetters(SinkContext context) {
        this.context = context;
    }

    /**
     * Writes one dead letter and waits for the acknowledgement.
     *
     * @param r the rejected message
     * @param status the HTTP status the target answered
     * @param reason why, already redacted
     * @throws Exception when the dead-letter topic did not take it (the message is then retried, not skipped)
     */
    void write(OutboxRecord r, int status, String reason) throws Exception {
        RecordHeaders headers = new RecordHeaders();
        r.headers().forEach(headers::add);
        headers.add("flow.dlq.error.class", utf8("HTTP " + status));
        headers.add("flow.dlq.error.message", utf8(reason));
        headers.add("flow.dlq.http.status", utf8(Integer.toString(status)));
        headers.add("flow.dlq.computation", utf8(context.computation()));
        headers.add("flow.dlq.stage", utf8("deliver to sink '" + context.sink().id() + "'"));
        headers.add("flow.dlq.message_id", utf8(r.messageId().toString()));
        headers.add("flow.dlq.outbox_offset", utf8(Long.toString(r.offset())));
        try {
            producer().send(new ProducerRecord<>(context.deadLetterTopic(), null, null, r.key(), r.value(), headers))
                    .get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
        } catch (ExecutionException | KafkaException e) {
            Throwable refused = OutboxDeliveryException.recordRejection(e);
            if (refused == null) {
                throw e;
            }
            // the dead-letter topic cannot take the message (too large, most likely): without its bytes, saying so,
            // rather than block the sink on a message the target already refused for good
            Headers bare = SinkDeadLetters.bare(headers, "the message's key, body ("
                    + (r.value() == null ? 0 : r.value().length) + " bytes) and headers: the dead-letter topic refused "
                    + "them (" + refused + "); the message stays at flow.dlq.outbox_offset in the outbox until it is "
                    + "purged");
            producer().send(new ProducerRecord<>(context.deadLetterTopic(), null, null, null, null, bare))
                    .get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
        }
    }

    private synchronized KafkaProducer<byte[], byte[]> producer() {
        if (producer == null) {
            Map<String, Object> props = new HashMap<>(context.pipelineClientProperties());
            props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
            props.put(ProducerConfig.ACKS_CONFIG, "all");
            props.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
            props.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
            props.put(ProducerConfig.CLIENT_ID_CONFIG, context.applicationId() + ".outbox." + context.sink().id() + ".dlq");
            producer = new KafkaProducer<>(props);
        }
        return producer;
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Override
    public synchronized void close() {
        if (producer != null) {
            producer.close();
            producer = null;
        }
    }
}
