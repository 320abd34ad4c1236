package io.flowkafka.internal.dlq;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.junit.jupiter.api.Test;

/** A dead letter the dead-letter topic could not take goes without the input's bytes, saying so. */
class DeadLetterFitTest {
    private static final RecordSizeLimit LIMIT = RecordSizeLimit.of(Map.of("producer.max.request.size", 2000));

    private static Headers headers(String message) {
        Headers h = new RecordHeaders();
        h.add("trace", new byte[100]); // the input's own header
        h.add("flow.dlq.error.message", message.getBytes(StandardCharsets.UTF_8));
        h.add("flow.dlq.offset", "7".getBytes(StandardCharsets.UTF_8));
        return h;
    }

    private static String header(Headers h, String key) {
        Header found = h.lastHeader(key);
        return found == null ? null : new String(found.value(), StandardCharsets.UTF_8);
    }

    @Test
    void shouldKeepADeadLetterThatCanBeWritten() {
        byte[] key = new byte[10];
        byte[] value = new byte[1000];
        Headers h = headers("bad");
        DeadLetterFit.Letter letter = DeadLetterFit.fit(LIMIT, new RejectedOutputs(), "p.dlq", key, value, h);
        assertThat(letter.key()).isSameAs(key);
        assertThat(letter.value()).isSameAs(value);
        assertThat(letter.headers()).isSameAs(h);
    }

    @Test
    void shouldLeaveOutTheValueOfADeadLetterLargerThanTheProducerSends() {
        byte[] key = new byte[10];
        DeadLetterFit.Letter letter = DeadLetterFit.fit(LIMIT, null, "p.dlq", key, new byte[5000], headers("bad"));
        assertThat(letter.key()).isSameAs(key);
        assertThat(letter.value()).isNull();
        assertThat(header(letter.headers(), "trace")).isNotNull();
        assertThat(header(letter.headers(), "flow.dlq.error.message")).isEqualTo("bad");
        assertThat(header(letter.headers(), "flow.dlq.offset")).isEqualTo("7");
        assertThat(header(letter.headers(), DeadLetterFit.OMITTED_HEADER))
                .startsWith("the input's value (5000 bytes): the dead letter would be a record of ")
                .contains("more than the producer's max.request.size of 2000 bytes")
                .endsWith("the input is at flow.dlq.topic, flow.dlq.partition and flow.dlq.offset while that topic "
                        + "keeps it");
        assertThat(LIMIT.fits(letter.key(), letter.value(), letter.headers())).isTrue();
    }

    @Test
    void shouldLeaveOutKeyAndInputHeadersWhenTheValueIsNotEnoughAndCutAHugeMessage() {
        DeadLetterFit.Letter letter = DeadLetterFit.fit(LIMIT, null, "p.dlq", new byte[3000], new byte[5000],
                headers("bad"));
        assertThat(letter.key()).isNull();
        assertThat(letter.value()).isNull();
        assertThat(header(letter.headers(), "trace")).as("the input's header").isNull();
        assertThat(header(letter.headers(), "flow.dlq.offset")).isEqualTo("7");
        assertThat(header(letter.headers(), DeadLetterFit.OMITTED_HEADER))
                .startsWith("the input's key (3000 bytes), value (5000 bytes) and headers: the dead letter would be");

        String huge = "x".repeat(3000);
        DeadLetterFit.Letter cut = DeadLetterFit.fit(LIMIT, null, "p.dlq", null, null, headers(huge));
        assertThat(header(cut.headers(), "flow.dlq.error.message"))
                .isEqualTo("x".repeat(DeadLetterFit.MESSAGE_KEPT) + "... (3000 bytes in all)");
        assertThat(LIMIT.fits(cut.key(), cut.value(), cut.headers())).isTrue();
    }

    /** A timer's or a visit's dead letter: small key and value, kept nowhere else; a long message is cut first. */
    @Test
    void shouldCutALongMessageBeforeLeavingOutAnything() {
        Headers h = new RecordHeaders();
        h.add("flow.dlq.error.message", "y".repeat(5000).getBytes(StandardCharsets.UTF_8));
        h.add("flow.dlq.timer.stream", "timeout".getBytes(StandardCharsets.UTF_8));
        byte[] key = new byte[20];
        byte[] value = "1700000000".getBytes(StandardCharsets.UTF_8);
        DeadLetterFit.Letter letter = DeadLetterFit.fit(LIMIT, null, "p.dlq", key, value, h);
        assertThat(letter.key()).isSameAs(key);
        assertThat(letter.value()).isSameAs(value);
        assertThat(header(letter.headers(), "flow.dlq.error.message"))
                .isEqualTo("y".repeat(DeadLetterFit.MESSAGE_KEPT) + "... (5000 bytes in all)");
        assertThat(header(letter.headers(), DeadLetterFit.OMITTED_HEADER)).isNull();
        assertThat(header(letter.headers(), "flow.dlq.timer.stream")).isEqualTo("timeout");

        DeadLetterFit.Letter bigKey = DeadLetterFit.fit(LIMIT, null, "p.dlq", new byte[3000], value, h);
        assertThat(bigKey.key()).isNull();
        assertThat(header(bigKey.headers(), DeadLetterFit.OMITTED_HEADER)).endsWith("; it is kept nowhere else");
    }

    /** A replay whose smaller dead letter was rejected too goes bare. */
    @Test
    void shouldGoBareWhenTheLetterWithoutItsValueWasRejectedToo() {
        RejectedOutputs rejected = new RejectedOutputs();
        byte[] key = new byte[1000];
        byte[] value = new byte[500];
        rejected.reject("topic p.dlq", key, value, -1L, new RecordTooLargeException("whole"));
        rejected.reject("topic p.dlq", key, null, -1L, new RecordTooLargeException("without value"));
        DeadLetterFit.Letter letter = DeadLetterFit.fit(LIMIT, rejected, "p.dlq", key, value, headers("bad"));
        assertThat(letter.key()).isNull();
        assertThat(letter.value()).isNull();
        assertThat(header(letter.headers(), "trace")).isNull();
        assertThat(header(letter.headers(), DeadLetterFit.OMITTED_HEADER))
                .startsWith("the input's key (1000 bytes), value (500 bytes) and headers: topic p.dlq rejected this "
                        + "record for good").contains("whole");
    }

    /** Cutting the message cannot help with a rejection by the topic (remembered by key and value). */
    @Test
    void shouldLeaveOutTheValueOfARejectedLetterWithALongMessageAndCutTheMessageToFit() {
        RejectedOutputs rejected = new RejectedOutputs();
        byte[] key = "k".getBytes(StandardCharsets.UTF_8);
        byte[] value = new byte[900];
        Headers h = headers("z".repeat(1500)); // with the value, over the producer's limit too
        rejected.reject("topic p.dlq", key, value, -1L, new RecordTooLargeException("over max.message.bytes"));
        DeadLetterFit.Letter letter = DeadLetterFit.fit(LIMIT, rejected, "p.dlq", key, value, h);
        assertThat(letter.value()).isNull();
        assertThat(letter.key()).isSameAs(key);
        assertThat(header(letter.headers(), "flow.dlq.error.message")).endsWith("... (1500 bytes in all)");
        assertThat(LIMIT.fits(letter.key(), letter.value(), letter.headers())).isTrue();

        // within the producer's limit, rejected by the topic only: the message stays whole
        byte[] small = new byte[300];
        Headers fitting = headers("w".repeat(1200));
        rejected.reject("topic p.dlq", key, small, -1L, new RecordTooLargeException("over max.message.bytes"));
        DeadLetterFit.Letter whole = DeadLetterFit.fit(LIMIT, rejected, "p.dlq", key, small, fitting);
        assertThat(whole.value()).isNull();
        assertThat(header(whole.headers(), "flow.dlq.error.message")).isEqualTo("w".repeat(1200));
    }

    @Test
    void shouldLeaveOutTheValueOfADeadLetterTheTopicRejectedBefore() {
        RejectedOutputs rejected = new RejectedOutputs();
        byte[] key = "k".getBytes(StandardCharsets.UTF_8);
        byte[] value = new byte[1000]; // within the producer's limit, over the topic's
        rejected.reject("topic p.dlq", key, value, -1L, new RecordTooLargeException("over max.message.bytes"));
        DeadLetterFit.Letter letter = DeadLetterFit.fit(LIMIT, rejected, "p.dlq", key, value, headers("bad"));
        assertThat(letter.value()).isNull();
        assertThat(letter.key()).isSameAs(key);
        assertThat(header(letter.headers(), DeadLetterFit.OMITTED_HEADER))
                .startsWith("the input's value (1000 bytes): topic p.dlq rejected this record for good")
                .contains("RecordTooLargeException: over max.message.bytes");
        assertThat(DeadLetterFit.fit(LIMIT, rejected, "other.dlq", key, value, headers("bad")).value())
                .as("another topic").isSameAs(value);
    }
}
