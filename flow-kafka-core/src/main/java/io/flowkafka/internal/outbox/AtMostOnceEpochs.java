package io.flowkafka.internal.outbox;

import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * The at-most-once sink messages of one task attempt, on their way to the sinks' queues: held per call until the
 * call succeeded, then per epoch until the epoch's transaction committed. A message of a call that failed, or of
 * an epoch that aborted, is never queued: the replay produces it again (connectors README, at_most_once_strategy).
 *
 * <p>Under a FlowRuntime the stream thread's producer says when a transaction committed ({@link EpochCommits}).
 * Without one (a test driver, which commits after every record and never fails a commit) an epoch is taken as
 * committed at the next epoch's pre-commit.
 *
 * <p>Not thread-safe: one per task attempt, used by its stream thread.
 */
public final class AtMostOnceEpochs {
    private final @Nullable EpochCommits commits;
    private final List<Runnable> call = new ArrayList<>(0);
    private List<Runnable> epoch = new ArrayList<>(0);
    private List<Runnable> previousEpoch = new ArrayList<>(0);

    /** @param commits the runtime's commit signal, or null on a test driver */
    public AtMostOnceEpochs(@Nullable EpochCommits commits) {
        this.commits = commits;
    }

    /** Adds a message of the current call (queued by running {@code offer}). */
    public void offer(Runnable offer) {
        call.add(offer);
    }

    /** The current call succeeded: its messages join the epoch. */
    public void callSucceeded() {
        if (!call.isEmpty()) {
            epoch.addAll(call);
            call.clear();
        }
    }

    /** The current call failed (or a new one begins after a call whose effects were not applied). */
    public void callFailed() {
        call.clear();
    }

    /**
     * Runs before each commit of the task, and when Kafka Streams closes the task dirty after a failed commit: hands
     * the epoch's messages to the commit signal, or (without one) queues the previous epoch's.
     */
    public void beforeCommit() {
        EpochCommits c = commits;
        if (c != null) {
            c.beforeCommit(epoch);
            epoch = new ArrayList<>(0);
            return;
        }
        if (!previousEpoch.isEmpty()) {
            previousEpoch.forEach(Runnable::run);
        }
        previousEpoch = epoch;
        epoch = new ArrayList<>(0);
    }
}
