package io.flowkafka.internal.outbox;

import java.util.ArrayList;
import java.util.List;

/**
 * Tells at-most-once sinks when an epoch's transaction is known committed, so that its messages are released
 * only then (flow-kafka-connectors' README: "an aborted epoch delivers nothing").
 *
 * <p>Each task hands its epoch's messages over in its pre-commit hook ({@link #beforeCommit}), on its stream
 * thread; the thread's producer ({@link CommitObservingProducer}) then commits or aborts the transaction that
 * holds the epoch, on the same thread. Held messages are released when a {@code commitTransaction()} returns, and
 * dropped when the transaction is aborted. A commit that throws decides nothing by itself: the abort that follows
 * does ({@link CommitObservingProducer} makes Kafka Streams close the thread's tasks dirty after a timed-out commit,
 * and the replay produces the messages again). The pre-commit hook cannot tell this by itself: Kafka Streams also
 * runs it when it closes a task dirty after a failed commit ({@code closeTaskDirty}).
 *
 * <p>Thread-safe: one list per stream thread.
 */
public final class EpochCommits {
    /** The key under which a FlowRuntime passes its instance to tasks through the application configs. */
    public static final String CONFIG = "flow.internal.epoch.commits";

    private final ThreadLocal<List<Runnable>> pending = ThreadLocal.withInitial(ArrayList::new);

    /** Holds messages of the calling stream thread's current epoch until its transaction commits. */
    public void beforeCommit(List<Runnable> epochMessages) {
        if (!epochMessages.isEmpty()) {
            pending.get().addAll(epochMessages);
        }
    }

    /** The calling thread's transaction committed: its held messages go to their queues. */
    void committed() {
        List<Runnable> held = pending.get();
        if (held.isEmpty()) {
            return;
        }
        pending.set(new ArrayList<>());
        held.forEach(Runnable::run);
    }

    /** Drops the calling thread's held messages: their transaction aborted. */
    void aborted() {
        pending.get().clear();
    }
}
