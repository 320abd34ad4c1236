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

/**
 * A test-only async sink ({@code BlockingTestSink}, registered through
 * {@code META-INF/services} in the test class path): its deliverer records what it delivers and
 * blocks every delivery until {@link #release()}, so a test controls when the at-most-once queue
 * fills and drains.
 */
public final class BlockingTestSink implements SinkProvider {
    static final ConcurrentLinkedQueue<String> DELIVERED = new ConcurrentLinkedQueue<>();
    private static volatile CountDownLatch gate = new CountDownLatch(1);

    /** Blocks deliveries from now on and forgets what was delivered. */
    static void reset() {
        DELIVERED.clear();
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
        return new OutboxDeliverer() {
            @Override
            public OptionalLong open(int partition, OptionalLong committedOffset) {
                return OptionalLong.empty();
            }

            @Override
            public void deliver(OutboxBatch batch) throws OutboxDeliveryException {
                try {
                    if (!gate.await(2, TimeUnit.MINUTES)) {
                        throw OutboxDeliveryException.retryable("the test never released the sink");
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw OutboxDeliveryException.retryable("interrupted");
                }
                for (OutboxRecord r : batch.records()) {
                    DELIVERED.add(new String(r.key(), StandardCharsets.UTF_8));
                }
            }

            @Override
            public void release(int partition) {
            }

            @Override
            public void close() {
            }
        };
    }
}
