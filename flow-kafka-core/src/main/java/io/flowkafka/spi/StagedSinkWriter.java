package io.flowkafka.spi;

import org.jspecify.annotations.Nullable;

/**
 * A synchronous sink writer whose epochs reach the target exactly once without an outbox topic: the records of a
 * task's epoch are staged at the target (invisible to its readers), the task's transaction records what names them,
 * and the writer makes them visible once that transaction committed. A crash between the commit and
 * {@link #committed} is repaired when the task opens next: {@link #open} gets what the last committed transaction
 * recorded. What an aborted epoch staged is never made visible; the replay stages its records again.
 *
 * <p>Per epoch of a task, on its stream thread: {@link #write} for each record, {@link #flush} then {@link #prepare}
 * before the transaction commits, {@link #committed} once it did (not called when it aborts; the task is then
 * closed, {@link #discard discarding} what it buffered, and opened again). A provider says its sink is staged with
 * {@link SinkProvider#staged} and returns this from {@link SinkProvider#createWriter}.
 */
public interface StagedSinkWriter extends SyncSinkWriter {
    /**
     * The task {@code partition} opens (after a start, a rebalance or a revival), before it writes: the writer makes
     * the epoch {@code lastRecorded} names visible if it is not yet, and removes what other epochs of the partition
     * staged (they aborted, or belong to an owner that lost the partition).
     *
     * @param partition the task (partition of the computation)
     * @param lastRecorded what {@link #prepare} returned in the task's last committed transaction that recorded one,
     *     or null
     * @throws OutboxDeliveryException when the target cannot be prepared (the task fails to start and is retried;
     *     fatal ones stop the pipeline)
     */
    void open(int partition, byte @Nullable [] lastRecorded) throws OutboxDeliveryException;

    /**
     * Stages what the task wrote in this epoch durably, still invisible; called before the task's transaction
     * commits, after {@link #flush}.
     *
     * @param partition the task about to commit
     * @return what names the staged records, recorded in the task's transaction; null when the epoch wrote nothing
     * @throws OutboxDeliveryException when staging failed: the epoch aborts and is replayed
     */
    byte @Nullable [] prepare(int partition) throws OutboxDeliveryException;

    /**
     * The transaction that recorded {@code prepared} committed: its records become visible. Called on the stream
     * thread right after the commit. A writer that cannot complete it now must fail the partition's next
     * {@link #prepare}: the task then replays and {@link #open} completes it.
     *
     * @param partition the task that committed
     * @param prepared what {@link #prepare} returned for the epoch
     */
    void committed(int partition, byte[] prepared);

    /**
     * The task's input system watermark, once every record it covers is visible (after the commit of the epoch that
     * reached it). At most once per epoch, only when it advanced; a task's first report after it opened may repeat an
     * earlier one. The default does nothing.
     *
     * @param partition the task
     * @param systemWatermarkNs the input system watermark in nanoseconds since the epoch, positive;
     *     {@link Long#MAX_VALUE} once the inputs completed
     * @param partitionCount the number of the computation's partitions: the input's watermark is the minimum over
     *     all of them
     */
    default void onSystemWatermark(int partition, long systemWatermarkNs, int partitionCount) {
    }
}
