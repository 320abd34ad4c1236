package io.flowkafka.internal.timers;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.state.KeyValueIterator;

/**
 * A computation with N pending timers gains a reader of its output (a new pipeline version gives it a
 * holds store): its holds index is built in steps of {@link TimerStore#buildHoldsStep}, as the timer
 * punctuation calls it. Prints the duration of a step (p50, p99, max), the heap and the build's rate,
 * and checks that the hold stays at {@link Long#MIN_VALUE} until the build completes, then equals the
 * smallest pending event time, and that the index is the one a full build gives.
 *
 * <p>N timers are registered in one task's RocksDB timers store (no holds store: the version without
 * readers), in calls of 100 timers, with random triggers and event time = trigger - 1000. Then a new
 * {@link TimerStore} over both stores builds the index; between two steps one call fires the first
 * pending timer and adds one with a random trigger, so the build meets timers added and deleted on both
 * sides of its cursor. The stores are RocksDB without flow-kafka's write-back cache, so each hold a step
 * writes reaches RocksDB within the step (a compiled topology's cache defers it to the commit).
 *
 * <p>Run from the repository root after {@code mvn -o -q -pl flow-kafka-core -am test-compile} and
 * {@code mvn -o -q -pl flow-kafka-core org.apache.maven.plugins:maven-dependency-plugin:3.9.0:build-classpath
 * -Dmdep.outputFile=/tmp/cp.txt} (offline, the default plugin version 2.8 may not resolve):
 * <pre>
 * java -Xmx256m -cp flow-kafka-core/target/test-classes:flow-kafka-core/target/classes:$(cat /tmp/cp.txt) \
 *     io.flowkafka.internal.timers.HoldsBuildStressMain 10000000
 * </pre>
 *
 * <p>Arguments: {@code [count [stepRows [stepMs [stateDir]]]]}, by default 10,000,000 timers, steps of at
 * most 10,000 holds and 50 ms. Prints progress lines and a final line {@code RESULT key=value ...}; exits
 * 0 when every check passed, 1 otherwise.
 */
public final class HoldsBuildStressMain {
    private static final long EVENT_LAG = 1_000;

    private HoldsBuildStressMain() {
    }

    public static void main(String[] args) throws Exception {
        if (System.getProperty("org.slf4j.simpleLogger.defaultLogLevel") == null) {
            System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
        }
        long count = args.length > 0 ? Long.parseLong(args[0]) : 10_000_000L;
        int stepRows = args.length > 1 ? Integer.parseInt(args[1]) : 10_000;
        long stepMs = args.length > 2 ? Long.parseLong(args[2]) : 50;
        Path dir = args.length > 3 ? Path.of(args[3]) : Files.createTempDirectory("holds-build-stress");
        try {
            run(count, stepRows, stepMs, dir.toFile());
        } catch (AssertionError | RuntimeException e) {
            System.out.println("FAILED " + e);
            e.printStackTrace(System.out);
            System.exit(1);
        } finally {
            if (args.length <= 3) {
                try (var paths = Files.walk(dir)) {
                    paths.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
                }
            }
        }
    }

    private static void run(long count, int stepRows, long stepMs, java.io.File dir) {
        System.out.printf(Locale.ROOT, "timers=%d stepRows=%d stepMs=%d maxHeap=%dMB dir=%s%n", count, stepRows, stepMs,
                Runtime.getRuntime().maxMemory() >> 20, dir);
        long heapSampled = 0;
        try (TimerTestStores stores = TimerTestStores.rocksDb(dir)) {
            List<String> streams = List.of("stress");
            boolean[] dedup = {true};
            TimerStore before = new TimerStore(stores.timers, null, streams, dedup); // the version without readers
            SplittableRandom random = new SplittableRandom(13);
            long triggerRange = Math.max(count, 1);
            long next = 0;
            long start = System.nanoTime();
            for (; next < count; next++) {
                before.add(newTimer(next, random.nextLong(triggerRange)));
                if (next % 100 == 99) {
                    before.commitCall();
                }
                if ((next + 1) % 1_000_000 == 0) {
                    heapSampled = Math.max(heapSampled, usedHeap());
                    System.out.printf(Locale.ROOT, "added %d in %.1f s, heap used %d MB%n", next + 1,
                            (System.nanoTime() - start) / 1e9, usedHeap() >> 20);
                }
            }
            before.commitCall();
            double addSeconds = (System.nanoTime() - start) / 1e9;
            System.gc();
            long liveAfterAdd = usedHeap();

            TimerStore timers = new TimerStore(stores.timers, stores.holds, streams, dedup); // the new version
            check(timers.buildingHolds() == (count > 0), "building holds: " + timers.buildingHolds());
            long buildHeapSampled = 0;
            long[] stepNanos = new long[(int) Math.min(Integer.MAX_VALUE - 8, count / Math.max(1, stepRows) * 4 + 16)];
            int steps = 0;
            long added = 0;
            long fired = 0;
            start = System.nanoTime();
            boolean more = timers.buildingHolds();
            while (more) {
                check(timers.watermarkHold() == Long.MIN_VALUE, "hold before step " + steps + ": "
                        + timers.watermarkHold());
                long stepStart = System.nanoTime();
                more = timers.buildHoldsStep(stepRows, stepStart + stepMs * 1_000_000L);
                long took = System.nanoTime() - stepStart;
                if (steps == stepNanos.length) {
                    stepNanos = Arrays.copyOf(stepNanos, steps * 2);
                }
                stepNanos[steps++] = took;
                // a call between two steps: fire the first pending timer, add one anywhere
                for (PendingTimer t : timers.due(0, Long.MAX_VALUE, 1)) {
                    timers.delete(t);
                    fired++;
                }
                timers.add(newTimer(next++, random.nextLong(triggerRange)));
                added++;
                timers.commitCall();
                if (steps % 10 == 0) {
                    buildHeapSampled = Math.max(buildHeapSampled, usedHeap());
                }
                if (steps % 100 == 0) {
                    System.out.printf(Locale.ROOT, "%d steps in %.1f s, heap used %d MB%n", steps,
                            (System.nanoTime() - start) / 1e9, usedHeap() >> 20);
                }
            }
            double buildSeconds = (System.nanoTime() - start) / 1e9;
            System.gc();
            long liveAfterBuild = usedHeap();
            long hold = timers.watermarkHold();
            long firstTrigger = timers.minPendingTriggerTimestamp(0);
            check(hold == (firstTrigger == Long.MAX_VALUE ? Long.MAX_VALUE : firstTrigger - EVENT_LAG),
                    "hold " + hold + " after the build, first trigger " + firstTrigger);
            long verified = verifyFullIndex(stores);
            check(verified == count + added - fired, "index of " + verified + " holds for " + (count + added - fired)
                    + " timers");

            long peakPools = 0;
            for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
                if (pool.getType() == MemoryType.HEAP) {
                    peakPools += pool.getPeakUsage().getUsed();
                }
            }
            long[] sorted = Arrays.copyOf(stepNanos, steps);
            Arrays.sort(sorted);
            System.out.printf(Locale.ROOT, "RESULT timers=%d holds=%d indexComplete=true maxHeapMB=%d peakHeapMB=%d "
                            + "addSampledHeapMB=%d liveHeapAfterAddMB=%d buildSampledHeapMB=%d liveHeapAfterBuildMB=%d "
                            + "addSeconds=%.1f steps=%d stepRows=%d stepMs=%d buildSeconds=%.1f holdsPerSecond=%.0f "
                            + "stepMsP50=%.1f stepMsP99=%.1f stepMsMax=%.1f%n",
                    count, verified, Runtime.getRuntime().maxMemory() >> 20, peakPools >> 20, heapSampled >> 20,
                    liveAfterAdd >> 20, buildHeapSampled >> 20, liveAfterBuild >> 20, addSeconds, steps, stepRows,
                    stepMs, buildSeconds, verified / buildSeconds,
                    percentile(sorted, 0.5), percentile(sorted, 0.99), percentile(sorted, 1.0));
        }
    }

    private static PendingTimer newTimer(long i, long trigger) {
        byte[] key = ByteBuffer.allocate(14).putLong(mix(i)).putShort((short) 0x0216).putInt((int) i).array();
        byte[] id = ByteBuffer.allocate(12).putInt(7).putLong(i).array();
        return new PendingTimer(0, trigger, trigger - EVENT_LAG, i, key, id, List.of());
    }

    /**
     * Walks both stores side by side: the holds, in their order, must be exactly the holds of the timers, in
     * theirs (event time = trigger - lag keeps the two orders the same). Returns the number of holds.
     */
    private static long verifyFullIndex(TimerTestStores stores) {
        long n = 0;
        try (KeyValueIterator<Bytes, byte[]> t = stores.timers.all(); KeyValueIterator<Bytes, byte[]> h = stores.holds.all()) {
            while (true) {
                KeyValue<Bytes, byte[]> timer = nextRow(t);
                KeyValue<Bytes, byte[]> hold = nextRow(h);
                if (timer == null || hold == null) {
                    check(timer == null && hold == null, "a " + (timer == null ? "hold" : "timer") + " left over at row " + n);
                    return n;
                }
                Bytes expected = TimerKeys.holdKey(TimerValueCodec.eventTs(timer.value), timer.key.get());
                check(expected.equals(hold.key), "hold " + hold.key + " where a full build has " + expected);
                n++;
            }
        }
    }

    private static @org.jspecify.annotations.Nullable KeyValue<Bytes, byte[]> nextRow(KeyValueIterator<Bytes, byte[]> it) {
        while (it.hasNext()) {
            KeyValue<Bytes, byte[]> kv = it.next();
            if (!TimerKeys.isEndMark(kv.key.get())) {
                return kv;
            }
        }
        return null;
    }

    private static double percentile(long[] sorted, double q) {
        if (sorted.length == 0) {
            return 0;
        }
        return sorted[(int) Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] / 1e6;
    }

    private static long usedHeap() {
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }

    private static void check(boolean ok, String what) {
        if (!ok) {
            throw new AssertionError(what);
        }
    }

    private static long mix(long x) {
        x = (x ^ (x >>> 33)) * 0xff51afd7ed558ccdL;
        x = (x ^ (x >>> 33)) * 0xc4ceb9fe1a85ec53L;
        return x ^ (x >>> 33);
    }
}
