package io.flowkafka.runtime;

import java.time.Instant;
import java.util.Objects;

/**
 * What a running pipeline reports about itself without failing, like Flow's status profiler: an
 * error ({@link Severity#ERROR}), or what a finite pipeline is waiting for ({@link Severity#INFO},
 * e.g. {@code /key_visitor/<stream>/final_pass}); it stays listed in {@link FlowRuntime#status()}
 * until the condition clears.
 *
 * @param path what reports it, e.g. {@code /key_visitor/<stream>/scan_cap_stall}
 * @param computation the computation
 * @param partition the partition (task) of the computation
 * @param message what is wrong and how to fix it, or what the pipeline waits for and until when
 * @param since when it was first reported
 * @param severity whether it is an error or a note on what the pipeline waits for
 */
public record StatusError(String path, String computation, int partition, String message, Instant since,
        Severity severity) {
    /** How an entry of {@link FlowRuntime#status()} reads. */
    public enum Severity {
        /** Something is wrong; the message says how to fix it. */
        ERROR,
        /** Nothing is wrong: the pipeline waits for something that takes time, and the message says until when. */
        INFO
    }

    /**
     * Checks that every component but {@code partition} is set.
     *
     * @param path what reports it, e.g. {@code /key_visitor/<stream>/scan_cap_stall}
     * @param computation the computation
     * @param partition the partition (task) of the computation
     * @param message what is wrong and how to fix it, or what the pipeline waits for and until when
     * @param since when it was first reported
     * @param severity whether it is an error or a note on what the pipeline waits for
     * @throws NullPointerException if {@code path}, {@code computation}, {@code message}, {@code since} or
     *     {@code severity} is null
     */
    public StatusError {
        Objects.requireNonNull(path, "path");
        Objects.requireNonNull(computation, "computation");
        Objects.requireNonNull(message, "message");
        Objects.requireNonNull(since, "since");
        Objects.requireNonNull(severity, "severity");
    }

    /**
     * An error ({@link Severity#ERROR}).
     *
     * @param path what reports it, e.g. {@code /key_visitor/<stream>/scan_cap_stall}
     * @param computation the computation
     * @param partition the partition (task) of the computation
     * @param message what is wrong and how to fix it
     * @param since when it was first reported
     */
    public StatusError(String path, String computation, int partition, String message, Instant since) {
        this(path, computation, partition, message, since, Severity.ERROR);
    }

    /**
     * Whether this is an error rather than a note on what the pipeline waits for.
     *
     * @return true if {@link #severity()} is {@link Severity#ERROR}
     */
    public boolean isError() {
        return severity == Severity.ERROR;
    }
}
