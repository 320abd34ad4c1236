package io.flowkafka.spi;

import java.util.List;
import java.util.OptionalLong;

/**
 * Delivers an async sink's outbox to its target: what one sink class plugs into flow-kafka's
 * generic transactional outbox (DESIGN.md, "async sinks").
 *
 * <p>The outbox mechanism: a computation writes each message of an async sink to the topic
 * {@code <pipeline>.outbox.<sink>} inside its epoch transaction (partition = the computation's
 * partition). A delivery service in every {@code FlowRuntime} instance reads that topic
 * {@code read_committed} in a consumer group of its own ({@code <application.id>.outbox.<sink>}),
 * which spreads the outbox partitions over the instances, cuts {@link OutboxBatch batches}
 * deterministically and hands them to the deliverer in log order, one partition at a time. It
 * commits the group offset after a batch was delivered, retries a failed batch (the same batch,
 * with the same dedup token) with backoff, and stops the sink with a status error when the
 * deliverer throws {@link OutboxDeliveryException#fatal a fatal error}.
 *
 * <p>Lifecycle, all on the service's own thread: {@link #open} when the service is assigned a
 * partition (after a start or a rebalance), {@link #deliver} for each batch of it, {@link #release}
 * when the partition is taken away, {@link #close} when the runtime stops. A deliverer keeps what
 * it needs per partition (a transactional producer, a connection) between {@code open} and
 * {@code release}.
 *
 * <p>Watermarks: the writing computation also writes its input system watermark to its outbox partition (at most
 * once a second, or per watermark interval if longer, while it advances, also while no message flows). Such a
 * record is never a message: it is in no {@link OutboxBatch}, never counted or dead-lettered; the service passes it
 * to {@link #onSystemWatermark} once every message before it in the partition was delivered. A deliverer that
 * needs no watermark ignores it (the default).
 */
public interface OutboxDeliverer extends AutoCloseable {
    /**
     * The header marking a watermark record of an outbox topic (no key, no value): a reader of the raw outbox
     * topic (a test) skips records with it.
     */
    String WATERMARK_HEADER = "flow.outbox.watermark";

    /**
     * Starts delivering a partition and says where to resume.
     *
     * @param partition the outbox partition
     * @param committedOffset the offset the service's consumer group committed for the partition
     *     after its last delivered batch, if any (watermark records committed after that batch are not
     *     counted: this is the offset after the batch)
     * @return the outbox offset to resume from; empty to resume from {@code committedOffset} (or
     *     the beginning of the outbox when there is none)
     * @throws OutboxDeliveryException when the partition cannot be delivered (fatal: the sink
     *     stops, e.g. its progress marker is lost; otherwise retried)
     */
    OptionalLong open(int partition, OptionalLong committedOffset) throws OutboxDeliveryException;

    /**
     * Delivers a batch; returns only once the target has it durably (the service then commits
     * {@link OutboxBatch#nextOffset()}). A batch that throws is offered again, unchanged, after a
     * backoff, unless the exception is fatal.
     *
     * @param batch the next batch of a partition opened with {@link #open}
     * @throws OutboxDeliveryException when the target did not take the batch (retried unless
     *     {@link OutboxDeliveryException#fatal() fatal})
     */
    void deliver(OutboxBatch batch) throws OutboxDeliveryException;

    /**
     * How many consecutive batches of a partition {@link #deliverTogether} may take in one call. 1 (the default):
     * the service hands over one batch at a time with {@link #deliver}. A deliverer that keeps its own progress at the
     * target (TKafkaSink's marker) says more, so that one write at the target (one transaction) can take what a
     * backlog holds.
     *
     * @return at least 1
     */
    default int maxBatchesTogether() {
        return 1;
    }

    /**
     * Delivers consecutive batches of one partition, in log order, as one unit; returns only once the target has
     * them all durably (the service then commits the last one's {@link OutboxBatch#nextOffset()}). When it throws,
     * the service offers the batches again from the first (with more batches after them, maybe), so the deliverer
     * skips what an earlier attempt delivered. Called only with 2 to {@link #maxBatchesTogether()} batches; the
     * batches themselves are cut as for {@link #deliver}. The default delivers them one after the other.
     *
     * @param batches the next batches of a partition opened with {@link #open}, in log order
     * @throws OutboxDeliveryException when the target did not take them (retried unless
     *     {@link OutboxDeliveryException#fatal() fatal})
     */
    default void deliverTogether(List<OutboxBatch> batches) throws OutboxDeliveryException {
        for (OutboxBatch batch : batches) {
            deliver(batch);
        }
    }

    /**
     * Stops delivering a partition (rebalance, shutdown); releases what {@link #open} took.
     *
     * @param partition the outbox partition
     */
    void release(int partition);

    /**
     * The input system watermark of the computation writing an opened partition: every message written to the
     * partition before it was delivered. Called on the service's thread, in log order with {@link #deliver}, after
     * the batch before it was delivered; not called again for a partition whose watermark did not advance (a
     * partition reopened after a rebalance learns it at its next advance). The input's watermark is the minimum over
     * all {@code partitionCount} partitions, each partition's being unknown until it is reported. The default does
     * nothing.
     *
     * @param partition the outbox partition
     * @param systemWatermarkNs the computation's input system watermark in nanoseconds since the epoch, positive;
     *     {@link Long#MAX_VALUE} once its inputs completed
     * @param partitionCount the number of the computation's partitions (its outbox partitions)
     */
    default void onSystemWatermark(int partition, long systemWatermarkNs, int partitionCount) {
    }

    /** Releases everything; called once. */
    @Override
    void close();
}
