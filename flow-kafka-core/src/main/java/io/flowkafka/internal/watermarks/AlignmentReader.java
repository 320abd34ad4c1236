package io.flowkafka.internal.watermarks;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Follows the watermark changelogs of the aligned computations, so that {@link WatermarkAlignment}
 * knows the members running on other instances: each aligned task writes its sources' watermark
 * and idleness to its watermark store under {@link #KEY} ({@link WatermarkTracker#recordAlignment}),
 * and this reader sees it once the writer's transaction commits ({@code read_committed}).
 *
 * <p>A changelog topic is created by Kafka Streams at the first rebalance, so topics not there yet
 * are looked up again on later polls. Work: {@link #poll()} is called periodically (the runtime's
 * maintenance thread) and never blocks; the changelogs hold a few records per task per second.
 *
 * <p>Threading: one thread calls {@link #poll()} and {@link #close()}.
 */
public final class AlignmentReader implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(AlignmentReader.class);
    /** The watermark-store key of an aligned task's alignment entry. */
    public static final String KEY = "a|align";
    private static final byte[] KEY_BYTES = KEY.getBytes(StandardCharsets.UTF_8);

    private final Consumer<byte[], byte[]> consumer;
    private final WatermarkAlignment alignment;
    /** Changelog topic -> computation, for the topics not assigned yet. */
    private final Map<String, String> pending;
    private final Map<String, String> computationOf;
    private long nextLookupMs;

    /**
     * @param client the cluster's client properties (bootstrap servers, security)
     * @param changelogs per changelog topic, the aligned computation whose watermark store it logs
     */
    public AlignmentReader(Map<String, Object> client, String clientId, Map<String, String> changelogs,
            WatermarkAlignment alignment) {
        Map<String, Object> props = new HashMap<>();
        client.forEach((k, v) -> {
            if (ConsumerConfig.configNames().contains(k)) {
                props.put(k, v);
            }
        });
        props.remove(ConsumerConfig.GROUP_ID_CONFIG);
        props.put(ConsumerConfig.CLIENT_ID_CONFIG, clientId);
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        props.put(ConsumerConfig.ALLOW_AUTO_CREATE_TOPICS_CONFIG, false); // Kafka Streams creates the changelogs
        this.consumer = new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer());
        this.alignment = alignment;
        this.pending = new HashMap<>(changelogs);
        this.computationOf = Map.copyOf(changelogs);
    }

    /** Assigns the changelogs that exist by now, then reports what arrived since the last call. */
    public void poll() {
        try {
            if (!pending.isEmpty() && System.currentTimeMillis() >= nextLookupMs) {
                nextLookupMs = System.currentTimeMillis() + 1000;
                assignExisting();
            }
            if (consumer.assignment().isEmpty()) {
                return;
            }
            for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ZERO)) {
                if (r.key() != null && Arrays.equals(r.key(), KEY_BYTES) && r.value() != null && r.value().length >= 9) {
                    ByteBuffer v = ByteBuffer.wrap(r.value());
                    alignment.report(computationOf.get(r.topic()), r.partition(), v.getLong(), v.get() != 0,
                            java.util.Set.of());
                }
            }
        } catch (KafkaException e) {
            // the broker is away or a topic is being recreated: the members keep their last values; next call retries
            LOG.debug("watermark alignment: reading the watermark changelogs failed, retrying: {}", e.toString());
        }
    }

    private void assignExisting() {
        List<TopicPartition> found = new ArrayList<>();
        for (String topic : List.copyOf(pending.keySet())) {
            List<PartitionInfo> parts = consumer.partitionsFor(topic, Duration.ofMillis(500));
            if (parts == null || parts.isEmpty()) {
                continue;
            }
            parts.forEach(p -> found.add(new TopicPartition(topic, p.partition())));
            pending.remove(topic);
        }
        if (!found.isEmpty()) {
            List<TopicPartition> all = new ArrayList<>(consumer.assignment());
            all.addAll(found);
            consumer.assign(all);
            consumer.seekToBeginning(found);
        }
    }

    @Override
    public void close() {
        consumer.close(Duration.ofSeconds(2));
    }
}
