package io.flowkafka.testing;

import io.flowkafka.runtime.FlowRuntime;
import io.flowkafka.spi.ForwardingProducer;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;
import java.util.function.UnaryOperator;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TimeoutException;

/**
 * Fails chosen commits of a {@link FlowRuntime} on a real broker, as a commit that times out would: the stream
 * thread's {@code commitTransaction()} throws a {@link TimeoutException} before the transaction is committed.
 * The runtime then has Kafka Streams (exactly_once_v2, 4.4) close every task of that thread dirty: the transaction
 * is aborted, the stores restored and the tasks replay from their last commit, on the same thread. With
 * {@link #failUntilAborted} the commits that follow fail too until that abort. A test then counts outputs: nothing
 * lost, nothing duplicated, no timer early.
 *
 * <pre>{@code
 * CommitFaults faults = CommitFaults.failOnce(offsets -> offsets.containsKey(new TopicPartition("in", 0)));
 * faults.install(props);
 * FlowRuntime runtime = FlowRuntime.create(spec, props);
 * }</pre>
 *
 * <p>Thread-safe.
 */
public final class CommitFaults {
    private final Predicate<Map<TopicPartition, OffsetAndMetadata>> when;
    private final boolean untilAborted;
    private final AtomicInteger injected = new AtomicInteger();
    private final AtomicInteger aborted = new AtomicInteger();
    /** Set by the first matching commit: one fault per instance (unless on demand). */
    private final AtomicInteger started = new AtomicInteger();
    /** Whether faults come from {@link #trigger()} rather than from the first matching commit. */
    private final boolean onDemand;
    /** Faults {@link #trigger() triggered} and not yet injected. */
    private final AtomicInteger armed = new AtomicInteger();

    private CommitFaults(Predicate<Map<TopicPartition, OffsetAndMetadata>> when, boolean untilAborted,
            boolean onDemand) {
        this.when = Objects.requireNonNull(when, "when");
        this.untilAborted = untilAborted;
        this.onDemand = onDemand;
    }

    /**
     * Fails the first commit whose transaction's consumed offsets (as Kafka Streams sends them to the transaction)
     * match {@code when}; later commits go through.
     *
     * @param when tested against each commit's consumed offsets
     * @return the fault; {@link #install} it into the runtime's properties
     */
    public static CommitFaults failOnce(Predicate<Map<TopicPartition, OffsetAndMetadata>> when) {
        return new CommitFaults(when, false, false);
    }

    /**
     * Fails the first commit whose transaction's consumed offsets match {@code when}, and every commit of that
     * stream thread after it until the thread aborts the transaction (a transaction coordinator silent through
     * Kafka Streams' retry): the transaction aborts, and the thread's tasks are revived and replay from their last
     * commit. Later commits go through.
     *
     * @param when tested against each commit's consumed offsets
     * @return the fault; {@link #install} it into the runtime's properties
     */
    public static CommitFaults failUntilAborted(Predicate<Map<TopicPartition, OffsetAndMetadata>> when) {
        return new CommitFaults(when, true, false);
    }

    /**
     * Fails commits when told to, any number of times, for a test that chooses its moments from outside the stream
     * (a seeded schedule): each {@link #trigger()} fails the next commit of one of the runtime's stream threads, and
     * with {@code untilAborted} every commit of that thread after it until the transaction is aborted, as
     * {@link #failUntilAborted} does. Commits go through while nothing is triggered.
     *
     * @param untilAborted whether a triggered fault lasts until the thread aborts its transaction (its tasks are
     *     revived and replay from their last commit) instead of failing one commit
     * @return the fault; {@link #install} it into the runtime's properties, then {@link #trigger()} it
     */
    public static CommitFaults onDemand(boolean untilAborted) {
        return new CommitFaults(offsets -> true, untilAborted, true);
    }

    /**
     * Fails the next commit of a stream thread (of a fault made by {@link #onDemand}); triggers made before that
     * commit add up, one failed commit each.
     *
     * @throws IllegalStateException if this fault fails the first matching commit instead
     */
    public void trigger() {
        if (!onDemand) {
            throw new IllegalStateException("trigger() needs a fault made by CommitFaults.onDemand");
        }
        armed.incrementAndGet();
    }

    /**
     * Puts the fault into a runtime's properties ({@link FlowRuntime#PRODUCER_DECORATOR_CONFIG}); returns them.
     *
     * @param props the runtime's properties, changed in place
     * @return {@code props}
     */
    public Properties install(Properties props) {
        UnaryOperator<Producer<byte[], byte[]>> decorator = FaultyProducer::new;
        props.put(FlowRuntime.PRODUCER_DECORATOR_CONFIG, decorator);
        return props;
    }

    /**
     * How many commits were failed so far.
     *
     * @return the number of failed commits
     */
    public int injected() {
        return injected.get();
    }

    /**
     * How many transactions were aborted after a failed commit.
     *
     * @return the number of aborted transactions
     */
    public int aborted() {
        return aborted.get();
    }

    /** A stream thread's producer whose commit fails when its transaction's offsets match. */
    private final class FaultyProducer extends ForwardingProducer {
        private boolean matched;
        private boolean failing;
        /** A commit failed and the transaction is still open. */
        private boolean failedOpen;

        FaultyProducer(Producer<byte[], byte[]> delegate) {
            super(delegate);
        }

        @Override
        public void sendOffsetsToTransaction(Map<TopicPartition, OffsetAndMetadata> offsets,
                ConsumerGroupMetadata group) {
            delegate.sendOffsetsToTransaction(offsets, group);
            matched |= when.test(offsets);
        }

        @Override
        public void commitTransaction() {
            boolean fail = failing || (onDemand ? takeArmed() : matched && started.compareAndSet(0, 1));
            matched = false;
            if (fail) {
                failing = untilAborted;
                failedOpen = true;
                injected.incrementAndGet();
                throw new TimeoutException("flow-kafka-testing CommitFaults: this commit fails on purpose, as one "
                        + "timing out would");
            }
            delegate.commitTransaction();
            failedOpen = false;
        }

        private boolean takeArmed() {
            return armed.getAndUpdate(n -> n > 0 ? n - 1 : 0) > 0;
        }

        @Override
        public void abortTransaction() {
            matched = false;
            if (failedOpen) {
                aborted.incrementAndGet();
            }
            failing = false;
            failedOpen = false;
            delegate.abortTransaction();
        }
    }
}
