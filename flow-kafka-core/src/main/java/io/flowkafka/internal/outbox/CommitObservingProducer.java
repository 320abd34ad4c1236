package io.flowkafka.internal.outbox;

import io.flowkafka.spi.ForwardingProducer;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.CommitFailedException;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A stream thread's producer that tells {@link EpochCommits} how each transaction ended: the at-most-once
 * messages held for it are released only after {@code commitTransaction()} returned, and dropped when the
 * transaction was aborted; and times each commit ({@code flow.epoch.commit}). Everything else is the wrapped
 * producer's.
 *
 * <p>It also keeps DESIGN rule 1 (a task's stores hold only what committed transactions wrote, or what the open one
 * will commit) through a commit that times out. Kafka Streams (exactly_once_v2) answers such a timeout by reviving
 * only the tasks that consumed records since the last commit, and when the commit it retries for the thread's
 * other tasks times out too, it swallows that and aborts the transaction: a task that only punctuated in it (a key
 * visitor's pass, timers firing, a source's read step) keeps stores saying its aborted writes were made, so visits,
 * firings and reads are lost. This producer turns a timed-out commit into a {@link CommitFailedException}, which
 * Kafka Streams treats as its thread having lost its tasks: every task of the thread is closed dirty, the
 * transaction aborted, and the tasks restored from their changelogs to replay from the last commit.
 */
public final class CommitObservingProducer extends ForwardingProducer {
    private static final Logger LOG = LoggerFactory.getLogger(CommitObservingProducer.class);

    private final EpochCommits commits;
    private final Timer commitTime;

    /** @param commitTime records the duration of each commit that returned normally */
    public CommitObservingProducer(Producer<byte[], byte[]> delegate, EpochCommits commits, Timer commitTime) {
        super(delegate);
        this.commits = commits;
        this.commitTime = commitTime;
    }

    @Override
    public void sendOffsetsToTransaction(Map<TopicPartition, OffsetAndMetadata> offsets, ConsumerGroupMetadata group) {
        try {
            delegate.sendOffsetsToTransaction(offsets, group);
        } catch (TimeoutException e) {
            throw replayFromLastCommit(e);
        }
    }

    @Override
    public void commitTransaction() {
        long started = System.nanoTime();
        try {
            delegate.commitTransaction();
        } catch (TimeoutException e) {
            throw replayFromLastCommit(e);
        }
        commitTime.record(System.nanoTime() - started, TimeUnit.NANOSECONDS);
        commits.committed();
    }

    /** The exception that makes Kafka Streams close all the thread's tasks dirty instead of only some. */
    private static CommitFailedException replayFromLastCommit(TimeoutException timeout) {
        LOG.warn("a stream thread's transaction could not be committed in time ({}); its tasks replay from their "
                + "last commit", timeout.getMessage());
        return new CommitFailedException("the transaction's commit timed out, so its tasks replay from their last "
                + "commit: " + timeout.getMessage());
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
