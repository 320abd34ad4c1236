package io.flowkafka.internal.streams;

import org.apache.kafka.streams.processor.StateStore;
import org.apache.kafka.streams.state.internals.CacheFlushListener;
import org.apache.kafka.streams.state.internals.CachedStateStore;

/**
 * A state store, holding no data, whose {@link #beforeTaskCommit()} runs each time Kafka Streams is about to
 * commit the store's task: the one hook Kafka Streams offers a processor inside the commit, before the task's
 * offsets and transaction commit, where throwing fails the commit.
 *
 * <p>This class owns that presentation and nothing else: subclasses say what to run and implement the
 * rest of {@link StateStore}. It relies on a Kafka Streams internal behaviour, pinned by
 * {@code KafkaStreamsInternalsTest} for the Kafka Streams version it names: before a task commits,
 * {@code StreamTask.prepareCommit} -> {@code StreamTask.flush} -> {@code ProcessorStateManager.flushCache()}
 * calls {@code flushCache()} of every registered store that is a {@link CachedStateStore} (an internal
 * interface), and an exception from it fails the commit (under exactly-once the transaction aborts).
 * {@code StateStore.commit} is no such hook: Kafka Streams calls it from the checkpoint after the
 * transaction committed ({@code StreamTask.postCommit}).
 */
public abstract class PreCommitStore implements StateStore, CachedStateStore<Object, Object> {

    /** Runs before each commit of the store's task, on the task's stream thread; throwing fails the commit. */
    protected abstract void beforeTaskCommit();

    /** Kafka Streams' pre-commit cache flush: runs {@link #beforeTaskCommit()}. */
    @Override
    public final void flushCache() {
        beforeTaskCommit();
    }

    /** Holds no cache: nothing to clear. */
    @Override
    public final void clearCache() {
    }

    /** Holds no cache: forwards nothing on flush. */
    @Override
    public final boolean setFlushListener(CacheFlushListener<Object, Object> listener, boolean sendOldValues) {
        return false;
    }
}
