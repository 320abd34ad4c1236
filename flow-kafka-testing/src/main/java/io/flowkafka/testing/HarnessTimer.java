package io.flowkafka.testing;

import io.flowkafka.api.MessageId;
import io.flowkafka.api.Timer;
import java.util.Objects;
import org.apache.avro.generic.GenericRecord;

/**
 * A timer of a {@link ComputationHarness}: one added by a call ({@link HarnessResult#timers()}),
 * one pending ({@link ComputationHarness#pendingTimers()}), or the one handed to
 * {@code onTimer}.
 *
 * <p>Immutable (the key is a copy). Equality is by value: stream, key, trigger and event
 * timestamps; the message id and system timestamp are not compared, so a test can compare with
 * {@link #of}.
 */
public final class HarnessTimer implements Timer {
    private final MessageId messageId;
    private final String streamId;
    private final GenericRecord key;
    private final long triggerTimestamp;
    private final long eventTimestamp;
    private final long systemTimestamp;

    HarnessTimer(MessageId messageId, String streamId, GenericRecord key, long triggerTimestamp, long eventTimestamp,
            long systemTimestamp) {
        this.messageId = Objects.requireNonNull(messageId, "messageId");
        this.streamId = Objects.requireNonNull(streamId, "streamId");
        this.key = Objects.requireNonNull(key, "key");
        this.triggerTimestamp = triggerTimestamp;
        this.eventTimestamp = eventTimestamp;
        this.systemTimestamp = systemTimestamp;
    }

    /**
     * A timer to compare with, e.g. {@code assertThat(result.timers()).containsExactly(HarnessTimer.of("timeout",
     * key, trigger, event))}.
     *
     * @param streamId the timer stream
     * @param key the timer's key
     * @param triggerTimestamp the trigger timestamp, nanoseconds
     * @param eventTimestamp the event timestamp, nanoseconds
     * @return a timer equal to any timer with these four values
     */
    public static HarnessTimer of(String streamId, GenericRecord key, long triggerTimestamp, long eventTimestamp) {
        return new HarnessTimer(MessageId.of(new byte[] {0}), streamId, key, triggerTimestamp, eventTimestamp, 0L);
    }

    @Override
    public MessageId getMessageId() {
        return messageId;
    }

    @Override
    public String getStreamId() {
        return streamId;
    }

    @Override
    public GenericRecord getKey() {
        return key;
    }

    @Override
    public long getTriggerTimestamp() {
        return triggerTimestamp;
    }

    @Override
    public long getEventTimestamp() {
        return eventTimestamp;
    }

    @Override
    public long getSystemTimestamp() {
        return systemTimestamp;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof HarnessTimer t && streamId.equals(t.streamId) && triggerTimestamp == t.triggerTimestamp
                && eventTimestamp == t.eventTimestamp && ComputationHarness.sameKey(key, t.key);
    }

    @Override
    public int hashCode() {
        return Objects.hash(streamId, triggerTimestamp, eventTimestamp);
    }

    @Override
    public String toString() {
        return "timer " + streamId + " key " + key + " trigger " + triggerTimestamp + " event " + eventTimestamp;
    }
}
