package io.flowkafka.internal.timers;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.stream.Stream;

/**
 * Registers N timers in one task's RocksDB timer stores, then jumps the watermark over all of them
 * and fires them in bounded batches, checking order, the watermark hold and completeness; prints
 * peak heap and rates. Meant for a small heap: {@link TimersMemoryTest} runs it with
 * {@code -Xmx256m}.
 *
 * <p>Each timer is added by its own committed call (as {@code onMessage} would) with a random
 * trigger, so RocksDB sees random inserts; keys are distinct (no dedup) and the event time is the
 * trigger minus 1000, so the expected hold before each batch is its first trigger minus 1000.
 * Firing deletes each timer in its own committed call (as {@code onTimer} would), in batches of
 * {@code batch} from {@link TimerStore#due}.
 *
 * <p>Run the 10M figures from the repository root after {@code mvn -o -pl flow-kafka-core
 * test-compile} and {@code mvn -o -pl flow-kafka-core dependency:build-classpath
 * -Dmdep.outputFile=/tmp/cp.txt}:
 * <pre>
 * java -Xmx256m -cp flow-kafka-core/target/test-classes:flow-kafka-core/target/classes:$(cat /tmp/cp.txt) \
 *     io.flowkafka.internal.timers.TimerStressMain 10000000
 * </pre>
 * or {@code mvn -o -pl flow-kafka-core test -Dtest=TimersMemoryTest -Dflow.timers.stress.count=10000000}.
 *
 * <p>Arguments: {@code count [batch [stateDir]]}. Prints progress lines and a final line
 * {@code RESULT key=value ...}; exits 0 when every check passed, 1 otherwise.
 */
public final class TimerStressMain {
    private static final long EVENT_LAG = 1_000;

    private TimerStressMain() {
    }

    public static void main(String[] args) throws Exception {
        if (System.getProperty("org.slf4j.simpleLogger.defaultLogLevel") == null) {
            System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
        }
        long count = args.length > 0 ? Long.parseLong(args[0]) : 10_000_000L;
        int batch = args.length > 1 ? Integer.parseInt(args[1]) : 1_000;
        Path dir = args.length > 2 ? Path.of(args[2]) : Files.createTempDirectory("timer-stress");
        try {
            run(count, batch, dir.toFile());
        } catch (AssertionError | RuntimeException e) {
            System.out.println("FAILED " + e);
            e.printStackTrace(System.out);
            System.exit(1);
        } finally {
            if (args.length <= 2) {
                deleteRecursively(dir);
            }
        }
    }

    private static void run(long count, int batch, File dir) {
        System.out.printf(Locale.ROOT, "timers=%d batch=%d maxHeap=%dMB dir=%s%n", count, batch,
                Runtime.getRuntime().maxMemory() >> 20, dir);
        long heapSampled = 0;
        if (count / batch + 2 > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("too many batches: raise the batch size");
        }
        try (TimerTestStores stores = TimerTestStores.rocksDb(dir)) {
            TimerStore timers = new TimerStore(stores.timers, stores.holds, List.of("stress"), new boolean[] {true});
            SplittableRandom random = new SplittableRandom(11);
            long triggerRange = Math.max(count, 1);
            long minTrigger = Long.MAX_VALUE;
            byte[] parent = new byte[12];

            long start = System.nanoTime();
            for (long i = 0; i < count; i++) {
                long trigger = random.nextLong(triggerRange);
                minTrigger = Math.min(minTrigger, trigger);
                byte[] key = ByteBuffer.allocate(14).putLong(mix(i)).putShort((short) 0x0216).putInt((int) i).array();
                byte[] id = ByteBuffer.allocate(12).putInt(7).putLong(i).array();
                timers.add(new PendingTimer(0, trigger, trigger - EVENT_LAG, i, key, id, List.of(parent)));
                timers.commitCall();
                if ((i + 1) % 1_000_000 == 0) {
                    heapSampled = Math.max(heapSampled, usedHeap());
                    System.out.printf(Locale.ROOT, "added %d in %.1f s, heap used %d MB%n", i + 1,
                            (System.nanoTime() - start) / 1e9, usedHeap() >> 20);
                }
            }
            double addSeconds = (System.nanoTime() - start) / 1e9;
            System.gc();
            long liveAfterAdd = usedHeap();
            System.out.printf(Locale.ROOT, "heap in use after a full GC with %d timers pending: %d MB%n", count,
                    liveAfterAdd >> 20);
            check(timers.minPendingEventTimestamp() == (count == 0 ? Long.MAX_VALUE : minTrigger - EVENT_LAG),
                    "hold after adding: " + timers.minPendingEventTimestamp());
            System.out.printf(Locale.ROOT, "approximate count %d%n", timers.count());

            start = System.nanoTime();
            long fired = 0;
            long lastTrigger = Long.MIN_VALUE;
            long lastHash = Long.MIN_VALUE;
            long[] batchNanos = new long[(int) (count / batch + 2)];
            int batches = 0;
            long nextReport = 1_000_000;
            while (true) {
                long batchStart = System.nanoTime();
                long hold = timers.minPendingEventTimestamp();
                List<PendingTimer> due = timers.due(0, Long.MAX_VALUE, batch);
                if (due.isEmpty()) {
                    check(hold == Long.MAX_VALUE, "hold with nothing due: " + hold);
                    break;
                }
                check(hold == due.get(0).triggerTs() - EVENT_LAG, "hold " + hold + " before a batch starting at "
                        + due.get(0).triggerTs());
                check(due.size() <= batch, "batch of " + due.size());
                for (PendingTimer t : due) {
                    long hash = t.keyHash();
                    check(t.triggerTs() > lastTrigger || (t.triggerTs() == lastTrigger
                            && Long.compareUnsigned(hash, lastHash) > 0), "out of order: " + t + " after trigger "
                            + lastTrigger + " hash " + Long.toHexString(lastHash));
                    lastTrigger = t.triggerTs();
                    lastHash = hash;
                    timers.delete(t);
                    timers.commitCall();
                }
                fired += due.size();
                batchNanos[batches++] = System.nanoTime() - batchStart;
                if (fired >= nextReport) {
                    nextReport += 1_000_000;
                    heapSampled = Math.max(heapSampled, usedHeap());
                    System.out.printf(Locale.ROOT, "fired %d in %.1f s, heap used %d MB%n", fired,
                            (System.nanoTime() - start) / 1e9, usedHeap() >> 20);
                }
            }
            double fireSeconds = (System.nanoTime() - start) / 1e9;
            check(fired == count, "fired " + fired + " of " + count);
            check(!timers.hasPending(), "timers left after firing all");

            long peakPools = 0;
            for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
                if (pool.getType() == MemoryType.HEAP) {
                    peakPools += pool.getPeakUsage().getUsed();
                }
            }
            long[] sorted = java.util.Arrays.copyOf(batchNanos, batches);
            java.util.Arrays.sort(sorted);
            System.out.printf(Locale.ROOT, "RESULT timers=%d fired=%d inOrder=true maxHeapMB=%d peakHeapMB=%d "
                            + "sampledHeapMB=%d liveHeapAfterAddMB=%d addSeconds=%.1f addPerSecond=%.0f "
                            + "fireSeconds=%.1f firePerSecond=%.0f batches=%d batchMsP50=%.1f batchMsP99=%.1f "
                            + "batchMsMax=%.1f%n",
                    count, fired, Runtime.getRuntime().maxMemory() >> 20, peakPools >> 20, heapSampled >> 20,
                    liveAfterAdd >> 20, addSeconds, count / addSeconds, fireSeconds, fired / fireSeconds, batches,
                    percentile(sorted, 0.5), percentile(sorted, 0.99), percentile(sorted, 1.0));
        }
    }

    private static double percentile(long[] sorted, double q) {
        if (sorted.length == 0) {
            return 0;
        }
        return sorted[(int) Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] / 1e6;
    }

    /** Heap in use (MemoryMXBean). */
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

    private static void deleteRecursively(Path dir) {
        try (Stream<Path> paths = Files.walk(dir)) {
            paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
