package io.flowkafka.internal.status;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.flowkafka.spi.ClientProperties;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.LongFunction;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.InterruptException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Every instance's status shared through the compacted topic {@code <flow.topic.prefix><pipeline>.instances} (one
 * partition): each instance publishes its part ({@link InstanceReport}) keyed by its instance id every interval, and
 * follows the topic from its start, so that any instance serves the merged view of all of them. It keeps the rule
 * that the view shows only what instances said: an instance's part leaves the view with its tombstone (written on
 * close), and one whose last part is older than three intervals is listed as gone (it crashed or lost the cluster).
 *
 * <p>ACLs: Read, Write and Describe on the topic (the prefixed ACL on {@code <prefix><pipeline>.} covers it); the
 * follower assigns its partition and commits nothing, so it needs no consumer group.
 *
 * <p>Threading: one daemon thread publishes and polls; {@link #view} may be called from any thread.
 */
public final class InstanceStatusTopic implements AutoCloseable {
    /** How many intervals an instance may stay silent before the view lists it as gone. */
    static final int GONE_AFTER_INTERVALS = 3;
    /** How long a gone instance stays listed before it is forgotten: at least an hour, or 100 intervals. */
    static final long FORGET_AFTER_MS = Duration.ofHours(1).toMillis();

    private static final Logger LOG = LoggerFactory.getLogger(InstanceStatusTopic.class);
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration POLL = Duration.ofMillis(200);

    private final String pipeline;
    private final TopicPartition partition;
    private final String instanceId;
    private final long intervalMs;
    private final LongFunction<ObjectNode> report;
    private final KafkaProducer<byte[], byte[]> producer;
    private final KafkaConsumer<byte[], byte[]> consumer;
    private final Map<String, JsonNode> parts = new ConcurrentHashMap<>();
    private final ExecutorService thread;
    private final Future<?> loop;
    private volatile boolean running = true;
    /** The topic's end offset when this follower started (-1 until read, on the loop's thread). */
    private long startEnd = -1;
    private boolean caughtUp;

    private InstanceStatusTopic(String pipeline, String topic, String instanceId, long intervalMs,
            Map<?, ?> streamsProps, LongFunction<ObjectNode> report) {
        this.pipeline = pipeline;
        this.partition = new TopicPartition(topic, 0);
        this.instanceId = instanceId;
        this.intervalMs = intervalMs;
        this.report = report;
        Map<String, Object> producerProps = ClientProperties.producer(streamsProps);
        producerProps.remove(ProducerConfig.CLIENT_ID_CONFIG);
        producerProps.remove(ProducerConfig.TRANSACTIONAL_ID_CONFIG);
        producerProps.put(ProducerConfig.ACKS_CONFIG, "all");
        producerProps.put(ProducerConfig.LINGER_MS_CONFIG, 0);
        producerProps.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, 10_000);
        producerProps.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
        producerProps.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
        Map<String, Object> consumerProps = ClientProperties.consumer(streamsProps);
        consumerProps.remove(ConsumerConfig.CLIENT_ID_CONFIG);
        consumerProps.remove(ConsumerConfig.GROUP_ID_CONFIG);
        consumerProps.remove(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG);
        consumerProps.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        consumerProps.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        consumerProps.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, 100);
        consumerProps.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
        consumerProps.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
        this.producer = new KafkaProducer<>(producerProps);
        this.consumer = new KafkaConsumer<>(consumerProps);
        consumer.assign(List.of(partition));
        consumer.seekToBeginning(List.of(partition));
        this.thread = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "flow-" + pipeline + "-instances");
            t.setDaemon(true);
            return t;
        });
        this.loop = thread.submit(this::run);
    }

    /**
     * The instances topic of a pipeline.
     *
     * @param topicPrefix {@code flow.topic.prefix}
     * @param pipeline the pipeline name
     * @return {@code <topicPrefix><pipeline>.instances}
     */
    public static String name(String topicPrefix, String pipeline) {
        return topicPrefix + pipeline + ".instances";
    }

    /**
     * Starts publishing this instance's part every {@code intervalMs} and following every instance's.
     *
     * @param topic the topic, created with the pipeline's other shared topics
     * @param instanceId the key of this instance's part
     * @param streamsProps the runtime's Kafka Streams properties, for the clients' connection settings
     * @param report builds this instance's part, given the time in milliseconds
     * @return the running topic; close it to publish the tombstone and stop
     */
    public static InstanceStatusTopic start(String pipeline, String topic, String instanceId, long intervalMs,
            Map<?, ?> streamsProps, LongFunction<ObjectNode> report) {
        return new InstanceStatusTopic(pipeline, topic, instanceId, intervalMs, streamsProps, report);
    }

    private void run() {
        long nextPublish = 0;
        while (running) {
            try {
                long now = System.currentTimeMillis();
                if (now >= nextPublish) {
                    nextPublish = now + intervalMs;
                    byte[] value = JSON.writeValueAsBytes(report.apply(now));
                    producer.send(new ProducerRecord<>(partition.topic(), partition.partition(), key(), value));
                    // a crashed instance writes no tombstone: forget it here, and in the compacted topic; only once
                    // caught up with the topic, whose uncompacted tail still holds old parts of live instances
                    for (String stale : caughtUp() ? forgotten(parts, now, intervalMs) : List.<String>of()) {
                        if (stale.equals(instanceId)) {
                            continue; // this instance's part from before a restart: the one just sent replaces it
                        }
                        parts.remove(stale);
                        producer.send(new ProducerRecord<>(partition.topic(), partition.partition(),
                                stale.getBytes(StandardCharsets.UTF_8), null));
                    }
                }
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(POLL)) {
                    accept(r);
                }
            } catch (InterruptException e) {
                return; // closing
            } catch (RuntimeException | IOException e) {
                if (!running) {
                    return;
                }
                LOG.warn("pipeline '{}': the instance status on {} could not be published or read now: {}; trying "
                        + "again (check the topic's Read and Write ACLs)", pipeline, partition.topic(), e.toString());
                sleepQuietly(intervalMs);
            }
        }
    }

    /** Whether this follower has read the topic up to where it ended when the follower started. */
    private boolean caughtUp() {
        if (caughtUp) {
            return true;
        }
        if (startEnd < 0) {
            startEnd = consumer.endOffsets(List.of(partition)).get(partition);
        }
        caughtUp = consumer.position(partition) >= startEnd;
        return caughtUp;
    }

    private void accept(ConsumerRecord<byte[], byte[]> r) {
        if (r.key() == null) {
            return;
        }
        String id = new String(r.key(), StandardCharsets.UTF_8);
        if (r.value() == null) {
            parts.remove(id);
            return;
        }
        try {
            parts.put(id, JSON.readTree(r.value()));
        } catch (IOException e) {
            LOG.debug("pipeline '{}': skipping a record of {} at offset {} that is not JSON", pipeline,
                    partition.topic(), r.offset());
        }
    }

    private byte[] key() {
        return instanceId.getBytes(StandardCharsets.UTF_8);
    }

    /**
     * The merged view: {@code {"pipeline", "now", "interval_ms", "instances": [...], "gone": [...]}}, instances
     * ordered by id; an instance silent for more than three intervals is in {@code gone}, not {@code instances}.
     */
    public ObjectNode view() {
        return view(pipeline, System.currentTimeMillis(), intervalMs, parts);
    }

    /** The merged view of {@code parts} (instance id to its last part) at {@code now}. */
    static ObjectNode view(String pipeline, long now, long intervalMs, Map<String, JsonNode> parts) {
        ObjectNode out = JSON.createObjectNode();
        out.put("pipeline", pipeline);
        out.put("now", now);
        out.put("interval_ms", intervalMs);
        ArrayNode live = out.putArray("instances");
        ArrayNode gone = out.putArray("gone");
        new TreeMap<>(parts).forEach((id, part) -> {
            long at = part.path("timestamp").asLong(0);
            if (now - at > GONE_AFTER_INTERVALS * intervalMs) {
                gone.addObject().put("instance", id).put("timestamp", at);
            } else {
                live.add(part);
            }
        });
        return out;
    }

    /**
     * The instances of {@code parts} silent for longer than {@link #FORGET_AFTER_MS} (or 100 intervals, if longer):
     * crashed or killed ones, which wrote no tombstone. Without this every pod that ever crashed would be kept.
     */
    static List<String> forgotten(Map<String, JsonNode> parts, long now, long intervalMs) {
        long after = Math.max(FORGET_AFTER_MS, 100L * intervalMs);
        List<String> out = new ArrayList<>();
        parts.forEach((id, part) -> {
            if (now - part.path("timestamp").asLong(0) > after) {
                out.add(id);
            }
        });
        return out;
    }

    /** Stops publishing and following, and publishes the tombstone that takes this instance out of every view. */
    @Override
    public void close() {
        running = false;
        try {
            loop.get(5, TimeUnit.SECONDS);
        } catch (Exception e) {
            loop.cancel(true);
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
        }
        thread.shutdownNow();
        try {
            producer.send(new ProducerRecord<>(partition.topic(), partition.partition(), key(), null)).get(10,
                    TimeUnit.SECONDS);
        } catch (Exception e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            LOG.warn("pipeline '{}': the tombstone of instance {} could not be written to {} ({}); other instances "
                    + "list it as gone after {} ms", pipeline, instanceId, partition.topic(), e.toString(),
                    GONE_AFTER_INTERVALS * intervalMs);
        } finally {
            producer.close(Duration.ofSeconds(5));
            consumer.close(Duration.ofSeconds(5));
        }
    }

    private static void sleepQuietly(long ms) {
        try {
            Thread.sleep(Math.min(ms, 1_000));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
