package io.flowkafka.internal.outbox;

import io.flowkafka.spi.OutboxDeliveryException;
import io.flowkafka.spi.StagedSinkWriter;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.errors.StreamsException;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.StoreBuilder;
import org.apache.kafka.streams.state.Stores;
import org.jspecify.annotations.Nullable;

/**
 * Keeps a task's staged sinks ({@link StagedSinkWriter}) exactly once: before each commit it records, in the task's
 * changelogged store, what every staged sink prepared in the epoch, inside the epoch's transaction; once that
 * transaction committed ({@link EpochCommits}) it tells the sinks, then passes them the input system watermark the
 * epoch reached. When the task opens, each sink gets what the last committed transaction recorded, so an epoch whose
 * commit a crash separated from its {@code committed} call still becomes visible, and one that aborted never does.
 *
 * <p>One per task attempt, on its stream thread.
 */
public final class StagedEpochs {
    private final KeyValueStore<Bytes, byte[]> store;
    private final List<SyncSinkSlot> slots;
    private final int partition;
    private final int partitionCount;
    private final @Nullable EpochCommits commits;
    private long watermark;
    private long reported;

    /**
     * @param store the task's store of recorded epochs ({@link #builder})
     * @param slots the task's staged sinks
     * @param commits tells when the thread's transaction committed; null outside a FlowRuntime (then no sink has a
     *     writer, and nothing is staged)
     */
    public StagedEpochs(KeyValueStore<Bytes, byte[]> store, List<SyncSinkSlot> slots, int partition,
            int partitionCount, @Nullable EpochCommits commits) {
        this.store = store;
        this.slots = List.copyOf(slots);
        this.partition = partition;
        this.partitionCount = partitionCount;
        this.commits = commits;
    }

    /** The store's name for a computation. */
    public static String storeName(String computation) {
        return computation + ".sink-epochs";
    }

    /** A builder of a computation's store of recorded epochs: changelogged, uncached (written in the pre-commit). */
    public static StoreBuilder<KeyValueStore<Bytes, byte[]>> builder(String computation) {
        return Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore(storeName(computation)), Serdes.Bytes(),
                Serdes.ByteArray()).withLoggingEnabled(Map.of()).withCachingDisabled();
    }

    /** Opens every staged sink for the task with what its last committed transaction recorded. */
    public void open() {
        for (SyncSinkSlot slot : slots) {
            StagedSinkWriter w = slot.stagedWriter();
            if (w == null) {
                continue;
            }
            try {
                w.open(partition, store.get(key(slot)));
            } catch (OutboxDeliveryException e) {
                throw failure(slot, e, " cannot open: ", "; the task is retried");
            }
        }
    }

    /** The task's input system watermark now: what every message the task processed so far is covered by. */
    public void inputSystemWatermark(long systemWatermarkNs) {
        watermark = systemWatermarkNs;
    }

    /** Before the task commits: stages each sink's epoch and records it in the transaction. */
    public void beforeCommit() {
        List<Runnable> after = new ArrayList<>();
        for (SyncSinkSlot slot : slots) {
            StagedSinkWriter w = slot.stagedWriter();
            if (w == null) {
                continue;
            }
            byte[] prepared;
            try {
                prepared = w.prepare(partition);
            } catch (OutboxDeliveryException e) {
                throw failure(slot, e, ": ", "; the epoch is aborted and replayed");
            }
            if (prepared != null) {
                store.put(key(slot), prepared); // sent to the changelog now: inside this transaction
                after.add(() -> w.committed(partition, prepared));
            }
        }
        long wm = watermark;
        if (wm > 0 && wm > reported) {
            reported = wm;
            for (SyncSinkSlot slot : slots) {
                StagedSinkWriter w = slot.stagedWriter();
                if (w != null) {
                    after.add(() -> w.onSystemWatermark(partition, wm, partitionCount));
                }
            }
        }
        if (commits != null) {
            commits.beforeCommit(after);
        } else {
            after.forEach(Runnable::run);
        }
    }

    /** A sink's failure: fatal ones stop the pipeline, others fail the task, which Kafka Streams retries. */
    private StreamsException failure(SyncSinkSlot slot, OutboxDeliveryException e, String what, String then) {
        String where = "sink '" + slot.sink() + "' of task partition " + partition;
        if (e.fatal()) {
            return new FatalSinkException(slot.sink(), where + ": " + e.getMessage(), e);
        }
        return new StreamsException(where + what + e.getMessage() + then, e);
    }

    private static Bytes key(SyncSinkSlot slot) {
        return Bytes.wrap(slot.sink().getBytes(StandardCharsets.UTF_8));
    }
}
