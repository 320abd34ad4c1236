package io.flowkafka.testing;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * The committed coverage of one key-visitor stream in one task (on {@link FlowTestDriver}, the
 * only one): which pass it is in and how far each bucket's scan got, as
 * {@link FlowTestDriver#keyVisitorCoverage} reads it from the computation's key-visitor store.
 *
 * <p>Immutable.
 *
 * @param visitorStream the key-visitor stream
 * @param pass the pass number, from 0: every pass below it completed
 * @param passStart the wall-clock time the pass started
 * @param bucketCount how many buckets a pass scans
 * @param nextBucket the bucket the next read starts with (round-robin)
 * @param bucketsDone per bucket: scanned to its end in this pass
 * @param visitsInPass the visits of this pass so far
 * @param finalPass whether this pass is the last one (a finite visitor whose upstream streams completed)
 * @param finalPassNext whether the pass after this one is the final one ({@code full_final_pass})
 * @param completed whether the final pass ended: the visitor scans no more
 * @param lastPassDuration how long the last completed pass took; empty before the first
 */
public record KeyVisitorCoverage(String visitorStream, long pass, Instant passStart, int bucketCount, int nextBucket,
        List<Boolean> bucketsDone, long visitsInPass, boolean finalPass, boolean finalPassNext, boolean completed,
        Optional<Duration> lastPassDuration) {

    /**
     * Copies {@code bucketsDone}; every argument must be non-null.
     *
     * @param visitorStream the key-visitor stream
     * @param pass the pass number, from 0
     * @param passStart the wall-clock time the pass started
     * @param bucketCount how many buckets a pass scans
     * @param nextBucket the bucket the next read starts with
     * @param bucketsDone per bucket: scanned to its end in this pass
     * @param visitsInPass the visits of this pass so far
     * @param finalPass whether this pass is the last one
     * @param finalPassNext whether the pass after this one is the final one
     * @param completed whether the final pass ended
     * @param lastPassDuration how long the last completed pass took; empty before the first
     */
    public KeyVisitorCoverage {
        Objects.requireNonNull(visitorStream, "visitorStream");
        Objects.requireNonNull(passStart, "passStart");
        bucketsDone = List.copyOf(bucketsDone);
        Objects.requireNonNull(lastPassDuration, "lastPassDuration");
    }

    /** The coverage the runtime stores. */
    static KeyVisitorCoverage of(io.flowkafka.avro.KeyVisitorCoverage c) {
        long startNanos = c.getPassStartNanos();
        long lastNanos = c.getLastPassDurationNanos();
        return new KeyVisitorCoverage(c.getVisitorStream().toString(), c.getPass(),
                Instant.ofEpochSecond(Math.floorDiv(startNanos, 1_000_000_000L), Math.floorMod(startNanos, 1_000_000_000L)),
                c.getBucketCount(), c.getNextBucket(), new ArrayList<>(c.getBucketsDone()), c.getVisitsInPass(),
                c.getFinalPass(), c.getFinalPassNext(), c.getCompleted(),
                lastNanos < 0 ? Optional.empty() : Optional.of(Duration.ofNanos(lastNanos)));
    }
}
