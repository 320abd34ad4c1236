package io.flowkafka.internal.outbox;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowkafka.api.MessageId;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.junit.jupiter.api.Test;

class AtMostOnceQueueTest {
    private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
    private final Counter dropped = meters.counter("flow.sink.dropped");
    private final AtomicLong limit = new AtomicLong(100);
    private final AtMostOnceQueue queue = new AtMostOnceQueue("s", limit::get, dropped);

    private boolean offer(int partition, int bytes) {
        return queue.offer(partition, MessageId.of(new byte[] {(byte) bytes}), null, new byte[bytes], new RecordHeaders(), 0);
    }

    @Test
    void shouldDropOnlyWhatWouldPassTheLimitAndCountIt() {
        // "If the queue is full (total_queue_bytes_limit), new messages are dropped without an error."
        assertThat(offer(0, 40)).isTrue();
        assertThat(offer(0, 40)).isTrue();
        assertThat(offer(0, 40)).as("120 > 100").isFalse();
        assertThat(offer(0, 20)).as("exactly at the limit fits").isTrue();
        assertThat(queue.bytes()).isEqualTo(100);
        assertThat(queue.size()).isEqualTo(3);
        assertThat(dropped.count()).isEqualTo(1.0);
    }

    @Test
    void shouldApplyAChangedLimitAtTheNextOffer() {
        assertThat(offer(0, 90)).isTrue();
        assertThat(offer(0, 20)).isFalse();
        limit.set(1000);
        assertThat(offer(0, 20)).isTrue();
        limit.set(10);
        assertThat(offer(0, 1)).as("over the lowered limit").isFalse();
        assertThat(dropped.count()).isEqualTo(2.0);
    }

    @Test
    void shouldHandOutMessagesInOrderWhateverTaskWroteThemAndFreeTheBytes() throws InterruptedException {
        limit.set(10_000);
        offer(0, 1);
        offer(0, 2);
        offer(1, 3);
        offer(0, 4);
        List<AtMostOnceQueue.Entry> first = queue.poll(3, 0);
        assertThat(first).extracting(AtMostOnceQueue.Entry::bytes).containsExactly(1L, 2L, 3L);
        assertThat(first).extracting(AtMostOnceQueue.Entry::partition).containsExactly(0, 0, 1);
        assertThat(queue.poll(10, 0)).extracting(AtMostOnceQueue.Entry::sequence).containsExactly(3L);
        assertThat(queue.bytes()).isZero();
        assertThat(queue.poll(10, 1)).as("empty: waits at most 1 ms").isEmpty();
    }

    @Test
    void shouldCountWhatIsClearedAsDropped() {
        offer(0, 10);
        offer(0, 10);
        assertThat(queue.clear()).isEqualTo(2);
        assertThat(dropped.count()).isEqualTo(2.0);
        assertThat(queue.bytes()).isZero();
    }
}
