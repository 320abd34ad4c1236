package io.flowkafka.connectors.clickhouse;

import io.flowkafka.spi.OutboxDeliveryException;
import io.flowkafka.spi.OutboxRecord;
import io.flowkafka.spi.SinkContext;
import io.flowkafka.spi.SyncSinkWriter;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes a {@code TAtLeastOnceClickHouseSink} (reference 002: "the epoch batch is written synchronously during
 * processing without intermediate storage and without a deduplication token ... A failed write prevents the epoch
 * from committing, so messages are not lost"). Each task's messages of the running epoch are kept in memory (dropped
 * when the task closes without committing them, {@link #discard}); before
 * the task's epoch commits ({@link #flush}) they become one {@code INSERT}, retried by {@link InsertErrorKind}:
 * transient failures without a limit, unclassified ones until {@code max_insert_attempts} attempts in total (counted
 * per task across replays, reset by a success), permanent ones not at all (the pipeline stops). A flush that cannot
 * finish within {@link #RETRY_BUDGET} fails the epoch, which is aborted and replayed, writing the batch again: the
 * retries go on without a limit, and the epoch transaction is not held open past Kafka Streams' default
 * {@code transaction.timeout.ms} of 10 s. Thread-safe: one writer serves every stream thread of the instance.
 */
final class AtLeastOnceWriter implements SyncSinkWriter {
    /** How long one flush retries before it fails the epoch (which replays and writes again). */
    static final Duration RETRY_BUDGET = Duration.ofSeconds(5);
    private static final Logger LOG = LoggerFactory.getLogger(AtLeastOnceWriter.class);

    private final DirectTarget target;
    private final int maxAttempts;
    private final Map<Integer, List<OutboxRecord>> pending = new ConcurrentHashMap<>();
    private final Map<Integer, Integer> unclassifiedAttempts = new ConcurrentHashMap<>();

    AtLeastOnceWriter(SinkContext context) {
        this(new DirectTarget(context));
    }

    AtLeastOnceWriter(DirectTarget target) {
        this.target = target;
        this.maxAttempts = target.parameters().maxInsertAttempts();
    }

    @Override
    public void write(int partition, OutboxRecord record) {
        pending.compute(partition, (p, list) -> {
            List<OutboxRecord> l = list == null ? new ArrayList<>() : list;
            l.add(record);
            return l;
        });
    }

    @Override
    public void flush(int partition) throws OutboxDeliveryException {
        List<OutboxRecord> records = pending.remove(partition);
        if (records == null || records.isEmpty()) {
            return;
        }
        byte[] rows;
        try {
            rows = target.rows(records);
        } catch (RuntimeException e) {
            throw OutboxDeliveryException.fatal(target.name() + ": cannot encode the epoch's rows: " + e.getMessage());
        }
        long deadline = System.nanoTime() + RETRY_BUDGET.toNanos();
        long backoffMs = 50;
        while (true) {
            try {
                target.start();
                target.insert(rows);
                unclassifiedAttempts.remove(partition);
                return;
            } catch (IOException e) {
                retryOrThrow(partition, records.size(), e, deadline);
            }
            try {
                Thread.sleep(backoffMs);
            } catch (InterruptedException ie) {
                Thread.currentThread().interrupt();
                throw OutboxDeliveryException.retryable(target.name() + ": interrupted while retrying the INSERT");
            }
            backoffMs = Math.min(1_000, backoffMs * 2);
        }
    }

    /** Returns if the INSERT may be attempted again within this flush; throws how the epoch must end otherwise. */
    private void retryOrThrow(int partition, int rows, IOException e, long deadline) throws OutboxDeliveryException {
        InsertErrorKind kind = InsertErrorKind.of(e);
        String what = target.name() + ": inserting " + rows + " row(s) of task partition " + partition + " failed";
        if (kind == InsertErrorKind.PERMANENT) {
            throw OutboxDeliveryException.fatal(what + " with a permanent error, not retried: " + e.getMessage()
                    + " (fix the table or the sink's schema, then restart the pipeline)");
        }
        if (kind == InsertErrorKind.UNCLASSIFIED) {
            int attempts = unclassifiedAttempts.merge(partition, 1, Integer::sum);
            if (attempts >= maxAttempts) {
                unclassifiedAttempts.remove(partition);
                throw OutboxDeliveryException.fatal(what + " with an unclassified error after " + attempts
                        + " attempt(s) in total (max_insert_attempts " + maxAttempts + "): " + e.getMessage());
            }
        }
        if (System.nanoTime() >= deadline) {
            throw new OutboxDeliveryException(what + " (" + kind + "), still failing after " + RETRY_BUDGET
                    + ": the epoch is aborted and replayed, writing these rows again: " + e.getMessage(), e);
        }
        LOG.warn("{} ({}), retrying: {}", what, kind, e.getMessage());
    }

    @Override
    public void discard(int partition) {
        pending.remove(partition); // the aborted epoch's rows: its replay writes them again
    }

    /**
     * The unclassified failures counted for a task since its last successful INSERT (for tests).
     *
     * @param partition the task partition
     * @return the attempts that failed with an unclassified error
     */
    int unclassifiedAttempts(int partition) {
        return unclassifiedAttempts.getOrDefault(partition, 0);
    }

    @Override
    public void close() {
        pending.clear();
        target.close();
    }
}
