package io.flowkafka.internal.processor;

import io.flowkafka.internal.outbox.EpochCommits;
import java.util.Set;
import org.apache.kafka.streams.errors.TaskCorruptedException;
import org.apache.kafka.streams.processor.TaskId;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Revives a task whose stores may hold writes of a transaction that aborted (DESIGN rule 1: a task's stores hold
 * only what its committed transactions wrote, or what the open one will commit).
 *
 * <p>Under exactly_once_v2 all tasks of a stream thread share one transaction. When a commit times out, Kafka
 * Streams marks corrupted (wipes and restores) only the tasks that consumed records since the last commit; when the
 * retried commit fails too, the transaction is aborted, and a task that only punctuated in it (a key visitor's
 * partition without input, timers firing, a static-table read step) keeps running on stores that say its aborted
 * visits, firings and reads were made. This guard notes, at the task's {@code init()}, how many transactions its
 * thread's producer had aborted ({@link EpochCommits#abortsOnThisThread()}); before each record and punctuation,
 * if the count moved, the task throws {@link TaskCorruptedException}, and Kafka Streams closes it dirty, wipes its
 * stores and restores them from the changelogs. A task that wrote nothing in the aborted transaction is revived
 * too: the guard cannot tell, and an abort is rare.
 *
 * <p>Threading: used by the task's stream thread only.
 */
final class AbortedTransactionGuard {
    private static final Logger LOG = LoggerFactory.getLogger(AbortedTransactionGuard.class);

    private final @Nullable EpochCommits commits;
    private final TaskId task;
    private final String computation;
    private final long abortsAtInit;

    /** @param commits the runtime's view of its producers' transactions; null (TopologyTestDriver): no checks */
    AbortedTransactionGuard(@Nullable EpochCommits commits, TaskId task, String computation) {
        this.commits = commits;
        this.task = task;
        this.computation = computation;
        this.abortsAtInit = commits == null ? 0 : commits.abortsOnThisThread();
    }

    /** Throws {@link TaskCorruptedException} if the thread aborted a transaction since this task's init. */
    void check() {
        if (commits != null && commits.abortsOnThisThread() != abortsAtInit) {
            LOG.warn("computation '{}' task {}: a transaction of its stream thread aborted while the task kept its "
                    + "stores; reviving it from its changelogs", computation, task);
            throw new TaskCorruptedException(Set.of(task));
        }
    }
}
