package io.flowkafka.internal.processor;

import java.time.Instant;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Warns, once per task, of a timestamp a process function gave in milliseconds where flow-kafka takes nanoseconds
 * (Flow's unit; Kafka's and most JSON fields' is milliseconds): a timer 30 minutes ahead in milliseconds fires at
 * the next watermark, and an output dated in milliseconds lands in 1970, where time-based retention deletes it. A
 * value from 10^12 to 10^13 is a date from 2001 to 2286 in milliseconds and 17 minutes to 3 hours after the epoch in
 * nanoseconds.
 */
final class MillisecondTimestamps {
    private static final Logger LOG = LoggerFactory.getLogger(MillisecondTimestamps.class);
    private static final long LOW = 1_000_000_000_000L;
    private static final long HIGH = 10_000_000_000_000L;

    private final String computation;
    private boolean warned;

    MillisecondTimestamps(String computation) {
        this.computation = computation;
    }

    /** Logs a warning the first time {@code nanos} looks like milliseconds. */
    void check(String what, long nanos) {
        if (nanos >= LOW && nanos < HIGH && !warned) {
            warned = true;
            LOG.warn("computation '{}': {} {} looks like milliseconds since the epoch ({}); flow-kafka timestamps are "
                    + "nanoseconds, so it reads as {}: multiply milliseconds by 1_000_000", computation, what, nanos,
                    Instant.ofEpochMilli(nanos), Instant.ofEpochSecond(0, nanos));
        }
    }
}
