package io.flowkafka.connectors.kafka;

import io.flowkafka.avro.SinkProgress;
import io.flowkafka.spi.ClientProperties;
import io.flowkafka.spi.OutboxBatch;
import io.flowkafka.spi.OutboxDeliverer;
import io.flowkafka.spi.OutboxDeliveryException;
import io.flowkafka.spi.SinkDeadLetters;
import io.flowkafka.spi.OutboxRecord;
import io.flowkafka.spi.SinkContext;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.DecoderFactory;
import org.apache.avro.io.EncoderFactory;
import org.apache.avro.specific.SpecificDatumReader;
import org.apache.avro.specific.SpecificDatumWriter;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.utils.Utils;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Delivers a {@code TKafkaSink}'s outbox to its target topic.
 *
 * <h2>Exactly once ({@code delivery_guarantee: exactly_once}, the default)</h2>
 * Per outbox partition {@code p}, a transactional producer with {@code transactional.id =
 * <application.id>.outbox.<sink>.<p>} writes each batch and, in the same transaction, a progress
 * marker (Avro {@code SinkProgress}: the next outbox offset) keyed {@code <application.id>/<sink>/<p>}
 * to the compacted progress topic on the target cluster. The marker is the truth about what was
 * delivered:
 * <ul>
 *   <li>{@link #open}: {@code initTransactions()} fences any older producer of the partition (a
 *       zombie instance) and aborts its open transaction; then the marker is read
 *       {@code read_committed} and delivery resumes at its offset;</li>
 *   <li>records below the marker are never sent again, even when the service offers them (a batch
 *       retried after an uncertain commit);</li>
 *   <li>after any failure inside a transaction the producer is dropped; the next attempt opens a
 *       new one (fencing the old) and re-reads the marker, so a commit whose outcome was unknown is
 *       never repeated;</li>
 *   <li>no marker while the delivery group has committed progress means the marker was lost
 *       (progress topic deleted or emptied) while messages may already be in the target: the sink
 *       stops with an error instead of writing them again.</li>
 * </ul>
 * Consumers of the target topic must read with {@code isolation.level=read_committed}.
 *
 * <h2>At least once ({@code delivery_guarantee: at_least_once})</h2>
 * One idempotent producer without transactions; a batch is acknowledged by the target before the
 * service commits its progress, so nothing is lost; a restart between the two writes the batch
 * again.
 *
 * <p>When the outbox holds several ready batches of a partition (a backlog), up to {@value #BATCHES_PER_TRANSACTION}
 * of them go in one transaction with one marker, the one after the last.
 *
 * <p>Threading: called only by the sink's delivery-service thread.
 */
final class KafkaDeliverer implements OutboxDeliverer {
    private static final Logger LOG = LoggerFactory.getLogger(KafkaDeliverer.class);
    private static final Duration TIMEOUT = Duration.ofSeconds(60);
    /**
     * Exactly once: how many outbox batches (each up to {@code max_batch_records}) one transaction may take when the
     * outbox holds several ready ones (a backlog): one transaction and one marker for them instead of one each.
     */
    static final int BATCHES_PER_TRANSACTION = 10;

    static {
        io.flowkafka.avro.FlowAvroClasses.trust();
    }

    private final SinkContext context;
    private final String topic;
    private final String progressTopic;
    private final boolean exactlyOnce;
    private final Map<String, Object> clientProps;
    private final Map<Integer, KafkaProducer<byte[], byte[]>> producers = new HashMap<>();
    /** Per open partition: the outbox offset the marker says is next. */
    private final Map<Integer, Long> markerNext = new HashMap<>();
    private @Nullable KafkaProducer<byte[], byte[]> shared;
    private boolean progressTopicReady;
    private int progressPartitions = 1;

    KafkaDeliverer(SinkContext context) {
        this.context = context;
        Map<String, Object> p = context.sink().parameters();
        this.topic = String.valueOf(p.get("topic"));
        this.progressTopic = String.valueOf(p.getOrDefault("progress_topic", topic + ".flow-progress"));
        this.exactlyOnce = !"at_least_once".equals(String.valueOf(p.getOrDefault("delivery_guarantee", "exactly_once")))
                && !io.flowkafka.spec.AtMostOnceStrategy.of(context.sink()).enabled();
        Map<String, Object> client = new HashMap<>();
        if (!context.sinkProperties().containsKey("bootstrap.servers")) {
            client.putAll(context.pipelineClientProperties());
        }
        client.putAll(context.sinkProperties());
        this.clientProps = Map.copyOf(client);
    }

    private String sinkName() {
        return "sink '" + context.sink().id() + "' (TKafkaSink to topic " + topic + ")";
    }

    @Override
    public OptionalLong open(int partition, OptionalLong committedOffset) throws OutboxDeliveryException {
        if (!exactlyOnce) {
            return OptionalLong.empty();
        }
        ensureProgressTopic();
        openProducer(partition);
        Long next = readMarker(partition);
        if (next != null && committedOffset.isPresent() && next < committedOffset.getAsLong()) {
            // the marker is read to the progress partition's end, so it is not late: the delivery group moved on
            // without it (the sink ran with delivery_guarantee at_least_once meanwhile, or the progress topic lost
            // records). The group commits only what was delivered: delivery goes on from there
            LOG.warn("{}: the progress marker of outbox partition {} says {}, behind the delivery group's offset {} "
                    + "(the sink ran with delivery_guarantee at_least_once since, or topic {} lost records); "
                    + "delivery resumes at {}", sinkName(), partition, next, committedOffset.getAsLong(),
                    progressTopic, committedOffset.getAsLong());
            next = committedOffset.getAsLong();
        }
        if (next == null) {
            if (committedOffset.isPresent() && committedOffset.getAsLong() > 0) {
                release(partition);
                throw OutboxDeliveryException.fatal(sinkName() + ": the progress marker of outbox partition " + partition
                        + " is missing from topic " + progressTopic + " on the target cluster, but delivery had reached "
                        + "outbox offset " + committedOffset.getAsLong() + ", so messages may already be in " + topic
                        + "; refusing to write them again. (A sink switched from delivery_guarantee at_least_once to "
                        + "exactly_once has no marker yet either: its at-least-once progress is in the delivery group.) "
                        + "If the target topic was emptied on purpose, or the switch is intended, stop every instance "
                        + "and reset the consumer group " + context.applicationId() + ".outbox." + context.sink().id()
                        + " to the offset to resume from (kafka-consumer-groups --reset-offsets; --to-current resumes "
                        + "where delivery stopped), or delete it to deliver everything the outbox still holds");
            }
            markerNext.put(partition, -1L);
            return OptionalLong.empty();
        }
        markerNext.put(partition, next);
        return OptionalLong.of(next);
    }

    @Override
    public int maxBatchesTogether() {
        return exactlyOnce ? BATCHES_PER_TRANSACTION : 1;
    }

    @Override
    public void deliver(OutboxBatch batch) throws OutboxDeliveryException {
        if (!exactlyOnce) {
            deliverAtLeastOnce(batch);
            return;
        }
        deliverTogether(List.of(batch));
    }

    /**
     * Exactly once: the batches in one transaction with one progress marker, the one after the last batch; what the
     * marker already covers (an earlier attempt's commit) is skipped.
     */
    @Override
    public void deliverTogether(List<OutboxBatch> batches) throws OutboxDeliveryException {
        if (!exactlyOnce) {
            for (OutboxBatch batch : batches) {
                deliverAtLeastOnce(batch);
            }
            return;
        }
        OutboxBatch first = batches.get(0);
        OutboxBatch last = batches.get(batches.size() - 1);
        int p = first.partition();
        if (!producers.containsKey(p)) {
            // a failed transaction dropped the producer: fence it with a new one and learn from the marker what the
            // failed attempt committed, if anything
            openProducer(p);
            Long next = readMarker(p);
            markerNext.put(p, next == null ? -1L : next);
        }
        long from = markerNext.getOrDefault(p, -1L);
        List<OutboxRecord> todo = new ArrayList<>();
        for (OutboxBatch batch : batches) {
            for (OutboxRecord r : batch.records()) {
                if (r.offset() >= from) {
                    todo.add(r);
                }
            }
        }
        if (todo.isEmpty() && from >= last.nextOffset()) {
            return; // the marker covers the batches: delivered by an earlier attempt
        }
        try {
            commit(p, todo, last.nextOffset(), last.dedupToken().toBytes());
        } catch (RuntimeException e) {
            dropProducer(p, true);
            if (OutboxDeliveryException.recordRejection(e) != null) {
                // one of the records can never be written: find it, one record per transaction, and dead-letter it
                for (OutboxBatch batch : batches) {
                    deliverOneByOne(batch);
                }
                return;
            }
            String what = sinkName() + ": writing outbox offsets " + first.firstOffset() + ".." + (last.nextOffset() - 1)
                    + " (message ids " + first.records().get(0).messageId() + ".." + last.dedupToken() + ")";
            Throwable bad = nonRetriable(e);
            if (bad != null) {
                throw OutboxDeliveryException.fatal(what + " failed and retrying cannot help: " + bad
                        + " (fix the target topic, the ACLs or the record, then restart the pipeline)");
            }
            throw new OutboxDeliveryException(what + " failed: " + e, e);
        }
    }

    /**
     * Delivers a batch one record per transaction (each with its marker), after the batch's transaction failed
     * because the target rejected a record for good: such a record goes to the pipeline's dead-letter topic, then
     * a transaction of the marker alone moves past it. A crash between the two writes the dead letter again at the
     * retry (dead letters are at least once); the target still gets every other record exactly once.
     */
    private void deliverOneByOne(OutboxBatch batch) throws OutboxDeliveryException {
        int p = batch.partition();
        openProducer(p);
        Long next = readMarker(p);
        markerNext.put(p, next == null ? -1L : next);
        for (OutboxRecord r : batch.records()) {
            if (r.offset() < markerNext.get(p)) {
                continue;
            }
            try {
                commit(p, List.of(r), r.offset() + 1, r.messageId().toBytes());
            } catch (RuntimeException e) {
                dropProducer(p, true);
                Throwable rejected = OutboxDeliveryException.recordRejection(e);
                if (rejected == null) {
                    String what = sinkName() + ": writing outbox offset " + r.offset() + " (message id " + r.messageId()
                            + ") failed";
                    Throwable bad = nonRetriable(e);
                    if (bad != null) {
                        throw OutboxDeliveryException.fatal(what + " and retrying cannot help: " + bad
                                + " (fix the target topic or the ACLs, then restart the pipeline)");
                    }
                    throw new OutboxDeliveryException(what + ": " + e, e);
                }
                deadLetter(r, rejected);
                movePast(p, r);
            }
        }
        if (markerNext.get(p) < batch.nextOffset()) {
            try {
                commit(p, List.of(), batch.nextOffset(), batch.dedupToken().toBytes());
            } catch (RuntimeException e) {
                dropProducer(p, true);
                throw new OutboxDeliveryException(sinkName() + ": writing the progress marker failed: " + e, e);
            }
        }
    }

    /**
     * Moves the progress marker past a record the target rejected for good (it is in the dead-letter topic now), in a
     * transaction of a new producer. The new producer fences any other, so the marker read after it opened is final:
     * if the partition's next owner moved it further meanwhile (a rejection the client raised before any request does
     * not tell this instance it was fenced), it stays there and the rest of the batch is skipped.
     */
    void movePast(int p, OutboxRecord r) throws OutboxDeliveryException {
        openProducer(p);
        Long next;
        try {
            next = readMarker(p);
        } catch (OutboxDeliveryException e) {
            dropProducer(p, true); // the retry opens another and reads the marker again
            throw e;
        }
        if (next != null && next > r.offset()) {
            markerNext.put(p, next);
            return;
        }
        try {
            commit(p, List.of(), r.offset() + 1, r.messageId().toBytes());
        } catch (RuntimeException again) {
            dropProducer(p, true);
            throw new OutboxDeliveryException(sinkName() + ": moving the progress marker past the rejected "
                    + "outbox offset " + r.offset() + " failed: " + again, again);
        }
    }

    /** One transaction of partition {@code p}: {@code records}, and the progress marker saying {@code next}. */
    private void commit(int p, List<OutboxRecord> records, long next, byte[] dedupToken) {
        KafkaProducer<byte[], byte[]> producer = producers.get(p);
        producer.beginTransaction();
        for (OutboxRecord r : records) {
            producer.send(new ProducerRecord<>(topic, null, r.timestampMs(), r.key(), r.value(), r.headers()));
        }
        byte[] key = markerKey(p);
        producer.send(new ProducerRecord<>(progressTopic, markerPartition(key), null, key,
                encodeMarker(p, next, dedupToken)));
        producer.commitTransaction();
        markerNext.put(p, next);
    }

    private @Nullable KafkaProducer<byte[], byte[]> deadLetters;

    /**
     * Writes a record the target rejected for good to the pipeline's dead-letter topic (on the pipeline's cluster),
     * with the reason and where it came from in {@code flow.dlq.*} headers, and waits for the acknowledgement.
     */
    private void deadLetter(OutboxRecord r, Throwable reason) throws OutboxDeliveryException {
        if (deadLetters == null) {
            Map<String, Object> props = new HashMap<>(context.pipelineClientProperties());
            props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
            props.put(ProducerConfig.ACKS_CONFIG, "all");
            props.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
            props.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
            props.put(ProducerConfig.CLIENT_ID_CONFIG, context.applicationId() + ".outbox." + context.sink().id() + ".dlq");
            deadLetters = new KafkaProducer<>(props);
        }
        org.apache.kafka.common.header.internals.RecordHeaders headers =
                new org.apache.kafka.common.header.internals.RecordHeaders();
        r.headers().forEach(headers::add);
        headers.add("flow.dlq.error.class", utf8(reason.getClass().getName()));
        headers.add("flow.dlq.error.message", utf8(sinkName() + ": the target rejected this record for good: " + reason));
        headers.add("flow.dlq.computation", utf8(context.computation()));
        headers.add("flow.dlq.stage", utf8("deliver to sink '" + context.sink().id() + "'"));
        headers.add("flow.dlq.message_id", utf8(r.messageId().toString()));
        headers.add("flow.dlq.outbox_offset", utf8(Long.toString(r.offset())));
        try {
            try {
                deadLetters.send(new ProducerRecord<>(context.deadLetterTopic(), null, r.timestampMs(), r.key(),
                        r.value(), headers)).get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
            } catch (ExecutionException | KafkaException e) {
                Throwable tooMuch = OutboxDeliveryException.recordRejection(e);
                if (tooMuch == null) {
                    throw e;
                }
                if (OutboxDeliveryException.aboutTimestamp(tooMuch)) {
                    // the dead-letter topic refused the record's timestamp (as the target did, most likely): the
                    // whole record with the producer's time, its own in a header
                    try {
                        headers.remove("flow.dlq.timestamp"); // a dead letter sunk again: its old one
                        headers.add("flow.dlq.timestamp", utf8(Long.toString(r.timestampMs())));
                        deadLetters.send(new ProducerRecord<>(context.deadLetterTopic(), null, null, r.key(),
                                r.value(), headers)).get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
                        LOG.warn("{}: the target rejected outbox offset {} (message id {}) for good ({}); it went to "
                                + "the dead-letter topic {} with the producer's timestamp, which refused its own",
                                sinkName(), r.offset(), r.messageId(), reason, context.deadLetterTopic());
                        return;
                    } catch (ExecutionException | KafkaException again) {
                        tooMuch = OutboxDeliveryException.recordRejection(again);
                        if (tooMuch == null) {
                            throw again;
                        }
                        headers.remove("flow.dlq.timestamp");
                    }
                }
                // the dead-letter topic cannot take the record either (it was rejected for its size, most likely):
                // write the dead letter without the record's bytes, saying so, rather than retry it for ever
                Headers bare = SinkDeadLetters.bare(headers, "the record's key ("
                        + length(r.key()) + " bytes), value (" + length(r.value()) + " bytes), headers and timestamp: "
                        + "the dead-letter topic rejected them too: " + tooMuch + "; the record is at "
                        + "flow.dlq.outbox_offset of the sink's outbox while it keeps it");
                bare.add("flow.dlq.timestamp", utf8(Long.toString(r.timestampMs())));
                // the producer's time, not the record's: the topic may have rejected the record for its timestamp
                deadLetters.send(new ProducerRecord<>(context.deadLetterTopic(), null, null, null, null, bare))
                        .get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new OutboxDeliveryException(sinkName() + ": interrupted", e);
        } catch (ExecutionException | java.util.concurrent.TimeoutException | KafkaException e) {
            throw new OutboxDeliveryException(sinkName() + ": writing the rejected outbox offset " + r.offset()
                    + " to the dead-letter topic " + context.deadLetterTopic() + " failed: " + e, e);
        }
        LOG.warn("{}: the target rejected outbox offset {} (message id {}) for good ({}); it went to the dead-letter "
                + "topic {}", sinkName(), r.offset(), r.messageId(), reason, context.deadLetterTopic());
    }

    private static int length(byte @Nullable [] b) {
        return b == null ? 0 : b.length;
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private void deliverAtLeastOnce(OutboxBatch batch) throws OutboxDeliveryException {
        if (shared == null) {
            Map<String, Object> props = producerProps();
            props.put(ProducerConfig.CLIENT_ID_CONFIG, context.applicationId() + ".outbox." + context.sink().id());
            shared = new KafkaProducer<>(props);
        }
        List<Future<RecordMetadata>> acks = new ArrayList<>(batch.records().size());
        try {
            for (OutboxRecord r : batch.records()) {
                acks.add(shared.send(new ProducerRecord<>(topic, null, r.timestampMs(), r.key(), r.value(), r.headers())));
            }
            shared.flush();
            for (int i = 0; i < acks.size(); i++) {
                try {
                    acks.get(i).get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
                } catch (ExecutionException e) {
                    Throwable rejected = OutboxDeliveryException.recordRejection(e.getCause());
                    if (rejected == null) {
                        throw e;
                    }
                    deadLetter(batch.records().get(i), rejected); // the others of the batch were written
                }
            }
        } catch (ExecutionException e) {
            throw new OutboxDeliveryException(sinkName() + ": writing outbox offsets " + batch.firstOffset() + ".."
                    + (batch.nextOffset() - 1) + " failed: " + e.getCause(), e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new OutboxDeliveryException(sinkName() + ": interrupted", e);
        } catch (java.util.concurrent.TimeoutException | KafkaException e) {
            throw new OutboxDeliveryException(sinkName() + ": writing outbox offsets " + batch.firstOffset() + ".."
                    + (batch.nextOffset() - 1) + " failed: " + e, e);
        }
    }

    @Override
    public void release(int partition) {
        dropProducer(partition, false);
        markerNext.remove(partition);
    }

    @Override
    public void close() {
        for (int p : new ArrayList<>(producers.keySet())) {
            dropProducer(p, false);
        }
        if (deadLetters != null) {
            deadLetters.close(Duration.ofSeconds(10));
            deadLetters = null;
        }
        if (shared != null) {
            shared.close(Duration.ofSeconds(10));
            shared = null;
        }
    }

    private void openProducer(int partition) throws OutboxDeliveryException {
        dropProducer(partition, false);
        Map<String, Object> props = producerProps();
        props.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG,
                context.applicationId() + ".outbox." + context.sink().id() + "." + partition);
        KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(props);
        try {
            producer.initTransactions();
        } catch (KafkaException e) {
            producer.close(Duration.ZERO);
            throw new OutboxDeliveryException(sinkName() + ": starting the transactional producer of outbox partition "
                    + partition + " failed: " + e, e);
        }
        producers.put(partition, producer);
    }

    private void dropProducer(int partition, boolean abort) {
        KafkaProducer<byte[], byte[]> producer = producers.remove(partition);
        if (producer == null) {
            return;
        }
        try {
            if (abort) {
                try {
                    producer.abortTransaction();
                } catch (RuntimeException e) {
                    // e.g. after a commit that timed out; the next producer's initTransactions settles the outcome
                    LOG.debug("{}: abort after a failure failed too (the next producer fences it): {}", sinkName(),
                            e.toString());
                }
            }
        } finally {
            try {
                producer.close(abort ? Duration.ZERO : Duration.ofSeconds(10));
            } catch (RuntimeException e) {
                LOG.debug("{}: closing a producer failed: {}", sinkName(), e.toString());
            }
        }
    }

    /**
     * The cause that no retry can fix (a record the target rejects, missing authorization), or null
     * for failures worth retrying (timeouts, leader changes, fencing after a rebalance).
     */
    static @Nullable Throwable nonRetriable(Throwable e) {
        Throwable rejected = OutboxDeliveryException.recordRejection(e);
        if (rejected != null) {
            return rejected;
        }
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof org.apache.kafka.common.errors.AuthorizationException) {
                return t;
            }
        }
        return null;
    }

    private Map<String, Object> producerProps() {
        Map<String, Object> props = new HashMap<>(clientProps);
        props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        props.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        return props;
    }

    /** How long compaction keeps the progress topic's transaction markers: a marker read takes seconds. */
    static final String PROGRESS_DELETE_RETENTION_MS = "3600000";

    /**
     * The progress topic's partition count. A topic just created may not be known yet to the broker that answers
     * (metadata propagates): that answer is retried for up to {@link #TIMEOUT}.
     */
    private int describeProgressTopic(Admin admin)
            throws ExecutionException, InterruptedException, java.util.concurrent.TimeoutException {
        long deadline = System.nanoTime() + TIMEOUT.toNanos();
        while (true) {
            try {
                return admin.describeTopics(List.of(progressTopic)).allTopicNames()
                        .get(TIMEOUT.toSeconds(), TimeUnit.SECONDS).get(progressTopic).partitions().size();
            } catch (ExecutionException e) {
                if (!(e.getCause() instanceof UnknownTopicOrPartitionException) || System.nanoTime() > deadline) {
                    throw e;
                }
                Thread.sleep(100); // the metadata's propagation, not a test's wait
            }
        }
    }

    private void ensureProgressTopic() throws OutboxDeliveryException {
        if (progressTopicReady) {
            return;
        }
        try (Admin admin = Admin.create(ClientProperties.admin(clientProps))) {
            Set<String> names = admin.listTopics().names().get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
            if (!names.contains(progressTopic)) {
                try {
                    admin.createTopics(List.of(new NewTopic(progressTopic, Optional.of(1), Optional.empty())
                            // compacted with short segments: a takeover reads the marker partition from its start,
                            // so the active segment must not grow for days before compaction can shrink it; and the
                            // commit marker of every delivery transaction, which compaction keeps for
                            // delete.retention.ms (a day by default), stays for an hour only
                            .configs(Map.of("cleanup.policy", "compact", "segment.ms", "600000",
                                    "min.cleanable.dirty.ratio", "0.1", "delete.retention.ms",
                                    PROGRESS_DELETE_RETENTION_MS)))).all()
                            .get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
                } catch (ExecutionException e) {
                    if (!(e.getCause() instanceof TopicExistsException)) {
                        throw e;
                    }
                }
            }
            progressPartitions = describeProgressTopic(admin);
            progressTopicReady = true;
        } catch (ExecutionException e) {
            throw new OutboxDeliveryException(sinkName() + ": cannot create or describe its progress topic "
                    + progressTopic + ": " + e.getCause(), e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new OutboxDeliveryException(sinkName() + ": interrupted", e);
        } catch (java.util.concurrent.TimeoutException | KafkaException e) {
            throw new OutboxDeliveryException(sinkName() + ": cannot create or describe its progress topic "
                    + progressTopic + ": " + e, e);
        }
    }

    /** The next outbox offset of a partition's last committed marker, or null if there is none. */
    private @Nullable Long readMarker(int partition) throws OutboxDeliveryException {
        byte[] key = markerKey(partition);
        TopicPartition tp = new TopicPartition(progressTopic, markerPartition(key));
        Map<String, Object> props = new HashMap<>(clientProps);
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        props.remove(ConsumerConfig.GROUP_ID_CONFIG);
        Map<String, Object> uncommitted = new HashMap<>(props);
        uncommitted.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_uncommitted");
        long end;
        try (KafkaConsumer<byte[], byte[]> probe = new KafkaConsumer<>(uncommitted)) {
            // the high watermark, not the last stable offset: markers committed after a transaction that another
            // (dead) instance left open sit above the LSO, and a read that stopped there would resume from a stale
            // marker; so wait until the open transactions are settled (aborted by their timeout at the latest)
            end = probe.endOffsets(List.of(tp), TIMEOUT).get(tp);
        } catch (KafkaException e) {
            throw new OutboxDeliveryException(sinkName() + ": reading progress topic " + progressTopic + " failed: " + e, e);
        }
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props)) {
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            Long next = null;
            long deadline = System.nanoTime() + TIMEOUT.toNanos();
            while (consumer.position(tp, TIMEOUT) < end) {
                if (System.nanoTime() > deadline) {
                    throw OutboxDeliveryException.retryable(sinkName() + ": reading progress topic " + progressTopic
                            + " up to offset " + end + " timed out (a transaction left open by a stopped instance "
                            + "holds it back until the transaction times out)");
                }
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                    if (java.util.Arrays.equals(r.key(), key)) {
                        next = r.value() == null ? null : decodeMarker(r.value()).getNextOffset();
                    }
                }
            }
            return next;
        } catch (KafkaException e) {
            throw new OutboxDeliveryException(sinkName() + ": reading progress topic " + progressTopic + " failed: " + e, e);
        }
    }

    private byte[] markerKey(int partition) {
        return (context.applicationId() + "/" + context.sink().id() + "/" + partition).getBytes(StandardCharsets.UTF_8);
    }

    private int markerPartition(byte[] key) {
        return Utils.toPositive(Utils.murmur2(key)) % progressPartitions;
    }

    private byte[] encodeMarker(int partition, long nextOffset, byte[] lastMessageId) {
        SinkProgress progress = SinkProgress.newBuilder().setSink(context.sink().id()).setOutboxPartition(partition)
                .setNextOffset(nextOffset).setLastMessageId(ByteBuffer.wrap(lastMessageId)).build();
        ByteArrayOutputStream out = new ByteArrayOutputStream(64);
        BinaryEncoder encoder = EncoderFactory.get().directBinaryEncoder(out, null);
        try {
            new SpecificDatumWriter<>(SinkProgress.class).write(progress, encoder);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
        return out.toByteArray();
    }

    static SinkProgress decodeMarker(byte[] bytes) {
        try {
            return new SpecificDatumReader<>(SinkProgress.class).read(null, DecoderFactory.get().binaryDecoder(bytes, null));
        } catch (IOException e) {
            throw new IllegalStateException("not a SinkProgress record: " + e, e);
        }
    }
}
