package io.flowkafka.internal.outbox;

import io.flowkafka.internal.streams.PreCommitStore;
import io.flowkafka.spi.OutboxDeliveryException;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.streams.errors.StreamsException;
import org.apache.kafka.streams.processor.StateStore;
import org.apache.kafka.streams.processor.StateStoreContext;
import org.apache.kafka.streams.state.StoreBuilder;

/**
 * Makes a task's epoch wait for its synchronous sinks, and releases its at-most-once messages once
 * their epoch committed (the processor's hook runs at the next epoch's pre-commit). This store holds no
 * data: it is a {@link PreCommitStore}, whose {@link #beforeTaskCommit()} Kafka Streams runs before it commits
 * the task's transaction (see there for the Kafka Streams internal behaviour this relies on); it waits there
 * for the acknowledgements of the records the task sent to its {@link SyncSinkSlot sinks}. A failed
 * acknowledgement fails the commit: the transaction aborts and the task replays from its last commit,
 * sending the records again (at least once, never lost). When the task closes, the sinks forget what it sent but did
 * not flush ({@link SyncSinkSlot#discard}): after an abort, the replay sends it again.
 *
 * <p>{@code StateStore.commit} is no hook: Kafka Streams 4.4 calls it from the checkpoint after the
 * transaction committed. Besides the unit test {@code KafkaStreamsInternalsTest}, the broker test
 * {@code SyncSinkBarrierIT} fails if a Kafka Streams upgrade stops running the hook before the commit.
 */
public final class EpochBarrierStore extends PreCommitStore {
    private final String name;
    private final List<SyncSinkSlot> slots;
    private int partition = -1;
    private boolean open;
    private Runnable beforeCommit = () -> { };
    private Runnable afterFlush = () -> { };

    /** Sets what the task's processor runs before each commit, before the sinks are waited for. */
    public void beforeCommit(Runnable hook) {
        this.beforeCommit = hook;
    }

    /** Sets what the task's processor runs before each commit once its sinks flushed ({@link StagedEpochs}). */
    public void afterFlush(Runnable hook) {
        this.afterFlush = hook;
    }

    private EpochBarrierStore(String name, List<SyncSinkSlot> slots) {
        this.name = name;
        this.slots = List.copyOf(slots);
    }

    /** The store's name for a computation. */
    public static String storeName(String computation) {
        return computation + ".sink-acks";
    }

    @Override
    public String name() {
        return name;
    }

    /** Where a record a sink's target rejected for good is remembered; null outside a FlowRuntime. */
    private io.flowkafka.internal.dlq.@org.jspecify.annotations.Nullable RejectedOutputs rejected;

    @Override
    public void init(StateStoreContext context, StateStore root) {
        this.partition = context.taskId().partition();
        Object r = context.appConfigs().get(io.flowkafka.internal.dlq.RejectedOutputs.CONFIG);
        rejected = r instanceof io.flowkafka.internal.dlq.RejectedOutputs ro ? ro : null;
        context.register(root, (key, value) -> { });
        open = true;
    }

    @Override
    protected void beforeTaskCommit() {
        beforeCommit.run();
        for (SyncSinkSlot slot : slots) {
            try {
                slot.flush(partition);
            } catch (OutboxDeliveryException e) {
                var remembered = rejected;
                if (e.rejectedRecord() && remembered != null && (e.rejectedKey() != null || e.rejectedValue() != null)) {
                    // replaying cannot deliver it, but the input producing it can go to the dead-letter topic
                    remembered.reject("sink '" + slot.sink() + "'", e.rejectedKey(), e.rejectedValue(),
                            e.rejectedTimestamp(), e.getCause() == null ? e : e.getCause());
                    throw new StreamsException("sink '" + slot.sink() + "' of task partition " + partition + ": "
                            + e.getMessage() + "; the epoch is aborted and replayed, and the input that produces this "
                            + "record again goes to the dead-letter topic", e);
                }
                if (e.fatal() || e.rejectedRecord()) {
                    throw new FatalSinkException(slot.sink(), "sink '" + slot.sink() + "' of task partition " + partition
                            + ": " + e.getMessage(), e);
                }
                throw new StreamsException("sink '" + slot.sink() + "' of task partition " + partition + ": " + e.getMessage()
                        + "; the epoch is aborted and replayed", e);
            }
        }
        afterFlush.run();
    }

    @Override
    public void commit(Map<TopicPartition, Long> changelogOffsets) {
        // after the transaction: nothing to wait for here (see the class comment)
    }

    @Override
    public void close() {
        // a clean close follows a commit (nothing left to forget); a dirty one drops the aborted epoch's records,
        // which the replay sends again
        if (open && partition >= 0) {
            for (SyncSinkSlot slot : slots) {
                slot.discard(partition);
            }
        }
        open = false;
    }

    @Override
    public boolean persistent() {
        return false;
    }

    @Override
    public boolean isOpen() {
        return open;
    }

    /** A builder of a computation's barrier over its synchronous sinks. */
    public static StoreBuilder<EpochBarrierStore> builder(String computation, List<SyncSinkSlot> slots) {
        String name = storeName(computation);
        return new StoreBuilder<>() {
            @Override
            public StoreBuilder<EpochBarrierStore> withCachingEnabled() {
                return this;
            }

            @Override
            public StoreBuilder<EpochBarrierStore> withCachingDisabled() {
                return this;
            }

            @Override
            public StoreBuilder<EpochBarrierStore> withLoggingEnabled(Map<String, String> config) {
                return this;
            }

            @Override
            public StoreBuilder<EpochBarrierStore> withLoggingDisabled() {
                return this;
            }

            @Override
            public EpochBarrierStore build() {
                return new EpochBarrierStore(name, slots);
            }

            @Override
            public Map<String, String> logConfig() {
                return Map.of();
            }

            @Override
            public boolean loggingEnabled() {
                return false;
            }

            @Override
            public String name() {
                return name;
            }
        };
    }
}
