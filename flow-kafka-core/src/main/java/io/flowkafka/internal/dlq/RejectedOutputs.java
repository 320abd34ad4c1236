package io.flowkafka.internal.dlq;

import com.google.common.hash.Hasher;
import com.google.common.hash.Hashing;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.streams.processor.api.Record;
import org.jspecify.annotations.Nullable;

/**
 * Outputs a broker rejected for good (too large for the topic, a timestamp out of its bounds, a record the
 * topic's validation refuses), remembered by their bytes so that the input that produces them again goes to the
 * dead-letter topic instead.
 *
 * <p>Under exactly-once a rejected send aborts the whole transaction, and Kafka Streams tells the
 * production-exception handler only the record sent, not reliably which input produced it. So
 * {@link RejectedOutputHandler} records the rejected record here and fails the task; the task replays from its
 * last commit, and when a call produces the same bytes again ({@link #check}), the call fails before anything is
 * sent: its state writes and outputs are dropped and its input goes to the dead-letter topic with the reason, as
 * for any input that cannot be processed. A call whose outputs differ on replay (wall-clock time in an output)
 * is not recognised and fails the task again.
 *
 * <p>One per runtime, shared by its stream threads (through the Kafka Streams configuration) and the producers'
 * callbacks; bounded: the oldest of more than {@value #MAX} entries is forgotten.
 */
public final class RejectedOutputs {
    /** The Kafka Streams configuration key under which the runtime hands the instance to handler and processors. */
    public static final String CONFIG = "flow.internal.rejected.outputs";
    static final int MAX = 1000;

    private final Map<Long, String> reasons = new LinkedHashMap<>(16, 0.75f, false) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<Long, String> eldest) {
            return size() > MAX;
        }
    };
    /** Read without the lock on every call's outputs: false while nothing was ever rejected. */
    private volatile boolean any;

    /**
     * Remembers a rejected record by its key and value bytes.
     *
     * @param rejectedBy what rejected it, e.g. {@code topic out}
     */
    public void reject(String rejectedBy, byte @Nullable [] key, byte @Nullable [] value, Throwable reason) {
        String text = rejectedBy + " rejected this output for good (" + (key == null ? 0 : key.length)
                + "-byte key, " + (value == null ? 0 : value.length) + "-byte value): " + reason;
        synchronized (reasons) {
            reasons.put(fingerprint(key, value), text);
        }
        any = true;
    }

    /** Whether any record was rejected so far (cheap: the record path's test before {@link #check}). */
    public boolean any() {
        return any;
    }

    /**
     * Throws {@link RejectedOutputException} if one of {@code records} was rejected before.
     */
    public void check(List<Record<byte[], byte[]>> records) {
        for (int i = 0; i < records.size(); i++) {
            Record<byte[], byte[]> r = records.get(i);
            String reason;
            long fingerprint = fingerprint(r.key(), r.value());
            synchronized (reasons) {
                reason = reasons.get(fingerprint);
            }
            if (reason != null) {
                throw new RejectedOutputException(reason);
            }
        }
    }

    private static long fingerprint(byte @Nullable [] key, byte @Nullable [] value) {
        Hasher h = Hashing.farmHashFingerprint64().newHasher();
        h.putInt(key == null ? -1 : key.length);
        if (key != null) {
            h.putBytes(key);
        }
        h.putInt(value == null ? -1 : value.length);
        if (value != null) {
            h.putBytes(value);
        }
        return h.hash().asLong();
    }

    @Override
    public String toString() {
        return "RejectedOutputs[any=" + any + "]";
    }

    /** An output of the current call was rejected by its topic before: the call's input is a dead letter. */
    public static final class RejectedOutputException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        RejectedOutputException(String message) {
            super(message);
        }
    }
}
