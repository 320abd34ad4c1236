package io.flowkafka.connectors.statictable;

import java.time.Instant;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;

/**
 * The input system watermark an arrival-order sink's writer knows: per task partition it writes, the latest
 * system watermark a committed epoch of the task reached, and their minimum, "the system watermark of the input stream". It is unknown
 * while a partition of the input has not reported (one not opened here, or reopened and not reported since), so an
 * instance running only some of the partitions never writes an empty table.
 *
 * <p>Thread-safe: updated on the stream threads, read on the publishing timer's.
 */
final class InputWatermark {
    private final Map<Integer, Long> byPartition = new ConcurrentHashMap<>();
    private volatile int partitionCount;

    /** A partition's watermark, in nanoseconds; watermarks only advance. */
    void update(int partition, long systemWatermarkNs, int partitionCount) {
        this.partitionCount = partitionCount;
        byPartition.merge(partition, systemWatermarkNs, Math::max);
    }

    /** Forgets a partition (opened again, or released). */
    void forget(int partition) {
        byPartition.remove(partition);
    }

    /**
     * The minimum over the input's partitions.
     *
     * @return the watermark, or null while a partition's is unknown
     */
    @Nullable Instant current() {
        int count = partitionCount;
        if (count <= 0) {
            return null;
        }
        long min = Long.MAX_VALUE;
        for (int p = 0; p < count; p++) {
            Long w = byPartition.get(p);
            if (w == null) {
                return null;
            }
            min = Math.min(min, w);
        }
        return Instant.EPOCH.plusNanos(min);
    }
}
