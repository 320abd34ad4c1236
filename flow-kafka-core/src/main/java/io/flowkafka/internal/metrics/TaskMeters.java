package io.flowkafka.internal.metrics;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.common.TopicPartition;
import org.jspecify.annotations.Nullable;

/**
 * The gauges of one task attempt, tagged {@code pipeline}, {@code computation} and {@code partition}: its input lag
 * ({@value #INPUT_LAG}), how far its input watermarks are behind the wall clock ({@value #WATERMARK_LAG},
 * {@code kind=event|system}) and its pending timers ({@value #TIMERS_PENDING}). Rule kept: registered when the task
 * is initialised and removed when it closes (a rebalance or a revive), so no stale series is left behind; the task
 * writes plain fields at punctuation time and the gauges read them at scrape time, so the record path does no
 * meter work.
 *
 * <p>Threading: the setters run on the task's stream thread, the gauges on the scraping thread (volatile fields).
 */
public final class TaskMeters {
    /** Records of the task's input partitions not read yet. */
    public static final String INPUT_LAG = "flow.input.lag_records";
    /**
     * Seconds between the wall clock and the task's input watermark: the minimum over its input streams and sources,
     * before timer holds (a hold is the task's own choice, not a delay; the output watermark adds it).
     */
    public static final String WATERMARK_LAG = "flow.watermark.lag_seconds";
    /** The task's pending timers (about: RocksDB's estimate). */
    public static final String TIMERS_PENDING = "flow.timers.pending";

    private final MeterRegistry registry;
    private final List<Meter> meters = new ArrayList<>();
    private volatile long eventWatermark = Long.MIN_VALUE;
    private volatile long systemWatermark = Long.MIN_VALUE;
    private volatile long pendingTimers;

    /**
     * Registers the task's gauges.
     *
     * @param tags pipeline, computation and partition
     * @param lag the instance's consumer lag; null (a test driver): no input-lag gauge
     * @param inputs the task's input partitions
     * @param timers whether the computation has timers
     */
    public TaskMeters(MeterRegistry registry, Tags tags, @Nullable InputLag lag, List<TopicPartition> inputs,
            boolean timers) {
        this.registry = registry;
        if (lag != null && !inputs.isEmpty()) {
            List<TopicPartition> tps = List.copyOf(inputs);
            meters.add(Gauge.builder(INPUT_LAG, lag, l -> l.lag(tps))
                    .description("Records of the task's input partitions not read yet (last stable offset minus "
                            + "position, from the main consumer's records-lag); NaN until fetched")
                    .tags(tags).register(registry));
        }
        meters.add(Gauge.builder(WATERMARK_LAG, this, m -> lagSeconds(m.eventWatermark))
                .description("Wall clock minus the task's input event watermark (minimum over its inputs and sources), "
                        + "in seconds; 0 once complete, NaN before the first watermark").tags(tags).tag("kind", "event").register(registry));
        meters.add(Gauge.builder(WATERMARK_LAG, this, m -> lagSeconds(m.systemWatermark))
                .description("Wall clock minus the task's input system watermark (minimum over its inputs and sources), "
                        + "in seconds; 0 once complete, NaN before the first watermark").tags(tags).tag("kind", "system").register(registry));
        if (timers) {
            meters.add(Gauge.builder(TIMERS_PENDING, this, m -> m.pendingTimers)
                    .description("The task's pending timers, as the timer store estimates them at each timer "
                            + "punctuation (a few bookkeeping rows included)").tags(tags).register(registry));
        }
    }

    /** Notes the task's input watermarks (nanoseconds; {@link Long#MAX_VALUE} once complete). */
    public void watermarks(long event, long system) {
        eventWatermark = event;
        systemWatermark = system;
    }

    /** Notes the task's pending timers. */
    public void pendingTimers(long count) {
        pendingTimers = count;
    }

    /** Removes the gauges. Idempotent. */
    public void close() {
        meters.forEach(registry::remove);
        meters.clear();
    }

    static double lagSeconds(long watermarkNanos) {
        if (watermarkNanos == Long.MIN_VALUE) {
            return Double.NaN;
        }
        if (watermarkNanos == Long.MAX_VALUE) {
            return 0;
        }
        return Math.max(0, (System.currentTimeMillis() * 1_000_000L - watermarkNanos) / 1e9);
    }
}
