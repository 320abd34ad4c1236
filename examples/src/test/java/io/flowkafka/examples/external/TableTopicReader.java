package io.flowkafka.examples.external;

import io.flowkafka.spi.PipelineCodecs;
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
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * Reads an external table's topic on a broker as its joiners see it: read_committed, the last record of each key,
 * a tombstone deleting the row. Rows are found by a column of theirs (the key bytes of a deleted row are matched to
 * the column value of its earlier rows). Not thread-safe.
 */
final class TableTopicReader implements AutoCloseable {
    private final KafkaConsumer<byte[], byte[]> consumer;
    private final Schema schema;
    private final String column;
    private final Map<ByteBuffer, String> idByKey = new HashMap<>();
    private final Map<String, GenericRecord> rows = new HashMap<>();

    TableTopicReader(KafkaCluster cluster, String topic, Schema schema, String column) {
        this.schema = schema;
        this.column = column;
        Properties c = cluster.clientProperties();
        c.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        c.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        c.put(ConsumerConfig.GROUP_ID_CONFIG, topic + "-verify");
        c.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        c.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        this.consumer = new KafkaConsumer<>(c);
        consumer.subscribe(List.of(topic));
    }

    /** Reads what was committed since the last call; returns the rows by their column value. */
    Map<String, GenericRecord> rows() {
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
