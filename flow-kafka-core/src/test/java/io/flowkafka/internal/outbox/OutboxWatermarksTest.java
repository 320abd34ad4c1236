package io.flowkafka.internal.outbox;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.util.List;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.streams.processor.api.MockProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.junit.jupiter.api.Test;

/** The watermark records a task writes to its async sinks' outboxes. */
class OutboxWatermarksTest {
    private final MockProcessorContext<byte[], byte[]> context = new MockProcessorContext<>();

    @Test
    void shouldWriteAWatermarkRecordToEachOutboxWhenItAdvancedAndTheIntervalPassed() {
        OutboxWatermarks w = new OutboxWatermarks(List.of("read.sink.a", "read.sink.b"), 3, 4, 1_000);
        assertThat(w.maybeWrite(10_000, 5_000_000L, context)).isTrue();
        assertThat(context.forwarded()).hasSize(2);
        var first = context.forwarded().get(0);
        assertThat(first.childName()).contains("read.sink.a");
        Record<byte[], byte[]> r = (Record<byte[], byte[]>) first.record();
        assertThat(r.key()).isNull();
        assertThat(r.value()).as("no value: never a message").isNull();
        assertThat(ByteBuffer.wrap(r.headers().lastHeader(OutboxService.PARTITION_HEADER).value()).getInt())
                .as("the task's own outbox partition").isEqualTo(3);
        assertThat(OutboxWatermarks.isWatermark(r.headers())).isTrue();
        assertThat(OutboxWatermarks.read(r.headers())).isEqualTo(new OutboxWatermarks.Mark(5_000_000L, 4));

        context.resetForwards();
        assertThat(w.maybeWrite(10_999, 6_000_000L, context)).as("within the interval").isFalse();
        assertThat(w.maybeWrite(11_000, 5_000_000L, context)).as("not advanced").isFalse();
        assertThat(w.maybeWrite(11_000, 7_000_000L, context)).as("advanced, interval passed").isTrue();
        assertThat(context.forwarded()).hasSize(2);
    }

    @Test
    void shouldWriteAtMostOnceASecond() {
        OutboxWatermarks w = new OutboxWatermarks(List.of("n"), 0, 1, 200);
        assertThat(w.maybeWrite(0, 1, context)).isTrue();
        assertThat(w.maybeWrite(200, 2, context)).as("the watermark interval is shorter").isFalse();
        assertThat(w.maybeWrite(1_000, 3, context)).isTrue();
    }

    @Test
    void shouldWriteNothingWithoutOutboxesOrAKnownWatermark() {
        assertThat(new OutboxWatermarks(List.of(), 0, 1, 0).maybeWrite(1, 5, context)).isFalse();
        OutboxWatermarks w = new OutboxWatermarks(List.of("n"), 0, 1, 0);
        assertThat(w.maybeWrite(1, Long.MIN_VALUE, context)).as("unknown").isFalse();
        assertThat(w.maybeWrite(1, 0, context)).as("zero").isFalse();
        assertThat(context.forwarded()).isEmpty();
    }

    @Test
    void shouldReadAMessageAsNoWatermark() {
        RecordHeaders message = new RecordHeaders();
        message.add(OutboxService.PARTITION_HEADER, OutboxService.partitionHeader(0));
        assertThat(OutboxWatermarks.isWatermark(message)).isFalse();
        assertThat(OutboxWatermarks.read(message)).isNull();
    }
}
