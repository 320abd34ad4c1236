package io.flowkafka.internal.watermarks;

import io.flowkafka.spi.ClientProperties;
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
import org.apache.kafka.common.errors.RetriableException;
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
    /** Changelog partitions still replaying their history: the end offset when assigned. */
    private final Map<TopicPartition, Long> replayUntil = new HashMap<>();
    private final Map<TopicPartition, byte[]> replayed = new HashMap<>();
    private long nextWarnMs;
    /** When the current run of retriable failures began, or -1. */
    private long failingSinceMs = -1;
    /** How long retriable failures (timeouts under load) are retried before a warning. */
    private static final long QUIET_RETRIES_MS = 30_000;

    /**
     * @param client the cluster's client properties (bootstrap servers, security)
     * @param changelogs per changelog topic, the aligned computation whose watermark store it logs
     */
    public AlignmentReader(Map<String, Object> client, String clientId, Map<String, String> changelogs,
            WatermarkAlignment alignment) {
        Map<String, Object> props = ClientProperties.consumer(client);
        props.put(ConsumerConfig.CLIENT_ID_CONFIG, clientId);
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        props.put(ConsumerConfig.ALLOW_AUTO_CREATE_TOPICS_CONFIG, false); // Kafka Streams creates the changelogs
        props.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 10_000); // a changelog's history is replayed at start
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
                    TopicPartition tp = new TopicPartition(r.topic(), r.partition());
                    if (replayUntil.containsKey(tp)) {
                        replayed.put(tp, r.value()); // replaying history: only the latest record counts
                    } else {
                        report(tp, r.value());
                    }
                }
            }
            for (var it = replayUntil.entrySet().iterator(); it.hasNext(); ) {
                var e = it.next();
                if (consumer.position(e.getKey(), Duration.ofMillis(100)) >= e.getValue()) {
                    it.remove(); // caught up with what the changelog held when assigned
                    byte[] last = replayed.remove(e.getKey());
                    if (last != null) {
                        report(e.getKey(), last);
                    }
                }
            }
        } catch (KafkaException e) {
            // the broker is away, or no access: the members keep their last values; the next call retries
            warn("reading the watermark changelogs failed, retrying: " + e, e);
            return;
        }
        failingSinceMs = -1; // read fine: a later failure starts a new quiet period
    }

    private void report(TopicPartition tp, byte[] value) {
        ByteBuffer v = ByteBuffer.wrap(value);
        alignment.reportRemote(computationOf.get(tp.topic()), tp.partition(), v.getLong(), v.get() != 0);
    }

    private void assignExisting() {
        for (String topic : List.copyOf(pending.keySet())) {
            List<PartitionInfo> parts;
            try {
                parts = consumer.partitionsFor(topic, Duration.ofMillis(200));
            } catch (KafkaException e) {
                warn("looking up watermark changelog " + topic + " failed, retrying: " + e, e);
                continue;
            }
            if (parts == null || parts.isEmpty()) {
                continue; // not created yet: Kafka Streams creates it at the first rebalance
            }
            List<TopicPartition> found = new ArrayList<>();
            parts.forEach(p -> found.add(new TopicPartition(topic, p.partition())));
            List<TopicPartition> all = new ArrayList<>(consumer.assignment());
            all.addAll(found);
            consumer.assign(all);
            consumer.seekToBeginning(found);
            // the history up to the end offsets of now is replayed without reporting each step (members would
            // look far behind meanwhile, pausing others): only each partition's latest record counts
            consumer.endOffsets(found, Duration.ofMillis(500)).forEach((tp, end) -> {
                if (end > 0) {
                    replayUntil.put(tp, end);
                }
            });
            pending.remove(topic); // only once assigned
        }
    }

    /** A warning at most once a minute: the reader retries every poll, and a lasting failure must not flood the log. */
    private void warn(String message, KafkaException e) {
        long now = System.currentTimeMillis();
        if (e instanceof RetriableException) {
            if (failingSinceMs < 0) {
                failingSinceMs = now;
            }
            if (now - failingSinceMs < QUIET_RETRIES_MS) { // a slow answer under load: the next call retries
                LOG.debug("watermark alignment: {}", message);
                return;
            }
        }
        if (now >= nextWarnMs) {
            nextWarnMs = now + 60_000;
            LOG.warn("watermark alignment: {} (members on other instances keep their last known state)", message);
        }
    }

    @Override
    public void close() {
        consumer.close(Duration.ofSeconds(2));
    }
}
