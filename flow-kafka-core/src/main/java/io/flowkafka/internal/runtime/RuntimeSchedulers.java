package io.flowkafka.internal.runtime;

import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The runtime's background threads. The slow one runs work that calls the cluster and may wait on it
 * (completion watch, output-limit measurement, internal-topic purge: admin calls with timeouts of
 * tens of seconds); the fast one runs work that must keep its cadence and never blocks (the
 * watermark-alignment poll), so a slow admin call cannot hold the alignment of other instances'
 * members back. Both are daemon threads named after the pipeline, and stop together.
 *
 * <p>Threading: scheduled and shut down by the thread that starts and stops the runtime.
 */
public final class RuntimeSchedulers {
    private final ScheduledExecutorService slow;
    private final ScheduledExecutorService fast;

    public RuntimeSchedulers(String pipeline) {
        this.slow = single("flow-" + pipeline + "-maintenance");
        this.fast = single("flow-" + pipeline + "-maintenance-fast");
    }

    private static ScheduledExecutorService single(String name) {
        return Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, name);
            t.setDaemon(true);
            return t;
        });
    }

    /** Runs {@code task} every {@code periodMs} after the previous run ends, on the thread that may block. */
    public void scheduleSlow(Runnable task, long initialDelayMs, long periodMs) {
        slow.scheduleWithFixedDelay(task, initialDelayMs, periodMs, TimeUnit.MILLISECONDS);
    }

    /** Runs {@code task}, which must not block, every {@code periodMs} after the previous run ends, on its own thread. */
    public void scheduleFast(Runnable task, long initialDelayMs, long periodMs) {
        fast.scheduleWithFixedDelay(task, initialDelayMs, periodMs, TimeUnit.MILLISECONDS);
    }

    /**
     * Stops both threads: no further runs, running tasks interrupted (an admin call waiting on its
     * future returns), waiting at most {@code timeout} in all for them to end. Idempotent.
     *
     * @return whether both threads ended within the timeout
     */
    public boolean shutdown(Duration timeout) {
        slow.shutdownNow();
        fast.shutdownNow();
        long deadline = System.nanoTime() + timeout.toNanos();
        try {
            boolean slowEnded = slow.awaitTermination(timeout.toNanos(), TimeUnit.NANOSECONDS);
            boolean fastEnded = fast.awaitTermination(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            return slowEnded && fastEnded;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }
}
