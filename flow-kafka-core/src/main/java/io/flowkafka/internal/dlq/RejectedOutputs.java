package io.flowkafka.internal.dlq;

import com.google.common.hash.Hasher;
import com.google.common.hash.Hashing;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;

/**
 * Records a broker rejected for good (too large for the topic, a timestamp out of its bounds, a record the
 * topic's validation refuses), remembered by where they went and their bytes, so that the input that produces
 * them again goes to the dead-letter topic instead: outputs, and state and timer rows their store's changelog topic
 * rejected.
 *
 * <p>Under exactly-once a rejected send aborts the whole transaction, and Kafka Streams tells the
 * production-exception handler only the record sent, not reliably which input produced it. So
 * {@link RejectedOutputHandler} records the rejected record here and fails the task; the task replays from its
 * last commit, and when a call produces the same record again ({@link #check}: an output where it is built, a state
 * row once the function returned), the call fails before anything is sent: its state writes and outputs are dropped
 * and its input goes to the dead-letter topic with the reason, as for any input that cannot be processed. A state
 * row reaches its changelog only as the last value of its key before a commit, so the call that sets that value is
 * the one that fails on the replay. A record is the same when it goes to the same target (topic, or
 * synchronous sink) with the same key and value bytes, and, for a rejected timestamp, the same timestamp; a timer
 * store's row is the same when its key is, or, for a clock-driven timer stream, its key without its times
 * ({@link #rejectTimerRow}). A call whose outputs
 * differ on replay (wall-clock time in an output) is not recognised and fails the task again.
 *
 * <p>One per runtime instance, in memory: another instance that takes the task over learns the rejection by
 * failing once itself. Shared by the instance's stream threads (through the Kafka Streams configuration) and its
 * producers' callbacks; bounded: the oldest of more than {@value #MAX} entries is forgotten. Reads take no lock.
 */
public final class RejectedOutputs {
    /** The Kafka Streams configuration key under which the runtime hands the instance to handler and processors. */
    public static final String CONFIG = "flow.internal.rejected.outputs";
    static final int MAX = 1000;

    private final Map<Long, String> reasons = new ConcurrentHashMap<>();
    private final ArrayDeque<Long> order = new ArrayDeque<>();
    /** Targets that rejected something, so that a record to any other target is not hashed. */
    private final java.util.Set<String> targets = ConcurrentHashMap.newKeySet();
    /** Read on every call's outputs: false while nothing was ever rejected. */
    private volatile boolean any;

    /**
     * Remembers a rejected record.
     *
     * @param target where it went: {@code topic <name>} or {@code sink '<id>'}
     * @param timestamp the record's timestamp (ms), part of what is remembered when {@code reason} is about it
     */
    public void reject(String target, byte @Nullable [] key, byte @Nullable [] value, long timestamp,
            Throwable reason) {
        reject(target, key, value, io.flowkafka.spi.OutboxDeliveryException.aboutTimestamp(reason) ? timestamp : null,
                reason);
    }

    /**
     * Remembers a rejected record whatever its timestamp: for records whose timestamp the call that produces them
     * does not choose (a state row's changelog record carries the time of the commit that writes it).
     */
    public void rejectAtAnyTime(String target, byte @Nullable [] key, byte @Nullable [] value, Throwable reason) {
        reject(target, key, value, null, reason);
    }

    /**
     * Remembers a rejected timer-store row by its target and key alone, whatever its value (a timer row's holds the
     * wall-clock time it was added, which a replay does not repeat) and timestamp, and by {@code timeless}, its key
     * without its times ({@code TimerStore.timelessKey}), for a call whose stream takes its trigger from the clock.
     * {@link #check} such a row with the key it needs and a null value.
     */
    public void rejectTimerRow(String target, byte[] key, byte[] timeless, byte @Nullable [] value, Throwable reason) {
        String sizes = sizes(key, value);
        remember(target, fingerprint(target, key, null, null), target + " rejected this record for good (" + sizes
                + "; recognised by its key): " + reason);
        remember(target, fingerprint(target, timeless, null, null), target + " rejected this record for good (" + sizes
                + "; recognised by its key without its times): " + reason);
    }

    /** How this class names the changelog topic of store {@code store} of application {@code applicationId}. */
    public static String changelogTarget(String applicationId, String store) {
        return "topic " + applicationId + "-" + store + "-changelog";
    }

    /** Whether {@code target} rejected anything so far: a cheap test before building what {@link #check} takes. */
    public boolean rejectedAny(String target) {
        return any && targets.contains(target);
    }

    private void reject(String target, byte @Nullable [] key, byte @Nullable [] value, @Nullable Long timestamp,
            Throwable reason) {
        remember(target, fingerprint(target, key, value, timestamp), target + " rejected this record for good ("
                + sizes(key, value) + "): " + reason);
    }

    private static String sizes(byte @Nullable [] key, byte @Nullable [] value) {
        return (key == null ? 0 : key.length) + "-byte key, " + (value == null ? 0 : value.length) + "-byte value";
    }

    private void remember(String target, long fingerprint, String text) {
        targets.add(target);
        synchronized (order) {
            if (reasons.put(fingerprint, text) == null) {
                order.addLast(fingerprint);
                while (order.size() > MAX) {
                    reasons.remove(order.removeFirst());
                }
            }
        }
        any = true;
    }

    /** Whether any record was rejected so far ({@link #check} and {@link #reason} test it first: one volatile read). */
    public boolean any() {
        return any;
    }

    /** Throws {@link RejectedRecordException} if this record was rejected before. */
    public void check(String target, byte @Nullable [] key, byte @Nullable [] value, long timestamp) {
        String reason = reason(target, key, value, timestamp);
        if (reason != null) {
            throw new RejectedRecordException(reason);
        }
    }

    /** Why {@code target} rejected this record before; null if it did not. */
    public @Nullable String reason(String target, byte @Nullable [] key, byte @Nullable [] value, long timestamp) {
        if (!any || !targets.contains(target)) {
            return null;
        }
        String reason = reasons.get(fingerprint(target, key, value, null));
        return reason != null ? reason : reasons.get(fingerprint(target, key, value, timestamp));
    }

    private static long fingerprint(String target, byte @Nullable [] key, byte @Nullable [] value,
            @Nullable Long timestamp) {
        Hasher h = Hashing.farmHashFingerprint64().newHasher();
        h.putString(target, StandardCharsets.UTF_8);
        h.putInt(key == null ? -1 : key.length);
        if (key != null) {
            h.putBytes(key);
        }
        h.putInt(value == null ? -1 : value.length);
        if (value != null) {
            h.putBytes(value);
        }
        if (timestamp != null) {
            h.putLong(timestamp);
        }
        return h.hash().asLong();
    }

    @Override
    public String toString() {
        return "RejectedOutputs[any=" + any + "]";
    }
}
