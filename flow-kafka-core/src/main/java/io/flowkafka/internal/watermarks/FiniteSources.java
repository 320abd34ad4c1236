package io.flowkafka.internal.watermarks;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.common.TopicPartition;

/**
 * Bounds of finite Kafka sources: for each partition, the last stable offset seen when the
 * pipeline started (records at or above it are outside the finite range), and which partitions
 * are known to be done.
 *
 * <p>"Done" is detected in two ways: a task processed the record just below the bound, or, outside
 * the record path, the runtime saw the application's committed offset reach the bound (needed when
 * the offsets just below the bound are transaction markers, which a read_committed consumer never
 * sees). A task persists the bound it first used in its changelogged store, so a restart that sees
 * a later last stable offset does not change the finite range.
 *
 * <p>Thread-safe: filled by the runtime thread, read by stream threads.
 */
public final class FiniteSources {
    private final Map<TopicPartition, Long> bounds = new ConcurrentHashMap<>();
    private final Set<TopicPartition> done = ConcurrentHashMap.newKeySet();

    /** Sets the bound of a partition (the first value set wins). */
    public void bound(TopicPartition tp, long lastStableOffset) {
        bounds.putIfAbsent(tp, lastStableOffset);
    }

    /** The bound of a partition, or null if it is not finite or not known yet. */
    public Long boundOf(TopicPartition tp) {
        return bounds.get(tp);
    }

    /** All bounds. */
    public Map<TopicPartition, Long> bounds() {
        return Map.copyOf(bounds);
    }

    /** Marks a partition done (from committed offsets). */
    public void markDone(TopicPartition tp) {
        done.add(tp);
    }

    /** Whether a partition is known to be done. */
    public boolean isDone(TopicPartition tp) {
        return done.contains(tp);
    }
}
