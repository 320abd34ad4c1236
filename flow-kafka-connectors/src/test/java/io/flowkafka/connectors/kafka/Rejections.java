package io.flowkafka.connectors.kafka;

import io.flowkafka.testing.KafkaCluster;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Properties;
import java.util.Random;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/** What the tests of records a target rejects for good share. */
final class Rejections {
    private Rejections() {
    }

    /** 20,000 random letters: lz4 cannot squeeze a record carrying them under a 2000-byte {@code max.message.bytes}. */
    static String incompressible(long seed) {
        Random random = new Random(seed);
        StringBuilder big = new StringBuilder();
        for (int i = 0; i < 20_000; i++) {
            big.append((char) ('a' + random.nextInt(26)));
        }
        return big.toString();
    }

    /** A read_committed consumer of {@code topic} from its start. */
    static KafkaConsumer<byte[], byte[]> reader(KafkaCluster cluster, String topic) {
        Properties p = cluster.clientProperties();
        p.put("isolation.level", "read_committed");
        p.put("auto.offset.reset", "earliest");
        p.put("group.id", topic + "-reader");
        p.put("key.deserializer", ByteArrayDeserializer.class.getName());
        p.put("value.deserializer", ByteArrayDeserializer.class.getName());
        KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(p);
        c.subscribe(List.of(topic));
        return c;
    }

    /** Writes {@code keysAndValues} (key, value, key, value, ...) to {@code topic} in this order, each acknowledged. */
    static void send(KafkaCluster cluster, String topic, String... keysAndValues) throws Exception {
        Properties pp = cluster.clientProperties();
        pp.put("key.serializer", StringSerializer.class.getName());
        pp.put("value.serializer", StringSerializer.class.getName());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(pp)) {
            for (int i = 0; i < keysAndValues.length; i += 2) {
                producer.send(new ProducerRecord<>(topic, keysAndValues[i], keysAndValues[i + 1])).get();
            }
        }
    }

    static String header(ConsumerRecord<byte[], byte[]> r, String name) {
        var h = r.headers().lastHeader(name);
        return h == null ? null : new String(h.value(), StandardCharsets.UTF_8);
    }
}
