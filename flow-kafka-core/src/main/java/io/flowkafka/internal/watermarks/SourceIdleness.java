package io.flowkafka.internal.watermarks;

import java.util.Collection;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.common.TopicPartition;

/**
 * What this instance knows about its source partitions beyond the records its tasks read, so that a
 * silent partition is not taken for an idle one. A source partition is idle after
 * {@code idle_partitions.duration} without records, and quiet (its system watermark follows the
 * clock) after the watermark interval; readers of its stream skip an idle partition (up to
 * {@code max_ratio} of them), so a partition wrongly idle has its waiting records arrive behind
 * their watermark, late. Two things say a silent partition is not idle:
 *
 * <ul>
 *   <li><b>Records waiting:</b> the main consumer reports the partitions with a known lag (records
 *       in the topic after its position: fetched but not yet returned, or not yet fetched). They are
 *       neither idle nor quiet, however long the consumer takes to hand their records over (a slow
 *       machine, read-ahead spent on a busier partition). Records Kafka Streams already took into
 *       its own queues are not lag. Not with {@code group.protocol=streams}: Kafka Streams then
 *       creates its consumer itself and nothing reports.
 *   <li><b>Time paused:</b> {@code FlowRuntime.pause()} until {@code resume()}, and a drain from its
 *       start, keep the sources from being read; idleness and quietness are measured on
 *       {@link #activeMs}, a clock that stands still while sources are paused. A partition already
 *       idle when the pause began stays idle; one that was not goes on from where it was.
 * </ul>
 *
 * <p>On the test driver nothing reports or pauses (no consumer, no {@code FlowRuntime.pause()}):
 * there {@link #activeMs} is the clock and nothing waits, unless a test sets them. Thread-safe: the runtime pauses and resumes, each stream thread's consumer reports
 * its partitions, tasks read (a volatile read, a set lookup), at watermark emissions only.
 */
public final class SourceIdleness {
    private static final long NOT_PAUSED = Long.MIN_VALUE;

    /** The paused time before the current pause, and when the current pause began ({@link #NOT_PAUSED}). */
    private record Snapshot(long pausedBeforeMs, long pausedSinceMs) {
    }

    private volatile Snapshot snapshot = new Snapshot(0, NOT_PAUSED);
    private final Set<TopicPartition> waiting = ConcurrentHashMap.newKeySet();
    /**
     * Per source partition of this instance's consumers: {the consumer's position (-1 unknown), the offset after the
     * last record it returned (-1 none)}; what a finite source needs to end a partition whose last offsets hold no
     * record a task sees (a transaction marker, aborted records).
     */
    private final Map<TopicPartition, long[]> read = new ConcurrentHashMap<>();
    /** Why sources are paused (guarded by this): {@code FlowRuntime.pause()}, a drain (never undone). */
    private boolean runtimePaused;
    private boolean draining;

    /** {@code FlowRuntime.pause()}: sources are paused from {@code nowMs} on. */
    public synchronized void pause(long nowMs) {
        runtimePaused = true;
        update(nowMs);
    }

    /** {@code FlowRuntime.resume()}: sources are read again from {@code nowMs} on, unless a drain keeps them paused. */
    public synchronized void resume(long nowMs) {
        runtimePaused = false;
        update(nowMs);
    }

    /** A drain: sources stay paused from {@code nowMs} on, whatever {@link #resume} says. */
    public synchronized void drain(long nowMs) {
        draining = true;
        update(nowMs);
    }

    private void update(long nowMs) {
        Snapshot s = snapshot;
        boolean paused = runtimePaused || draining;
        if (paused && s.pausedSinceMs == NOT_PAUSED) {
            snapshot = new Snapshot(s.pausedBeforeMs, nowMs);
        } else if (!paused && s.pausedSinceMs != NOT_PAUSED) {
            snapshot = new Snapshot(s.pausedBeforeMs + Math.max(0, nowMs - s.pausedSinceMs), NOT_PAUSED);
        }
    }

    /** Whether sources are paused now. */
    public boolean paused() {
        return snapshot.pausedSinceMs != NOT_PAUSED;
    }

    /**
     * The clock that source idleness is measured on: {@code nowMs} less all the time sources were
     * paused up to it. Never decreases while {@code nowMs} does not; stands still during a pause.
     */
    public long activeMs(long nowMs) {
        Snapshot s = snapshot;
        long paused = s.pausedBeforeMs;
        if (s.pausedSinceMs != NOT_PAUSED) {
            paused += Math.max(0, nowMs - s.pausedSinceMs);
        }
        return nowMs - paused;
    }

    /** The consumer of {@code partition} knows records are waiting in it (true) or none (false, or unknown). */
    public void recordsWaiting(TopicPartition partition, boolean waiting) {
        if (waiting) {
            this.waiting.add(partition);
        } else {
            this.waiting.remove(partition);
        }
    }

    /** The partitions left their consumer (revoked, lost): nothing is known of them until their next owner reports. */
    public void forget(Collection<TopicPartition> partitions) {
        waiting.removeAll(partitions);
        partitions.forEach(read::remove);
    }

    /** The consumer of the partitions sought: their positions and the records returned are unknown again. */
    public void sought(Collection<TopicPartition> partitions) {
        partitions.forEach(read::remove);
    }

    /** The consumer's position in a source partition (the offset of the next record it will return). */
    public void position(TopicPartition partition, long position) {
        read.computeIfAbsent(partition, p -> new long[] {-1, -1})[0] = position;
    }

    /** The consumer returned records of a source partition up to {@code nextOffset} (exclusive) in its last poll. */
    public void returned(TopicPartition partition, long nextOffset) {
        read.computeIfAbsent(partition, p -> new long[] {-1, -1})[1] = nextOffset;
    }

    /**
     * Whether the consumer of a source partition has passed {@code offset} and every record it returned below it was
     * processed: its position is at or after {@code offset}, and it returned no record, or none after
     * {@code processedTo} (the offset after the last record the partition's task processed; -1: none).
     */
    public boolean readPast(TopicPartition partition, long offset, long processedTo) {
        long[] r = read.get(partition);
        return r != null && r[0] >= offset && (r[1] < 0 || processedTo >= Math.min(r[1], offset));
    }

    /** Whether records are known to wait in the partition. */
    public boolean waiting(TopicPartition partition) {
        return !waiting.isEmpty() && waiting.contains(partition);
    }
}
