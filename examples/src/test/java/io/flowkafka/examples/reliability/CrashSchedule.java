package io.flowkafka.examples.reliability;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Random;

/**
 * The faults of one run, all drawn from its seed: how many (1 to 4), when (milliseconds into the traffic), which
 * kind and which of the live instances (by slot). The same seed gives the same schedule, so a failing run reruns
 * with {@code -Dflow.reliability.seed=N}.
 *
 * @param seed the seed the schedule was drawn from
 * @param faults the faults, in time order
 */
record CrashSchedule(long seed, List<Fault> faults) {
    /** What the driver does to an instance. */
    enum Kind {
        /** SIGKILL the instance's JVM, then start a replacement with a fresh state directory. */
        KILL,
        /** Make a process call throw once: the stream thread dies and Kafka Streams replaces it. */
        THREAD,
        /** Fail a commit and its retry, as one timing out would: the transaction aborts, the tasks are revived. */
        REVIVE
    }

    /**
     * One fault.
     *
     * @param atMs when, in milliseconds after the traffic started
     * @param kind what
     * @param slot which instance, 0 to 2 (a killed instance's replacement takes its slot)
     */
    record Fault(long atMs, Kind kind, int slot) {
    }

    static CrashSchedule draw(long seed, long trafficMs, int instances, List<Kind> kinds) {
        Random random = new Random(seed);
        int count = 1 + random.nextInt(4);
        List<Fault> faults = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            long at = 1_000 + (long) (random.nextDouble() * (trafficMs - 2_000));
            faults.add(new Fault(at, kinds.get(random.nextInt(kinds.size())), random.nextInt(instances)));
        }
        faults.sort(Comparator.comparingLong(Fault::atMs));
        return new CrashSchedule(seed, List.copyOf(faults));
    }
}
