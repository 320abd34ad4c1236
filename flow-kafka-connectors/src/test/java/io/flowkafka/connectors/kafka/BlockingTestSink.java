package io.flowkafka.connectors.kafka;

import io.flowkafka.spec.SinkSpec;
import io.flowkafka.spi.OutboxBatch;
import io.flowkafka.spi.OutboxDeliverer;
import io.flowkafka.spi.OutboxDeliveryException;
import io.flowkafka.spi.OutboxRecord;
import io.flowkafka.spi.SinkContext;
import io.flowkafka.spi.SinkProvider;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A test-only async sink ({@code BlockingTestSink}, registered through
 * {@code META-INF/services} in the test class path): its deliverer records what it delivers and
 * blocks every delivery until {@link #release()}, so a test controls when the at-most-once queue
 * fills and drains. With {@link #together} it takes several batches per call, and fails every call of more than
 * {@link #failAbove} batches, as a transaction too large to commit in time would.
 */
public final class BlockingTestSink implements SinkProvider {
    static final ConcurrentLinkedQueue<String> DELIVERED = new ConcurrentLinkedQueue<>();
    /** Calls that failed for taking more than {@link #failAbove} batches. */
    static final AtomicInteger FAILED_CALLS = new AtomicInteger();
    private static volatile CountDownLatch gate = new CountDownLatch(1);
    /** The most batches per deliverer call. */
    static volatile int together = 1;
    /** Calls with more batches than this fail (retryable). */
    static volatile int failAbove = Integer.MAX_VALUE;
    /** When set, creating a deliverer fails with this message, as a sink whose target refuses its settings. */
    static volatile String refuseToOpen;
    /** When set, closing a deliverer fails, as a client whose close throws. */
    static volatile boolean closeFails;

    /** Blocks deliveries from now on and forgets what was delivered; one batch per call. */
    static void reset() {
        DELIVERED.clear();
        FAILED_CALLS.set(0);
        together = 1;
        failAbove = Integer.MAX_VALUE;
        refuseToOpen = null;
        closeFails = false;
        gate = new CountDownLatch(1);
    }

    /** Lets deliveries through. */
    static void release() {
        gate.countDown();
    }

    @Override
    public Set<String> sinkClassNames() {
        return Set.of("BlockingTestSink");
    }

    @Override
    public List<Problem> validate(SinkSpec sink) {
        return List.of();
    }

    @Override
    public boolean supportsAtMostOnce(SinkSpec sink) {
        return true;
    }

    @Override
    public OutboxDeliverer createDeliverer(SinkContext context) {
        String refused = refuseToOpen;
        if (refused != null) {
            throw new IllegalArgumentException(refused);
        }
        return new OutboxDeliverer() {
            @Override
            public OptionalLong open(int partition, OptionalLong committedOffset) {
                return OptionalLong.empty();
            }

            @Override
            public int maxBatchesTogether() {
                return together;
            }

            @Override
            public void deliver(OutboxBatch batch) throws OutboxDeliveryException {
                deliverTogether(List.of(batch));
            }

            @Override
            public void deliverTogether(List<OutboxBatch> batches) throws OutboxDeliveryException {
                try {
                    if (!gate.await(2, TimeUnit.MINUTES)) {
                        throw OutboxDeliveryException.retryable("the test never released the sink");
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw OutboxDeliveryException.retryable("interrupted");
                }
                if (batches.size() > failAbove) {
                    FAILED_CALLS.incrementAndGet();
                    throw OutboxDeliveryException.retryable("injected: a transaction of " + batches.size()
                            + " batches timed out");
                }
                for (OutboxBatch batch : batches) {
                    for (OutboxRecord r : batch.records()) {
                        DELIVERED.add(new String(r.key(), StandardCharsets.UTF_8));
                    }
                }
            }

            @Override
            public void release(int partition) {
            }

            @Override
            public void close() {
                if (closeFails) {
                    throw new IllegalStateException("injected: the deliverer's client failed to close");
                }
            }
        };
    }
}
