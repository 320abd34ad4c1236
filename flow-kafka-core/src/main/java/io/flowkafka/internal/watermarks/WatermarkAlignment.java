package io.flowkafka.internal.watermarks;

import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.common.TopicPartition;

/**
 * {@code watermark_alignment}: the source partitions of the computations naming one alignment
 * group read in step. A member (one task of one computation: its source partitions) whose event
 * watermark runs more than {@code drift_bound} ahead of the group's slowest non-idle member is
 * <em>blocked</em>: the main consumers keep its source partitions paused (see
 * {@link io.flowkafka.internal.drain.SourcePausingConsumer}) until the slowest one is within the
 * bound again. Without it, a source whose records are sparser in event time (clicks vs
 * impressions) runs hours ahead of the other, and a join downstream keeps its records in state
 * until the other catches up.
 *
 * <p>Members are reported by the tasks of this instance (each watermark emission) and, for tasks
 * of other instances, by {@link AlignmentReader}, which follows the groups' watermark changelogs.
 * A member never reported holds the group back, as a producer never heard from holds a watermark
 * back, but only for its source's {@code idle_partitions.duration} after the start; a member idle
 * for that long does not hold it back either, so a source that reached the end of its data (or a
 * partition nobody reads) cannot stall the others for longer than that. A member is known by its latest report: this
 * instance's own reports while it runs the member (and {@value #LOCAL_AUTHORITY_MS} ms after),
 * otherwise the member's changelog, written in order by whichever instance runs it. A member whose
 * owner stopped reporting (a crashed instance, until its tasks restart elsewhere) keeps its last
 * state meanwhile.
 *
 * <p>Blocking is approximate by design, as in Flink: records already fetched or buffered by Kafka
 * Streams (up to {@code buffered.records.per.partition} per partition, plus one poll) are still
 * processed after a partition is paused.
 *
 * <p>Thread-safe: reports come from stream threads and the reader thread; {@link #blocked()} is a
 * volatile read for the consumers' polls. Memory: one entry per member (partitions of the groups'
 * computations), whatever the data.
 */
public final class WatermarkAlignment {
    /** What is known of one member. */
    private record Member(String group, long eventWatermark, boolean idle, Set<TopicPartition> partitions,
            long localAtMs) {
    }

    /** A changelog record of a member that arrived while this instance's own reports had precedence. */
    private record Pending(long eventWatermark, boolean idle) {
    }

    /**
     * When a member's partitions were last paused by alignment (now, while they are): a task counts
     * its idleness from the later of its last record and this, since a paused partition has records
     * waiting and must not look idle to the readers of its stream, also not just after it resumed.
     */
    public static final class PauseClock {
        private volatile long lastPausedMs = Long.MIN_VALUE;

        /** When the member was last paused (now while it is); {@link Long#MIN_VALUE} if never. */
        public long lastPausedMs() {
            return lastPausedMs;
        }
    }

    /**
     * A group's current limit: its slowest non-idle member's watermark plus the drift bound
     * ({@link Long#MAX_VALUE} while nothing holds the group). A task compares its sources' watermark
     * with it per record (one volatile read) and reports at once when it passes it, instead of at its
     * next watermark emission, so a fast source is paused after a few records, not after a few hundred
     * milliseconds of them.
     */
    public static final class Limit {
        private volatile long value = Long.MAX_VALUE;

        /** The limit now. */
        public long value() {
            return value;
        }
    }

    private final Map<String, Limit> limits = new HashMap<>();
    /** Per group: its drift bound in nanoseconds. */
    private final Map<String, Long> driftNanos;
    /** Per computation: its group. */
    private final Map<String, String> groupOf;
    private final Set<String> groups;
    /** Per computation: its sources' idle_partitions.duration in ms. */
    private final Map<String, Long> idleMs;
    private final Map<String, Member> members = new HashMap<>();
    private final Map<String, Pending> pending = new HashMap<>();
    private final Map<String, PauseClock> pauseClocks = new java.util.concurrent.ConcurrentHashMap<>();
    private Set<String> blockedMembers = Set.of();
    /** False until the runtime activates it: on the test driver nothing is paused, so nothing is blocked. */
    private volatile boolean activated;
    /** Per computation: its partition count, once the runtime knows it ({@link #expect}). */
    private Map<String, Integer> expected = Map.of();
    private long expectedSinceMs;
    private final java.util.function.LongSupplier clockMs;
    private volatile Set<TopicPartition> blocked = Set.of();

    /**
     * @param groupOf per aligned computation, its alignment group
     * @param driftNanosByGroup per group, its {@code drift_bound} in nanoseconds (one per group: the
     *     validator requires computations of a group to agree)
     * @param idleMsByComputation per aligned computation, its {@code idle_partitions.duration} in ms
     */
    public WatermarkAlignment(Map<String, String> groupOf, Map<String, Long> driftNanosByGroup,
            Map<String, Long> idleMsByComputation) {
        this(groupOf, driftNanosByGroup, idleMsByComputation, System::currentTimeMillis);
    }

    /** As above, with a clock of its own (tests). */
    public WatermarkAlignment(Map<String, String> groupOf, Map<String, Long> driftNanosByGroup,
            Map<String, Long> idleMsByComputation, java.util.function.LongSupplier clockMs) {
        this.clockMs = clockMs;
        this.groupOf = Map.copyOf(groupOf);
        this.groups = Set.copyOf(groupOf.values());
        this.driftNanos = Map.copyOf(driftNanosByGroup);
        this.idleMs = Map.copyOf(idleMsByComputation);
        groupOf.values().forEach(g -> limits.put(g, new Limit()));
    }

    /** The limit of {@code computation}'s group (see {@link Limit}); null if it is not aligned. */
    public @org.jspecify.annotations.Nullable Limit limit(String computation) {
        String group = groupOf.get(computation);
        return group == null ? null : limits.get(group);
    }

    /**
     * From now on, every partition of the aligned computations is a member: one never reported holds
     * its group back (as if it had read nothing) until its {@code idle_partitions.duration} has
     * passed since this call, as a producer never heard from holds a watermark back. Without this
     * call (the test driver), only reported members count.
     *
     * @param partitions per aligned computation, its partition count
     */
    public synchronized void expect(Map<String, Integer> partitions) {
        expected = Map.copyOf(partitions);
        expectedSinceMs = clockMs.getAsLong();
        recompute(expectedSinceMs);
    }

    /** From now on members may be blocked (the runtime, whose main consumers pause them). */
    public synchronized void activate() {
        activated = true;
        recompute(clockMs.getAsLong());
    }

    /**
     * Re-evaluates the group as time passes (called periodically): members never heard from stop
     * holding it, changelog records held back by this instance's own reports apply once those lapse,
     * and the pause clocks of blocked members move on.
     */
    public synchronized void tick() {
        long now = clockMs.getAsLong();
        for (var it = pending.entrySet().iterator(); it.hasNext(); ) {
            var e = it.next();
            Member m = members.get(e.getKey());
            if (m == null || now - m.localAtMs() >= LOCAL_AUTHORITY_MS) {
                it.remove();
                apply(e.getKey(), m, e.getValue().eventWatermark(), e.getValue().idle());
            }
        }
        recompute(now);
    }

    /**
     * This instance no longer runs the member (its task closed): its own reports stop taking
     * precedence, and the member's changelog (written by its next owner) counts at once.
     */
    public synchronized void releaseLocal(String computation, int partition) {
        String id = computation + "/" + partition;
        Member m = members.get(id);
        if (m == null) {
            return;
        }
        members.put(id, new Member(m.group(), m.eventWatermark(), m.idle(), Set.of(), Long.MIN_VALUE));
        Pending p = pending.remove(id);
        if (p != null) {
            apply(id, members.get(id), p.eventWatermark(), p.idle());
        }
        recompute(clockMs.getAsLong());
    }

    /** The pause clock of a member (see {@link PauseClock}). */
    public PauseClock pauseClock(String computation, int partition) {
        return pauseClocks.computeIfAbsent(computation + "/" + partition, k -> new PauseClock());
    }

    /** Whether any computation is aligned (otherwise nothing needs to report or pause). */
    public boolean active() {
        return !groupOf.isEmpty();
    }

    /** Whether {@code computation} belongs to an alignment group. */
    public boolean aligned(String computation) {
        return groupOf.containsKey(computation);
    }

    /** The aligned computations. */
    public Set<String> computations() {
        return groupOf.keySet();
    }

    /**
     * Reports the state of a member this instance runs: the event watermark of its sources (not held
     * back by timers; the task keeps it monotonic, also across restarts), whether it is idle, and the
     * source partitions it reads. It replaces what was known of the member.
     */
    public void reportLocal(String computation, int partition, long eventWatermark, boolean idle,
            Set<TopicPartition> partitions) {
        report(computation, partition, eventWatermark, idle, partitions, true);
    }

    /**
     * Reports a member's state as its watermark changelog says ({@link AlignmentReader}): it replaces
     * what was known (a changelog partition is written by the member's owner of the moment, in order),
     * unless this instance ran the member within the last {@link #LOCAL_AUTHORITY_MS}, whose own
     * reports are newer than any changelog record.
     */
    public void reportRemote(String computation, int partition, long eventWatermark, boolean idle) {
        report(computation, partition, eventWatermark, idle, Set.of(), false);
    }

    /** How long a member's local reports take precedence over its changelog (a task emits every 200 ms). */
    static final long LOCAL_AUTHORITY_MS = 10_000;

    private void report(String computation, int partition, long eventWatermark, boolean idle,
            Set<TopicPartition> partitions, boolean local) {
        String group = groupOf.get(computation);
        if (group == null) {
            return;
        }
        String id = computation + "/" + partition;
        synchronized (this) {
            long now = clockMs.getAsLong();
            Member old = members.get(id);
            if (!local) {
                if (old != null && old.localAtMs() != Long.MIN_VALUE && now - old.localAtMs() < LOCAL_AUTHORITY_MS) {
                    // this instance runs it (or did a moment ago): its own reports are the newer ones; the record
                    // waits, and applies if those lapse (the task moved: its next owner may write nothing new)
                    pending.put(id, new Pending(eventWatermark, idle));
                    return;
                }
                if (apply(id, old, eventWatermark, idle)) {
                    recompute(now);
                }
                return;
            }
            pending.remove(id);
            Set<TopicPartition> tps = partitions;
            if (old != null && old.eventWatermark() == eventWatermark && old.idle() == idle
                    && old.partitions().equals(tps) && now - old.localAtMs() < LOCAL_AUTHORITY_MS / 2) {
                return; // nothing changed (a local report refreshes its authority now and then)
            }
            members.put(id, new Member(group, eventWatermark, idle, tps, now));
            recompute(now);
        }
    }

    /**
     * A changelog record: its owners write a member's watermark in increasing order (it is monotonic
     * and restored with the task), so a lower one is a replay of older records and is ignored.
     *
     * @return whether anything changed
     */
    private boolean apply(String id, Member old, long eventWatermark, boolean idle) {
        if (old != null && (eventWatermark < old.eventWatermark()
                || eventWatermark == old.eventWatermark() && idle == old.idle())) {
            return false;
        }
        String group = groupOf.get(id.substring(0, id.lastIndexOf('/')));
        members.put(id, new Member(group, eventWatermark, idle, old == null ? Set.of() : old.partitions(),
                old == null ? Long.MIN_VALUE : old.localAtMs()));
        return true;
    }

    /** Source partitions to keep paused now: those of the blocked members. */
    public Set<TopicPartition> blocked() {
        return blocked;
    }

    /** Whether the member's partitions are paused by alignment. */
    public synchronized boolean isBlocked(String computation, int partition) {
        Member m = members.get(computation + "/" + partition);
        return m != null && !m.partitions().isEmpty() && blocked.containsAll(m.partitions());
    }

    /**
     * The group's slowest non-idle member's event watermark, {@link Long#MIN_VALUE} while an expected
     * member has not reported within its idle duration, or {@link Long#MAX_VALUE} if none.
     */
    public synchronized long groupWatermark(String group) {
        return groupWatermark(group, clockMs.getAsLong());
    }

    private long groupWatermark(String group, long nowMs) {
        long min = Long.MAX_VALUE;
        for (Member m : members.values()) {
            if (m.group().equals(group) && !m.idle()) {
                min = Math.min(min, m.eventWatermark());
            }
        }
        for (Map.Entry<String, Integer> e : expected.entrySet()) {
            if (!group.equals(groupOf.get(e.getKey())) || nowMs - expectedSinceMs >= idleMs.getOrDefault(e.getKey(), 0L)) {
                continue;
            }
            for (int p = 0; p < e.getValue(); p++) {
                if (!members.containsKey(e.getKey() + "/" + p)) {
                    return Long.MIN_VALUE; // not heard from yet: it may be at the very beginning
                }
            }
        }
        return min;
    }

    private void recompute(long nowMs) {
        if (!activated) {
            return; // nothing is paused (test driver): limits stay at +infinity
        }
        Set<TopicPartition> next = new HashSet<>();
        Set<String> nextMembers = new HashSet<>();
        for (String group : groups) {
            long min = groupWatermark(group, nowMs);
            long limit = min == Long.MAX_VALUE ? Long.MAX_VALUE : min + driftNanos.get(group);
            if (limit < min) {
                limit = Long.MAX_VALUE; // overflow: nothing is that far ahead
            }
            limits.get(group).value = limit;
            if (limit == Long.MAX_VALUE) {
                continue;
            }
            for (Map.Entry<String, Member> e : members.entrySet()) {
                Member m = e.getValue();
                if (m.group().equals(group) && m.eventWatermark() > limit && m.eventWatermark() != Long.MAX_VALUE
                        && !m.partitions().isEmpty()) {
                    next.addAll(m.partitions()); // (a completed member has nothing left to read: never paused)
                    nextMembers.add(e.getKey());
                }
            }
        }
        // blocked now, or unblocked just now: their pause clocks read now
        for (String id : nextMembers) {
            pauseClock(id).lastPausedMs = nowMs;
        }
        for (String id : blockedMembers) {
            pauseClock(id).lastPausedMs = nowMs;
        }
        blockedMembers = nextMembers;
        if (!next.equals(blocked)) {
            blocked = Set.copyOf(next);
        }
    }

    private PauseClock pauseClock(String id) {
        return pauseClocks.computeIfAbsent(id, k -> new PauseClock());
    }

    /** Members as "computation/partition=watermark[ idle]" (diagnostics, tests). */
    public synchronized List<String> describe() {
        return members.entrySet().stream().sorted(Map.Entry.comparingByKey())
                .map(e -> e.getKey() + "=" + e.getValue().eventWatermark() + (e.getValue().idle() ? " idle" : ""))
                .toList();
    }
}
