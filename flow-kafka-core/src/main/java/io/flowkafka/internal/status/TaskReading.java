package io.flowkafka.internal.status;

/**
 * What one task last measured of itself for the status page: its output watermarks and about how many timers it
 * holds. The task writes it when it computes its watermarks; the status publisher reads it.
 *
 * <p>Threading: written by the task's stream thread, read by any thread (volatile fields; the two watermarks may be
 * read from two different updates).
 */
public final class TaskReading {
    /** {@link #pendingTimers()} of a computation without timers. */
    public static final long NO_TIMERS = -1;

    private volatile long eventWatermark = Long.MIN_VALUE;
    private volatile long systemWatermark = Long.MIN_VALUE;
    private volatile long pendingTimers = NO_TIMERS;
    private volatile boolean measured;

    /** Records the task's output watermarks (nanoseconds) and pending timers ({@link #NO_TIMERS} without timers). */
    public void update(long eventWatermark, long systemWatermark, long pendingTimers) {
        this.eventWatermark = eventWatermark;
        this.systemWatermark = systemWatermark;
        this.pendingTimers = pendingTimers;
        this.measured = true;
    }

    /** Whether the task computed its watermarks at least once. */
    public boolean measured() {
        return measured;
    }

    /** The output event watermark in nanoseconds; MIN_VALUE while nothing holds it, MAX_VALUE once completed. */
    public long eventWatermark() {
        return eventWatermark;
    }

    /** The output system watermark in nanoseconds, like {@link #eventWatermark()}. */
    public long systemWatermark() {
        return systemWatermark;
    }

    /** About how many timers the task holds; {@link #NO_TIMERS} for a computation without timers. */
    public long pendingTimers() {
        return pendingTimers;
    }
}
