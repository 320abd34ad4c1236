package io.flowkafka.internal.dynamic;

import io.flowkafka.api.FlowException;
import io.flowkafka.internal.config.DynamicSpec;
import io.flowkafka.internal.status.StatusBoard;
import io.flowkafka.spi.ClientProperties;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.AuthorizationException;
import org.apache.kafka.common.errors.InvalidProducerEpochException;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.errors.TransactionAbortableException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A pipeline's dynamic spec shared by every instance through the compacted topic
 * {@code <flow.topic.prefix><pipeline>.dynamic-spec} (one partition, {@code cleanup.policy=compact}). The topic
 * holds one key, the pipeline name; each value is the WHOLE dynamic document in effect (the merge of every change so
 * far) with a version ({@link DynamicSpecDocument}). It keeps the rule that a change is validated whole before it is
 * published and published only whole: nothing reaches the topic if any of it is wrong.
 *
 * <p><b>Publishing a change</b> ({@link #publish}): read the latest document (the topic to its end), merge the change
 * into it, validate the merged document against the static spec (every problem listed with its field), write it
 * with version + 1 in a transaction, then apply it on this instance and return.
 *
 * <p><b>Concurrent changes</b> (two instances at once): read-merge-publish runs under a transactional producer whose
 * {@code transactional.id} is fixed per pipeline ({@code <application.id>.dynamic-spec}), created afresh for each
 * change. Its {@code initTransactions()} fences every earlier producer with that id: a transaction the broker has
 * not committed is aborted, and one being committed completes before the new producer gets its epoch. So the
 * document read after {@code initTransactions()} is the latest committed one, and a writer that another instance
 * fenced in between fails at its send or commit and starts over on the newer document (for up to 30 s). A later
 * change therefore never loses an earlier one. (Chosen over a version check, which would need a read of the topic
 * after the write to detect a lost race.)
 *
 * <p><b>Applying</b>: each instance's {@link DynamicSpecListener} polls the topic at most {@link #POLL} (500 ms)
 * apart, so a change reaches every running instance within about a second. At {@link #start} the instance reads the
 * topic to its end and applies the latest document before its tasks start: a restarted instance comes up with the
 * current dynamic spec, not the static one.
 *
 * <p>ACLs: Read, Write and Describe on the topic (the prefixed ACL on {@code <prefix><pipeline>.} covers it), Write
 * and Describe on the transactional id {@code <application.id>.dynamic-spec} (Kafka Streams' own ids are
 * {@code <application.id>-*}, which does not cover it).
 *
 * <p>Threading: {@link #publish} may be called from any thread (one change at a time per instance); the listener
 * runs on its own daemon thread.
 */
public final class DynamicSpecTopic implements AutoCloseable {
    /** The longest pause between two polls of the listener: the bound on how late an instance applies a change. */
    public static final Duration POLL = Duration.ofMillis(500);
    /** How long a publish retries after another instance's concurrent change fenced it. */
    static final Duration PUBLISH_TIMEOUT = Duration.ofSeconds(30);
    /** How long reading the topic to its end may take. */
    static final Duration READ_TIMEOUT = Duration.ofSeconds(60);

    private static final Logger LOG = LoggerFactory.getLogger(DynamicSpecTopic.class);

    private final String pipeline;
    private final TopicPartition partition;
    private final byte[] key;
    private final DynamicSpec dynamic;
    private final Map<String, Object> producerProps;
    private final Map<String, Object> consumerProps;
    private final DynamicSpecListener listener;

    private DynamicSpecTopic(String pipeline, String topic, Map<?, ?> streamsProps,
            DynamicSpec dynamic, StatusBoard status) {
        this.pipeline = pipeline;
        this.partition = new TopicPartition(topic, 0);
        this.key = pipeline.getBytes(StandardCharsets.UTF_8);
        this.dynamic = dynamic;
        this.consumerProps = consumerProperties(streamsProps);
        this.producerProps = ClientProperties.producer(streamsProps);
        producerProps.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId(topic));
        producerProps.put(ProducerConfig.ACKS_CONFIG, "all");
        producerProps.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        producerProps.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
        producerProps.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
        producerProps.remove(ProducerConfig.CLIENT_ID_CONFIG);
        producerProps.putIfAbsent(ProducerConfig.MAX_BLOCK_MS_CONFIG, (int) PUBLISH_TIMEOUT.toMillis());
        this.listener = new DynamicSpecListener(pipeline, topic, dynamic, status, new KafkaConsumer<>(consumerProps));
    }

    private static Map<String, Object> consumerProperties(Map<?, ?> clientProps) {
        Map<String, Object> props = ClientProperties.consumer(clientProps);
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        props.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, 100);
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
        props.remove(ConsumerConfig.CLIENT_ID_CONFIG);
        return props;
    }

    /**
     * Reads the document in effect from a pipeline's dynamic-spec topic, without an instance: for tools such as the
     * CLI's {@code get-dynamic-spec}.
     *
     * @param pipeline the pipeline name (the record key)
     * @param topic the topic ({@link #name})
     * @param clientProps connection properties (bootstrap servers, security)
     * @return the latest document, or {@link DynamicSpecDocument#EMPTY} when nothing was published
     * @throws FlowException if the topic cannot be read to its end within 60 s, or its latest record is not a document
     */
    public static DynamicSpecDocument read(String pipeline, String topic, Map<?, ?> clientProps) {
        TopicPartition partition = new TopicPartition(topic, 0);
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(consumerProperties(clientProps))) {
            return document(pipeline, partition, readLatest(consumer, pipeline, partition,
                    pipeline.getBytes(StandardCharsets.UTF_8)));
        }
    }

    /** The record key under which instances publish the static spec they run: {@code <pipeline>/spec}. */
    public static byte[] specKey(String pipeline) {
        return (pipeline + "/spec").getBytes(StandardCharsets.UTF_8);
    }

    /**
     * Publishes the static spec this instance runs (its file's text, or its graph for a spec built in Java) under
     * {@link #specKey}, for tools such as the CLI's {@code get-spec}. The listener ignores that key.
     *
     * @param value the JSON document to publish
     * @throws KafkaException if the write fails
     */
    public void publishSpec(byte[] value) {
        Map<String, Object> props = new java.util.HashMap<>(producerProps);
        props.remove(ProducerConfig.TRANSACTIONAL_ID_CONFIG);
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(props)) {
            producer.send(new ProducerRecord<>(partition.topic(), partition.partition(), specKey(pipeline), value));
            producer.flush();
        }
    }

    /**
     * Reads the static spec an instance of the pipeline published ({@link #publishSpec}), without an instance.
     *
     * @return the latest published value, or null when no instance published one
     */
    public static byte @Nullable [] readSpec(String pipeline, String topic, Map<?, ?> clientProps) {
        TopicPartition partition = new TopicPartition(topic, 0);
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(consumerProperties(clientProps))) {
            ConsumerRecord<byte[], byte[]> r = readLatest(consumer, pipeline, partition, specKey(pipeline));
            return r == null ? null : r.value();
        }
    }

    /**
     * The dynamic-spec topic of a pipeline.
     *
     * @param topicPrefix {@code flow.topic.prefix}
     * @param pipeline the pipeline name
     * @return {@code <topicPrefix><pipeline>.dynamic-spec}
     */
    public static String name(String topicPrefix, String pipeline) {
        return topicPrefix + pipeline + ".dynamic-spec";
    }

    /**
     * The transactional id of the pipeline's dynamic-spec writers: the topic's name, which every instance and the CLI
     * agree on (an {@code application.id} set by hand, or a CLI run without the instances' prefix, would give two
     * writers that do not fence each other, and one of two concurrent changes would be lost).
     */
    static String transactionalId(String topic) {
        return topic;
    }

    /**
     * Reads the topic to its end, applies the latest document on this instance (reporting it in the status if it
     * cannot be applied) and starts the listener. Call before the tasks start.
     *
     * @param topic the topic, created (with the pipeline's other topics, by {@code TopicManager})
     * @param streamsProps the runtime's Kafka Streams properties, for the clients' connection settings
     * @return the running topic; close it to stop the listener
     * @throws FlowException if the topic cannot be read to its end within 60 s
     */
    public static DynamicSpecTopic start(String pipeline, String topic, Map<?, ?> streamsProps,
            DynamicSpec dynamic, StatusBoard status) {
        DynamicSpecTopic t = new DynamicSpecTopic(pipeline, topic, streamsProps, dynamic, status);
        Map<String, Object> local = dynamic.document(); // changes made on this instance before start()
        try {
            ConsumerRecord<byte[], byte[]> latest = t.readLatest(t.listener.consumer());
            if (latest != null) {
                t.listener.accept(latest);
                if (!holds(dynamic.document(), local)) {
                    String message = "the dynamic spec changes made on this instance before start() (" + local
                            + ") were replaced by the shared dynamic spec of " + topic + " (" + dynamic.document()
                            + "); make them after start() with FlowRuntime.reconfigure or flow-kafka set-dynamic-spec, "
                            + "which change every instance";
                    LOG.warn("pipeline '{}': {}", pipeline, message);
                    status.report("*", -1, DynamicSpecListener.STATUS_PATH, message, Instant.now());
                }
            }
        } catch (RuntimeException e) {
            t.listener.close();
            throw e;
        }
        t.listener.start();
        return t;
    }

    /**
     * Publishes a change to every instance: merges it into the latest document, validates the result, writes it and
     * applies it here; returns once this instance runs with it.
     *
     * @param change a partial document; a {@code null} value removes a setting (back to its static value)
     * @return the document published
     * @throws IllegalArgumentException listing every problem of the merged document, each with its field; nothing
     *     was published
     * @throws FlowException if the topic cannot be read or written (then the change may or may not be published:
     *     check {@code FlowRuntime.status()} and the settings)
     */
    public synchronized DynamicSpecDocument publish(Map<String, ?> change) {
        long deadline = System.nanoTime() + PUBLISH_TIMEOUT.toNanos();
        for (int attempt = 1; ; attempt++) {
            KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(producerProps);
            boolean sent = false; // before the send, a failure published nothing
            try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(consumerProps)) {
                producer.initTransactions(); // fences every earlier writer of this pipeline's document
                DynamicSpecDocument base = document(readLatest(consumer));
                Map<String, Object> merged = DynamicSpec.merge(base.spec(), change);
                dynamic.validate(merged);
                DynamicSpecDocument next = new DynamicSpecDocument(base.version() + 1, merged);
                producer.beginTransaction();
                sent = true;
                producer.send(new ProducerRecord<>(partition.topic(), partition.partition(), key, next.toJson()));
                producer.commitTransaction();
                listener.apply(next, "published by this instance");
                return next;
            } catch (KafkaException e) {
                if (!fenced(e)) {
                    String reason = e.getMessage() != null ? e.getMessage() : e.getClass().getSimpleName();
                    String check = e instanceof AuthorizationException
                            ? "grant the principal Write on topic " + partition.topic() + " and on transactional id "
                                    + producerProps.get(ProducerConfig.TRANSACTIONAL_ID_CONFIG) + ", then try again"
                            : "check the topic's Write ACL and the transactional id "
                                    + producerProps.get(ProducerConfig.TRANSACTIONAL_ID_CONFIG) + ", then "
                                    + (sent ? "compare the settings and " : "") + "try again";
                    throw new FlowException("pipeline '" + pipeline + "': the dynamic spec change "
                            + (sent ? "may not have been" : "was not") + " published to " + partition.topic() + ": "
                            + reason + "; " + check, e);
                }
                if (System.nanoTime() > deadline) {
                    throw new FlowException("pipeline '" + pipeline + "': the dynamic spec change was not published: "
                            + "other instances kept publishing changes for " + PUBLISH_TIMEOUT.toSeconds() + " s ("
                            + attempt + " attempts); try again", e);
                }
                LOG.info("pipeline '{}': another instance published a dynamic spec change at the same time; merging "
                        + "this change into its document (attempt {})", pipeline, attempt + 1);
            } finally {
                producer.close(Duration.ofSeconds(5));
            }
        }
    }

    /** Whether another writer with the same transactional id took over (possibly wrapped by the producer). */
    private static boolean fenced(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof ProducerFencedException || t instanceof InvalidProducerEpochException
                    || t instanceof TransactionAbortableException) {
                return true;
            }
        }
        return false;
    }

    private DynamicSpecDocument document(@Nullable ConsumerRecord<byte[], byte[]> latest) {
        return document(pipeline, partition, latest);
    }

    private static DynamicSpecDocument document(String pipeline, TopicPartition partition,
            @Nullable ConsumerRecord<byte[], byte[]> latest) {
        if (latest == null) {
            return DynamicSpecDocument.EMPTY;
        }
        try {
            if (latest.value() == null) {
                throw new IllegalArgumentException("a tombstone");
            }
            return DynamicSpecDocument.fromJson(latest.value());
        } catch (IllegalArgumentException e) {
            throw new FlowException("pipeline '" + pipeline + "': the latest record of " + partition.topic()
                    + " (offset " + latest.offset() + ") is not a dynamic spec document (" + e.getMessage() + "), so no "
                    + "change can be merged into it; write a valid document there (a JSON {\"version\": <above "
                    + "every earlier one>, \"dynamic_spec\": {...}} keyed by the pipeline name)", e);
        }
    }

    /**
     * The last record of this pipeline's key, reading the topic (read_committed) to the end it has now; leaves the
     * consumer assigned, positioned at that end.
     */
    private @Nullable ConsumerRecord<byte[], byte[]> readLatest(Consumer<byte[], byte[]> consumer) {
        return readLatest(consumer, pipeline, partition, key);
    }

    private static @Nullable ConsumerRecord<byte[], byte[]> readLatest(Consumer<byte[], byte[]> consumer,
            String pipeline, TopicPartition partition, byte[] key) {
        long deadline = System.nanoTime() + READ_TIMEOUT.toNanos();
        consumer.assign(List.of(partition));
        long begin = consumer.beginningOffsets(List.of(partition), READ_TIMEOUT).get(partition);
        long end = consumer.endOffsets(List.of(partition), READ_TIMEOUT).get(partition);
        long from = Math.max(begin, end - 16);
        while (true) {
            ConsumerRecord<byte[], byte[]> latest = null;
            consumer.seek(partition, from);
            while (consumer.position(partition, READ_TIMEOUT) < end) {
                if (System.nanoTime() > deadline) {
                    throw new FlowException("pipeline '" + pipeline + "' could not read its dynamic-spec topic "
                            + partition.topic() + " to its end (offset " + end + ") within " + READ_TIMEOUT.toSeconds()
                            + " s; check the topic's Read ACL and the brokers");
                }
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(100))) {
                    if (r.offset() < end && r.key() != null && Arrays.equals(r.key(), key)) {
                        latest = r;
                    }
                }
            }
            if (latest != null || from == begin) {
                consumer.seek(partition, end);
                return latest;
            }
            from = Math.max(begin, from - 2 * (end - from)); // only markers or aborted writes in the tail: look further
        }
    }

    /** Stops the listener. Publishing still works afterwards (it then applies only on this instance's object). */
    @Override
    public void close() {
        listener.close();
    }

    /** Whether every setting of {@code settings} has the same value in {@code document} (nested maps). */
    static boolean holds(Map<String, Object> document, Map<String, Object> settings) {
        for (Map.Entry<String, Object> e : settings.entrySet()) {
            Object there = document.get(e.getKey());
            if (e.getValue() instanceof Map<?, ?> m && there instanceof Map<?, ?> d) {
                @SuppressWarnings("unchecked")
                boolean held = holds((Map<String, Object>) d, (Map<String, Object>) m);
                if (!held) {
                    return false;
                }
            } else if (!Objects.equals(e.getValue(), there)) {
                return false;
            }
        }
        return true;
    }
}
