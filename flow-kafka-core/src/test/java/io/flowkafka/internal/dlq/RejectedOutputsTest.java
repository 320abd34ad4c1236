package io.flowkafka.internal.dlq;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.List;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.InvalidRecordException;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.errors.AuthorizationException;
import org.apache.kafka.common.errors.InvalidTimestampException;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.streams.errors.ErrorHandlerContext;
import org.apache.kafka.streams.errors.ProductionExceptionHandler;
import org.apache.kafka.streams.processor.TaskId;
import org.junit.jupiter.api.Test;

/** What the runtime remembers of outputs a topic rejected, and what its production-exception handler answers. */
class RejectedOutputsTest {
    private static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static final String OUT = "topic out";

    private static void ok(RejectedOutputs rejected, String target, String key, String value, long ts) {
        rejected.check(target, key == null ? null : b(key), value == null ? null : b(value), ts);
    }

    private static void rejected(RejectedOutputs rejected, String target, String key, String value, long ts) {
        assertThatThrownBy(() -> ok(rejected, target, key, value, ts))
                .isInstanceOf(RejectedRecordException.class);
    }

    @Test
    void shouldFailACallThatProducesARejectedRecordAgainAndNoOther() {
        RejectedOutputs rejected = new RejectedOutputs();
        assertThat(rejected.any()).isFalse();
        ok(rejected, OUT, "k", "v", 1); // nothing rejected yet
        rejected.reject(OUT, b("k"), b("big"), 1, new RecordTooLargeException("too large"));
        assertThat(rejected.any()).isTrue();
        assertThatThrownBy(() -> ok(rejected, OUT, "k", "big", 1))
                .isInstanceOf(RejectedRecordException.class)
                .hasMessageContaining("topic out rejected this record for good (1-byte key, 3-byte value)")
                .hasMessageContaining("RecordTooLargeException: too large");
        rejected(rejected, OUT, "k", "big", 99); // too large at any time
        ok(rejected, OUT, "k", "ok", 1);
        ok(rejected, OUT, "other", "big", 1);
        ok(rejected, OUT, null, "big", 1);
        ok(rejected, OUT, "kbig", null, 1);
        ok(rejected, "topic roomier", "k", "big", 1); // another topic may take it
        ok(rejected, "sink 'out'", "k", "big", 1);
    }

    @Test
    void shouldRejectARejectedTimestampOnlyWithTheSameTimestamp() {
        RejectedOutputs rejected = new RejectedOutputs();
        rejected.reject(OUT, b("k"), b("v"), 5, new InvalidTimestampException("too old"));
        rejected(rejected, OUT, "k", "v", 5);
        ok(rejected, OUT, "k", "v", 6);
        rejected.reject(OUT, b("k2"), b("v"), 7, new KafkaException("batch failed",
                new InvalidRecordException("Timestamp 7 of message with offset 0 is out of range")));
        rejected(rejected, OUT, "k2", "v", 7);
        ok(rejected, OUT, "k2", "v", 8);
        rejected.reject(OUT, b("k3"), null, 7, new InvalidRecordException("Compacted topic cannot accept message without key"));
        rejected(rejected, OUT, "k3", null, 8); // not about the timestamp: any timestamp
    }

    @Test
    void shouldTellANullKeyFromAnEmptyOne() {
        RejectedOutputs rejected = new RejectedOutputs();
        rejected.reject(OUT, null, b("v"), 0, new InvalidRecordException("compacted topic needs a key"));
        ok(rejected, OUT, "", "v", 0);
        rejected(rejected, OUT, null, "v", 0);
    }

    @Test
    void shouldForgetTheOldestBeyondItsBound() {
        RejectedOutputs rejected = new RejectedOutputs();
        for (int i = 0; i <= RejectedOutputs.MAX; i++) {
            rejected.reject(OUT, b("k" + i), b("v"), 0, new RecordTooLargeException());
        }
        rejected.reject(OUT, b("k1"), b("v"), 0, new RecordTooLargeException()); // again: keeps its place
        ok(rejected, OUT, "k0", "v", 0); // forgotten
        rejected(rejected, OUT, "k1", "v", 0);
        rejected(rejected, OUT, "k" + RejectedOutputs.MAX, "v", 0);
    }

    @Test
    void shouldRememberOnlyRejectionsForGoodAndFailTheTaskEitherWay() {
        RejectedOutputs rejected = new RejectedOutputs();
        RejectedOutputHandler handler = new RejectedOutputHandler();
        handler.configure(java.util.Map.of(RejectedOutputs.CONFIG, rejected, "application.id", "app"));
        ErrorHandlerContext context = context();
        for (Exception e : List.of(new TimeoutException("slow"), new AuthorizationException("no ACL"),
                new KafkaException("other"))) {
            assertThat(handler.handleError(context, new ProducerRecord<>("out", b("k"), b("v")), e).result())
                    .isEqualTo(ProductionExceptionHandler.Result.FAIL);
        }
        assertThat(rejected.any()).as("retriable, or not about the record").isFalse();
        // a state row its changelog rejected: the call that writes it again fails (ComputationProcessor checks the
        // rows a call writes once its function returned)
        assertThat(handler.handleError(context, new ProducerRecord<>("app-count.state-changelog", 0, 0L, b("row"),
                b("big")), new RecordTooLargeException()).result()).isEqualTo(ProductionExceptionHandler.Result.FAIL);
        rejected(rejected, "topic app-count.state-changelog", "row", "big", 0);
        ok(rejected, OUT, "row", "big", 0);
        // a changelog's records carry the commit's time, not one the call chooses: remembered at any timestamp
        handler.handleError(context, new ProducerRecord<>("app-count.state-changelog", 0, 5L, b("row"), b("old")),
                new InvalidTimestampException("too old"));
        rejected(rejected, "topic app-count.state-changelog", "row", "old", -1);
        // as is a dead letter (the producer stamps it); an output's timestamp rejection stays tied to its timestamp
        handler.handleError(context, new ProducerRecord<>("out", 0, 5L, b("k"), b("late")),
                new InvalidTimestampException("too old"));
        rejected(rejected, OUT, "k", "late", 5);
        ok(rejected, OUT, "k", "late", 6);
        for (Exception e : List.of(new RecordTooLargeException("large"), new InvalidTimestampException("old"),
                new KafkaException("wrapped", new InvalidRecordException("no key")))) {
            String value = e.getClass().getSimpleName();
            assertThat(handler.handleError(context, new ProducerRecord<>("out", 0, 0L, b("k"), b(value)), e).result())
                    .isEqualTo(ProductionExceptionHandler.Result.FAIL);
            assertThatThrownBy(() -> ok(rejected, OUT, "k", value, 0)).as(value)
                    .isInstanceOf(RejectedRecordException.class);
        }
    }

    /** A timers-store key of timer stream {@code stream}: stream, trigger, then the group-by key (TimerKeys' layout). */
    private static byte[] timerKey(int stream, long trigger, String key) {
        return java.nio.ByteBuffer.allocate(10 + key.length()).putShort((short) (stream << 1)).putLong(trigger)
                .put(b(key)).array();
    }

    /** A timer-holds key: timer stream, event time, trigger, then the group-by key. */
    private static byte[] holdKey(int stream, long event, long trigger, String key) {
        return java.nio.ByteBuffer.allocate(18 + key.length()).putShort((short) (stream << 1)).putLong(event)
                .putLong(trigger).put(b(key)).array();
    }

    /** What the processor checks for the row of a real- or system-time timer: its key without its times. */
    private static byte[] timeless(byte[] timerKey) {
        return io.flowkafka.internal.timers.TimerStore.timelessTimerKey(timerKey);
    }

    /**
     * A timer's row holds the wall-clock time it was added, which a replay does not repeat: a timers or timer-holds
     * changelog rejection is remembered by the row's key, and for a real- or system-time stream (its trigger often
     * the clock plus a delay) by the key without its times. A fired timer's tombstone and a rejection about the
     * timestamp match no call; a state row keeps being matched by key and value.
     */
    @Test
    void shouldRememberARejectedTimerRowByItsKeyAndAClockStreamsWithoutItsTimes() {
        RejectedOutputs rejected = new RejectedOutputs();
        RejectedOutputHandler handler = new RejectedOutputHandler();
        handler.configure(java.util.Map.of(RejectedOutputs.CONFIG, rejected, "application.id", "app"));
        String timers = "app-remind.timers-changelog";
        String target = "topic " + timers;
        // stream 0 event time, stream 1 real time
        for (int stream = 0; stream < 2; stream++) {
            assertThat(handler.handleError(context(), new ProducerRecord<>(timers, 0, 0L, timerKey(stream, 5_000, "big"),
                    b("added at 1")), new RecordTooLargeException("large")).result())
                    .isEqualTo(ProductionExceptionHandler.Result.FAIL);
        }
        assertThat(rejected.rejectedAny(target)).isTrue();
        assertThatThrownBy(() -> rejected.check(target, timerKey(0, 5_000, "big"),
                null, -1)).as("event time: the same key again").isInstanceOf(RejectedRecordException.class)
                .hasMessageStartingWith(target + " rejected this record for good (13-byte key, 10-byte value; "
                        + "recognised by its key)");
        rejected.check(target, timerKey(0, 9_000, "big"), null, -1); // another timer
        assertThatThrownBy(() -> rejected.check(target, timeless(timerKey(1, 9_000, "big")),
                null, -1)).as("real time: the replay's trigger is later, the clock moved")
                .isInstanceOf(RejectedRecordException.class).hasMessageContaining("recognised by its key without its "
                        + "times");
        rejected.check(target, timeless(timerKey(1, 5_000, "small")), null, -1);

        String holds = "app-remind.timer-holds-changelog";
        assertThat(rejected.rejectedAny("topic " + holds)).isFalse();
        handler.handleError(context(), new ProducerRecord<>(holds, 0, 0L, holdKey(1, 1_000, 5_000, "big"),
                new byte[0]), new RecordTooLargeException("large"));
        io.flowkafka.internal.timers.PendingTimer later = new io.flowkafka.internal.timers.PendingTimer(1, 9_000,
                3_000, 0, new byte[8], new byte[] {1}, List.of());
        assertThatThrownBy(() -> rejected.check("topic " + holds, io.flowkafka.internal.timers.TimerStore
                .timelessHoldKey(io.flowkafka.internal.timers.TimerStore.holdKey(later, timerKey(1, 9_000, "big"))),
                null, -1))
                .isInstanceOf(RejectedRecordException.class);

        handler.handleError(context(), new ProducerRecord<>(timers, 0, 0L, timerKey(0, 7_000, "gone"), (byte[]) null),
                new RecordTooLargeException("large"));
        rejected.check(target, timerKey(0, 7_000, "gone"), null, -1); // a tombstone
        handler.handleError(context(), new ProducerRecord<>(timers, 0, 0L, timerKey(0, 5_000, "old"), b("v")),
                new InvalidTimestampException("too old"));
        rejected.check(target, timerKey(0, 5_000, "old"), null, -1); // the topic's

        handler.handleError(context(), new ProducerRecord<>("app-remind.state-changelog", 0, 0L, b("row"), b("v")),
                new RecordTooLargeException("large"));
        rejected(rejected, "topic app-remind.state-changelog", "row", "v", -1);
        ok(rejected, "topic app-remind.state-changelog", "row", null, -1);
    }

    private static ErrorHandlerContext context() {
        return new ErrorHandlerContext() {
            @Override public String topic() { return "in"; }
            @Override public int partition() { return 0; }
            @Override public long offset() { return 0; }
            @Override public org.apache.kafka.common.header.Headers headers() {
                return new org.apache.kafka.common.header.internals.RecordHeaders();
            }
            @Override public String processorNodeId() { return "sink"; }
            @Override public TaskId taskId() { return new TaskId(0, 0); }
            @Override public long timestamp() { return 0; }
            @Override public byte[] sourceRawKey() { return null; }
            @Override public byte[] sourceRawValue() { return null; }
        };
    }
}
