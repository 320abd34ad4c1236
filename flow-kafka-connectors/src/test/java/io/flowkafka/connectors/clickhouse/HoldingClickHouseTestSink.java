package io.flowkafka.connectors.clickhouse;

import io.flowkafka.spec.SinkSpec;
import io.flowkafka.spi.OutboxBatch;
import io.flowkafka.spi.OutboxDeliverer;
import io.flowkafka.spi.OutboxDeliveryException;
import io.flowkafka.spi.SinkContext;
import io.flowkafka.spi.SinkProvider;
import java.util.List;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.CountDownLatch;

/**
 * Test-only ClickHouse sinks ({@code TestHoldingClickHouseBatchingSink}, {@code TestHoldingShardedClickHouseBatchingSink},
 * registered through {@code META-INF/services} in the test class path): the real sinks, except that with the system
 * property {@code flow.test.ch.hold.after.rows} set, the deliverer, once it has inserted that many rows, prints
 * {@code HELD <partition> <firstOffset>..<nextOffset>} and blocks before returning the batch: the insert is in
 * ClickHouse, the outbox offset is not committed. An IT kills the instance there, so its successor must replay a
 * batch that ClickHouse already has: the crash window exactly-once is about, made certain instead of left to timing.
 */
public final class HoldingClickHouseTestSink implements SinkProvider {
    private static final String PREFIX = "TestHolding";
    private final ClickHouseSinkProvider real = new ClickHouseSinkProvider();

    @Override
    public Set<String> sinkClassNames() {
        return Set.of(PREFIX + ClickHouseSinkProvider.T_BATCHING, PREFIX + ClickHouseSinkProvider.T_SHARDED);
    }

    private static SinkSpec unwrap(SinkSpec sink) {
        return new SinkSpec(sink.id(), sink.sinkClassName().substring(PREFIX.length()), sink.inputStreamIds(),
                sink.parameters());
    }

    @Override
    public List<Problem> validate(SinkSpec sink) {
        return real.validate(unwrap(sink));
    }

    @Override
    public boolean supportsAtMostOnce(SinkSpec sink) {
        return false;
    }

    @Override
    public OutboxDeliverer createDeliverer(SinkContext c) {
        OutboxDeliverer d = real.createDeliverer(new SinkContext(c.pipeline(), c.applicationId(), c.computation(),
                unwrap(c.sink()), c.pipelineClientProperties(), c.sinkProperties(), c.meters(), c.deadLetterTopic(),
                c.inputSchemas()));
        long holdAfter = Long.getLong("flow.test.ch.hold.after.rows", Long.MAX_VALUE);
        return new OutboxDeliverer() {
            private long rows;

            @Override
            public OptionalLong open(int partition, OptionalLong committedOffset) throws OutboxDeliveryException {
                return d.open(partition, committedOffset);
            }

            @Override
            public void deliver(OutboxBatch batch) throws OutboxDeliveryException {
                d.deliver(batch);
                rows += batch.records().size();
                if (rows >= holdAfter) {
                    System.out.println("HELD " + batch.partition() + " " + batch.firstOffset() + ".."
                            + batch.nextOffset());
                    System.out.flush();
                    try {
                        new CountDownLatch(1).await(); // until the test kills this JVM
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        throw new OutboxDeliveryException("interrupted while held", e);
                    }
                }
            }

            @Override
            public void release(int partition) {
                d.release(partition);
            }

            @Override
            public void close() {
                d.close();
            }
        };
    }
}
