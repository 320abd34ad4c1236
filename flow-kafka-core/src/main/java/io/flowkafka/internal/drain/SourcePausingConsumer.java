package io.flowkafka.internal.drain;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.function.BooleanSupplier;
import java.util.regex.Pattern;
import org.apache.kafka.clients.consumer.CloseOptions;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.consumer.OffsetAndTimestamp;
import org.apache.kafka.clients.consumer.OffsetCommitCallback;
import org.apache.kafka.clients.consumer.SubscriptionPattern;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.metrics.KafkaMetric;
import org.jspecify.annotations.Nullable;

/**
 * Kafka Streams' main consumer, able to stop reading the pipeline's source topics while it keeps
 * reading everything else (internal streams, control topics): the first half of a drain.
 *
 * <p>Once {@code draining} turns true, every poll first pauses each assigned partition of a source
 * topic (so partitions assigned by a rebalance are paused too, at the next poll), and
 * {@link #resume} ignores source partitions: Kafka Streams pauses and resumes partitions itself
 * (back-pressure, tasks not yet running, {@code KafkaStreams.pause()}) and must not undo the drain.
 *
 * <p>It also remembers, per source partition, the offset after the last record a poll returned,
 * i.e. what Kafka Streams has taken; while draining, each poll publishes {@link #inHand()}: per
 * assigned source partition, the offset the consumer group must have committed before every
 * source record taken is processed. Work per poll: one volatile read, plus one map update per
 * source partition that returned records; the assignment is looked at only while draining.
 *
 * <p>Threading: like any consumer, used by one thread (its stream thread); {@link #inHand()} and
 * {@link #drainPolls()} may be read from any thread.
 */
public final class SourcePausingConsumer implements Consumer<byte[], byte[]> {
    private final Consumer<byte[], byte[]> delegate;
    private final Set<String> sourceTopics;
    private final BooleanSupplier draining;
    private final Runnable onClose;
    /** Poll thread only: per source partition, the offset after the last record returned. */
    private final Map<TopicPartition, Long> taken = new HashMap<>();
    private volatile Map<TopicPartition, Long> inHand = Map.of();
    private volatile long drainPolls;
    /** watermark_alignment: the source partitions to keep paused now (read before each poll), or null. */
    private final java.util.function.@Nullable Supplier<Set<TopicPartition>> aligned;
    /** Poll thread only: partitions paused for alignment, and partitions Kafka Streams paused itself. */
    private final Set<TopicPartition> alignPaused = new java.util.HashSet<>();
    private final Set<TopicPartition> streamsPaused = new java.util.HashSet<>();
    private volatile int alignPausedCount;
    /** How often, at most, the partitions with records waiting are reported. */
    static final long WAITING_REPORT_MS = 10;
    /** How long a source partition whose lag the consumer does not know yet counts as having records waiting. */
    static final long UNKNOWN_LAG_WAIT_MS = 5_000;
    /** Source partitions whose lag is unknown, and since when (the clock of {@link #clock}). */
    private final Map<TopicPartition, Long> unknownLagSince = new HashMap<>();
    private final io.flowkafka.internal.watermarks.@Nullable SourceIdleness idleness;
    private long nextWaitingReportMs = Long.MIN_VALUE;
    private java.util.function.LongSupplier clockMs = System::currentTimeMillis;
    /** The reason {@code StreamThread} gives the rebalance it enforces after a task corruption. */
    static final String ACTIVE_TASKS_CORRUPTED = "Active tasks corrupted";

    /**
     * @param delegate the consumer Kafka Streams would have used
     * @param sourceTopics the pipeline's source topics (user topics read by Source computations)
     * @param draining read before each poll: whether to keep source partitions paused
     * @param onClose run once the consumer is closed
     */
    public SourcePausingConsumer(Consumer<byte[], byte[]> delegate, Set<String> sourceTopics, BooleanSupplier draining,
            Runnable onClose) {
        this(delegate, sourceTopics, draining, null, onClose);
    }

    /**
     * @param aligned read before each poll: the source partitions {@code watermark_alignment} wants
     *     paused now (they are resumed once they leave the set, unless Kafka Streams paused them
     *     too); null when no computation is aligned
     */
    public SourcePausingConsumer(Consumer<byte[], byte[]> delegate, Set<String> sourceTopics, BooleanSupplier draining,
            java.util.function.@Nullable Supplier<Set<TopicPartition>> aligned, Runnable onClose) {
        this(delegate, sourceTopics, draining, aligned, null, onClose);
    }

    /**
     * @param idleness where to report, at most every {@value #WAITING_REPORT_MS} ms, which assigned
     *     source partitions have records waiting (a known lag), so that they are not taken for idle;
     *     null for no reports
     */
    public SourcePausingConsumer(Consumer<byte[], byte[]> delegate, Set<String> sourceTopics, BooleanSupplier draining,
            java.util.function.@Nullable Supplier<Set<TopicPartition>> aligned,
            io.flowkafka.internal.watermarks.@Nullable SourceIdleness idleness, Runnable onClose) {
        this.delegate = delegate;
        this.sourceTopics = Set.copyOf(sourceTopics);
        this.draining = draining;
        this.aligned = aligned;
        this.idleness = idleness;
        this.onClose = onClose;
    }

    /**
     * Per assigned source partition from which records were taken, the offset the group must have
     * committed once they are all processed: the offset after the last record taken, or the
     * consumer's position if lower (a seek or a new assignment dropped records taken earlier).
     * Published by each poll while draining; empty before.
     */
    public Map<TopicPartition, Long> inHand() {
        return inHand;
    }

    /** How many polls ran with source partitions paused; 0 until the first poll after draining began. */
    public long drainPolls() {
        return drainPolls;
    }

    @Override
    public ConsumerRecords<byte[], byte[]> poll(Duration timeout) {
        boolean drain = draining.getAsBoolean();
        if (drain) {
            List<TopicPartition> sources = assignedSources();
            if (!sources.isEmpty()) {
                delegate.pause(sources);
            }
        }
        if (aligned != null) {
            applyAlignment(drain);
        }
        ConsumerRecords<byte[], byte[]> records = delegate.poll(timeout);
        if (idleness != null) {
            reportRecordsWaiting(idleness);
        }
        if (!records.isEmpty()) {
            for (TopicPartition tp : records.partitions()) {
                if (sourceTopics.contains(tp.topic())) {
                    List<ConsumerRecord<byte[], byte[]>> list = records.records(tp);
                    long next = list.get(list.size() - 1).offset() + 1;
                    taken.put(tp, next);
                    if (idleness != null) {
                        idleness.returned(tp, next);
                    }
                }
            }
        }
        if (drain) {
            publishInHand();
            drainPolls++;
        }
        return records;
    }

    /**
     * Pauses the assigned partitions alignment blocks (again after a rebalance: a pause does not
     * survive reassignment), and resumes those it no longer blocks unless Kafka Streams paused them
     * itself in the meantime or a drain keeps sources paused.
     */
    private void applyAlignment(boolean drain) {
        Set<TopicPartition> blocked = aligned.get();
        if (blocked.isEmpty() && alignPaused.isEmpty()) {
            return;
        }
        Set<TopicPartition> assigned = delegate.assignment();
        List<TopicPartition> pause = new ArrayList<>();
        for (TopicPartition tp : blocked) {
            if (assigned.contains(tp)) {
                pause.add(tp);
            }
        }
        List<TopicPartition> resume = new ArrayList<>();
        for (TopicPartition tp : alignPaused) {
            if (!blocked.contains(tp) && assigned.contains(tp) && !streamsPaused.contains(tp) && !drain) {
                resume.add(tp);
            }
        }
        alignPaused.clear();
        alignPaused.addAll(pause);
        alignPausedCount = pause.size();
        if (!pause.isEmpty()) {
            delegate.pause(pause);
        }
        if (!resume.isEmpty()) {
            delegate.resume(resume);
        }
    }

    /**
     * A partition revoked or lost is no longer paused by anyone (a pause does not survive
     * reassignment): forget it, so that neither a stale Kafka Streams pause keeps it paused after
     * alignment lets it go, nor a stale alignment pause filters out Kafka Streams' resume.
     */
    private ConsumerRebalanceListener forgetPausesOnRevocation(ConsumerRebalanceListener callback) {
        if (aligned == null && idleness == null) {
            return callback;
        }
        return new ConsumerRebalanceListener() {
            @Override
            public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
                forgetPauses(partitions);
                callback.onPartitionsRevoked(partitions);
            }

            @Override
            public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
                callback.onPartitionsAssigned(partitions);
            }

            @Override
            public void onPartitionsLost(Collection<TopicPartition> partitions) {
                forgetPauses(partitions);
                callback.onPartitionsLost(partitions);
            }
        };
    }

    private void forgetPauses(Collection<TopicPartition> partitions) {
        streamsPaused.removeAll(partitions);
        alignPaused.removeAll(partitions);
        alignPausedCount = alignPaused.size();
        if (idleness != null) {
            idleness.forget(partitions);
            partitions.forEach(unknownLagSince::remove);
            nextWaitingReportMs = Long.MIN_VALUE; // what is assigned now: at the next poll
        }
    }

    /**
     * Reports which assigned source partitions have records waiting after the consumer's position
     * (a known lag: fetched and not yet returned, or not yet fetched), at most every
     * {@value #WAITING_REPORT_MS} ms: such a partition is silent because the consumer has not handed
     * its records over yet (read-ahead spent on busier partitions, a slow machine, a pause), and
     * must not be reported idle to the readers of its stream.
     */
    private void reportRecordsWaiting(io.flowkafka.internal.watermarks.SourceIdleness idleness) {
        long now = clockMs.getAsLong();
        if (now < nextWaitingReportMs) {
            return;
        }
        nextWaitingReportMs = now + WAITING_REPORT_MS;
        for (TopicPartition tp : delegate.assignment()) {
            if (sourceTopics.contains(tp.topic())) {
                java.util.OptionalLong lag = delegate.currentLag(tp);
                boolean waiting;
                if (lag.isPresent()) {
                    unknownLagSince.remove(tp);
                    waiting = lag.getAsLong() > 0;
                    try {
                        idleness.position(tp, delegate.position(tp, Duration.ZERO));
                    } catch (KafkaException e) {
                        // no valid position right now (a reset, offset validation): reported at a later poll
                    }
                } else {
                    // not fetched since it was assigned (or sought): a backlog may wait there, so the partition is
                    // neither quiet nor idle yet, for a bounded time (a partition never fetched, paused say)
                    long since = unknownLagSince.computeIfAbsent(tp, k -> now);
                    waiting = now - since < UNKNOWN_LAG_WAIT_MS;
                }
                idleness.recordsWaiting(tp, waiting);
            }
        }
    }

    /** Tests: the clock that spaces the reports of partitions with records waiting. */
    void clock(java.util.function.LongSupplier clockMs) {
        this.clockMs = clockMs;
    }

    /** How many source partitions alignment keeps paused now (any thread). */
    public int alignmentPausedCount() {
        return alignPausedCount;
    }

    /** The source partitions alignment keeps paused now (poll thread; tests). */
    public Set<TopicPartition> alignmentPaused() {
        return Set.copyOf(alignPaused);
    }

    private List<TopicPartition> assignedSources() {
        List<TopicPartition> sources = new ArrayList<>();
        for (TopicPartition tp : delegate.assignment()) {
            if (sourceTopics.contains(tp.topic())) {
                sources.add(tp);
            }
        }
        return sources;
    }

    private void publishInHand() {
        Set<TopicPartition> assigned = delegate.assignment();
        taken.keySet().retainAll(assigned);
        Map<TopicPartition, Long> now = new HashMap<>();
        taken.forEach((tp, offset) -> {
            long required = offset;
            try {
                required = Math.min(offset, delegate.position(tp, Duration.ZERO));
            } catch (TimeoutException e) {
                // no valid position right now (offset validation, reset): keep the offset taken, the safe side
            }
            now.put(tp, required);
        });
        inHand = Map.copyOf(now);
    }

    @Override
    public void resume(Collection<TopicPartition> partitions) {
        if (aligned != null) {
            streamsPaused.removeAll(partitions);
        }
        boolean drain = draining.getAsBoolean();
        if (!drain && alignPaused.isEmpty()) {
            delegate.resume(partitions);
            return;
        }
        List<TopicPartition> others = new ArrayList<>(partitions.size());
        for (TopicPartition tp : partitions) {
            if (!(drain && sourceTopics.contains(tp.topic())) && !alignPaused.contains(tp)) {
                others.add(tp);
            }
        }
        delegate.resume(others);
    }

    @Override
    public void pause(Collection<TopicPartition> partitions) {
        if (aligned != null) {
            streamsPaused.addAll(partitions);
        }
        delegate.pause(partitions);
    }

    @Override
    public Set<TopicPartition> paused() {
        return delegate.paused();
    }

    private boolean leaveGroupOnClose;

    /**
     * Makes every close leave the consumer group, whatever Kafka Streams asks. Kafka Streams keeps a closing
     * thread's member in the group, for static members to come back to; a dynamic member never comes back (a
     * replacement thread or a restarted instance joins as a new member), so staying only leaves its partitions
     * unprocessed until {@code session.timeout.ms} passes: 45 s after each replaced stream thread, by default.
     */
    public SourcePausingConsumer leaveGroupOnClose() {
        leaveGroupOnClose = true;
        return this;
    }

    /** Whether every close leaves the group ({@link #leaveGroupOnClose()}). */
    public boolean leavingGroupOnClose() {
        return leaveGroupOnClose;
    }

    private CloseOptions leaving(CloseOptions option) {
        return leaveGroupOnClose ? option.withGroupMembershipOperation(CloseOptions.GroupMembershipOperation.LEAVE_GROUP)
                : option;
    }

    @Override
    public void close() {
        try {
            delegate.close(leaving(CloseOptions.groupMembershipOperation(CloseOptions.GroupMembershipOperation.DEFAULT)));
        } finally {
            onClose.run();
        }
    }

    @Override
    public void close(Duration timeout) {
        try {
            delegate.close(leaving(CloseOptions.timeout(timeout)));
        } finally {
            onClose.run();
        }
    }

    @Override
    public void close(CloseOptions option) {
        try {
            delegate.close(leaving(option));
        } finally {
            onClose.run();
        }
    }

    // everything below delegates unchanged

    @Override
    public Set<TopicPartition> assignment() {
        return delegate.assignment();
    }

    @Override
    public Set<String> subscription() {
        return delegate.subscription();
    }

    @Override
    public void subscribe(Collection<String> topics) {
        delegate.subscribe(topics);
    }

    @Override
    public void subscribe(Collection<String> topics, ConsumerRebalanceListener callback) {
        delegate.subscribe(topics, forgetPausesOnRevocation(callback));
    }

    @Override
    public void assign(Collection<TopicPartition> partitions) {
        delegate.assign(partitions);
    }

    @Override
    public void subscribe(Pattern pattern, ConsumerRebalanceListener callback) {
        delegate.subscribe(pattern, forgetPausesOnRevocation(callback));
    }

    @Override
    public void subscribe(Pattern pattern) {
        delegate.subscribe(pattern);
    }

    @Override
    public void subscribe(SubscriptionPattern pattern, ConsumerRebalanceListener callback) {
        delegate.subscribe(pattern, forgetPausesOnRevocation(callback));
    }

    @Override
    public void subscribe(SubscriptionPattern pattern) {
        delegate.subscribe(pattern);
    }

    @Override
    public void unsubscribe() {
        delegate.unsubscribe();
    }

    @Override
    public void commitSync() {
        delegate.commitSync();
    }

    @Override
    public void commitSync(Duration timeout) {
        delegate.commitSync(timeout);
    }

    @Override
    public void commitSync(Map<TopicPartition, OffsetAndMetadata> offsets) {
        delegate.commitSync(offsets);
    }

    @Override
    public void commitSync(Map<TopicPartition, OffsetAndMetadata> offsets, Duration timeout) {
        delegate.commitSync(offsets, timeout);
    }

    @Override
    public void commitAsync() {
        delegate.commitAsync();
    }

    @Override
    public void commitAsync(OffsetCommitCallback callback) {
        delegate.commitAsync(callback);
    }

    @Override
    public void commitAsync(Map<TopicPartition, OffsetAndMetadata> offsets, OffsetCommitCallback callback) {
        delegate.commitAsync(offsets, callback);
    }

    @Override
    public void registerMetricForSubscription(KafkaMetric metric) {
        delegate.registerMetricForSubscription(metric);
    }

    @Override
    public void unregisterMetricFromSubscription(KafkaMetric metric) {
        delegate.unregisterMetricFromSubscription(metric);
    }

    @Override
    public void seek(TopicPartition partition, long offset) {
        delegate.seek(partition, offset);
        sought(List.of(partition));
    }

    @Override
    public void seek(TopicPartition partition, OffsetAndMetadata offsetAndMetadata) {
        delegate.seek(partition, offsetAndMetadata);
        sought(List.of(partition));
    }

    @Override
    public void seekToBeginning(Collection<TopicPartition> partitions) {
        delegate.seekToBeginning(partitions);
        sought(partitions);
    }

    @Override
    public void seekToEnd(Collection<TopicPartition> partitions) {
        delegate.seekToEnd(partitions);
        sought(partitions);
    }

    /** A seek (a task revived from its last commit): what was reported of the partitions' reading no longer holds. */
    private void sought(Collection<TopicPartition> partitions) {
        if (idleness != null) {
            idleness.sought(partitions);
        }
    }

    @Override
    public long position(TopicPartition partition) {
        return delegate.position(partition);
    }

    @Override
    public long position(TopicPartition partition, Duration timeout) {
        return delegate.position(partition, timeout);
    }

    @Override
    public Map<TopicPartition, OffsetAndMetadata> committed(Set<TopicPartition> partitions) {
        return delegate.committed(partitions);
    }

    @Override
    public Map<TopicPartition, OffsetAndMetadata> committed(Set<TopicPartition> partitions, Duration timeout) {
        return delegate.committed(partitions, timeout);
    }

    @Override
    public Uuid clientInstanceId(Duration timeout) {
        return delegate.clientInstanceId(timeout);
    }

    @Override
    public Map<MetricName, ? extends Metric> metrics() {
        return delegate.metrics();
    }

    @Override
    public List<PartitionInfo> partitionsFor(String topic) {
        return delegate.partitionsFor(topic);
    }

    @Override
    public List<PartitionInfo> partitionsFor(String topic, Duration timeout) {
        return delegate.partitionsFor(topic, timeout);
    }

    @Override
    public Map<String, List<PartitionInfo>> listTopics() {
        return delegate.listTopics();
    }

    @Override
    public Map<String, List<PartitionInfo>> listTopics(Duration timeout) {
        return delegate.listTopics(timeout);
    }

    @Override
    public Map<TopicPartition, @Nullable OffsetAndTimestamp> offsetsForTimes(Map<TopicPartition, Long> timestampsToSearch) {
        return delegate.offsetsForTimes(timestampsToSearch);
    }

    @Override
    public Map<TopicPartition, @Nullable OffsetAndTimestamp> offsetsForTimes(Map<TopicPartition, Long> timestampsToSearch,
            Duration timeout) {
        return delegate.offsetsForTimes(timestampsToSearch, timeout);
    }

    @Override
    public Map<TopicPartition, Long> beginningOffsets(Collection<TopicPartition> partitions) {
        return delegate.beginningOffsets(partitions);
    }

    @Override
    public Map<TopicPartition, Long> beginningOffsets(Collection<TopicPartition> partitions, Duration timeout) {
        return delegate.beginningOffsets(partitions, timeout);
    }

    @Override
    public Map<TopicPartition, Long> endOffsets(Collection<TopicPartition> partitions) {
        return delegate.endOffsets(partitions);
    }

    @Override
    public Map<TopicPartition, Long> endOffsets(Collection<TopicPartition> partitions, Duration timeout) {
        return delegate.endOffsets(partitions, timeout);
    }

    @Override
    public OptionalLong currentLag(TopicPartition topicPartition) {
        return delegate.currentLag(topicPartition);
    }

    @Override
    public ConsumerGroupMetadata groupMetadata() {
        return delegate.groupMetadata();
    }

    @Override
    public void enforceRebalance() {
        delegate.enforceRebalance();
    }

    /**
     * Drops the rebalance Kafka Streams enforces after reviving corrupted active tasks, passes any other on.
     * {@code TaskManager.handleCorruption} closes the tasks dirty (under exactly_once_v2 the transaction aborts) and
     * revives them with their input partitions marked for a reset to the committed offsets
     * ({@code addPartitionsForOffsetReset}), done when they are initialized again. But the rebalance the stream
     * thread then enforces usually completes first: {@code TaskManager.handleAssignment} closes the revived tasks,
     * still pending initialization, and creates new ones, which reset nothing, while the consumer keeps the
     * partitions (the assignment did not change) and its position past the aborted records. They were never
     * replayed: lost (Kafka Streams 4.4). The rebalance only lets a standby take over a corrupted task.
     */
    @Override
    public void enforceRebalance(String reason) {
        if (ACTIVE_TASKS_CORRUPTED.equals(reason)) {
            return;
        }
        delegate.enforceRebalance(reason);
    }

    @Override
    public void wakeup() {
        delegate.wakeup();
    }
}
