package io.flowkafka.internal.processor;

import io.flowkafka.internal.dlq.RecordSizeLimit;
import io.flowkafka.internal.dlq.RejectedOutputs;
import io.flowkafka.internal.dlq.RejectedRecordException;
import io.flowkafka.internal.state.KeyStates;
import io.flowkafka.internal.timers.PendingTimer;
import io.flowkafka.internal.timers.TimerStore;
import io.flowkafka.spec.ComputationSpec;
import io.flowkafka.spec.TimeType;
import java.util.Objects;
import java.util.function.BiConsumer;
import org.apache.kafka.common.utils.Bytes;
import org.jspecify.annotations.Nullable;

/**
 * Checks the rows a call writes to its changelogged stores before they are applied: a state or timer row larger
 * than the producer sends, or one its changelog topic rejected before, fails the call (its input goes to the
 * dead-letter topic) instead of failing the task's transaction on every replay. One per task attempt.
 */
final class CallRowChecks {
    private final String computation;
    private final RecordSizeLimit limit;
    private final @Nullable RejectedOutputs rejected;
    private final KeyStates states;
    private final @Nullable TimerStore timerStore;
    private final TimeType[] timeTypes;

    /**
     * @param spec the computation
     * @param limit the largest record the producer sends
     * @param rejected rows changelog topics rejected for good, or null outside a FlowRuntime
     * @param applicationId the Kafka Streams application (changelog topics are named after it)
     * @param states the task's state access
     * @param timerStore the task's timer store, or null without timers
     * @param holds whether the timer store keeps a holds index
     */
    CallRowChecks(ComputationSpec spec, RecordSizeLimit limit, @Nullable RejectedOutputs rejected, String applicationId,
            KeyStates states, @Nullable TimerStore timerStore, boolean holds) {
        this.computation = spec.id();
        this.limit = limit;
        this.rejected = rejected;
        this.states = states;
        this.timerStore = timerStore;
        this.timeTypes = spec.timers().stream().map(t -> t.timeType()).toArray(TimeType[]::new);
        this.stateChangelogTarget = states.store() == null ? null
                : RejectedOutputs.changelogTarget(applicationId, KeyStates.storeName(computation));
        this.timersChangelogTarget = timerStore == null ? null
                : RejectedOutputs.changelogTarget(applicationId, TimerStore.timersStoreName(computation));
        this.holdsChangelogTarget = timerStore == null || !holds ? null
                : RejectedOutputs.changelogTarget(applicationId, TimerStore.holdsStoreName(computation));
    }

    /** Fails with the reason if a state row is larger than the producer sends (also the unit harness's check). */
    static void checkStateRowSize(RecordSizeLimit limit, String computation, Bytes storeKey,
            byte[] value) {
        byte[] k = storeKey.get();
        if (!limit.fits(k, value, null)) {
            throw new RejectedRecordException(limit.tooLarge("state '"
                    + KeyStates.stateNameOf(storeKey) + "' of computation '" + computation
                    + "' (a row of its changelog topic)", k, value, null) + "; keep state rows small (hold large values "
                    + "elsewhere, or split them over several states), or " + limit.raiseAdvice());
        }
    }

    /** The state store's changelog topic as {@link RejectedOutputs} names it; null without state. */
    private final @Nullable String stateChangelogTarget;

    /**
     * Fails the call if a state row it writes (a key's last value in the call) is larger than the producer sends or
     * was rejected by the state store's changelog topic before: its input then goes to the dead-letter topic instead
     * of the commit failing the task's transaction, on every replay. Checked after the function returned, so the
     * function cannot swallow it, and a row it overwrote or cleared in the same call is not held against it.
     */
    void checkStateRows() {
        if (stateChangelogTarget != null) {
            states.forEachBufferedPut(stateRowCheck);
        }
    }

    /** {@link #checkStateRow} as one object, not a new method reference per call. */
    private final BiConsumer<Bytes, byte[]> stateRowCheck = this::checkStateRow;

    private void checkStateRow(Bytes storeKey, byte[] value) {
        checkStateRowSize(limit, computation, storeKey, value);
        var rejected = this.rejected;
        if (rejected != null) {
            rejected.check(stateChangelogTarget, storeKey.get(), value, -1L);
        }
    }

    /** The timers store's and the timer-holds store's changelog topics as RejectedOutputs names them; null without. */
    private final @Nullable String timersChangelogTarget;
    private final @Nullable String holdsChangelogTarget;

    /**
     * Fails the call if a timer it adds makes a row of the timers store larger than the producer sends, or a row the
     * timers or timer-holds changelog topic rejected before, recognised by its key (a timer's value holds the
     * wall-clock time it was added; a real- or system-time stream's trigger, often the clock plus a delay, is left out
     * too: {@code TimerStore.timelessTimerKey}): its input then goes to the dead-letter topic, as for a state row.
     * Costs a size sum per added timer; a row is encoded here only when that sum is over the limit.
     */
    void checkTimerRows() {
        if (timerStore != null && timerStore.hasBufferedWrites()) {
            timerStore.forEachBufferedAdd(timerRowCheck);
        }
    }

    /** {@link #checkTimerRow} as one object, not a new method reference per call. */
    private final BiConsumer<Bytes, PendingTimer> timerRowCheck =
            this::checkTimerRow;

    /**
     * Fails with the reason if the timers-store row of a timer (key {@code key}) is larger than the producer sends
     * (also the unit harness's check).
     */
    static void checkTimerRowSize(RecordSizeLimit limit, String computation,
            TimerStore store, Bytes key, PendingTimer timer) {
        if (limit.surelyFits(key.get().length, store.valueSizeBound(timer))) {
            return;
        }
        byte[] value = store.encodeValue(timer);
        if (!limit.fits(key.get(), value, null)) {
            throw new RejectedRecordException(limit.tooLarge("a timer of timer stream '"
                    + store.streamId(timer.streamIndex()) + "' of computation '" + computation
                    + "' (a row of its timers changelog topic)", key.get(), value, null) + "; a timer row holds its "
                    + "group-by key twice: keep group-by keys small, or " + limit.raiseAdvice());
        }
    }

    private void checkTimerRow(Bytes key, PendingTimer timer) {
        checkTimerRowSize(limit, computation, Objects.requireNonNull(timerStore), key, timer);
        var rejected = this.rejected;
        if (rejected != null && rejected.any()) {
            // a clock-driven trigger is not repeated by the replay: such a row is recognised without its times
            boolean clock = timeTypes[timer.streamIndex()] != TimeType.EVENT_TIME;
            String timers = Objects.requireNonNull(timersChangelogTarget);
            if (rejected.rejectedAny(timers)) {
                rejected.check(timers, clock ? TimerStore.timelessTimerKey(key.get())
                        : key.get(), null, -1L);
            }
            String holds = holdsChangelogTarget;
            if (holds != null && rejected.rejectedAny(holds)) {
                byte[] hold = TimerStore.holdKey(timer, key.get());
                rejected.check(holds, clock ? TimerStore.timelessHoldKey(hold) : hold, null,
                        -1L);
            }
        }
    }
}
