package io.flowkafka.internal.runtime;

import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The runtime's background threads. The slow one runs work that calls the cluster and may wait on it
 * (completion watch, output-limit measurement, internal-topic purge: admin calls with timeouts of
 * tens of seconds); the fast one runs work that must keep its cadence and never blocks (the
 * watermark-alignment poll), so a slow admin call cannot hold the alignment of other instances'
 * members back. Both are daemon threads named after the pipeline, and stop together. A run that throws ends that run
 * only: an executor would cancel the schedule, and the work would stop unseen while the pipeline looks healthy.
 *
 * <p>Threading: scheduled and shut down by the thread that starts and stops the runtime.
 */
public final class RuntimeSchedulers {
    private static final Logger LOG = LoggerFactory.getLogger(RuntimeSchedulers.class);

    private final String pipeline;
    private final ScheduledExecutorService slow;
    private final ScheduledExecutorService fast;

    public RuntimeSchedulers(String pipeline) {
        this.pipeline = pipeline;
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

    /** Runs {@code task} ({@code what} in logs, e.g. "the completion check") every {@code periodMs} after the previous run ends, on the thread that may block. */
    public void scheduleSlow(String what, Runnable task, long initialDelayMs, long periodMs) {
        slow.scheduleWithFixedDelay(new Surviving(what, task), initialDelayMs, periodMs, TimeUnit.MILLISECONDS);
    }

    /** Runs {@code task}, which must not block, every {@code periodMs} after the previous run ends, on its own thread. */
    public void scheduleFast(String what, Runnable task, long initialDelayMs, long periodMs) {
        fast.scheduleWithFixedDelay(new Surviving(what, task), initialDelayMs, periodMs, TimeUnit.MILLISECONDS);
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

    /** Runs a task, catching what it throws; logs the first failure of a streak and the recovery. One thread only. */
    private final class Surviving implements Runnable {
        private final String what;
        private final Runnable task;
        private boolean failing;

        Surviving(String what, Runnable task) {
            this.what = what;
            this.task = task;
        }

        @Override
        public void run() {
            try {
                task.run();
                if (failing) {
                    failing = false;
                    LOG.info("pipeline '{}': {} runs again", pipeline, what);
                }
            } catch (Throwable e) { // an Error too: the schedule must outlive it
                if (!failing) {
                    failing = true;
                    LOG.error("pipeline '{}': {} failed; it runs again at its next period (further failures in a row "
                            + "are not logged)", pipeline, what, e);
                }
            }
        }
    }
}
