package io.flowkafka.internal.outbox;

import io.flowkafka.spi.OutboxDeliveryException;
import io.flowkafka.spi.OutboxRecord;
import io.flowkafka.spi.StagedSinkWriter;
import io.flowkafka.spi.SyncSinkWriter;
import org.jspecify.annotations.Nullable;

/**
 * Where a synchronous external sink's {@link SyncSinkWriter} is found by the tasks: compiled into
 * the topology empty, filled by the runtime when it starts (before processing begins), emptied when
 * it stops. Thread-safe.
 */
public final class SyncSinkSlot {
    private final String sink;
    private final boolean staged;
    private volatile @Nullable SyncSinkWriter writer;

    public SyncSinkSlot(String sink) {
        this(sink, false);
    }

    /** @param staged whether the sink's writer is a {@link StagedSinkWriter} (see {@link StagedEpochs}) */
    public SyncSinkSlot(String sink, boolean staged) {
        this.sink = sink;
        this.staged = staged;
    }

    /** Whether the sink's writer is a {@link StagedSinkWriter}. */
    public boolean staged() {
        return staged;
    }

    /** The sink id. */
    public String sink() {
        return sink;
    }

    /** Installs (or, with null, removes) the writer. */
    public void set(@Nullable SyncSinkWriter writer) {
        this.writer = writer;
    }

    /** Sends a record of task {@code partition}. */
    public void write(int partition, OutboxRecord record) {
        writer().write(partition, record);
    }

    /** Refuses a record the sink can never write ({@link SyncSinkWriter#check}); takes all outside a FlowRuntime. */
    public void check(OutboxRecord record) {
        SyncSinkWriter w = writer;
        if (w != null) {
            w.check(record);
        }
    }

    /** Waits for the acknowledgements of task {@code partition}'s records. */
    public void flush(int partition) throws OutboxDeliveryException {
        SyncSinkWriter w = writer;
        if (w != null) {
            w.flush(partition);
        }
    }

    /** Forgets task {@code partition}'s records not flushed: the task closed without committing them. */
    public void discard(int partition) {
        SyncSinkWriter w = writer;
        if (w != null) {
            w.discard(partition);
        }
    }

    /** The staged writer, or null outside a FlowRuntime (nothing to stage: no record is written either). */
    @Nullable StagedSinkWriter stagedWriter() {
        SyncSinkWriter w = writer;
        if (w == null) {
            return null;
        }
        if (!(w instanceof StagedSinkWriter s)) {
            throw new IllegalStateException("sink '" + sink + "' is staged but its writer " + w.getClass().getName()
                    + " is no StagedSinkWriter");
        }
        return s;
    }

    private SyncSinkWriter writer() {
        SyncSinkWriter w = writer;
        if (w == null) {
            throw new IllegalStateException("sink '" + sink + "' has no writer: the topology runs outside FlowRuntime "
                    + "(run it with FlowRuntime.start(), or use the sync KafkaSink)");
        }
        return w;
    }
}
