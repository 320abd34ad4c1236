package io.flowkafka.spec;

import java.time.Duration;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A source computation's {@code watermark_strategy}, with Flow's fields.
 *
 * <p>The event watermark of a source partition is the largest event timestamp seen minus
 * {@code out_of_orderness_bound}. A partition that has received nothing for
 * {@code idle_partitions.duration} stops holding the watermark back, but at most
 * ⌈{@code max_ratio}·P⌉ of the P partitions may be skipped as idle.
 *
 * @param timestampColumn {@code event_timestamp_assigner.column}: the payload column holding the
 *     event time; null uses the source's {@code event_timestamp_column} or the record timestamp
 * @param outOfOrdernessBound {@code watermark_generator.out_of_orderness_bound} (default 1m)
 * @param idleDuration {@code watermark_generator.idle_partitions.duration} (default 1m)
 * @param idleMaxRatio {@code watermark_generator.idle_partitions.max_ratio} (default 0.4)
 * @param alignmentGroup {@code watermark_alignment.group_name}: the source partitions of every
 *     computation naming the same group read in step (a partition whose event watermark runs more
 *     than {@code drift_bound} ahead of the group's slowest non-idle partition is paused until that
 *     one catches up); null for none
 * @param driftBound {@code watermark_alignment.drift_bound} (default 20m)
 */
public record WatermarkStrategy(@Nullable String timestampColumn, Duration outOfOrdernessBound, Duration idleDuration,
        double idleMaxRatio, @Nullable String alignmentGroup, Duration driftBound) {

    /** Flow's default {@code watermark_alignment.drift_bound}. */
    public static final Duration DEFAULT_DRIFT_BOUND = Duration.ofMinutes(20);

    /** Flow's defaults: no column, 1m bound, 1m idle duration, 0.4 max ratio, no alignment. */
    public static final WatermarkStrategy DEFAULT =
            new WatermarkStrategy(null, Duration.ofMinutes(1), Duration.ofMinutes(1), 0.4);

    /**
     * A strategy without watermark alignment (drift bound {@link #DEFAULT_DRIFT_BOUND}).
     *
     * @param timestampColumn the payload column holding the event time; null uses the source's
     *     {@code event_timestamp_column} or the record timestamp
     * @param outOfOrdernessBound how late an event may come; positive or zero
     * @param idleDuration how long a silent partition holds the watermark back; positive
     * @param idleMaxRatio the largest share of partitions that may be skipped as idle, in [0, 1]
     */
    public WatermarkStrategy(@Nullable String timestampColumn, Duration outOfOrdernessBound, Duration idleDuration,
            double idleMaxRatio) {
        this(timestampColumn, outOfOrdernessBound, idleDuration, idleMaxRatio, null, DEFAULT_DRIFT_BOUND);
    }

    /**
     * Validates the fields.
     *
     * @param timestampColumn the payload column holding the event time; null uses the source's
     *     {@code event_timestamp_column} or the record timestamp
     * @param outOfOrdernessBound how late an event may come; positive or zero
     * @param idleDuration how long a silent partition holds the watermark back; positive
     * @param idleMaxRatio the largest share of partitions that may be skipped as idle, in [0, 1]
     * @param alignmentGroup the watermark alignment group; null for none, else not blank
     * @param driftBound how far, in event time, a partition may run ahead of its alignment group;
     *     positive
     * @throws IllegalArgumentException for a negative duration or a ratio outside [0, 1]
     */
    public WatermarkStrategy {
        Objects.requireNonNull(outOfOrdernessBound, "outOfOrdernessBound");
        Objects.requireNonNull(idleDuration, "idleDuration");
        if (outOfOrdernessBound.isNegative()) {
            throw new IllegalArgumentException("watermark_generator.out_of_orderness_bound must be positive or 0 but was "
                    + outOfOrdernessBound + "; give how late an event may come, e.g. Duration.ofMinutes(1) (the default)");
        }
        if (idleDuration.isNegative() || idleDuration.isZero()) {
            throw new IllegalArgumentException("watermark_generator.idle_partitions.duration must be positive but was "
                    + idleDuration + "; give how long a silent partition holds the watermark, e.g. Duration.ofMinutes(1)");
        }
        if (!(idleMaxRatio >= 0 && idleMaxRatio <= 1)) {
            throw new IllegalArgumentException("idle_partitions.max_ratio must be in [0, 1] but was " + idleMaxRatio);
        }
        Objects.requireNonNull(driftBound, "driftBound");
        if (alignmentGroup != null && alignmentGroup.isBlank()) {
            throw new IllegalArgumentException("watermark_alignment.group_name must not be empty");
        }
        if (driftBound.isNegative() || driftBound.isZero()) {
            throw new IllegalArgumentException("watermark_alignment.drift_bound must be positive but was " + driftBound
                    + "; give how far a source may read ahead of its group, e.g. Duration.ofMinutes(20) (the default)");
        }
    }

    /**
     * A copy with another timestamp column.
     *
     * @param column the payload column holding the event time; null uses the source's
     *     {@code event_timestamp_column} or the record timestamp
     * @return the copy
     */
    public WatermarkStrategy withTimestampColumn(@Nullable String column) {
        return new WatermarkStrategy(column, outOfOrdernessBound, idleDuration, idleMaxRatio, alignmentGroup,
                driftBound);
    }

    /**
     * A copy with another out-of-orderness bound.
     *
     * @param bound how late an event may come; positive or zero
     * @return the copy
     */
    public WatermarkStrategy withOutOfOrdernessBound(Duration bound) {
        return new WatermarkStrategy(timestampColumn, bound, idleDuration, idleMaxRatio, alignmentGroup,
                driftBound);
    }

    /**
     * A copy with other idle-partition settings.
     *
     * @param duration how long a silent partition holds the watermark back; positive
     * @param maxRatio the largest share of partitions that may be skipped as idle, in [0, 1]
     * @return the copy
     */
    public WatermarkStrategy withIdlePartitions(Duration duration, double maxRatio) {
        return new WatermarkStrategy(timestampColumn, outOfOrdernessBound, duration, maxRatio, alignmentGroup,
                driftBound);
    }

    /**
     * A copy whose source partitions read in step with every other computation's of alignment group
     * {@code group} ({@code watermark_alignment}): none runs more than {@code driftBound} of event
     * time ahead of the group's slowest non-idle partition.
     *
     * @param group the alignment group's name; not blank
     * @param driftBound how far, in event time, a partition may run ahead of the group; positive
     * @return the copy
     */
    public WatermarkStrategy withAlignment(String group, Duration driftBound) {
        return new WatermarkStrategy(timestampColumn, outOfOrdernessBound, idleDuration, idleMaxRatio,
                Objects.requireNonNull(group, "group"), driftBound);
    }

    /**
     * How many of {@code partitions} partitions may be skipped as idle: ⌈max_ratio·P⌉, less than P.
     *
     * @param partitions the number P of source partitions
     * @return the most partitions that may be skipped as idle, from 0 to P - 1 (0 when P is 0 or less)
     */
    public int maxIdlePartitions(int partitions) {
        int n = (int) Math.ceil(idleMaxRatio * partitions - 1e-9);
        return Math.min(n, Math.max(0, partitions - 1));
    }
}
