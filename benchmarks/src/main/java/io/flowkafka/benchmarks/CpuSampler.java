package io.flowkafka.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * How much CPU other processes used during a run: machine-wide busy time ({@code /proc/stat})
 * minus this JVM's ({@code /proc/self/stat}), in cores, so a noisy run can be told apart. Linux
 * only; elsewhere it reports NaN.
 *
 * <p>Not thread-safe.
 */
final class CpuSampler {
    private static final double TICKS_PER_SECOND = 100; // USER_HZ on Linux
    private final long startWall = System.nanoTime();
    private final long startBusy = machineBusyTicks();
    private final long startSelf = selfTicks();
    private double otherCores = Double.NaN;

    private CpuSampler() {
    }

    static CpuSampler start() {
        return new CpuSampler();
    }

    void stop() {
        long busy = machineBusyTicks();
        long self = selfTicks();
        double seconds = (System.nanoTime() - startWall) / 1e9;
        if (busy < 0 || self < 0 || startBusy < 0 || startSelf < 0 || seconds <= 0) {
            return;
        }
        otherCores = Math.max(0, ((busy - startBusy) - (self - startSelf)) / TICKS_PER_SECOND / seconds);
    }

    /** Cores used by other processes between start and stop; NaN if unknown. */
    double otherCores() {
        return otherCores;
    }

    /** The 1/5/15-minute load average, or "unknown". */
    static String loadAverage() {
        try {
            String[] f = Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+");
            return f[0] + " " + f[1] + " " + f[2];
        } catch (IOException | RuntimeException e) {
            return "unknown";
        }
    }

    private static long machineBusyTicks() {
        try {
            String line = Files.readAllLines(Path.of("/proc/stat")).get(0); // cpu user nice system idle iowait irq softirq steal
            String[] f = line.trim().split("\\s+");
            long busy = 0;
            for (int i = 1; i < f.length && i <= 8; i++) {
                if (i != 4 && i != 5) { // idle, iowait
                    busy += Long.parseLong(f[i]);
                }
            }
            return busy;
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    private static long selfTicks() {
        try {
            String s = Files.readString(Path.of("/proc/self/stat"));
            String[] f = s.substring(s.lastIndexOf(')') + 2).split("\\s+"); // f[0] is field 3 (state)
            return Long.parseLong(f[11]) + Long.parseLong(f[12]); // utime, stime
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }
}
