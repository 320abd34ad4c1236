package io.flowkafka.runtime;

import java.time.Instant;
import java.util.Objects;

/**
 * An error a running pipeline reports about itself without failing, like Flow's status profiler:
 * it stays listed in {@link FlowRuntime#status()} until the condition clears.
 *
 * @param path what reports it, e.g. {@code /key_visitor/<stream>/scan_cap_stall}
 * @param computation the computation
 * @param partition the partition (task) of the computation
 * @param message what is wrong and how to fix it
 * @param since when it was first reported
 */
public record StatusError(String path, String computation, int partition, String message, Instant since) {
    public StatusError {
        Objects.requireNonNull(path, "path");
        Objects.requireNonNull(computation, "computation");
        Objects.requireNonNull(message, "message");
        Objects.requireNonNull(since, "since");
    }
}
