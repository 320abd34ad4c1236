package io.flowkafka.spi;

import io.flowkafka.api.MessageId;
import java.util.List;
import java.util.Objects;

/**
 * A batch of one outbox partition, handed to an {@link OutboxDeliverer}.
 *
 * <p>Batches are cut deterministically from the outbox log: a batch starts at the first
 * undelivered record and ends at the end of the epoch transaction that wrote it (the next offset
 * in the log is a transaction marker or an aborted record) or after the sink's
 * {@code max_batch_records}, whichever comes first. The log does not change once written, so a
 * delivery that restarts from the same position sees the same batches, with the same
 * {@link #dedupToken()}: a target that deduplicates by the token sees a retried batch as a repeat.
 * A batch holds messages only: the outbox's watermark records go to {@link OutboxDeliverer#onSystemWatermark}.
 *
 * @param sink the sink id
 * @param partition the outbox partition (= the partition of the computation that wrote it); -1
 *     for a batch of an {@code at_most_once_strategy} queue, which may mix several tasks' messages
 * @param records the records, in log order, not empty
 * @param nextOffset the outbox offset after the batch: where delivery resumes once the batch is
 *     delivered (it may be past the last record's offset + 1 when a transaction marker follows)
 */
public record OutboxBatch(String sink, int partition, List<OutboxRecord> records, long nextOffset) {
    /**
     * Checks and copies the batch.
     *
     * @param sink the sink id
     * @param partition the outbox partition (= the partition of the computation that wrote it); -1
     *     for a batch of an {@code at_most_once_strategy} queue, which may mix several tasks' messages
     * @param records the records, in log order, not empty
     * @param nextOffset the outbox offset after the batch: where delivery resumes once the batch is
     *     delivered (it may be past the last record's offset + 1 when a transaction marker follows)
     * @throws IllegalArgumentException if {@code records} is empty or {@code nextOffset} is not past the
     *     last record's offset
     */
    public OutboxBatch {
        Objects.requireNonNull(sink, "sink");
        records = List.copyOf(records);
        if (records.isEmpty()) {
            throw new IllegalArgumentException("a batch has at least one record");
        }
        if (nextOffset <= records.get(records.size() - 1).offset()) {
            throw new IllegalArgumentException("nextOffset " + nextOffset + " must be past the last record's offset "
                    + records.get(records.size() - 1).offset());
        }
    }

    /**
     * The offset of the first record.
     *
     * @return the outbox offset of the batch's first record
     */
    public long firstOffset() {
        return records.get(0).offset();
    }

    /**
     * The batch's dedup token: its largest message id (Flow's ClickHouse rule, "dedup token =
     * batch max MessageId"). Equal batches give equal tokens.
     *
     * @return the largest message id of the batch's records
     */
    public MessageId dedupToken() {
        MessageId max = records.get(0).messageId();
        for (OutboxRecord r : records) {
            if (r.messageId().compareTo(max) > 0) {
                max = r.messageId();
            }
        }
        return max;
    }
}
