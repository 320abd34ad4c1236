package io.flowkafka.connectors.clickhouse;

import io.flowkafka.spi.ClientProperties;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The durable "INSERT started" markers of a {@code TAtMostOnceClickHouseSink} in outbox mode: per outbox partition,
 * the outbox offset from which no message has started its INSERT yet, kept in a compacted one-partition topic
 * {@code <application.id>.clickhouse-started.<sink>} on the pipeline's cluster. Keeps the at-most-once rule across
 * crashes: a marker is written (and acknowledged) before any INSERT of the messages below it starts, and delivery
 * after a restart resumes at the marker, so a message whose INSERT may have started is never inserted again.
 * Messages below a marker whose INSERT never started are lost by a crash, as at-most-once allows. Used by the
 * delivery-service thread only.
 */
final class StartedMarkers implements AutoCloseable {
    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    private final String topic;
    private final String keyPrefix;
    private final Map<String, Object> clientProps;
    private KafkaProducer<byte[], byte[]> producer;
    private boolean topicReady;

    StartedMarkers(String applicationId, String sink, Map<String, Object> clientProps) {
        this.topic = applicationId + ".clickhouse-started." + sink;
        this.keyPrefix = applicationId + "/" + sink + "/";
        this.clientProps = clientProps;
    }

    /** The marker topic. */
    String topic() {
        return topic;
    }

    /**
     * The marker of an outbox partition.
     *
     * @param partition the outbox partition
     * @return the offset from which no INSERT started, or empty when none was written
     * @throws Exception if the topic cannot be made or read
     */
    OptionalLong read(int partition) throws Exception {
        ensureTopic();
        Map<String, Object> props = ClientProperties.consumer(clientProps);
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        byte[] key = key(partition);
        OptionalLong found = OptionalLong.empty();
        TopicPartition tp = new TopicPartition(topic, 0);
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props)) {
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            long end = consumer.endOffsets(List.of(tp), TIMEOUT).get(tp);
            long deadline = System.nanoTime() + TIMEOUT.toNanos();
            while (consumer.position(tp, TIMEOUT) < end) {
                if (System.nanoTime() > deadline) {
                    throw new TimeoutException("reading " + topic + " up to offset " + end);
                }
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                    if (java.util.Arrays.equals(r.key(), key) && r.value() != null) {
                        found = OptionalLong.of(ByteBuffer.wrap(r.value()).getLong());
                    }
                }
            }
        }
        return found;
    }

    /**
     * Writes a marker and waits for its acknowledgement.
     *
     * @param partition the outbox partition
     * @param next the offset from which no INSERT started
     * @throws Exception if the marker was not acknowledged
     */
    void write(int partition, long next) throws Exception {
        ensureTopic();
        if (producer == null) {
            Map<String, Object> props = ClientProperties.admin(clientProps);
            props.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
            props.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
            props.put(ProducerConfig.ACKS_CONFIG, "all");
            props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
            props.put(ProducerConfig.LINGER_MS_CONFIG, 0);
            producer = new KafkaProducer<>(props);
        }
        producer.send(new ProducerRecord<>(topic, 0, key(partition), ByteBuffer.allocate(8).putLong(next).array()))
                .get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
    }

    private byte[] key(int partition) {
        return (keyPrefix + partition).getBytes(StandardCharsets.UTF_8);
    }

    private void ensureTopic() throws Exception {
        if (topicReady) {
            return;
        }
        try (Admin admin = Admin.create(ClientProperties.admin(clientProps))) {
            Set<String> names = admin.listTopics().names().get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
            if (!names.contains(topic)) {
                try {
                    admin.createTopics(List.of(new NewTopic(topic, Optional.of(1), Optional.empty())
                            .configs(Map.of("cleanup.policy", "compact", "segment.ms", "600000",
                                    "min.cleanable.dirty.ratio", "0.1")))).all()
                            .get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
                } catch (ExecutionException e) {
                    if (!(e.getCause() instanceof TopicExistsException)) {
                        throw e;
                    }
                }
            }
        }
        topicReady = true;
    }

    @Override
    public void close() {
        if (producer != null) {
            producer.close(Duration.ofSeconds(5));
            producer = null;
        }
    }
}
