package io.flowkafka.internal.timers;

import org.apache.kafka.common.utils.Bytes;
import org.jspecify.annotations.Nullable;

/**
 * Byte layouts of the two timer stores' keys. All multi-byte numbers are big-endian; timestamps
 * are sign-flipped ({@code ts ^ Long.MIN_VALUE}) so that unsigned byte order, the order of
 * RocksDB, of {@link Bytes#compareTo} and of the in-memory store, is signed numeric order.
 *
 * <pre>
 * timer key: region(2) | trigger(8) | encodedKey | [messageId] | keyLength(2 or 4)
 * hold key:  region(2) | event(8)   | trigger(8) | encodedKey | [messageId] | keyLength(2 or 4)
 * end mark:  region(2) + 1,  then region(2) + 1 | 0x00   (2 and 3 bytes, empty values)
 * floor:     region(2) + 1 | 0x01                       (3 bytes; value: a timer or hold key)
 * cursor:    region(2) + 1 | 0x02                       (3 bytes, holds store only; value: a timer key)
 * </pre>
 *
 * The region of timer stream {@code s} is {@code 2s}. The message id is present only in streams
 * without {@code deduplicate_equal_timestamps}, so there equal triggers of one key coexist. The key
 * length at the end (2 bytes {@code len << 1} when {@code len < 32768}, else 4 bytes
 * {@code len << 1 | 1}; the lowest bit of the last byte says which) makes every key decompose in
 * one way only, whatever the key bytes are: two different (key, message id) pairs never collide.
 * It sorts after the key, so keys of one trigger still sort by hash first. A hold key is the timer
 * key with the event timestamp inserted after the region, so each timer has exactly one hold and
 * the first hold of a stream has its smallest event time.
 *
 * <p>The end mark {@code 2s + 1} sorts after every key of stream {@code s} and before every key of
 * stream {@code s + 1}. It is a pair of live rows that are never deleted: a RocksDB seek that finds
 * no live key left in a stream stops at the first instead of walking the next stream's tombstones
 * (Kafka's RocksDB range iterator sets no upper bound, so RocksDB itself only stops at a live key),
 * and the second stops the step that Kafka's iterator takes eagerly past every row it returns.
 * Scans stop at the mark and never return it; correctness does not need it, only speed.
 *
 * <p>After the end mark come a stream's other bookkeeping rows, outside every scan of the stream: its
 * {@link #floorMark} in each store (the floor a new object's scans resume from) and, while the holds
 * index of the stream is being built, its {@link #buildCursor} in the holds store (see {@code TimerStore}).
 *
 * <p>Bounds: {@link #streamStart} (2 bytes) sorts before every key of the stream;
 * {@link #streamEnd} is the end mark. {@link #dueBound} sorts after exactly the timers whose
 * trigger is below the watermark and is itself never a key (keys are longer).
 *
 * <p>Stateless and thread-safe.
 */
final class TimerKeys {
    static final int STREAM_BYTES = 2;
    static final int TS_BYTES = 8;
    static final int TIMER_PREFIX = STREAM_BYTES + TS_BYTES;

    private TimerKeys() {
    }

    /** The timer-store key of a timer; the message id is part of it when {@code withMessageId}. */
    static Bytes timerKey(PendingTimer t, boolean withMessageId) {
        return Bytes.wrap(timerKey(t.streamIndex(), t.triggerTs(), t.encodedKey(), withMessageId ? t.messageId() : null));
    }

    static byte[] timerKey(int stream, long trigger, byte[] key, byte @Nullable [] messageId) {
        int idLength = messageId == null ? 0 : messageId.length;
        int suffix = suffixLength(key.length);
        byte[] out = new byte[TIMER_PREFIX + key.length + idLength + suffix];
        putStream(out, stream);
        putTs(out, STREAM_BYTES, trigger);
        System.arraycopy(key, 0, out, TIMER_PREFIX, key.length);
        if (messageId != null) {
            System.arraycopy(messageId, 0, out, TIMER_PREFIX + key.length, idLength);
        }
        putSuffix(out, key.length, suffix);
        return out;
    }

    /** The hold key of a timer with event time {@code event} and timer key {@code timerKey}. */
    static Bytes holdKey(long event, byte[] timerKey) {
        byte[] out = new byte[timerKey.length + TS_BYTES];
        System.arraycopy(timerKey, 0, out, 0, STREAM_BYTES);
        putTs(out, STREAM_BYTES, event);
        System.arraycopy(timerKey, STREAM_BYTES, out, TIMER_PREFIX, timerKey.length - STREAM_BYTES);
        return Bytes.wrap(out);
    }

    /** Sorts before every key of the stream. */
    static Bytes streamStart(int stream) {
        byte[] out = new byte[STREAM_BYTES];
        putStream(out, stream);
        return Bytes.wrap(out);
    }

    /** The end mark: sorts after every key of the stream and before every key of the next one. */
    static Bytes streamEnd(int stream) {
        byte[] out = streamStart(stream).get();
        out[1] |= 1;
        return Bytes.wrap(out);
    }

    /** The second row of the end mark, right after {@link #streamEnd}. */
    static Bytes streamEndGuard(int stream) {
        byte[] out = new byte[STREAM_BYTES + 1];
        System.arraycopy(streamEnd(stream).get(), 0, out, 0, STREAM_BYTES);
        return Bytes.wrap(out);
    }

    /** The row of stream {@code stream}'s floor, after its end mark: outside the stream's scans. */
    static Bytes floorMark(int stream) {
        return bookkeeping(stream, 1);
    }

    /** The holds-store row saying how far the stream's holds index is built, after its floor. */
    static Bytes buildCursor(int stream) {
        return bookkeeping(stream, 2);
    }

    private static Bytes bookkeeping(int stream, int kind) {
        byte[] out = streamEndGuard(stream).get();
        out[STREAM_BYTES] = (byte) kind;
        return Bytes.wrap(out);
    }

    /**
     * Whether a store key is a bookkeeping row (one of the end mark's rows, a floor, a build cursor) rather
     * than a timer or a hold.
     */
    static boolean isEndMark(byte[] key) {
        return key.length <= STREAM_BYTES + 1;
    }

    /** An inclusive upper bound that admits exactly the triggers {@code < watermark}; never a key. */
    static Bytes dueBound(int stream, long watermark) {
        byte[] out = new byte[TIMER_PREFIX];
        putStream(out, stream);
        putTs(out, STREAM_BYTES, watermark);
        return Bytes.wrap(out);
    }

    /** The stream index of a timer or hold key (or of an end mark). */
    static int stream(byte[] key) {
        return (((key[0] & 0xff) << 8) | (key[1] & 0xff)) >>> 1;
    }

    /** The trigger of a timer key, or the event time of a hold key. */
    static long firstTs(byte[] key) {
        long v = 0;
        for (int i = STREAM_BYTES; i < TIMER_PREFIX; i++) {
            v = (v << 8) | (key[i] & 0xff);
        }
        return v ^ Long.MIN_VALUE;
    }

    /** Whether {@code a < b} in store order. */
    static boolean before(Bytes a, Bytes b) {
        return a.compareTo(b) < 0;
    }

    private static void putStream(byte[] out, int stream) {
        int region = stream << 1;
        out[0] = (byte) (region >>> 8);
        out[1] = (byte) region;
    }

    private static void putTs(byte[] out, int at, long ts) {
        long v = ts ^ Long.MIN_VALUE;
        for (int i = TS_BYTES - 1; i >= 0; i--) {
            out[at + i] = (byte) v;
            v >>>= 8;
        }
    }

    /** Whether a stored timer key holds the timer's message id (written where its stream did not deduplicate). */
    static boolean hasMessageId(byte[] storedKey, PendingTimer t) {
        return storedKey.length > TIMER_PREFIX + t.encodedKey().length + suffixLength(t.encodedKey().length);
    }

    private static int suffixLength(int keyLength) {
        return keyLength < 0x8000 ? 2 : 4;
    }

    private static void putSuffix(byte[] out, int keyLength, int suffix) {
        int at = out.length - suffix;
        if (suffix == 2) {
            int v = keyLength << 1;
            out[at] = (byte) (v >>> 8);
            out[at + 1] = (byte) v;
        } else {
            int v = (keyLength << 1) | 1;
            out[at] = (byte) (v >>> 24);
            out[at + 1] = (byte) (v >>> 16);
            out[at + 2] = (byte) (v >>> 8);
            out[at + 3] = (byte) v;
        }
    }
}
