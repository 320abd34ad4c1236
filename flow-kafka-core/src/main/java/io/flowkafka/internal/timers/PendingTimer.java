package io.flowkafka.internal.timers;

import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;

/**
 * A timer as the {@link TimerStore} keeps it: registered by a process-function call, pending until
 * the watermark of its timer stream exceeds {@link #triggerTs()}.
 *
 * <p>The byte arrays are not copied, to keep adding and firing millions of timers cheap: callers
 * must not mutate an array after handing it over or after receiving it from the store. Equality,
 * hash code and {@link #toString()} use the arrays' contents.
 *
 * @param streamIndex position of the timer stream in the computation's {@code timers} list
 * @param triggerTs nanoseconds; the timer fires once its watermark exceeds it
 * @param eventTs nanoseconds; held back by the watermark hold while the timer is pending
 * @param systemTs nanoseconds; when the timer was added
 * @param encodedKey the {@code KeyCodec} encoding of the key (starts with the 8-byte hash)
 * @param messageId the deterministic id of the timer (non-empty)
 * @param parentIds ids of the messages the timer derives from (copied, unmodifiable)
 */
public record PendingTimer(int streamIndex, long triggerTs, long eventTs, long systemTs, byte[] encodedKey,
        byte[] messageId, List<byte[]> parentIds) {

    /**
     * Validates the fields.
     *
     * @throws IllegalArgumentException if {@code streamIndex} is negative or too large, the key is
     *     shorter than its 8-byte hash, or the message id is empty
     * @throws NullPointerException if an array, the list or one of its elements is null
     */
    public PendingTimer {
        if (streamIndex < 0 || streamIndex >= TimerStore.MAX_TIMER_STREAMS) {
            throw new IllegalArgumentException("timer stream index must be in [0, " + TimerStore.MAX_TIMER_STREAMS
                    + ") but was " + streamIndex);
        }
        Objects.requireNonNull(encodedKey, "encodedKey");
        Objects.requireNonNull(messageId, "messageId");
        if (encodedKey.length < 8) {
            throw new IllegalArgumentException("an encoded timer key starts with an 8-byte hash, but it has "
                    + encodedKey.length + " bytes");
        }
        if (messageId.length == 0) {
            throw new IllegalArgumentException("a timer's message id must not be empty");
        }
        parentIds = List.copyOf(parentIds);
    }

    /** A copy with another timer stream index. */
    public PendingTimer withStreamIndex(int index) {
        return new PendingTimer(index, triggerTs, eventTs, systemTs, encodedKey, messageId, parentIds);
    }

    /** A copy with another event timestamp. */
    public PendingTimer withEventTs(long event) {
        return new PendingTimer(streamIndex, triggerTs, event, systemTs, encodedKey, messageId, parentIds);
    }

    /** The uint64 key hash (the first 8 bytes of the encoded key), as a signed long. */
    public long keyHash() {
        long h = 0;
        for (int i = 0; i < 8; i++) {
            h = (h << 8) | (encodedKey[i] & 0xff);
        }
        return h;
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof PendingTimer t)) {
            return false;
        }
        if (streamIndex != t.streamIndex || triggerTs != t.triggerTs || eventTs != t.eventTs || systemTs != t.systemTs
                || !Arrays.equals(encodedKey, t.encodedKey) || !Arrays.equals(messageId, t.messageId)
                || parentIds.size() != t.parentIds.size()) {
            return false;
        }
        for (int i = 0; i < parentIds.size(); i++) {
            if (!Arrays.equals(parentIds.get(i), t.parentIds.get(i))) {
                return false;
            }
        }
        return true;
    }

    @Override
    public int hashCode() {
        int h = Objects.hash(streamIndex, triggerTs, eventTs, systemTs);
        h = 31 * h + Arrays.hashCode(encodedKey);
        h = 31 * h + Arrays.hashCode(messageId);
        for (byte[] p : parentIds) {
            h = 31 * h + Arrays.hashCode(p);
        }
        return h;
    }

    @Override
    public String toString() {
        HexFormat hex = HexFormat.of();
        return "PendingTimer[stream=" + streamIndex + ", trigger=" + triggerTs + ", event=" + eventTs
                + ", system=" + systemTs + ", key=" + hex.formatHex(encodedKey) + ", id=" + hex.formatHex(messageId)
                + ", parents=" + parentIds.stream().map(hex::formatHex).toList() + "]";
    }
}
