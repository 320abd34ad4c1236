package io.flowkafka.internal.state;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.common.utils.Bytes;
import org.jspecify.annotations.Nullable;

/**
 * State deletes asked from outside the pipeline (the CLI's {@code delete-states}), handed to the stream thread of the
 * task that owns the rows. Keeps the rule that a running pipeline's state changes only in its stream threads: a
 * request is queued here, and the task applies it on its next punctuation like a call's writes, so the deletes go to
 * the changelog in the task's transaction (a revive aborts them with everything else, and the asker sees the rows
 * still there and may ask again; a delete is idempotent).
 *
 * <p>Bounds: at most {@link #MAX_PENDING} requests wait per task and a request names at most {@link #MAX_ROWS} rows.
 *
 * <p>Threading: any thread asks; the owning stream thread polls.
 */
public final class StateDeletes {
    /** The key under which the runtime hands the registry to its tasks (in the Kafka Streams configs). */
    public static final String CONFIG = "flow.internal.state.deletes";
    /** Requests that may wait for one task. */
    public static final int MAX_PENDING = 16;
    /** Rows one request may name. */
    public static final int MAX_ROWS = 10_000;

    private final Map<String, Queue> queues = new ConcurrentHashMap<>();

    /**
     * One request: the store rows to delete in one task's store.
     *
     * @param storeKeys the rows
     * @param applied completed with the number of rows deleted once the task has applied the request (they commit
     *     with the task's next commit)
     * @param deadlineNanos {@link System#nanoTime()} after which the task drops the request unapplied (the asker has
     *     given up: a late delete would surprise it)
     */
    public record Request(List<Bytes> storeKeys, CompletableFuture<Integer> applied, long deadlineNanos) {
        /** Validates and copies. */
        public Request {
            storeKeys = List.copyOf(storeKeys);
            Objects.requireNonNull(applied, "applied");
        }
    }

    private static final class Queue {
        final ConcurrentLinkedQueue<Request> requests = new ConcurrentLinkedQueue<>();
        final AtomicInteger size = new AtomicInteger();
    }

    /**
     * Queues a delete of {@code storeKeys} in the task of {@code computation} and {@code partition}.
     *
     * @param bound how long the asker waits; the task drops the request after that
     * @return the request; its future completes when the task has applied it
     * @throws IllegalArgumentException with a sentence if the request names too many rows
     * @throws IllegalStateException with a sentence if too many requests wait for the task already
     */
    public Request ask(String computation, int partition, List<Bytes> storeKeys, Duration bound) {
        if (storeKeys.size() > MAX_ROWS) {
            throw new IllegalArgumentException("a delete may name at most " + MAX_ROWS + " state rows, not "
                    + storeKeys.size() + "; delete a smaller range");
        }
        Queue q = queues.computeIfAbsent(key(computation, partition), k -> new Queue());
        if (q.size.incrementAndGet() > MAX_PENDING) {
            q.size.decrementAndGet();
            throw new IllegalStateException(MAX_PENDING + " deletes already wait for partition " + partition
                    + " of computation '" + computation + "'; retry once they are applied");
        }
        Request r = new Request(storeKeys, new CompletableFuture<>(), System.nanoTime() + bound.toNanos());
        q.requests.add(r);
        return r;
    }

    /**
     * The next request for the task that its asker still waits for, or null; called by the task's stream thread.
     * Expired requests are dropped (their futures fail).
     */
    public @Nullable Request poll(String computation, int partition) {
        Queue q = queues.get(key(computation, partition));
        if (q == null) {
            return null;
        }
        for (Request r; (r = q.requests.poll()) != null;) {
            q.size.decrementAndGet();
            if (System.nanoTime() - r.deadlineNanos() < 0) {
                return r;
            }
            r.applied().completeExceptionally(new IllegalStateException("the delete was not applied in time"));
        }
        return null;
    }

    private static String key(String computation, int partition) {
        return computation + "/" + partition;
    }
}
