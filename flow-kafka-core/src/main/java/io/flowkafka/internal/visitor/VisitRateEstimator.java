package io.flowkafka.internal.visitor;

/**
 * Estimates the number of distinct keys of a partition from the density seen in recently scanned
 * hash ranges, as Flow's key visitor does: smoothed key count over smoothed hash coverage (30 s
 * exponential moving averages over the same observation times), times the partition's hash span.
 * Before the window matures, cumulative counts are used. Nothing is persisted: after a restart the
 * estimate starts again from new observations.
 *
 * <p>Threading: one task's stream thread writes; gauges may read the last estimate from any thread.
 */
final class VisitRateEstimator {
    static final long WINDOW_NANOS = 30_000_000_000L;
    private double emaKeys;
    private double emaCoverage;
    private double totalKeys;
    private double totalCoverage;
    private long firstNanos = Long.MIN_VALUE;
    private long lastNanos = Long.MIN_VALUE;
    private volatile double estimatedKeys = Double.NaN;

    /**
     * Records one read.
     *
     * @param keys distinct matching keys read
     * @param coverage the fraction of the partition's hash span the read covered (0..1)
     */
    void observe(long nowNanos, long keys, double coverage) {
        if (firstNanos == Long.MIN_VALUE) {
            firstNanos = nowNanos;
            lastNanos = nowNanos;
        }
        double decay = Math.exp(-(double) Math.max(0, nowNanos - lastNanos) / WINDOW_NANOS);
        emaKeys = emaKeys * decay + keys;
        emaCoverage = emaCoverage * decay + coverage;
        totalKeys += keys;
        totalCoverage += coverage;
        lastNanos = nowNanos;
        boolean mature = nowNanos - firstNanos >= WINDOW_NANOS;
        double k = mature ? emaKeys : totalKeys;
        double c = mature ? emaCoverage : totalCoverage;
        if (c > 0) {
            estimatedKeys = k / c;
        }
    }

    /** Marks the visitor finished: no more keys to visit. */
    void finished() {
        estimatedKeys = 0;
    }

    /** The estimated distinct keys of the partition; NaN before any positive coverage. */
    double estimatedKeys() {
        return estimatedKeys;
    }

    /** The rate needed to visit every key once per {@code periodNanos}, per second; NaN when unknown. */
    double requiredRate(long periodNanos) {
        return estimatedKeys / (periodNanos / 1e9);
    }
}
