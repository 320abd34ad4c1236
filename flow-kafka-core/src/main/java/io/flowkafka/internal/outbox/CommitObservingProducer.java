package io.flowkafka.internal.outbox;

import io.flowkafka.spi.ForwardingProducer;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.producer.Producer;

/**
 * A stream thread's producer that tells {@link EpochCommits} how each transaction ended: the at-most-once
 * messages held for it are released only after {@code commitTransaction()} returned, and dropped when the
 * transaction was aborted; and times each commit ({@code flow.epoch.commit}). Everything else is the wrapped
 * producer's.
 */
public final class CommitObservingProducer extends ForwardingProducer {
    private final EpochCommits commits;
    private final Timer commitTime;

    /** @param commitTime records the duration of each commit that returned normally */
    public CommitObservingProducer(Producer<byte[], byte[]> delegate, EpochCommits commits, Timer commitTime) {
        super(delegate);
        this.commits = commits;
        this.commitTime = commitTime;
    }

    @Override
    public void commitTransaction() {
        long started = System.nanoTime();
        delegate.commitTransaction(); // throws: the transaction is still open; a later commit or abort decides
        commitTime.record(System.nanoTime() - started, TimeUnit.NANOSECONDS);
        commits.committed();
    }

    @Override
    public void abortTransaction() {
        commits.aborted();
        delegate.abortTransaction();
    }

    @Override
    public void close() {
        commits.aborted();
        delegate.close();
    }

    @Override
    public void close(Duration timeout) {
        commits.aborted();
        delegate.close(timeout);
    }
}
