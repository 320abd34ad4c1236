package io.flowkafka.examples.external;

import io.flowkafka.spi.PipelineCodecs;
import io.flowkafka.testing.Await;
import io.flowkafka.testing.KafkaCluster;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericRecord;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * Reads an external table's topic on a broker as its joiners see it: read_committed, the last record of each key,
 * from the beginning (the topic must exist),
 * a tombstone deleting the row. Rows are found by a column of theirs (the key bytes of a deleted row are matched to
 * the column value of its earlier rows). Not thread-safe.
 */
final class TableTopicReader implements AutoCloseable {
    private final KafkaConsumer<byte[], byte[]> consumer;
    private final Schema schema;
    private final String column;
    private final String topic;
    private final Map<ByteBuffer, String> idByKey = new HashMap<>();
    private final Map<String, GenericRecord> rows = new HashMap<>();

    TableTopicReader(KafkaCluster cluster, String topic, Schema schema, String column) {
        this.schema = schema;
        this.column = column;
        Properties c = cluster.clientProperties();
        c.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        c.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        c.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        c.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        this.consumer = new KafkaConsumer<>(c);
        this.topic = topic;
    }

    /**
     * Reads everything committed when called (read_committed end offsets: the last stable offsets); returns the rows
     * by their column value.
     *
     * @param bound how long to wait for it
     * @return the rows
     */
    Map<String, GenericRecord> rowsToEnd(Duration bound) {
        rows();
        Map<TopicPartition, Long> end = consumer.endOffsets(consumer.assignment());
        Await.until(bound, "table topic " + topic + " read to its end", () -> {
            rows();
            return end.entrySet().stream().allMatch(e -> consumer.position(e.getKey()) >= e.getValue());
        });
        return rows;
    }

    /** Reads what was committed since the last call; returns the rows by their column value. */
    Map<String, GenericRecord> rows() {
        if (consumer.assignment().isEmpty()) {
            List<TopicPartition> parts = consumer.partitionsFor(topic).stream()
                    .map(i -> new TopicPartition(topic, i.partition())).toList();
            consumer.assign(parts);
            consumer.seekToBeginning(parts);
        }
        for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
            ByteBuffer key = ByteBuffer.wrap(r.key());
            if (r.value() == null) {
                String id = idByKey.get(key);
                if (id != null) {
                    rows.remove(id);
                }
            } else {
                GenericRecord row = PipelineCodecs.decodeRow(schema, r.value());
                String id = row.get(column).toString();
                idByKey.put(key, id);
                rows.put(id, row);
            }
        }
        return rows;
    }

    @Override
    public void close() {
        consumer.close();
    }
}
