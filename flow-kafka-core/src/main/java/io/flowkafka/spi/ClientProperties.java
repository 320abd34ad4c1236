package io.flowkafka.spi;

import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.streams.StreamsConfig;

/**
 * The Kafka client properties an {@code Admin} or a consumer takes from a larger set of properties
 * (the runtime's Kafka Streams properties, or a sink's): bootstrap servers, security and client
 * settings, by the client's own config names; {@code flow.*} keys, Kafka Streams keys and prefixed
 * keys are left out. The one place that filters them, so every client of a pipeline's cluster is
 * configured alike.
 *
 * <p>Thread-safe: holds no state. Returns new, mutable maps; the values are those given, not copies.
 */
public final class ClientProperties {
    private ClientProperties() {
    }

    /**
     * The entries of {@code props} whose key is an {@code Admin} config ({@link AdminClientConfig#configNames()}).
     *
     * @param props the properties to filter, e.g. the runtime's Kafka Streams properties
     * @return a new, mutable map of the {@code Admin} properties
     */
    public static Map<String, Object> admin(Map<?, ?> props) {
        return only(props, AdminClientConfig.configNames());
    }

    /**
     * The entries of {@code props} whose key is a consumer config ({@link ConsumerConfig#configNames()}), without
     * {@code group.id}: the caller chooses its group, or has none.
     *
     * @param props the properties to filter, e.g. the runtime's Kafka Streams properties
     * @return a new, mutable map of the consumer properties
     */
    public static Map<String, Object> consumer(Map<?, ?> props) {
        Map<String, Object> c = only(props, ConsumerConfig.configNames());
        c.remove(ConsumerConfig.GROUP_ID_CONFIG);
        dropStreamsProtocol(c);
        return c;
    }

    /**
     * Removes {@code group.protocol=streams}: Kafka Streams' own protocol (KIP-1071), which a plain consumer refuses
     * ("must be one of CONSUMER, CLASSIC"). The pipeline's other consumers then take the consumer default.
     */
    private static void dropStreamsProtocol(Map<String, Object> consumer) {
        Object protocol = consumer.get(ConsumerConfig.GROUP_PROTOCOL_CONFIG);
        if (protocol != null && "streams".equalsIgnoreCase(protocol.toString().trim())) {
            consumer.remove(ConsumerConfig.GROUP_PROTOCOL_CONFIG);
        }
    }

    /**
     * The entries of {@code props} whose key is a producer config ({@link ProducerConfig#configNames()}), without
     * {@code transactional.id}: the caller chooses its transactional id, or has none.
     *
     * @param props the properties to filter, e.g. the runtime's Kafka Streams properties
     * @return a new, mutable map of the producer properties
     */
    public static Map<String, Object> producer(Map<?, ?> props) {
        Map<String, Object> p = only(props, ProducerConfig.configNames());
        p.remove(ProducerConfig.TRANSACTIONAL_ID_CONFIG);
        return p;
    }

    /**
     * The consumer properties Kafka Streams gives its main consumer: {@link #consumer(Map)}, overlaid with the
     * {@code consumer.}-prefixed keys and then the {@code main.consumer.}-prefixed ones, as Kafka Streams ranks them;
     * without {@code group.id}. For the pipeline's own group consumers (the outbox deliveries), so a
     * {@code session.timeout.ms} given to Kafka Streams holds for them too.
     *
     * @param props the runtime's Kafka Streams properties
     * @return a new, mutable map of the consumer properties
     */
    public static Map<String, Object> mainConsumer(Map<?, ?> props) {
        Map<String, Object> c = consumer(props);
        for (String prefix : new String[] {StreamsConfig.CONSUMER_PREFIX, StreamsConfig.MAIN_CONSUMER_PREFIX}) {
            props.forEach((k, v) -> {
                String key = k.toString();
                if (key.startsWith(prefix) && ConsumerConfig.configNames().contains(key.substring(prefix.length()))) {
                    c.put(key.substring(prefix.length()), v);
                }
            });
        }
        c.remove(ConsumerConfig.GROUP_ID_CONFIG);
        dropStreamsProtocol(c);
        return c;
    }

    private static Map<String, Object> only(Map<?, ?> props, Set<String> names) {
        Map<String, Object> out = new HashMap<>();
        props.forEach((k, v) -> {
            if (names.contains(k.toString())) {
                out.put(k.toString(), v);
            }
        });
        return out;
    }
}
