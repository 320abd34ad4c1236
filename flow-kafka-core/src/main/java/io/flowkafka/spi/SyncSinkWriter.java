package io.flowkafka.spi;

/**
 * Writes a synchronous external sink (Flow's {@code TAtLeastOnceKafkaSink}): each record is sent
 * when the process-function call that produced it returned, outside the epoch transaction, and
 * every epoch waits for the target's acknowledgements before it commits (reference 002: "each epoch
 * waits for Kafka to acknowledge its records. If the epoch does not commit after a successful write,
 * the same records are written again on restart"). At least once: a crash between the
 * acknowledgement and the commit writes the records again after the replay; nothing is lost.
 *
 * <p>One writer per sink per runtime instance, shared by the stream threads: thread-safe.
 */
public interface SyncSinkWriter extends AutoCloseable {
    /**
     * Sends a record for the task {@code partition}; returns at once.
     *
     * @param partition the task (partition of the computation) whose process-function call produced the record
     * @param record the record to send
     */
    void write(int partition, OutboxRecord record);

    /**
     * Refuses a record this sink can never write, while the call that produced it is still running: the call then
     * fails and its input goes to the dead-letter topic with the exception's message, and the pipeline goes on. A
     * record that passes is {@link #write written} once the call succeeded. Called by the task's stream thread; the
     * default takes every record.
     *
     * @param record the record the call produced
     * @throws IllegalArgumentException if the sink can never write it (say why and what to fix)
     */
    default void check(OutboxRecord record) {
    }

    /**
     * Waits until every record sent for the task {@code partition} so far is acknowledged; called
     * before the task's epoch commits.
     *
     * @param partition the task (partition of the computation) about to commit
     * @throws OutboxDeliveryException if one of them failed: the epoch must not commit (it is
     *     aborted and replayed, writing the records again)
     */
    void flush(int partition) throws OutboxDeliveryException;

    /**
     * Forgets what was sent for the task {@code partition} since its last {@link #flush}: the task closed without
     * committing that epoch (its transaction aborted, or the task moved to another instance). The epoch is replayed
     * wherever the task runs next, sending those records again, so a writer must not keep them, nor a failure of
     * theirs, for a later flush. Records already on their way may still reach the target (at least once). Called by
     * the task's stream thread; the default keeps nothing to forget.
     *
     * @param partition the task (partition of the computation) that closed
     */
    default void discard(int partition) {
    }

    @Override
    void close();
}
