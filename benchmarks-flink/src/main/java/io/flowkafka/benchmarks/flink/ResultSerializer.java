package io.flowkafka.benchmarks.flink;

import java.nio.charset.StandardCharsets;
import org.apache.flink.connector.kafka.sink.KafkaRecordSerializationSchema;
import org.apache.kafka.clients.producer.ProducerRecord;

/**
 * Writes a result keyed by impression id with its JSON value and no timestamp, so the producer
 * stamps system time, as the example's sink does ({@code "timestamp": "system"}): results of a
 * backfill carry old event times, which the broker's retention would delete.
 */
public class ResultSerializer implements KafkaRecordSerializationSchema<Result> {
    private static final long serialVersionUID = 1L;
    private final String topic;

    public ResultSerializer(String topic) {
        this.topic = topic;
    }

    @Override
    public ProducerRecord<byte[], byte[]> serialize(Result r, KafkaSinkContext context, Long timestamp) {
        return new ProducerRecord<>(topic, null, null, r.impressionId.getBytes(StandardCharsets.UTF_8),
                r.toJson().getBytes(StandardCharsets.UTF_8));
    }
}
