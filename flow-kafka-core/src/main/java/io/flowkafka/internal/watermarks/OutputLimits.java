package io.flowkafka.internal.watermarks;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Output limits (DESIGN.md): a per-output-stream bound on what is written but not yet consumed
 * downstream. The runtime measures each internal stream's backlog (end offsets minus the
 * application's committed offsets) and marks a stream blocked while it exceeds its limit; timers
 * of every timer-stream group writing to a blocked stream are held back until it drains.
 *
 * <p>Blocking only delays timers: what they produce does not depend on it. A stream blocked by hand
 * ({@link #setBlocked}) stays blocked until released by hand, whatever its measured backlog.
 *
 * <p>Thread-safe: written by the runtime's maintenance thread, read by stream threads.
 */
public final class OutputLimits {
    private final Map<String, Long> limits;
    private final Set<String> blocked = ConcurrentHashMap.newKeySet();
    /** Streams blocked by hand: the measurements do not release them. */
    private final Set<String> held = ConcurrentHashMap.newKeySet();
    private final Map<String, Long> backlogs = new ConcurrentHashMap<>();

    /** Limits in records per stream id; streams without a limit are never blocked. */
    public OutputLimits(Map<String, Long> limits) {
        this.limits = Map.copyOf(limits);
    }

    /** The configured limits. */
    public Map<String, Long> limits() {
        return limits;
    }

    /** Records a stream's measured backlog. */
    public void backlog(String stream, long records) {
        backlogs.put(stream, records);
        Long limit = limits.get(stream);
        if (limit != null && limit > 0 && records > limit) {
            blocked.add(stream);
        } else {
            blocked.remove(stream);
        }
    }

    /** Blocks a stream by hand until released by hand (tests, tools); its measured backlog may block it too. */
    public void setBlocked(String stream, boolean isBlocked) {
        if (isBlocked) {
            held.add(stream);
        } else {
            held.remove(stream);
        }
    }

    /** A stream's backlog as last measured; 0 before the first measurement. */
    public long backlogOf(String stream) {
        return backlogs.getOrDefault(stream, 0L);
    }

    /** Whether a stream is blocked. */
    public boolean isBlocked(String stream) {
        return !blocked.isEmpty() && blocked.contains(stream) || !held.isEmpty() && held.contains(stream);
    }
}
