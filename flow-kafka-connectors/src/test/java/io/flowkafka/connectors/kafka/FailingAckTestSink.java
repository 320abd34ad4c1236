package io.flowkafka.connectors.kafka;

import io.flowkafka.spec.SinkSpec;
import io.flowkafka.spi.OutboxDeliverer;
import io.flowkafka.spi.OutboxDeliveryException;
import io.flowkafka.spi.OutboxRecord;
import io.flowkafka.spi.SinkContext;
import io.flowkafka.spi.SinkProvider;
import io.flowkafka.spi.SyncSinkWriter;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A test-only synchronous sink ({@code FailingAckTestSink}): records every write, counts the
 * epoch barriers ({@link SyncSinkWriter#flush}) and fails the first barrier that follows a write, as
 * a lost acknowledgement would; with {@link #refuseInCall} set, its {@link SyncSinkWriter#check} refuses the
 * records of that key and no barrier fails.
 */
public final class FailingAckTestSink implements SinkProvider {
    static final ConcurrentLinkedQueue<String> WRITTEN = new ConcurrentLinkedQueue<>();
    static final AtomicInteger FLUSHES = new AtomicInteger();
    static final AtomicBoolean FAILED = new AtomicBoolean();
    /** Writers closed. */
    static final AtomicInteger CLOSED = new AtomicInteger();
    /** Whether the failure is one no retry can fix (a record the target rejects for good). */
    static volatile boolean fatal;
    /** A record key the sink refuses in the producing call, or null. */
    static volatile String refuseInCall;

    static void reset(boolean fatalFailure) {
        WRITTEN.clear();
        FLUSHES.set(0);
        FAILED.set(false);
        CLOSED.set(0);
        fatal = fatalFailure;
        refuseInCall = null;
    }

    /** No barrier fails; the records of {@code key} are refused in the call that produces them. */
    static void refusing(String key) {
        reset(false);
        FAILED.set(true);
        refuseInCall = key;
    }

    @Override
    public Set<String> sinkClassNames() {
        return Set.of("FailingAckTestSink");
    }

    @Override
    public List<Problem> validate(SinkSpec sink) {
        return List.of();
    }

    @Override
    public boolean supportsAtMostOnce(SinkSpec sink) {
        return false;
    }

    @Override
    public boolean synchronous(SinkSpec sink) {
        return true;
    }

    @Override
    public OutboxDeliverer createDeliverer(SinkContext context) {
        throw new UnsupportedOperationException("synchronous");
    }

    @Override
    public SyncSinkWriter createWriter(SinkContext context) {
        return new SyncSinkWriter() {
            @Override
            public void write(int partition, OutboxRecord record) {
                WRITTEN.add(new String(record.key(), StandardCharsets.UTF_8));
            }

            @Override
            public void check(OutboxRecord record) {
                String key = new String(record.key(), StandardCharsets.UTF_8);
                if (key.equals(refuseInCall)) {
                    throw new IllegalArgumentException("FailingAckTestSink never writes " + key);
                }
            }

            @Override
            public void flush(int partition) throws OutboxDeliveryException {
                FLUSHES.incrementAndGet();
                if (fatal && !WRITTEN.isEmpty()) {
                    FAILED.set(true);
                    throw OutboxDeliveryException.fatal("injected: the target rejected a record for good");
                }
                if (!WRITTEN.isEmpty() && FAILED.compareAndSet(false, true)) {
                    throw OutboxDeliveryException.retryable("injected: an acknowledgement was lost");
                }
            }

            @Override
            public void close() {
                CLOSED.incrementAndGet();
            }
        };
    }
}
