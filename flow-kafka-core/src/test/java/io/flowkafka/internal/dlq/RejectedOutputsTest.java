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
import org.apache.kafka.streams.processor.api.Record;
import org.junit.jupiter.api.Test;

/** What the runtime remembers of outputs a topic rejected, and what its production-exception handler answers. */
class RejectedOutputsTest {
    private static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static Record<byte[], byte[]> rec(String key, String value) {
        return new Record<>(key == null ? null : b(key), value == null ? null : b(value), 0L);
    }

    @Test
    void shouldFailACallThatProducesARejectedRecordAgainAndNoOther() {
        RejectedOutputs rejected = new RejectedOutputs();
        assertThat(rejected.any()).isFalse();
        rejected.check(List.of(rec("k", "v"))); // nothing rejected yet
        rejected.reject("topic out", b("k"), b("big"), new RecordTooLargeException("too large"));
        assertThat(rejected.any()).isTrue();
        assertThatThrownBy(() -> rejected.check(List.of(rec("k", "ok"), rec("k", "big"))))
                .isInstanceOf(RejectedOutputs.RejectedOutputException.class)
                .hasMessageContaining("topic out rejected this output for good (1-byte key, 3-byte value)")
                .hasMessageContaining("RecordTooLargeException: too large");
        rejected.check(List.of(rec("k", "ok"), rec("other", "big"), rec(null, "big"), rec("kbig", null)));
    }

    @Test
    void shouldTellANullKeyFromAnEmptyOne() {
        RejectedOutputs rejected = new RejectedOutputs();
        rejected.reject("topic out", null, b("v"), new InvalidRecordException("compacted topic needs a key"));
        rejected.check(List.of(rec("", "v")));
        assertThatThrownBy(() -> rejected.check(List.of(rec(null, "v"))))
                .isInstanceOf(RejectedOutputs.RejectedOutputException.class);
    }

    @Test
    void shouldForgetTheOldestBeyondItsBound() {
        RejectedOutputs rejected = new RejectedOutputs();
        for (int i = 0; i <= RejectedOutputs.MAX; i++) {
            rejected.reject("topic out", b("k" + i), b("v"), new RecordTooLargeException());
        }
        rejected.check(List.of(rec("k0", "v"))); // forgotten
        assertThatThrownBy(() -> rejected.check(List.of(rec("k1", "v"))))
                .isInstanceOf(RejectedOutputs.RejectedOutputException.class);
        assertThatThrownBy(() -> rejected.check(List.of(rec("k" + RejectedOutputs.MAX, "v"))))
                .isInstanceOf(RejectedOutputs.RejectedOutputException.class);
    }

    @Test
    void shouldRememberOnlyRejectionsForGoodOfNonChangelogRecordsAndFailTheTaskEitherWay() {
        RejectedOutputs rejected = new RejectedOutputs();
        RejectedOutputHandler handler = new RejectedOutputHandler();
        handler.configure(java.util.Map.of(RejectedOutputs.CONFIG, rejected));
        ErrorHandlerContext context = context();
        for (Exception e : List.of(new TimeoutException("slow"), new AuthorizationException("no ACL"),
                new KafkaException("other"))) {
            assertThat(handler.handleError(context, new ProducerRecord<>("out", b("k"), b("v")), e).result())
                    .isEqualTo(ProductionExceptionHandler.Result.FAIL);
        }
        assertThat(handler.handleError(context, new ProducerRecord<>("app-store-changelog", b("k"), b("v")),
                new RecordTooLargeException()).result()).isEqualTo(ProductionExceptionHandler.Result.FAIL);
        assertThat(rejected.any()).as("retriable, not about the record, or a changelog record").isFalse();
        for (Exception e : List.of(new RecordTooLargeException("large"), new InvalidTimestampException("old"),
                new KafkaException("wrapped", new InvalidRecordException("no key")))) {
            String value = e.getClass().getSimpleName();
            assertThat(handler.handleError(context, new ProducerRecord<>("out", b("k"), b(value)), e).result())
                    .isEqualTo(ProductionExceptionHandler.Result.FAIL);
            assertThatThrownBy(() -> rejected.check(List.of(rec("k", value)))).as(value)
                    .isInstanceOf(RejectedOutputs.RejectedOutputException.class);
        }
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
