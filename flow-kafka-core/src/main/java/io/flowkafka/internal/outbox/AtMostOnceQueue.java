package io.flowkafka.internal.outbox;

import io.flowkafka.api.MessageId;
import io.micrometer.core.instrument.Counter;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The in-memory queue of an async sink with {@code at_most_once_strategy.enabled} (reference 002:
 * "messages are placed in an internal queue. If the queue is full (total_queue_bytes_limit), new
 * messages are dropped without an error. Deduplication and delivery guarantees are absent").
 *
 * <p>Bounded by bytes (key, value and headers of the queued records), with the limit read at each
 * offer so a dynamic-spec change applies at once. A message that does not fit is dropped and
 * counted ({@code flow.sink.dropped}), with a warning at most every 10 seconds. Messages of a
 * call go in when the call returned, before its epoch commits: an aborted epoch that is replayed
 * can queue them twice — at-most-once covers loss, not duplicates.
 *
 * <p>Thread-safe: stream threads offer, the sink's delivery thread polls.
 */
public final class AtMostOnceQueue {
    private static final Logger LOG = LoggerFactory.getLogger(AtMostOnceQueue.class);
    private static final long WARN_EVERY_NANOS = TimeUnit.SECONDS.toNanos(10);

    /** A queued message: the record the sink writes, its id and the writing task's partition. */
    public record Entry(int partition, long sequence, MessageId messageId, byte @Nullable [] key,
            byte @Nullable [] value, Headers headers, long timestampMs, long bytes) {
    }

    private final String sink;
    private final LongSupplier limit;
    private final Counter dropped;
    private final ArrayDeque<Entry> queue = new ArrayDeque<>();
    private long bytes;
    private long sequence;
    private long droppedSinceWarning;
    private long lastWarning = System.nanoTime() - WARN_EVERY_NANOS;

    /**
     * @param limit the current {@code total_queue_bytes_limit}
     * @param dropped counts dropped messages
     */
    public AtMostOnceQueue(String sink, LongSupplier limit, Counter dropped) {
        this.sink = sink;
        this.limit = limit;
        this.dropped = dropped;
    }

    /** Queues a message, or drops it (counted) when it would exceed the limit. */
    public synchronized boolean offer(int partition, MessageId id, byte @Nullable [] key, byte @Nullable [] value,
            Headers headers, long timestampMs) {
        long size = (key == null ? 0 : key.length) + (value == null ? 0 : value.length);
        for (Header h : headers) {
            size += h.key().length() + (h.value() == null ? 0 : h.value().length);
        }
        if (bytes + size > limit.getAsLong()) {
            dropped.increment();
            droppedSinceWarning++;
            long now = System.nanoTime();
            if (now - lastWarning >= WARN_EVERY_NANOS) {
                LOG.warn("sink '{}': at-most-once queue full ({} of {} bytes): dropped {} message(s) since the last "
                        + "warning", sink, bytes, limit.getAsLong(), droppedSinceWarning);
                lastWarning = now;
                droppedSinceWarning = 0;
            }
            return false;
        }
        queue.add(new Entry(partition, sequence++, id, key, value, headers, timestampMs, size));
        bytes += size;
        notifyAll();
        return true;
    }

    /**
     * Takes up to {@code max} messages from the head, in order, whatever task wrote them, waiting
     * up to {@code waitMs} for the first one.
     */
    public synchronized List<Entry> poll(int max, long waitMs) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(waitMs);
        while (queue.isEmpty()) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return List.of();
            }
            TimeUnit.NANOSECONDS.timedWait(this, left);
        }
        List<Entry> out = new ArrayList<>(Math.min(max, queue.size()));
        while (out.size() < max && !queue.isEmpty()) {
            Entry e = queue.poll();
            bytes -= e.bytes();
            out.add(e);
        }
        return out;
    }

    /** Drops everything queued (counted as dropped): the sink is being destroyed. */
    public synchronized int clear() {
        int n = queue.size();
        dropped.increment(n);
        queue.clear();
        bytes = 0;
        return n;
    }

    /** Counts messages dropped outside the queue (a batch in hand when the sink was destroyed). */
    public void countDropped(int n) {
        dropped.increment(n);
    }

    /** The bytes queued now. */
    public synchronized long bytes() {
        return bytes;
    }

    /** The messages queued now. */
    public synchronized int size() {
        return queue.size();
    }
}
