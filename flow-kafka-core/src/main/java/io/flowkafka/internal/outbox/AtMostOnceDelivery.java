package io.flowkafka.internal.outbox;

import io.flowkafka.internal.status.StatusBoard;
import io.flowkafka.spi.OutboxBatch;
import io.flowkafka.spi.OutboxDeliverer;
import io.flowkafka.spi.OutboxDeliveryException;
import io.flowkafka.spi.OutboxRecord;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.OptionalLong;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Delivers an at-most-once sink's {@link AtMostOnceQueue} with the sink's deliverer on a thread of
 * its own: no outbox, no progress, no dedup. A failed batch is retried with backoff while the
 * queue keeps taking messages up to its limit (and drops the rest). When the runtime stops, the
 * queue is delivered for at most {@code suspend_destruction_duration}; what is left is dropped and
 * counted.
 */
public final class AtMostOnceDelivery implements AutoCloseable {
    /** The partition of an at-most-once batch: it may mix several tasks' messages. */
    public static final int AT_MOST_ONCE_PARTITION = -1;
    private static final Logger LOG = LoggerFactory.getLogger(AtMostOnceDelivery.class);

    private final String sink;
    private final String computation;
    private final AtMostOnceQueue queue;
    private final OutboxDeliverer deliverer;
    private final int maxBatch;
    private final Duration suspendDestruction;
    private final StatusBoard status;
    private final Thread thread;
    private final Set<Integer> opened = new HashSet<>();
    private volatile boolean running = true;
    private volatile long stopBy = Long.MAX_VALUE;

    public AtMostOnceDelivery(String pipeline, String sink, String computation, AtMostOnceQueue queue,
            OutboxDeliverer deliverer, int maxBatch, Duration suspendDestruction, StatusBoard status) {
        this.sink = sink;
        this.computation = computation;
        this.queue = queue;
        this.deliverer = deliverer;
        this.maxBatch = maxBatch;
        this.suspendDestruction = suspendDestruction;
        this.status = status;
        this.thread = new Thread(this::run, "flow-" + pipeline + "-at-most-once-" + sink);
        this.thread.setDaemon(true);
    }

    /** Starts the delivery thread. */
    public void start() {
        thread.start();
    }

    private void run() {
        long backoff = 50;
        List<AtMostOnceQueue.Entry> batch = List.of();
        try {
            while (System.nanoTime() < stopBy) {
                if (batch.isEmpty()) {
                    batch = queue.poll(maxBatch, 100);
                    if (batch.isEmpty()) {
                        if (!running) {
                            break; // stopping and delivered everything
                        }
                        continue;
                    }
                }
                try {
                    deliver(batch);
                    batch = List.of();
                    backoff = 50;
                    status.clear(computation, -1, "/sinks/" + sink + "/delivery");
                } catch (OutboxDeliveryException | RuntimeException e) {
                    String message = "sink '" + sink + "' (at most once): delivering " + batch.size()
                            + " message(s) failed, retrying in " + backoff + " ms: " + e.getMessage();
                    status.report(computation, -1, "/sinks/" + sink + "/delivery", message, Instant.now());
                    LOG.warn(message);
                    Thread.sleep(backoff);
                    backoff = Math.min(30_000, backoff * 2);
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException | Error e) {
            // an Error in a deliverer (a StackOverflowError, an OutOfMemoryError) ends this thread: the sink reports
            // it stopped, so /health fails, instead of its queue filling and dropping unseen
            String message = "the at-most-once delivery of sink '" + sink + "' failed: " + e + " (the sink is stopped; "
                    + "what it takes is dropped until the pipeline restarts)";
            LOG.error(message);
            status.report(computation, -1, "/sinks/" + sink + "/stopped", message, Instant.now());
            if (e instanceof Error error) {
                throw error;
            }
        } finally {
            queue.countDropped(batch.size());
            int left = queue.clear() + batch.size();
            if (left > 0) {
                LOG.warn("sink '{}' (at most once): dropped {} undelivered message(s) after suspend_destruction_duration {}",
                        sink, left, suspendDestruction);
            }
        }
    }

    private void deliver(List<AtMostOnceQueue.Entry> entries) throws OutboxDeliveryException {
        // one batch may hold several tasks' messages: an at-most-once deliverer has no per-partition progress
        int partition = AT_MOST_ONCE_PARTITION;
        if (!opened.contains(partition)) {
            deliverer.open(partition, OptionalLong.empty());
            opened.add(partition);
        }
        List<OutboxRecord> records = new ArrayList<>(entries.size());
        for (AtMostOnceQueue.Entry e : entries) {
            records.add(new OutboxRecord(e.sequence(), e.messageId(), e.key(), e.value(), e.headers(), e.timestampMs()));
        }
        deliverer.deliver(new OutboxBatch(sink, partition, records, entries.get(entries.size() - 1).sequence() + 1));
    }

    /**
     * Starts the stop without waiting: the queue is delivered for at most {@code suspend_destruction_duration} from
     * now. A runtime with several sinks starts every stop before it waits for each ({@link #close()}).
     */
    public void stopSoon() {
        if (running) {
            running = false;
            stopBy = System.nanoTime() + suspendDestruction.toNanos();
        }
    }

    /**
     * Stops: keeps delivering what is queued for at most {@code suspend_destruction_duration}, then
     * drops the rest and closes the deliverer.
     */
    @Override
    public void close() {
        stopSoon();
        try {
            thread.join(suspendDestruction.toMillis() + 5_000);
            if (thread.isAlive()) {
                thread.interrupt();
                thread.join(5_000);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        for (int p : opened) {
            try {
                deliverer.release(p);
            } catch (RuntimeException e) {
                LOG.debug("sink '{}': release failed: {}", sink, e.toString());
            }
        }
        deliverer.close();
    }
}
