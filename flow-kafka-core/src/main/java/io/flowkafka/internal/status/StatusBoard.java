package io.flowkafka.internal.status;

import io.flowkafka.runtime.StatusError;
import io.flowkafka.runtime.StatusError.Severity;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;

/**
 * The errors the tasks of one runtime currently report (the seed of Flow's status profiler), the notes on
 * what they wait for, and each task's last {@link TaskReading} for the status page.
 *
 * <p>Threading: written by stream threads, read by any thread.
 */
public final class StatusBoard {
    /** The path of a task that cannot start (its init threw), reported until it starts or runs elsewhere. */
    public static final String TASK_START_PATH = "start";

    private record Key(String computation, int partition, String path) {
    }

    private final ConcurrentHashMap<Key, StatusError> errors = new ConcurrentHashMap<>();
    private final Set<String> announced = ConcurrentHashMap.newKeySet();
    private final ConcurrentHashMap<TaskKey, TaskReading> readings = new ConcurrentHashMap<>();

    private record TaskKey(String computation, int partition) {
    }

    /**
     * The reading of a task, created on first use; a task that moves to another instance leaves its last reading
     * here, which is harmless: the status shows only the tasks the instance runs.
     */
    public TaskReading reading(String computation, int partition) {
        return readings.computeIfAbsent(new TaskKey(computation, partition), k -> new TaskReading());
    }

    /** The reading of a task, or null if it never reported one on this runtime. */
    public @Nullable TaskReading readingOrNull(String computation, int partition) {
        return readings.get(new TaskKey(computation, partition));
    }

    /** Reports (or updates the message of) an error; keeps its first time. */
    public void report(String computation, int partition, String path, String message, Instant now) {
        report(computation, partition, path, message, now, Severity.ERROR);
    }

    /** Reports (or updates the message of) an entry of the given severity; keeps its first time. */
    public void report(String computation, int partition, String path, String message, Instant now,
            Severity severity) {
        errors.compute(new Key(computation, partition, path), (k, old) -> new StatusError(path, computation, partition,
                message, old == null ? now : old.since(), severity));
    }

    /**
     * Whether {@code what} is announced for the first time on this runtime: true once per {@code what}, so that a
     * condition every task of a computation reaches is logged once, not once per task.
     */
    public boolean firstAnnouncement(String what) {
        return announced.add(what);
    }

    /** Clears an error (no-op if not reported). */
    public void clear(String computation, int partition, String path) {
        errors.remove(new Key(computation, partition, path));
    }

    /** Clears every error of a task (when the task closes). */
    public void clearTask(String computation, int partition) {
        errors.keySet().removeIf(k -> k.computation().equals(computation) && k.partition() == partition);
    }

    /** Clears the errors of a task whose path starts with {@code prefix} (what one of its parts reported). */
    public void clearTask(String computation, int partition, String prefix) {
        errors.keySet().removeIf(k -> k.computation().equals(computation) && k.partition() == partition
                && k.path().startsWith(prefix));
    }

    /**
     * Clears the errors at {@code path} of every task but those in {@code here} ({@code <computation>/<partition>}):
     * what tasks reported before they moved to another instance.
     */
    public void clearPathExcept(String path, Set<String> here) {
        errors.keySet().removeIf(k -> k.path().equals(path) && !here.contains(k.computation() + "/" + k.partition()));
    }

    /** The current errors, ordered by computation, partition and path. */
    public List<StatusError> errors() {
        List<StatusError> out = new ArrayList<>(errors.values());
        out.sort(Comparator.comparing(StatusError::computation).thenComparingInt(StatusError::partition)
                .thenComparing(StatusError::path));
        return out;
    }
}
