package io.flowkafka.internal.outbox;

import io.flowkafka.internal.message.FlowHeaders;
import io.flowkafka.internal.status.StatusBoard;
import io.flowkafka.spi.OutboxBatch;
import io.flowkafka.spi.OutboxDeliverer;
import io.flowkafka.spi.OutboxDeliveryException;
import io.flowkafka.spi.OutboxRecord;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The delivery service of one async sink in one runtime instance: reads the sink's outbox topic
 * read_committed in the consumer group {@code <application.id>.outbox.<sink>} (so the outbox
 * partitions spread over the pipeline's instances), cuts deterministic batches
 * ({@link OutboxBatcher}), hands them to the sink's {@link OutboxDeliverer} in log order (the ready batches of a
 * partition in one call, up to {@link OutboxDeliverer#maxBatchesTogether}) and commits the group offset only after
 * they were delivered. A failed call of several batches is retried with half as many (a transaction too large to
 * commit in time would otherwise fail forever), back to the most after {@value #GROW_AFTER} successes in a row.
 * A failed batch is retried unchanged with
 * exponential backoff (the partition is paused meanwhile, the consumer keeps polling, so the group
 * keeps it); a fatal error stops the sink and stays in the status board. Each loop iteration serves the assigned
 * partitions in turn, starting at another one each time, each within an equal share of what is left of the
 * iteration's delivery budget; a partition whose buffer holds
 * twice a poll's records is paused until it is delivered below that, so a slow target leaves the backlog in the
 * outbox topic instead of the heap. Delivered outbox records
 * are purged (deleteRecords below the committed offset) at most every purge interval. Watermark records
 * ({@link OutboxWatermarks}) are no messages: they go to {@link OutboxDeliverer#onSystemWatermark} after the messages
 * before them, and the offset after them is committed like a delivered batch's.
 *
 * <p>Threading: one thread of its own; {@link #close()} from any thread.
 */
public final class OutboxService implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(OutboxService.class);
    /** Header of outbox records: the writing task's partition (4 bytes), read by {@link OutboxPartitioner}. */
    public static final String PARTITION_HEADER = "flow.outbox.partition";
    private static final long MAX_BACKOFF_MS = 30_000;
    /** How long one loop iteration may deliver before it polls again (the consumer must stay in its group). */
    private static final long DELIVERY_BUDGET_NANOS = TimeUnit.SECONDS.toNanos(5);
    /** The most records one poll returns (max.poll.records) for a deliverer taking batches together. */
    private static final long MAX_POLL_RECORDS = 20_000;
    /** The backlog gauge's name. */
    public static final String BACKLOG_METER = "flow.outbox.backlog_records";

    private final String sink;
    private final String computation;
    private final String topic;
    private final OutboxDeliverer deliverer;
    private final Properties consumerProps;
    private final @Nullable Admin admin;
    private final StatusBoard status;
    private final long purgeIntervalMs;
    private final OutboxBatcher<ConsumerRecord<byte[], byte[]>> batcher;
    /** How many consecutive batches of a partition go to the deliverer in one call. */
    private final int batchesTogether;
    private final Counter delivered;
    private final Counter batches;
    private final Counter failures;
    private final MeterRegistry meters;
    private final Gauge backlogGauge;
    /** Outbox offsets not delivered yet on this service's open partitions, as last measured; NaN: none measured. */
    private volatile double backlog = Double.NaN;
    private final Thread thread;
    private final CountDownLatch done = new CountDownLatch(1);
    private final AtomicBoolean delivererClosed = new AtomicBoolean();
    private volatile Duration closeWait = Duration.ofSeconds(30);
    private volatile boolean running = true;
    private volatile @Nullable KafkaConsumer<byte[], byte[]> consumer;
    private volatile @Nullable String fatal;

    private final Set<Integer> opened = new HashSet<>();
    /**
     * Partitions paused because their buffer reached {@link #bufferLimit}: the backlog stays in the outbox topic, not
     * on the heap, while the target is slower than the input.
     */
    private final Set<Integer> full = new HashSet<>();
    /** The most records buffered per partition before its fetching pauses (a poll may add one poll's more). */
    private final int bufferLimit;
    /** Which assigned partition is served first in this loop iteration: each in turn, so none starves. */
    private int turn;
    private final Map<Integer, Long> retryAt = new HashMap<>();
    /** Per partition: {batches per call now, successes in a row since it was lowered}; absent: the most. */
    private final Map<Integer, int[]> together = new HashMap<>();
    /** Successes in a row after which a lowered number of batches per call doubles. */
    static final int GROW_AFTER = 8;
    private final Map<Integer, Long> backoff = new HashMap<>();
    private final Map<Integer, Long> deliveredUpTo = new HashMap<>();
    /** Per open partition, the offset after its last delivered batch (watermark records may follow it). */
    private final Map<Integer, OptionalLong> messagesNext = new HashMap<>();
    /** Per open partition, the first outbox offset not delivered yet (where the backlog starts). */
    private final Map<Integer, Long> undeliveredFrom = new HashMap<>();
    private long lastPurge = System.currentTimeMillis();

    /**
     * @param clientProperties the pipeline cluster's client properties (bootstrap, security)
     * @param groupId the consumer group of this sink's delivery
     */
    public OutboxService(String pipeline, String sink, String computation, String topic, OutboxDeliverer deliverer,
            Map<String, Object> clientProperties, String groupId, int maxBatchRecords, @Nullable Admin admin,
            StatusBoard status, MeterRegistry meters, long purgeIntervalMs) {
        this.sink = sink;
        this.computation = computation;
        this.topic = topic;
        this.deliverer = deliverer;
        this.admin = admin;
        this.status = status;
        this.purgeIntervalMs = purgeIntervalMs;
        this.batcher = new OutboxBatcher<>(maxBatchRecords, ConsumerRecord::offset);
        this.batchesTogether = Math.max(1, deliverer.maxBatchesTogether());
        Properties p = new Properties();
        p.putAll(clientProperties);
        p.put(ConsumerConfig.GROUP_ID_CONFIG, groupId);
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        // a poll may hold all the batches that go together (a backlog), not only one
        int maxPollRecords = (int) Math.max(Math.max(500, maxBatchRecords),
                Math.min(MAX_POLL_RECORDS, (long) maxBatchRecords * batchesTogether));
        p.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, maxPollRecords);
        // at least one full batch, so a paused partition always has a complete batch to deliver
        this.bufferLimit = 2 * maxPollRecords;
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.CLIENT_ID_CONFIG, groupId + "-" + Long.toHexString(System.nanoTime()));
        this.consumerProps = p;
        io.micrometer.core.instrument.Tags tags = io.micrometer.core.instrument.Tags.of("pipeline", pipeline, "sink", sink);
        this.delivered = Counter.builder("flow.sink.delivered").description("outbox messages delivered")
                .tags(tags).register(meters);
        this.batches = Counter.builder("flow.sink.batches").description("outbox batches delivered")
                .tags(tags).register(meters);
        this.failures = Counter.builder("flow.sink.delivery_failures")
                .description("failed delivery attempts (each is retried unless fatal)").tags(tags).register(meters);
        this.meters = meters;
        this.backlogGauge = Gauge.builder(BACKLOG_METER, this, s -> s.backlog)
                .description("Outbox offsets written but not delivered yet on this instance's outbox partitions "
                        + "(messages, watermark records and transaction markers alike), measured by the delivery loop; "
                        + "NaN while none is open and fetched")
                .tags(tags).tag("computation", computation).register(meters);
        this.thread = new Thread(this::run, "flow-" + pipeline + "-outbox-" + sink);
        this.thread.setDaemon(true);
    }

    /** Starts the delivery thread. */
    public void start() {
        thread.start();
    }

    /** The fatal error that stopped the sink, if any. */
    public @Nullable String fatalError() {
        return fatal;
    }

    /** Whether the delivery thread still runs. */
    public boolean isRunning() {
        return thread.isAlive();
    }

    private void run() {
        try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(consumerProps)) {
            consumer = c;
            c.subscribe(List.of(topic), new ConsumerRebalanceListener() {
                @Override
                public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
                    partitions.forEach(tp -> releasePartition(tp.partition()));
                }

                @Override
                public void onPartitionsLost(Collection<TopicPartition> partitions) {
                    partitions.forEach(tp -> releasePartition(tp.partition()));
                }

                @Override
                public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
                    // opened lazily in the loop, so a failing open is retried with backoff like a delivery
                }
            });
            while (running && fatal == null) {
                ConsumerRecords<byte[], byte[]> records;
                try {
                    records = c.poll(Duration.ofMillis(100));
                } catch (WakeupException e) {
                    break;
                }
                // records polled before a partition was opened (and seeked) are dropped: they come again from the
                // position open chose
                // at most one open per iteration: an open may take long (a transactional producer, a marker read),
                // and the consumer must keep polling to stay in its group
                Set<Integer> openedNow = new HashSet<>();
                for (TopicPartition tp : c.assignment()) {
                    int p = tp.partition();
                    if (!opened.contains(p) && !waiting(p)) {
                        if (openPartition(c, tp)) {
                            openedNow.add(p);
                        }
                        break;
                    }
                }
                for (TopicPartition tp : records.partitions()) {
                    if (opened.contains(tp.partition()) && !openedNow.contains(tp.partition())) {
                        batcher.add(tp.partition(), records.records(tp));
                        if (batcher.buffered(tp.partition()) >= bufferLimit && full.add(tp.partition())) {
                            c.pause(Set.of(tp));
                        }
                    }
                }
                long budgetEnd = System.nanoTime() + DELIVERY_BUDGET_NANOS;
                List<TopicPartition> order = inTurn(c.assignment());
                for (int i = 0; i < order.size(); i++) {
                    TopicPartition tp = order.get(i);
                    long now = System.nanoTime();
                    if (fatal != null || !running || now > budgetEnd) {
                        break;
                    }
                    if (opened.contains(tp.partition())) {
                        try {
                            // an equal share of what is left of the budget: every partition gets its turn
                            deliverReady(c, tp, now + (budgetEnd - now) / (order.size() - i));
                        } catch (WakeupException e) {
                            throw e;
                        } catch (RuntimeException e) {
                            // a commit or position call failed (a rebalance, a broker hiccup): reopen the partition
                            // later from its committed progress instead of stopping the sink
                            releasePartition(tp.partition());
                            failed(c, tp, "committing its delivery progress", new OutboxDeliveryException(e.toString(), e));
                        }
                    }
                }
                resumeDrained(c);
                measureBacklog(c);
                maybePurge();
            }
        } catch (WakeupException e) {
            // closing
        } catch (RuntimeException | Error e) {
            // an Error too (a StackOverflowError in a deliverer, an OutOfMemoryError): the sink reports it stopped,
            // so /health fails, instead of its thread ending unseen
            stopWith("the delivery service of sink '" + sink + "' failed: " + e);
            if (e instanceof Error error) {
                throw error;
            }
        } finally {
            for (int p : new ArrayList<>(opened)) {
                releasePartition(p);
            }
            done.countDown();
            if (!running) {
                closeDeliverer(); // closing: also when close() stopped waiting for this thread
            }
        }
    }

    /**
     * The assigned partitions in partition order, starting at a different one each iteration: the delivery budget
     * of an iteration may run out before the last is served, and a partition always ready must not keep the others
     * waiting.
     */
    private List<TopicPartition> inTurn(Set<TopicPartition> assignment) {
        List<TopicPartition> sorted = new ArrayList<>(assignment);
        if (sorted.size() < 2) {
            return sorted;
        }
        sorted.sort(Comparator.comparingInt(TopicPartition::partition));
        int from = Math.floorMod(turn++, sorted.size());
        List<TopicPartition> order = new ArrayList<>(sorted.subList(from, sorted.size()));
        order.addAll(sorted.subList(0, from));
        return order;
    }

    /** Resumes fetching the full partitions whose buffer was delivered below the limit (unless in backoff). */
    private void resumeDrained(KafkaConsumer<byte[], byte[]> c) {
        for (var it = full.iterator(); it.hasNext();) {
            int p = it.next();
            if (batcher.buffered(p) < bufferLimit) {
                it.remove();
                if (!retryAt.containsKey(p)) {
                    c.resume(Set.of(new TopicPartition(topic, p)));
                }
            }
        }
    }

    /**
     * The records buffered for an outbox partition, polled and not delivered yet (at most {@link #bufferLimit} plus
     * one poll's). For tests.
     */
    public int buffered(int partition) {
        return batcher.buffered(partition);
    }

    /** Whether a partition waits for its retry backoff. */
    private boolean waiting(int p) {
        Long at = retryAt.get(p);
        return at != null && System.currentTimeMillis() < at;
    }

    private boolean openPartition(KafkaConsumer<byte[], byte[]> c, TopicPartition tp) {
        int p = tp.partition();
        if (waiting(p)) {
            return false;
        }
        try {
            // inside the try: a coordinator that does not answer in time is retried, not the sink stopped
            OffsetAndMetadata committed = c.committed(Set.of(tp)).get(tp);
            // the deliverer is told where the last delivered batch ended, not the watermark records after it
            // an offset an operator set (a reset) says where to resume, not what was delivered
            OptionalLong batchesNext = OutboxCommit.setElsewhere(committed) ? OptionalLong.empty()
                    : OutboxCommit.messagesNext(committed);
            OptionalLong resume = deliverer.open(p, batchesNext);
            long offset = resume.isPresent() ? OutboxCommit.resumeAt(resume.getAsLong(), batchesNext, committed)
                    : committed == null ? -1 : committed.offset();
            long end = c.endOffsets(Set.of(tp)).get(tp);
            long begin = c.beginningOffsets(Set.of(tp)).get(tp);
            if (offset > end) {
                deliverer.release(p);
                throw OutboxDeliveryException.fatal("the sink's progress on outbox partition " + p + " is offset " + offset
                        + ", past the end of the outbox (" + end + "): the outbox topic " + topic + " was recreated or "
                        + "emptied, so its records cannot be matched with what was delivered; restore it, or reset the "
                        + "sink's progress (its progress marker or delivery group) on purpose");
            }
            if (offset >= 0 && offset < begin && committed == null) {
                // the group's offsets are gone (they expire while no instance runs): the outbox (retention.ms=-1)
                // is purged only below offsets this group committed, after delivery, so what lies below its start
                // was delivered, or was watermark records after the sink's last batch
                LOG.warn("sink '{}': the delivery group has no committed offset on outbox partition {} (offsets "
                        + "expire after the broker's offsets.retention.minutes while no instance runs); the sink's own "
                        + "progress is {}, and the outbox was purged after delivery up to {}: resuming there", sink, p,
                        offset, begin);
                offset = begin;
            }
            if (offset >= 0 && offset < begin) {
                deliverer.release(p);
                throw OutboxDeliveryException.fatal("outbox partition " + p + " of " + topic + " starts at offset " + begin
                        + " but the sink's progress is " + offset + ": undelivered records were deleted (retention or "
                        + "deleteRecords outside flow-kafka); they are lost to this sink");
            }
            if (offset >= 0) {
                c.seek(tp, offset);
            } else {
                c.seekToBeginning(Set.of(tp));
            }
            batcher.clear(p);
            messagesNext.put(p, resume.isPresent() && resume.getAsLong() > batchesNext.orElse(-1) ? resume
                    : batchesNext);
            undeliveredFrom.put(p, offset >= 0 ? offset : begin);
            opened.add(p);
            succeeded(p);
            return true;
        } catch (OutboxDeliveryException e) {
            failed(c, tp, "opening", e);
            return false;
        } catch (WakeupException e) {
            throw e; // closing
        } catch (RuntimeException e) {
            failed(c, tp, "opening", new OutboxDeliveryException(e.toString(), e));
            return false;
        }
    }

    private void deliverReady(KafkaConsumer<byte[], byte[]> c, TopicPartition tp, long budgetEnd) {
        int p = tp.partition();
        if (waiting(p)) {
            return;
        }
        long position = c.position(tp);
        List<OutboxBatcher.Cut<ConsumerRecord<byte[], byte[]>>> cuts;
        while (running && fatal == null && System.nanoTime() < budgetEnd
                && !(cuts = batcher.peek(p, position, batchesNow(p))).isEmpty()) {
            List<OutboxBatch> ready = new ArrayList<>(cuts.size());
            for (OutboxBatcher.Cut<ConsumerRecord<byte[], byte[]>> cut : cuts) {
                OutboxBatch batch = toBatch(p, cut);
                if (batch != null) {
                    ready.add(batch);
                }
            }
            if (!ready.isEmpty()) {
                try {
                    if (ready.size() == 1) {
                        deliverer.deliver(ready.get(0));
                    } else {
                        deliverer.deliverTogether(ready);
                    }
                } catch (OutboxDeliveryException e) {
                    if (e.unfinished()) { // part delivered; the rest at once, after a poll
                        LOG.debug("sink '{}': {}", sink, e.getMessage());
                        return;
                    }
                    fewerBatches(p, ready.size());
                    failed(c, tp, "delivering the batch at outbox offset " + ready.get(0).firstOffset(), e);
                    return;
                } catch (RuntimeException e) {
                    fewerBatches(p, ready.size());
                    failed(c, tp, "delivering the batch at outbox offset " + ready.get(0).firstOffset(),
                            new OutboxDeliveryException(e.toString(), e));
                    return;
                }
                moreBatches(p);
            }
            cuts.forEach(batcher::remove);
            long next = cuts.get(cuts.size() - 1).nextOffset();
            if (!ready.isEmpty()) {
                messagesNext.put(p, OptionalLong.of(ready.get(ready.size() - 1).nextOffset()));
            }
            c.commitSync(Map.of(tp, OutboxCommit.of(next, messagesNext.getOrDefault(p, OptionalLong.empty()))));
            deliveredUpTo.put(p, next);
            undeliveredFrom.put(p, next);
            for (OutboxBatch batch : ready) {
                delivered.increment(batch.records().size());
                batches.increment();
            }
            // every message before the cuts' watermark records is delivered and committed: a deliverer may act on
            // the watermark (drop what dedups a replay of them)
            for (OutboxBatcher.Cut<ConsumerRecord<byte[], byte[]>> cut : cuts) {
                OutboxWatermarks.Mark mark = lastMark(cut);
                if (mark != null) {
                    try {
                        deliverer.onSystemWatermark(p, mark.systemWatermarkNs(), mark.partitionCount());
                    } catch (RuntimeException e) {
                        LOG.warn("sink '{}': the deliverer failed on the system watermark of outbox partition {}: {}",
                                sink, p, e.toString());
                    }
                }
            }
            succeeded(p);
        }
    }

    /**
     * The cut's messages as a batch, or null when it holds only watermark records ({@link OutboxWatermarks}): those
     * are never delivered, counted or dead-lettered as messages.
     */
    private @Nullable OutboxBatch toBatch(int partition, OutboxBatcher.Cut<ConsumerRecord<byte[], byte[]>> cut) {
        List<OutboxRecord> out = new ArrayList<>(cut.records().size());
        for (ConsumerRecord<byte[], byte[]> r : cut.records()) {
            if (OutboxWatermarks.isWatermark(r.headers())) {
                continue;
            }
            FlowHeaders.Metadata meta = FlowHeaders.read(r.headers());
            RecordHeaders headers = new RecordHeaders();
            for (Header h : r.headers()) {
                if (!h.key().equals(FlowHeaders.META) && !h.key().equals(PARTITION_HEADER)) {
                    headers.add(h);
                }
            }
            out.add(new OutboxRecord(r.offset(), meta.messageId(), r.key(), r.value(), headers, r.timestamp(),
                    meta.systemTimestamp()));
        }
        return out.isEmpty() ? null : new OutboxBatch(sink, partition, out, cut.nextOffset());
    }

    /** The last watermark a cut carries, or null. */
    private static OutboxWatermarks.@Nullable Mark lastMark(OutboxBatcher.Cut<ConsumerRecord<byte[], byte[]>> cut) {
        for (int i = cut.records().size() - 1; i >= 0; i--) {
            OutboxWatermarks.Mark m = OutboxWatermarks.read(cut.records().get(i).headers());
            if (m != null) {
                return m;
            }
        }
        return null;
    }

    /** How many ready batches of the partition go to the deliverer in one call now. */
    private int batchesNow(int p) {
        int[] t = together.get(p);
        return t == null ? batchesTogether : t[0];
    }

    /** A call of {@code tried} batches failed: the retry takes half as many (at least one). */
    private void fewerBatches(int p, int tried) {
        if (tried > 1) {
            together.put(p, new int[] {Math.max(1, tried / 2), 0});
        }
    }

    /** A call succeeded: after {@link #GROW_AFTER} in a row, a lowered number of batches per call doubles. */
    private void moreBatches(int p) {
        int[] t = together.get(p);
        if (t != null && ++t[1] >= GROW_AFTER) {
            if (t[0] * 2 >= batchesTogether) {
                together.remove(p);
            } else {
                t[0] *= 2;
                t[1] = 0;
            }
        }
    }

    private void failed(KafkaConsumer<byte[], byte[]> c, TopicPartition tp, String doing, OutboxDeliveryException e) {
        int p = tp.partition();
        failures.increment();
        if (e.fatal()) {
            stopWith("sink '" + sink + "' stopped on outbox partition " + p + " while " + doing + ": " + e.getMessage());
            return;
        }
        long b = Math.min(MAX_BACKOFF_MS, backoff.getOrDefault(p, 50L) * 2);
        backoff.put(p, b);
        retryAt.put(p, System.currentTimeMillis() + b);
        c.pause(Set.of(tp));
        String message = "sink '" + sink + "': " + doing + " of outbox partition " + p + " failed, retrying in " + b
                + " ms: " + e.getMessage();
        status.report(computation, p, "/sinks/" + sink + "/delivery", message, Instant.now());
        LOG.warn(message);
    }

    private void succeeded(int p) {
        if (retryAt.remove(p) != null) {
            backoff.remove(p);
            status.clear(computation, p, "/sinks/" + sink + "/delivery");
            KafkaConsumer<byte[], byte[]> c = consumer;
            if (c != null && !full.contains(p)) {
                c.resume(Set.of(new TopicPartition(topic, p)));
            }
        }
    }

    private void releasePartition(int p) {
        batcher.clear(p);
        full.remove(p); // a revoked partition's pause ends with it; a reopened one resumes when it opens
        undeliveredFrom.remove(p);
        messagesNext.remove(p);
        retryAt.remove(p);
        backoff.remove(p);
        together.remove(p);
        if (opened.remove(p)) {
            try {
                deliverer.release(p);
            } catch (RuntimeException e) {
                LOG.warn("sink '{}': releasing outbox partition {} failed: {}", sink, p, e.toString());
            }
        }
        status.clear(computation, p, "/sinks/" + sink + "/delivery");
    }

    private void stopWith(String message) {
        fatal = message;
        LOG.error("{} (the sink is stopped; its outbox keeps every message until it is fixed and the pipeline restarts)",
                message);
        status.report(computation, -1, "/sinks/" + sink + "/stopped", message, Instant.now());
    }

    /**
     * The backlog of the open partitions: the consumer's position plus its lag (to the last stable offset, from the
     * last fetch: no request) minus the first offset not delivered; a partition not fetched yet counts when it is.
     * Local calls only, once per loop iteration.
     */
    private void measureBacklog(KafkaConsumer<byte[], byte[]> c) {
        long sum = 0;
        boolean measured = false;
        for (TopicPartition tp : c.assignment()) {
            Long from = undeliveredFrom.get(tp.partition());
            if (from == null) {
                continue;
            }
            OptionalLong lag = c.currentLag(tp); // present only with a known position: position() cannot block
            if (lag.isPresent()) {
                sum += Math.max(0, c.position(tp) + lag.getAsLong() - from);
                measured = true;
            }
        }
        backlog = measured ? sum : Double.NaN;
    }

    private void maybePurge() {
        long now = System.currentTimeMillis();
        if (admin == null || purgeIntervalMs <= 0 || now - lastPurge < purgeIntervalMs || deliveredUpTo.isEmpty()) {
            return;
        }
        lastPurge = now;
        Map<TopicPartition, RecordsToDelete> request = new HashMap<>();
        deliveredUpTo.forEach((p, o) -> request.put(new TopicPartition(topic, p), RecordsToDelete.beforeOffset(o)));
        deliveredUpTo.clear();
        admin.deleteRecords(request).all().whenComplete((v, e) -> {
            if (e != null) {
                LOG.debug("sink '{}': purging delivered outbox records failed, will retry: {}", sink, e.toString());
            }
        });
    }

    /**
     * Tells the delivery thread to stop after the batch in hand, without waiting: a runtime with several sinks tells
     * them all before it waits for each ({@link #close()}), so their stops overlap.
     */
    public void stopSoon() {
        running = false;
    }

    /** Stops delivering (the batch in hand finishes), releases the partitions and closes the deliverer. */
    @Override
    public void close() {
        // no wakeup(): it would interrupt the commit of a batch just delivered (and an at-least-once sink would
        // deliver it again); the loop polls for at most 100 ms and checks running between batches
        running = false;
        meters.remove(backlogGauge);
        try {
            if (thread.isAlive() && !done.await(closeWait.toMillis(), TimeUnit.MILLISECONDS)) {
                // a delivery may run long (an HTTP batch a minute): interrupted, it ends sooner; the deliverer's
                // objects are the delivery thread's, so it closes them itself when that delivery ends
                LOG.warn("sink '{}': the delivery thread did not stop within {}; interrupted, it closes its "
                        + "deliverer when its delivery ends", sink, closeWait);
                thread.interrupt();
                return;
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return; // the delivery thread closes the deliverer when it ends
        }
        closeDeliverer();
    }

    /** Closes the deliverer once, from {@link #close()} or the delivery thread's end, whichever comes last. */
    private void closeDeliverer() {
        if (!delivererClosed.compareAndSet(false, true)) {
            return;
        }
        try {
            deliverer.close();
        } catch (RuntimeException e) {
            LOG.warn("sink '{}': closing its deliverer failed: {}", sink, e.toString());
        }
    }

    /**
     * How long {@link #close()} waits for the delivery thread (30 s by default); after that it returns and the
     * thread closes the deliverer when its delivery ends. For tests.
     *
     * @param wait the bound
     */
    public void closeWait(Duration wait) {
        this.closeWait = wait;
    }

    /** The partition header's value for a task partition. */
    public static byte[] partitionHeader(int partition) {
        return ByteBuffer.allocate(4).putInt(partition).array();
    }
}
