package io.flowkafka.testing;

import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * A running Kafka cluster that tests produce to, consume from and administer.
 *
 * <p>Implementations are thread-safe. Whoever started a cluster closes it; the
 * {@link EmbeddedKafkaCluster#shared() shared} cluster is closed by a JVM shutdown hook.
 *
 * @see EmbeddedKafkaCluster
 * @see ContainerKafkaCluster
 */
public interface KafkaCluster extends AutoCloseable {

    /**
     * The {@code bootstrap.servers} value clients use, such as {@code localhost:40123}.
     *
     * @return the bootstrap servers
     * @throws IllegalStateException if the cluster is closed
     */
    String bootstrapServers();

    /**
     * Creates a topic with the cluster's default replication and waits until every partition has
     * a leader.
     *
     * @param name a topic name not yet used on this cluster
     * @param partitions at least 1
     * @throws IllegalArgumentException if {@code partitions < 1}
     * @throws org.apache.kafka.common.errors.TopicExistsException if the topic exists
     * @throws io.flowkafka.api.FlowException if the cluster does not create the topic in time
     * @throws IllegalStateException if the cluster is closed
     */
    default void createTopic(String name, int partitions) {
        createTopic(name, partitions, Map.of());
    }

    /**
     * Creates a topic with topic-level configuration, such as {@code cleanup.policy=compact},
     * and waits until every partition has a leader.
     *
     * @param name a topic name not yet used on this cluster
     * @param partitions at least 1
     * @param config topic configuration entries; may be empty
     * @throws IllegalArgumentException if {@code partitions < 1}
     * @throws org.apache.kafka.common.errors.TopicExistsException if the topic exists
     * @throws org.apache.kafka.common.errors.InvalidConfigurationException if the broker rejects
     *     a configuration entry
     * @throws io.flowkafka.api.FlowException if the cluster does not create the topic in time
     * @throws IllegalStateException if the cluster is closed
     */
    void createTopic(String name, int partitions, Map<String, String> config);

    /**
     * The Admin client that the cluster owns and shares between callers.
     *
     * <p>Do not close it: {@link #close()} does.
     *
     * @return the shared Admin client
     * @throws IllegalStateException if the cluster is closed
     */
    Admin admin();

    /**
     * A fresh copy of the client properties for this cluster, with {@code bootstrap.servers} set;
     * callers may modify it and pass it to any Kafka client.
     *
     * @return a new properties object for a client
     * @throws IllegalStateException if the cluster is closed
     */
    Properties clientProperties();

    /**
     * A consumer of {@code topic} as a test checks an output: it sees committed records only
     * ({@code read_committed}), from the earliest offset on, as bytes, in the group
     * {@code <topic>-verify}; already subscribed. The caller polls and closes it.
     *
     * @param topic the topic to read
     * @return a subscribed consumer
     * @throws IllegalStateException if the cluster is closed
     */
    default KafkaConsumer<byte[], byte[]> committedConsumer(String topic) {
        Properties p = clientProperties();
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.GROUP_ID_CONFIG, topic + "-verify");
        KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer());
        c.subscribe(List.of(topic));
        return c;
    }

    /**
     * Stops the cluster, closes the shared {@link #admin() Admin} and deletes the cluster's data.
     *
     * <p>Idempotent; blocks until the cluster has stopped.
     */
    @Override
    void close();
}
