package io.flowkafka.internal.timers;

import io.flowkafka.spec.ComputationSpec;
import io.flowkafka.spec.TimeType;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.IntToLongFunction;
import java.util.function.Predicate;

/**
 * Fires a computation task's due timers in bounded steps: at most {@code maxPerPunctuation} timers and
 * {@code maxPunctuationMs} per step, so the stream thread keeps polling and committing (DESIGN: "every punctuation
 * does a bounded amount of work"); a step stopped by its limits leaves the rest for the next one, soon. Timer
 * groups writing to a blocked output stream are skipped whole (reference 004). Also drives the bounded build of a
 * missing holds index, and keeps a lower bound of the pending event-time triggers so a keyed source's records cost
 * no store read while no timer can be due.
 *
 * <p>What fires, and in which order, comes from the timer store; the bound is exact after each step and only
 * lowered by calls in between. One per task attempt, built at init (DESIGN rule 1). Not thread-safe.
 */
public final class TimerFiring {
    private final TimerStore store;
    private final TimerGroups groups;
    private final TimeType[] timeTypes;
    private final Predicate<String> blockedOutput;
    private final int maxPerStep;
    private final long maxStepNanos;
    /** Whether steps are bounded by time as well as count (not with FlowTestDriver's deterministic steps). */
    private final boolean timeBound;
    private final Timer steps;
    private final Counter fired;
    private final MeterRegistry meters;
    private final boolean trackTriggerFloor;
    private int firedInStep;
    private boolean behind;
    /** The timer stream whose timer this step is firing; -1 outside a step. */
    private int firingStream = -1;
    /** Whether a timer this step fired added a timer to a stream the step had passed: the next step looks. */
    private boolean addedBehind;
    /** A lower bound of the triggers of pending event-time timers: exact after each step, lowered by adds since. */
    private long eventTriggerFloor = Long.MIN_VALUE;

    /**
     * @param spec the computation
     * @param store the task's timer store
     * @param blockedOutput whether output limits block an output stream now
     * @param maxPerStep at most this many timers per step
     * @param maxStepMs at most this long per step; 0: no time bound, steps are bounded by count only, so what a
     *     step fires never depends on the machine's speed (FlowTestDriver)
     * @param meters where the step and firing meters are registered, tagged with {@code tags}
     * @param tags pipeline, computation and partition
     * @param trackTriggerFloor whether to keep the bound of pending event-time triggers ({@link #mayBeDue}: for a
     *     computation reading sources, whose every record may move the watermark)
     */
    public TimerFiring(ComputationSpec spec, TimerStore store, Predicate<String> blockedOutput, int maxPerStep,
            long maxStepMs, MeterRegistry meters, List<String> tags, boolean trackTriggerFloor) {
        this.trackTriggerFloor = trackTriggerFloor;
        this.store = store;
        this.groups = new TimerGroups(spec);
        this.timeTypes = spec.timers().stream().map(t -> t.timeType()).toArray(TimeType[]::new);
        this.blockedOutput = blockedOutput;
        this.maxPerStep = maxPerStep;
        this.maxStepNanos = maxStepMs * 1_000_000L;
        this.timeBound = maxStepMs > 0;
        this.meters = meters;
        String[] t = tags.toArray(String[]::new);
        this.steps = Timer.builder("flow.timers.punctuation")
                .description("Duration of a timer-firing step that fired at least one timer")
                .tags(t).publishPercentiles(0.5, 0.99, 0.999).register(meters);
        this.fired = Counter.builder("flow.timers.fired")
                .description("Timers fired (their calls returned or sent to the dead-letter topic; a failed step is not counted)")
                .tags(t).register(meters);
    }

    /** The time type of timer stream {@code i}. */
    public TimeType timeType(int i) {
        return timeTypes[i];
    }

    /**
     * Whether the last step stopped at its limits rather than for lack of due timers, or a timer it fired added one
     * to a timer stream it had passed: step again soon.
     */
    public boolean behind() {
        return behind;
    }

    /**
     * Fires due timers within one step's budget.
     *
     * @param watermarkOf the watermark timer stream {@code i} compares triggers with (exclusive);
     *     {@link Long#MIN_VALUE}: none due
     * @param fire runs one timer's call (deleting it with the call's writes) or sends it to the dead-letter topic
     */
    public void step(IntToLongFunction watermarkOf, Consumer<PendingTimer> fire) {
        step(watermarkOf, fire, deadline());
    }

    /**
     * The deadline ({@link System#nanoTime()}) of a punctuation that starts now: one step's time; without a time
     * bound (the test driver's deterministic steps), far enough ahead never to pass nor to overflow a comparison.
     */
    public long deadline() {
        return System.nanoTime() + (timeBound ? maxStepNanos : Long.MAX_VALUE / 2);
    }

    /**
     * Fires due timers until {@code deadline} ({@link System#nanoTime()}) or the step's count: a punctuation that
     * also builds holds passes both the same deadline, so together they stay within one step's time.
     */
    public void step(IntToLongFunction watermarkOf, Consumer<PendingTimer> fire, long deadline) {
        long started = System.nanoTime();
        boolean returned = false;
        try {
            fireDue(watermarkOf, fire, deadline);
            returned = true;
        } finally {
            int n = firedInStep;
            behind = n >= maxPerStep || past(deadline) || addedBehind;
            addedBehind = false;
            firingStream = -1;
            if (n > 0 && returned) { // a step that threw is replayed from the last commit: its timers fire again
                steps.record(System.nanoTime() - started, TimeUnit.NANOSECONDS);
                fired.increment(n);
            }
            firedInStep = 0;
            if (trackTriggerFloor) {
                long floor = Long.MAX_VALUE;
                for (int i = 0; i < timeTypes.length; i++) {
                    if (timeTypes[i] == TimeType.EVENT_TIME) {
                        floor = Math.min(floor, store.minPendingTriggerTimestamp(i));
                    }
                }
                eventTriggerFloor = floor;
            }
        }
    }

    private void fireDue(IntToLongFunction watermarkOf, Consumer<PendingTimer> fire, long deadline) {
        int budget = maxPerStep;
        boolean[] blocked = new boolean[groups.groups()];
        for (int g = 0; g < blocked.length; g++) {
            for (String o : groups.outputsOf(g)) {
                blocked[g] |= blockedOutput.test(o);
            }
        }
        for (int i = 0; i < timeTypes.length && budget > 0; i++) {
            if (blocked[groups.groupOf(i)]) {
                continue;
            }
            long wm = watermarkOf.applyAsLong(i);
            if (wm == Long.MIN_VALUE) {
                continue;
            }
            outer:
            while (budget > 0 && !past(deadline)) {
                List<PendingTimer> due = store.due(i, wm, Math.min(budget, 256));
                if (due.isEmpty()) {
                    break;
                }
                for (PendingTimer t : due) {
                    if (store.overtaken(t)) {
                        continue outer; // a timer added by this batch's calls sorts before: ask again
                    }
                    firingStream = i;
                    fire.accept(t);
                    firedInStep++;
                    budget--;
                    if (budget == 0 || past(deadline)) {
                        break outer;
                    }
                }
            }
        }
    }

    /** Whether a step with this deadline ran out of time; never without a time bound. */
    private boolean past(long deadline) {
        return timeBound && System.nanoTime() - deadline >= 0;
    }

    /**
     * Lowers the trigger bound by the event-time timers the committing call adds (before it commits them), and notes
     * a timer added by a firing to a timer stream the step had passed.
     */
    public void noteAdds() {
        if ((trackTriggerFloor || firingStream > 0) && store.hasBufferedWrites()) {
            for (PendingTimer t : store.bufferedAdds()) {
                if (trackTriggerFloor && timeTypes[t.streamIndex()] == TimeType.EVENT_TIME) {
                    eventTriggerFloor = Math.min(eventTriggerFloor, t.triggerTs());
                }
                if (t.streamIndex() < firingStream) {
                    addedBehind = true; // a timer of a stream this step has passed may be due already
                }
            }
        }
    }

    /** Whether an event watermark of {@code watermark} may make an event-time timer due (cheap, no store read). */
    public boolean mayBeDue(long watermark) {
        return watermark > eventTriggerFloor;
    }

    /** Whether event- or system-time timers are pending (they hold completion; real-time ones do not). */
    public boolean holdingPending() {
        for (int i = 0; i < timeTypes.length; i++) {
            if (timeTypes[i] != TimeType.REAL_TIME && store.hasPending(i)) {
                return true;
            }
        }
        return false;
    }

    /** Whether a holds index is still being built. */
    public boolean buildingHolds() {
        return store.buildingHolds();
    }

    /**
     * Builds a missing holds index (a computation whose output got a reader) for one step, from the cursor the timer
     * store keeps: the watermark hold stays at its minimum until done. A hold write costs far less than firing a
     * timer, hence ten times the timer cap per step, until {@code deadline} (what is left of the punctuation's
     * step time after firing; at least one hold is written).
     */
    public void buildHolds(long deadline) {
        if (store.buildingHolds()) {
            store.buildHoldsStep(maxPerStep * 10, deadline);
        }
    }

    /** Removes the meters. */
    public void close() {
        for (Meter m : List.<Meter>of(steps, fired)) {
            meters.remove(m);
        }
    }
}
