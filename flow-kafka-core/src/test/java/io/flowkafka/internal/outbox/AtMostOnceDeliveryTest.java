package io.flowkafka.internal.outbox;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowkafka.api.MessageId;
import io.flowkafka.internal.status.StatusBoard;
import io.flowkafka.spi.OutboxBatch;
import io.flowkafka.spi.OutboxDeliverer;
import io.flowkafka.spi.OutboxDeliveryException;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.junit.jupiter.api.Test;

class AtMostOnceDeliveryTest {
    private final Counter dropped = new SimpleMeterRegistry().counter("flow.sink.dropped");
    private final AtMostOnceQueue queue = new AtMostOnceQueue("s", () -> 1_000_000, dropped);
    private final List<Long> delivered = new CopyOnWriteArrayList<>();

    private void offer(int n) {
        for (int i = 0; i < n; i++) {
            queue.offer(0, MessageId.of(new byte[] {(byte) i}), null, new byte[10], new RecordHeaders(), 0);
        }
    }

    private OutboxDeliverer deliverer(CountDownLatch gate) {
        return new OutboxDeliverer() {
            @Override
            public OptionalLong open(int partition, OptionalLong committedOffset) {
                return OptionalLong.empty();
            }

            @Override
            public void deliver(OutboxBatch batch) throws OutboxDeliveryException {
                try {
                    if (!gate.await(30, TimeUnit.SECONDS)) {
                        throw OutboxDeliveryException.retryable("gate closed");
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw OutboxDeliveryException.retryable("interrupted");
                }
                batch.records().forEach(r -> delivered.add(r.offset()));
            }

            @Override
            public void release(int partition) {
            }

            @Override
            public void close() {
            }
        };
    }

    @Test
    void shouldDeliverWhatIsQueuedWhenStoppingWithinTheSuspendDestructionDuration() {
        offer(5);
        CountDownLatch open = new CountDownLatch(0);
        AtMostOnceDelivery d = new AtMostOnceDelivery("p", "s", "c", queue, deliverer(open), 2, Duration.ofSeconds(10),
                new StatusBoard());
        d.start();
        d.close();
        assertThat(delivered).containsExactly(0L, 1L, 2L, 3L, 4L);
        assertThat(dropped.count()).isZero();
    }

    @Test
    void shouldReportTheSinkStoppedWhenItsDelivererThrowsAnError() throws Exception {
        // an Error (a StackOverflowError in a deliverer) ends the delivery thread: the sink says so, and /health fails
        offer(1);
        OutboxDeliverer failing = new OutboxDeliverer() {
            @Override
            public OptionalLong open(int partition, OptionalLong committedOffset) {
                return OptionalLong.empty();
            }

            @Override
            public void deliver(OutboxBatch batch) {
                throw new StackOverflowError("deliverer recursed");
            }

            @Override
            public void release(int partition) {
            }

            @Override
            public void close() {
            }
        };
        StatusBoard status = new StatusBoard();
        AtMostOnceDelivery d = new AtMostOnceDelivery("p", "s", "c", queue, failing, 2, Duration.ofSeconds(10), status);
        d.start();
        d.close(); // the thread takes the queued message, fails on it and ends; close waits for it
        assertThat(status.errors()).filteredOn(e -> e.path().equals("/sinks/s/stopped")).singleElement()
                .satisfies(e -> assertThat(e.message()).contains("sink 's'", "StackOverflowError", "deliverer recursed"));
    }

    @Test
    void shouldDropAndCountWhatIsLeftAfterTheSuspendDestructionDuration() {
        // reference 002: suspend_destruction_duration bounds how long a stopping sink keeps delivering
        offer(5);
        CountDownLatch never = new CountDownLatch(1);
        AtMostOnceDelivery d = new AtMostOnceDelivery("p", "s", "c", queue, deliverer(never), 2,
                Duration.ofMillis(200), new StatusBoard());
        d.start();
        long start = System.nanoTime();
        d.close();
        assertThat(Duration.ofNanos(System.nanoTime() - start)).as("close waits about the duration")
                .isLessThan(Duration.ofSeconds(10));
        assertThat(delivered).isEmpty();
        assertThat(dropped.count()).as("the batch in hand and the rest of the queue").isEqualTo(5.0);
        assertThat(queue.size()).isZero();
    }
}
