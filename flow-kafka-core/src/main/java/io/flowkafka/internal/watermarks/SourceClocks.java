package io.flowkafka.internal.watermarks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;
import java.util.function.Predicate;
import org.apache.kafka.common.TopicPartition;
import org.jspecify.annotations.Nullable;

/**
 * The clocks of one task's source streams: per stream the largest event and system timestamps read and when the
 * last record came, and from them the sources' event and system watermarks and the task's idleness. A Source
 * computation has one source stream (all its topics share one clock); a keyed Transform may read several
 * co-partitioned sources, and its watermark is the minimum over those not idle.
 *
 * <p>Times of silence are measured on the sources' active clock ({@link SourceIdleness#activeMs}: the wall clock
 * less the time the runtime kept its sources paused), and a pause by watermark_alignment counts as activity: a
 * partition paused with records waiting is not quiet.
 *
 * <p>One per task attempt, built empty at init (DESIGN rule 1): after a revive or a restart the clocks start over
 * from the records read again, so the first watermark is never the aborted attempt's. Not thread-safe.
 */
public final class SourceClocks {
    private final SourceIdleness idleness;
    private final LongSupplier nowMs;
    private final long outOfOrdernessNanos;
    private final long quietMs;
    private final long idleMs;
    private final Predicate<TopicPartition> settled;
    private final WatermarkAlignment.@Nullable PauseClock pauseClock;
    private final Map<String, Clock> clocks = new LinkedHashMap<>();
    /** When the task last read a source record, on the active clock. */
    private long lastRecordActiveMs;

    /**
     * @param idleness the runtime's source idleness (paused time, partitions with records waiting)
     * @param nowMs the task's wall clock
     * @param outOfOrdernessBound the watermark strategy's {@code out_of_orderness_bound}
     * @param quietMs how long a source without records is quiet (its system watermark follows the clock then)
     * @param idleDuration the watermark strategy's {@code idle_partitions.duration}
     * @param settled whether a source partition's records say nothing about input to come (a partition_filter
     *     excludes it, or a finite source read it to its bound)
     * @param pauseClock when watermark_alignment last paused the task's sources; null if not aligned
     */
    public SourceClocks(SourceIdleness idleness, LongSupplier nowMs, Duration outOfOrdernessBound, long quietMs,
            Duration idleDuration, Predicate<TopicPartition> settled, WatermarkAlignment.@Nullable PauseClock pauseClock) {
        this.idleness = idleness;
        this.nowMs = nowMs;
        this.outOfOrdernessNanos = outOfOrdernessBound.toNanos();
        this.quietMs = quietMs;
        this.idleMs = idleDuration.toMillis();
        this.settled = settled;
        this.pauseClock = pauseClock;
        this.lastRecordActiveMs = activeNowMs();
    }

    /** The clock of a source stream, registering one of the task's partitions of its topics. */
    public Clock register(String stream, TopicPartition partition) {
        Clock c = clocks.computeIfAbsent(stream, k -> new Clock());
        c.partitions.add(partition);
        c.lastRecordActiveMs = lastRecordActiveMs;
        return c;
    }

    /** The clock of a source stream, or null if the task reads no such source. */
    public @Nullable Clock get(String stream) {
        return clocks.get(stream);
    }

    /**
     * Moves a source's event time without a record (a punctuated source with nothing to emit): its watermark follows,
     * its idleness does not change.
     */
    public void advance(Clock clock, long eventTs) {
        clock.maxEventTs = Math.max(clock.maxEventTs, eventTs);
    }

    /** Records a source record's timestamps (nanoseconds). */
    public void onRecord(Clock clock, long eventTs, long systemTs) {
        clock.maxEventTs = Math.max(clock.maxEventTs, eventTs);
        clock.lastSystemTs = Math.max(clock.lastSystemTs, systemTs);
        lastRecordActiveMs = activeNowMs();
        clock.lastRecordActiveMs = lastRecordActiveMs;
    }

    /**
     * The sources' event watermark: the one source stream's; with several, the minimum over those that read a
     * record within {@code idle_partitions.duration} (over all of them when every one is idle).
     */
    public long eventWatermark() {
        catchUpPause();
        if (clocks.size() == 1) {
            return clocks.values().iterator().next().eventWatermark();
        }
        long now = activeNowMs();
        long active = Long.MAX_VALUE;
        long all = Long.MAX_VALUE;
        for (Clock c : clocks.values()) {
            long wm = c.eventWatermark();
            all = Math.min(all, wm);
            if (now - c.lastRecordActiveMs < idleMs || recordsWaiting(c.partitions)) {
                active = Math.min(active, wm);
            }
        }
        long min = active != Long.MAX_VALUE ? active : all;
        return min == Long.MAX_VALUE ? Long.MIN_VALUE : min;
    }

    /** The largest event watermark of one source stream (an upper bound of what timers following a stream see). */
    public long maxEventWatermark() {
        long max = Long.MIN_VALUE;
        for (Clock c : clocks.values()) {
            max = Math.max(max, c.eventWatermark());
        }
        return max;
    }

    /**
     * The sources' system watermark: per source, the newest record's system time, or the clock once the source is
     * quiet; the minimum over the sources.
     */
    public long systemWatermark(long nowMs) {
        catchUpPause();
        long activeMs = idleness.activeMs(nowMs);
        long min = Long.MAX_VALUE;
        for (Clock c : clocks.values()) {
            min = Math.min(min, c.systemWatermark(nowMs, activeMs));
        }
        return min == Long.MAX_VALUE ? nowMs * 1_000_000L : min;
    }

    /** One source stream's system watermark. */
    public long systemWatermark(Clock clock, long nowMs) {
        return clock.systemWatermark(nowMs, idleness.activeMs(nowMs));
    }

    /**
     * Whether the task's sources are idle: no record for {@code idle_partitions.duration} on the active clock, not
     * paused by watermark_alignment (a paused partition has data waiting), and no records waiting in a partition
     * the consumer has not handed over yet.
     */
    public boolean idle(boolean alignmentPaused, List<TopicPartition> partitions) {
        catchUpPause();
        return activeNowMs() - lastRecordActiveMs >= idleMs && !alignmentPaused && !recordsWaiting(partitions);
    }

    /** Now on the active clock. */
    private long activeNowMs() {
        return idleness.activeMs(nowMs.getAsLong());
    }

    /**
     * Whether the task's main consumer knows of records waiting in one of the partitions (not counting settled
     * ones: their records are dropped, so their lag says nothing about input to come).
     */
    private boolean recordsWaiting(List<TopicPartition> partitions) {
        for (TopicPartition tp : partitions) {
            if (idleness.waiting(tp) && !settled.test(tp)) {
                return true;
            }
        }
        return false;
    }

    /**
     * watermark_alignment: a source partition paused by alignment has records waiting, so it is not quiet: its
     * idleness (and its clocks' quiet time) counts from the end of its last pause, not from its last record, or
     * readers could skip it as idle right after it resumed.
     */
    private void catchUpPause() {
        if (pauseClock == null) {
            return;
        }
        long pausedMs = pauseClock.lastPausedMs();
        if (pausedMs == Long.MIN_VALUE) {
            return;
        }
        long paused = idleness.activeMs(pausedMs);
        if (paused > lastRecordActiveMs) {
            lastRecordActiveMs = paused;
            for (Clock c : clocks.values()) {
                c.lastRecordActiveMs = Math.max(c.lastRecordActiveMs, paused);
            }
        }
    }

    /** The timestamps one source stream has read, for its watermarks. */
    public final class Clock {
        private long maxEventTs = Long.MIN_VALUE;
        private long lastSystemTs = Long.MIN_VALUE;
        /** On the active clock. */
        private long lastRecordActiveMs;
        /** This task's partitions of the source's topics. */
        private final List<TopicPartition> partitions = new ArrayList<>(1);

        /** The largest event time read less the out-of-orderness bound; {@link Long#MIN_VALUE} before a record. */
        public long eventWatermark() {
            if (maxEventTs == Long.MIN_VALUE) {
                return Long.MIN_VALUE;
            }
            long wm = maxEventTs - outOfOrdernessNanos;
            return wm > maxEventTs ? Long.MIN_VALUE : wm; // wrapped below Long.MIN_VALUE
        }

        /** The clock once the source is quiet (no record for the watermark interval, paused time not counted). */
        long systemWatermark(long nowMs, long activeMs) {
            boolean quiet = activeMs - lastRecordActiveMs >= quietMs && !recordsWaiting(partitions);
            return quiet ? nowMs * 1_000_000L : lastSystemTs;
        }
    }
}
