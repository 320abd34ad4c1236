package io.flowkafka.examples.reliability;

import io.flowkafka.examples.reliability.CrashSchedule.Kind;
import java.util.List;
import java.util.Map;

/**
 * What one run of the {@link CrashRun random-crash driver} measured.
 *
 * @param seed the run's seed
 * @param schedule the faults drawn from it
 * @param injected per kind, how many faults took effect (a kill done, an armed throw thrown, a transaction aborted
 *     after triggered commit failures)
 * @param inputs inputs written
 * @param lost inputs without their output
 * @param duplicated inputs with more than one output
 * @param timers timers set (one per input but the tail's)
 * @param timersLost timers that never fired
 * @param timersDoubleFired timers that fired more than once
 * @param visitsChecked (user, pass) pairs checked in complete passes
 * @param keysMissed (user, pass) pairs of complete passes without a visit
 * @param visitsDuplicated (user, pass) pairs visited more than once, in any pass
 * @param wrongContents outputs whose content differs from what their input implies (user, running count)
 * @param recoveryMs per kind, the worst output latency of inputs written from 2 s before to 8 s after a fault
 * @param baselineMs the median output latency of the run
 * @param problems the first findings, for the failure message; empty if the run was exact
 */
record CrashFigures(long seed, CrashSchedule schedule, Map<Kind, Integer> injected, int inputs, int lost,
        int duplicated, int timers, int timersLost, int timersDoubleFired, int visitsChecked, int keysMissed,
        int visitsDuplicated, int wrongContents, Map<Kind, Long> recoveryMs, long baselineMs, List<String> problems) {

    boolean exact() {
        return problems.isEmpty() && lost == 0 && duplicated == 0 && timersLost == 0 && timersDoubleFired == 0 && keysMissed == 0
                && visitsDuplicated == 0 && wrongContents == 0;
    }

    @Override
    public String toString() {
        return "seed " + seed + ": faults " + schedule.faults() + ", injected " + injected + "; " + inputs
                + " inputs, " + lost + " lost, " + duplicated + " duplicated; " + timers + " timers, " + timersLost
                + " never fired, " + timersDoubleFired + " fired twice; " + visitsChecked + " visits checked, "
                + keysMissed + " keys missed, " + visitsDuplicated + " visited twice; " + wrongContents
                + " wrong contents; worst latency after a fault " + recoveryMs + " ms (median " + baselineMs
                + " ms)" + (problems.isEmpty() ? "" : "; first problems: " + problems);
    }
}
