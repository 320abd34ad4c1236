package io.flowkafka.internal.dlq;

import io.flowkafka.spi.SinkDeadLetters;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.jspecify.annotations.Nullable;

/**
 * Makes a dead letter writable. A dead letter copies its input's key, value and headers, and an input can be larger
 * than the dead-letter topic takes: a source topic with a larger {@code max.message.bytes}, or an input whose output
 * was too large because the input was. A dead letter the producer or the broker refuses fails the task, whose replay
 * sends the same dead letter again: the pipeline would stop on the very record the dead-letter topic is for. So a
 * dead letter larger than the producer sends ({@link RecordSizeLimit}), or whose bytes the dead-letter topic rejected
 * before ({@link RejectedOutputs}, remembered by {@link RejectedOutputHandler}), first cuts a long error message to
 * its start (when the producer's limit is the problem: a rejection is remembered by key and value, which the cut
 * does not change); if that is not enough, leaves out the input's value; if that is not enough, its key and the
 * input's headers too. Its {@code flow.dlq.*} headers still say why the input failed and, for a message input, where it
 * is (topic, partition, offset), and {@value #OMITTED_HEADER} says what was left out and why.
 */
public final class DeadLetterFit {
    /** The header naming what a dead letter leaves out of its input, and why. */
    public static final String OMITTED_HEADER = SinkDeadLetters.OMITTED_HEADER;
    static final int MESSAGE_KEPT = 1000;

    private DeadLetterFit() {
    }

    /** A dead letter as it is written. */
    public record Letter(byte @Nullable [] key, byte @Nullable [] value, Headers headers) {
    }

    /**
     * The dead letter to write to {@code topic}: the one given if it can be written, else the first of the smaller
     * ones above that can (the last one when none can).
     *
     * @param headers the input's headers followed by the {@code flow.dlq.*} ones
     */
    public static Letter fit(RecordSizeLimit limit, @Nullable RejectedOutputs rejected, String topic,
            byte @Nullable [] key, byte @Nullable [] value, Headers headers) {
        String why = unwritable(limit, rejected, topic, key, value, headers);
        if (why == null) {
            return new Letter(key, value, headers);
        }
        // over the producer's limit, a long error message first: the likely culprit when the input is small (a
        // timer's, a visit's); a rejection by the topic is remembered by key and value, which the cut does not change
        Headers cut = limit.fits(key, value, headers) ? null : cutMessage(headers);
        if (cut != null && unwritable(limit, rejected, topic, key, value, cut) == null) {
            return new Letter(key, value, cut);
        }
        Headers base = cut != null ? cut : headers;
        String where = base.lastHeader("flow.dlq.offset") != null
                ? "; the input is at flow.dlq.topic, flow.dlq.partition and flow.dlq.offset while that topic keeps it"
                : "; it is kept nowhere else";
        Headers noValue = copy(base, false);
        noValue.add(OMITTED_HEADER, utf8("the input's value (" + length(value) + " bytes): " + why + where));
        if (unwritable(limit, rejected, topic, key, null, noValue) == null) {
            return new Letter(key, null, noValue);
        }
        return new Letter(null, null, SinkDeadLetters.bare(base, "the input's key (" + length(key) + " bytes), value ("
                + length(value) + " bytes) and headers: " + why + where));
    }

    /** The headers with a long {@code flow.dlq.error.message} cut to its start; null when it is not long. */
    private static @Nullable Headers cutMessage(Headers headers) {
        Header message = headers.lastHeader("flow.dlq.error.message");
        if (message == null || message.value() == null || message.value().length <= MESSAGE_KEPT) {
            return null;
        }
        String text = new String(message.value(), StandardCharsets.UTF_8);
        Headers cut = copy(headers, false);
        cut.remove("flow.dlq.error.message");
        cut.add("flow.dlq.error.message", utf8(text.substring(0, Math.min(text.length(), MESSAGE_KEPT))
                + "... (" + message.value().length + " bytes in all)"));
        return cut;
    }

    private static @Nullable String unwritable(RecordSizeLimit limit, @Nullable RejectedOutputs rejected, String topic,
            byte @Nullable [] key, byte @Nullable [] value, Headers headers) {
        if (!limit.fits(key, value, headers)) {
            return limit.tooLarge("the dead letter", key, value, headers);
        }
        return rejected == null ? null : rejected.reason("topic " + topic, key, value, -1L);
    }

    /** The headers, all of them or only flow-kafka's dead-letter ones. */
    private static Headers copy(Headers headers, boolean deadLetterOnly) {
        List<Header> kept = new ArrayList<>();
        for (Header h : headers) {
            if (!deadLetterOnly || h.key().startsWith("flow.dlq.")) {
                kept.add(h);
            }
        }
        return new RecordHeaders(kept);
    }

    private static int length(byte @Nullable [] b) {
        return b == null ? 0 : b.length;
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
