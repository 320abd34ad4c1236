package io.flowkafka.internal.outbox;

import io.flowkafka.spi.ForwardingProducer;
import java.time.Duration;
import org.apache.kafka.clients.producer.Producer;

/**
 * A stream thread's producer that tells {@link EpochCommits} how each transaction ended: the at-most-once
 * messages held for it are released only after {@code commitTransaction()} returned, and dropped when the
 * transaction was aborted. Everything else is the wrapped producer's.
 */
public final class CommitObservingProducer extends ForwardingProducer {
    private final EpochCommits commits;

    public CommitObservingProducer(Producer<byte[], byte[]> delegate, EpochCommits commits) {
        super(delegate);
        this.commits = commits;
    }

    @Override
    public void commitTransaction() {
        delegate.commitTransaction(); // throws: the transaction is still open; a later commit or abort decides
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
