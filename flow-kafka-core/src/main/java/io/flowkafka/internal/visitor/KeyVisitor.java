package io.flowkafka.internal.visitor;

import io.flowkafka.avro.KeyVisitorCoverage;
import io.flowkafka.internal.status.StatusBoard;
import io.flowkafka.spec.KeyVisitorSettings;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.DecoderFactory;
import org.apache.avro.io.EncoderFactory;
import org.apache.avro.specific.SpecificDatumReader;
import org.apache.avro.specific.SpecificDatumWriter;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.state.KeyValueStore;
import org.jspecify.annotations.Nullable;

/**
 * The key visitor of one key-visitor stream in one partition (task): scans the partition's hash
 * range in passes and hands each key to a {@link Handler}, as Flow's {@code TKeyVisitor} does.
 *
 * <p>Model. The partition's hash range {@code [lo, end)} is split into {@code bucket_count} equal
 * buckets. A pass visits every bucket from its start to its end; a step reads the buckets
 * round-robin, each from its resume position up to the throttle's target
 * {@code start + min(1, elapsed / period) · width}, so a full pass takes {@code period} whatever
 * the read frequency. A read takes at most {@code max_scan_rows_per_iteration} rows from every
 * scan source, merged in key order; a key cut by the row limit is left for the next read, and
 * when that leaves nothing the scan is stalled (reported as {@code scan_cap_stall}).
 *
 * <p>Invariants. Coverage (pass, pass start, per-bucket resume positions, final-pass flags) lives
 * only in the changelogged {@code key_visitor_states} store, is read at the start of every step
 * and written at its end, on the stream thread, between Kafka Streams commits: the visits of a
 * step and the coverage advance past them commit in the same transaction, and an aborted
 * transaction rolls both back. Nothing on the heap decides what is visited. The rotation to a new
 * pass is a single store write. Every step is bounded by a row and a time budget.
 *
 * <p>Threading: owned by one stream thread.
 */
public final class KeyVisitor {
    /** Runs the process function for one visit; throws only to fail the task. */
    public interface Handler {
        /**
         * @param rows the key's state rows as the scan read them (store key to value), or null when
         *     unknown; the handler may serve the visit's state reads from them
         */
        void visit(byte[] encodedKey, long pass, long eventTimestampNanos,
                java.util.@Nullable Map<Bytes, byte[]> rows);
    }

    /** What a step left. */
    public enum Step {
        /** Caught up with the throttle (or waiting to retry): next step after the fill period. */
        IDLE,
        /** Stopped by the step budget, a row cap or a pass change: step again at once. */
        MORE,
        /** The final pass ended; the visitor scans no more. */
        COMPLETED
    }

    /** Where a visitor stands towards its end, as of its last step. */
    public enum FinalPass {
        /** No final pass requested (its followed streams have not completed, or {@code finite: false}). */
        NONE,
        /** The current pass began before completion: it ends, then a full final pass follows. */
        NEXT,
        /** The current pass is the final one. */
        CURRENT,
        /** The final pass ended. */
        DONE
    }

    static {
        io.flowkafka.avro.FlowAvroClasses.trust(); // the coverage record is a generated Avro class
    }

    private static final BigInteger TWO_64 = BigInteger.ONE.shiftLeft(64);
    /** A read covers at most this fraction of its bucket's hash range. */
    static final int SLICES = 16;
    private static final byte[] EMPTY = new byte[0];

    private final String computation;
    private final int partition;
    private final String stream;
    private final Bytes storeKey;
    private final List<ScanSource> sources;
    private final KeyValueStore<Bytes, byte[]> coverageStore;
    private final StatusBoard status;
    private final int bucketCount;
    /** Bucket b spans [start[b], start[b+1]) as unsigned hashes; start[bucketCount] is the end (0 with unboundedEnd). */
    private final long[] start;
    private final double[] width;
    private final double totalWidth;
    private final boolean unboundedEnd;
    private final String stallPath;
    private final String fillPath;
    private final SpecificDatumWriter<KeyVisitorCoverage> writer = new SpecificDatumWriter<>(KeyVisitorCoverage.class);
    private final SpecificDatumReader<KeyVisitorCoverage> reader = new SpecificDatumReader<>(KeyVisitorCoverage.class);
    final VisitRateEstimator rate = new VisitRateEstimator();
    private volatile long processed;
    private volatile long lastPassDurationNanos = -1;
    private volatile long currentPass = -1;
    private volatile boolean completed;
    private volatile long lastEventTimestamp = Long.MIN_VALUE;
    private volatile FinalPass finalPass = FinalPass.NONE;
    private volatile long passStartNanos = Long.MIN_VALUE;
    /** The share of the partition's hash span the current pass covered, as of the last step; NaN before it. */
    private volatile double passProgress = Double.NaN;

    /**
     * @param partition this task's partition among {@code partitionCount}; its hash range is
     *     {@code [⌈p·2^64/N⌉, ⌈(p+1)·2^64/N⌉)}
     */
    public KeyVisitor(String computation, String stream, int partition, int partitionCount, int bucketCount,
            List<ScanSource> sources, KeyValueStore<Bytes, byte[]> coverageStore, StatusBoard status) {
        this.computation = computation;
        this.partition = partition;
        this.stream = stream;
        this.storeKey = Bytes.wrap(stream.getBytes(StandardCharsets.UTF_8));
        this.sources = List.copyOf(sources);
        this.coverageStore = coverageStore;
        this.status = status;
        this.bucketCount = bucketCount;
        BigInteger lo = ceilDiv(TWO_64.multiply(BigInteger.valueOf(partition)), partitionCount);
        BigInteger end = ceilDiv(TWO_64.multiply(BigInteger.valueOf(partition + 1L)), partitionCount);
        this.unboundedEnd = end.equals(TWO_64);
        BigInteger span = end.subtract(lo);
        this.start = new long[bucketCount + 1];
        this.width = new double[bucketCount];
        for (int b = 0; b <= bucketCount; b++) {
            BigInteger s = lo.add(span.multiply(BigInteger.valueOf(b)).divide(BigInteger.valueOf(bucketCount)));
            start[b] = s.longValue(); // 2^64 wraps to 0, used only with unboundedEnd
        }
        for (int b = 0; b < bucketCount; b++) {
            BigInteger s = lo.add(span.multiply(BigInteger.valueOf(b)).divide(BigInteger.valueOf(bucketCount)));
            BigInteger e = lo.add(span.multiply(BigInteger.valueOf(b + 1L)).divide(BigInteger.valueOf(bucketCount)));
            width[b] = e.subtract(s).doubleValue();
        }
        this.totalWidth = span.doubleValue();
        this.stallPath = "/key_visitor/" + stream + "/scan_cap_stall";
        this.fillPath = "/key_visitor/" + stream + "/background_fill";
    }

    private static BigInteger ceilDiv(BigInteger a, int n) {
        BigInteger[] qr = a.divideAndRemainder(BigInteger.valueOf(n));
        return qr[1].signum() == 0 ? qr[0] : qr[0].add(BigInteger.ONE);
    }

    /**
     * Advances the scan within a budget.
     *
     * @param nowNanos the wall clock
     * @param settings the current dynamic settings
     * @param upstreamCompleted whether every followed stream completed
     * @param maxRows at most about this many rows in this step (a read may exceed it by one read)
     * @param deadlineNanos stop visiting at this {@link System#nanoTime()}
     */
    public Step step(long nowNanos, KeyVisitorSettings settings, boolean upstreamCompleted, int maxRows,
            long deadlineNanos, Handler handler) {
        Cursor c = load(nowNanos);
        if (c.completed) {
            completed = true;
            finalPass = FinalPass.DONE;
            rate.finished();
            return Step.COMPLETED;
        }
        boolean dirty = c.fresh;
        if (settings.finite() && upstreamCompleted && !c.finalPass) {
            if (!settings.fullFinalPass() || (c.visitsInPass == 0 && scannedFraction(c) == 0.0)) {
                c.finalPass = true; // nothing of this pass was scanned before completion: it is a full pass after it
                c.finalPassNext = false;
                dirty = true;
            } else if (!c.finalPassNext) {
                c.finalPassNext = true;
                dirty = true;
            }
        } else if (!settings.finite() && c.finalPassNext) {
            c.finalPassNext = false; // switched back before the final pass began
            dirty = true;
        }
        int rowsLeft = maxRows;
        long period = settings.period().toNanos();
        try {
            while (true) {
                if (allDone(c)) {
                    c.lastPassDurationNanos = nowNanos - c.passStartNanos;
                    lastPassDurationNanos = c.lastPassDurationNanos;
                    dirty = true;
                    if (c.finalPass) {
                        c.completed = true;
                        completed = true;
                        rate.finished();
                        return Step.COMPLETED;
                    }
                    // The next pass starts where this one was scheduled to end when it ended about on time (within
                    // two fill periods: the granularity of the steps), so that step granularity does not stretch
                    // every pass; a late pass (slow reads, downtime) starts the next one now.
                    long scheduledEnd = c.passStartNanos + period;
                    long slack = 2 * settings.backgroundFillPeriod().toNanos();
                    c.newPass(nowNanos - scheduledEnd >= 0 && nowNanos - scheduledEnd <= slack ? scheduledEnd : nowNanos);
                    currentPass = c.pass;
                    return Step.MORE; // the new pass starts at the next step, from the throttle's target then
                }
                double target = Math.min(1.0, Math.max(0.0, (double) (nowNanos - c.passStartNanos) / period));
                for (int i = 0; i < bucketCount; i++) {
                    int b = c.nextBucket;
                    while (!c.done[b]) {
                        Read r = readBucket(c, b, target, settings, nowNanos, period, deadlineNanos, handler);
                        if (r == Read.FAILED || r == Read.STALLED) {
                            return Step.IDLE;
                        }
                        dirty |= r != Read.CAUGHT_UP;
                        rowsLeft -= lastRows;
                        if (r == Read.CAUGHT_UP || r == Read.DONE) {
                            break;
                        }
                        if (rowsLeft <= 0 || System.nanoTime() >= deadlineNanos) {
                            return Step.MORE; // the same bucket continues at the next step
                        }
                    }
                    c.nextBucket = (b + 1) % bucketCount;
                    dirty = true;
                    if (rowsLeft <= 0 || System.nanoTime() >= deadlineNanos) {
                        return Step.MORE;
                    }
                }
                if (!allDone(c)) {
                    return Step.IDLE;
                }
            }
        } finally {
            // never back: a shorter period mid-pass dates the rest of the pass earlier than what was reported
            lastEventTimestamp = c.completed ? Long.MAX_VALUE
                    : Math.max(lastEventTimestamp, eventTimestamp(c, nowNanos, period));
            finalPass = c.completed ? FinalPass.DONE : c.finalPass ? FinalPass.CURRENT
                    : c.finalPassNext ? FinalPass.NEXT : FinalPass.NONE;
            passStartNanos = c.passStartNanos;
            passProgress = c.completed ? 1.0 : scannedFraction(c);
            if (dirty) {
                save(c);
            }
        }
    }

    private enum Read { CAUGHT_UP, PARTIAL, DONE, STALLED, FAILED }

    private int lastRows;

    /** One read of bucket {@code b} towards the throttle's target, and its visits. */
    private Read readBucket(Cursor c, int b, double target, KeyVisitorSettings settings, long nowNanos, long period,
            long deadlineNanos, Handler handler) {
        lastRows = 0;
        byte[] bucketFrom = hashBytes(start[b]);
        byte @Nullable [] bucketEnd = b == bucketCount - 1 && unboundedEnd ? null : hashBytes(start[b + 1]);
        byte[] from = c.positions[b].length == 0 || Arrays.compareUnsigned(c.positions[b], bucketFrom) < 0
                ? bucketFrom : c.positions[b];
        boolean toEnd = target >= 1.0;
        byte @Nullable [] to = toEnd ? bucketEnd : hashBytes(start[b] + toUnsignedLong(Math.min(width[b], target * width[b])));
        if (bucketEnd != null && Arrays.compareUnsigned(from, bucketEnd) >= 0) {
            c.done[b] = true;
            return Read.DONE;
        }
        if (to != null && Arrays.compareUnsigned(from, to) >= 0) {
            return Read.CAUGHT_UP;
        }
        // A read spans at most 1/SLICES of its bucket's hash range: RocksDB walks the tombstones of the range a
        // read covers inside one call, so a catch-up over a range of many deleted keys stays in bounded reads.
        boolean sliced = false;
        double slice = width[b] / SLICES;
        if (slice >= 1) {
            double fromOffset = unsignedDiff(hashOf(from), start[b]);
            double toOffset = to == null ? width[b] : unsignedDiff(hashOf(to), start[b]);
            if (toOffset - fromOffset > slice) {
                to = hashBytes(start[b] + toUnsignedLong(Math.max(0, fromOffset) + slice));
                sliced = true;
            }
        }
        int cap = settings.maxScanRowsPerIteration();
        Merged m;
        try {
            m = readAll(from, to, cap);
        } catch (RuntimeException e) {
            status.report(computation, partition, fillPath, "Key visitor '" + stream + "' cannot read "
                    + e.getClass().getSimpleName() + ": " + e.getMessage() + "; the read is retried", now(nowNanos));
            org.slf4j.LoggerFactory.getLogger(KeyVisitor.class).warn("key visitor {} of {}/{} cannot read its state; "
                    + "retrying: {}", stream, computation, partition, e.toString());
            return Read.FAILED;
        }
        status.clear(computation, partition, fillPath);
        lastRows = m.rows;
        if (m.bound != null && Arrays.compareUnsigned(m.bound, from) <= 0) {
            status.report(computation, partition, stallPath, "Key visitor stalled: a single key has more than "
                    + "max_scan_rows_per_iteration = " + cap + " rows; raise max_scan_rows_per_iteration with "
                    + "FlowRuntime.reconfigure", now(nowNanos));
            return Read.STALLED;
        }
        status.clear(computation, partition, stallPath);
        List<byte[]> keys = m.keys;
        List<java.util.Map<Bytes, byte[]>> values = m.values;
        byte @Nullable [] bound = m.bound;
        boolean limited = m.capped;
        if (keys.size() > settings.bufferRowLimit()) {
            keys = keys.subList(0, settings.bufferRowLimit());
            bound = successor(keys.get(keys.size() - 1));
            limited = true;
        }
        // The throttle schedules each bucket on its own (all buckets follow the same target fraction), so the
        // scanned fraction that dates the visits of this read is the bucket's, up to the read's end.
        double bucketFraction = bound == null ? 1.0
                : Math.max(0.0, Math.min(1.0, unsignedDiff(hashOf(bound), start[b]) / width[b]));
        // not behind the watermark reported (a period shortened mid-pass would date the rest of the pass before it)
        long ets = Math.max(lastEventTimestamp == Long.MAX_VALUE ? Long.MIN_VALUE : lastEventTimestamp,
                nowNanos - (long) Math.max(0.0, (nowNanos - c.passStartNanos) - bucketFraction * period));
        int visited = 0;
        for (byte[] key : keys) {
            if (visited > 0 && System.nanoTime() >= deadlineNanos) {
                bound = successor(keys.get(visited - 1));
                limited = true;
                break;
            }
            handler.visit(key, c.pass, ets, values == null ? null : values.get(visited));
            visited++;
            c.visitsInPass++;
            processed++;
        }
        rate.observe(nowNanos, visited, fraction(from, bound, b));
        if (bound == null) {
            c.done[b] = true;
            return Read.DONE;
        }
        c.positions[b] = bound;
        if (!limited && !sliced && toEnd) {
            c.done[b] = true;
            return Read.DONE;
        }
        return limited || sliced ? Read.PARTIAL : Read.CAUGHT_UP;
    }

    private record Merged(List<byte[]> keys, int rows, boolean capped, byte @Nullable [] bound,
            @Nullable List<java.util.Map<Bytes, byte[]>> values) {
    }

    /** Reads every source and merges their keys below the smallest bound a capped source guarantees. */
    private Merged readAll(byte[] from, byte @Nullable [] to, int cap) {
        if (sources.size() == 1) {
            ScanSource.Read r = sources.get(0).read(from, to, cap);
            byte[] bound = !r.capped() ? to : r.lastComplete() == null ? from : successor(r.lastComplete());
            return new Merged(r.keys(), r.rows(), r.capped(), bound, r.values());
        }
        List<ScanSource.Read> reads = new ArrayList<>();
        byte @Nullable [] bound = to;
        boolean capped = false;
        int rows = 0;
        for (ScanSource s : sources) {
            ScanSource.Read r = s.read(from, to, cap);
            reads.add(r);
            rows += r.rows();
            if (r.capped()) {
                capped = true;
                byte[] b = r.lastComplete() == null ? from : successor(r.lastComplete());
                if (bound == null || (b != null && Arrays.compareUnsigned(b, bound) < 0)) {
                    bound = b;
                }
            }
        }
        java.util.TreeMap<byte[], java.util.Map<Bytes, byte[]>> merged = new java.util.TreeMap<>(Arrays::compareUnsigned);
        for (ScanSource.Read r : reads) {
            for (int i = 0; i < r.keys().size(); i++) {
                byte[] k = r.keys().get(i);
                if (bound == null || Arrays.compareUnsigned(k, bound) < 0) {
                    java.util.Map<Bytes, byte[]> rowsOfKey = merged.computeIfAbsent(k, x -> new java.util.HashMap<>());
                    if (r.values() != null) {
                        rowsOfKey.putAll(r.values().get(i));
                    }
                }
            }
        }
        // rows are offered only when every source offers them (else a visit could miss rows of a source)
        boolean allValues = reads.stream().allMatch(r -> r.values() != null);
        return new Merged(new ArrayList<>(merged.keySet()), rows, capped, bound,
                allValues ? new ArrayList<>(merged.values()) : null);
    }

    /**
     * The visitor stream's watermark: the visit EventTimestamp {@code now − max(0, elapsed − ScannedFraction ·
     * Period)} of the least advanced bucket. Each read dates its visits by its own bucket's fraction, so while the
     * buckets catch up one by one an average would run ahead of the visits still to come.
     */
    private long eventTimestamp(Cursor c, long nowNanos, long period) {
        long elapsed = nowNanos - c.passStartNanos;
        double lag = Math.max(0.0, elapsed - leastBucketFraction(c) * period);
        return nowNanos - (long) lag;
    }

    /** The smallest share of its own span a bucket of this pass covered (1 when every bucket is done). */
    private double leastBucketFraction(Cursor c) {
        double least = 1.0;
        for (int b = 0; b < bucketCount; b++) {
            if (c.done[b] || width[b] == 0) {
                continue;
            }
            double covered = c.positions[b].length == 0 ? 0.0
                    : Math.max(0.0, Math.min(width[b], unsignedDiff(hashOf(c.positions[b]), start[b])));
            least = Math.min(least, covered / width[b]);
        }
        return least;
    }

    /** The share of the partition's hash span this pass covered. */
    double scannedFraction(Cursor c) {
        double covered = 0;
        for (int b = 0; b < bucketCount; b++) {
            if (c.done[b]) {
                covered += width[b];
            } else if (c.positions[b].length > 0) {
                covered += Math.max(0.0, Math.min(width[b], unsignedDiff(hashOf(c.positions[b]), start[b])));
            }
        }
        return totalWidth == 0 ? 1.0 : covered / totalWidth;
    }

    private double fraction(byte[] from, byte @Nullable [] bound, int b) {
        double lo = unsignedDiff(hashOf(from), start[b]);
        double hi = bound == null ? width[b] : unsignedDiff(hashOf(bound), start[b]);
        return totalWidth == 0 ? 0 : Math.max(0.0, Math.min(width[b], hi) - lo) / totalWidth;
    }

    /** {@code a − b} for unsigned 64-bit values, as a double. */
    private static double unsignedDiff(long a, long b) {
        return unsigned(a) - unsigned(b);
    }

    private static double unsigned(long v) {
        return v >= 0 ? v : (v >>> 1) * 2.0 + (v & 1);
    }

    /** The unsigned 64-bit value nearest to {@code x} (0 ≤ x < 2^64). */
    private static long toUnsignedLong(double x) {
        if (x < 0x1p63) {
            return (long) x;
        }
        return (long) (x - 0x1p63) + Long.MIN_VALUE;
    }

    private boolean allDone(Cursor c) {
        for (boolean d : c.done) {
            if (!d) {
                return false;
            }
        }
        return true;
    }

    /** The smallest byte string greater than every string starting with {@code key}; null if none. */
    static byte @Nullable [] successor(byte[] key) {
        for (int i = key.length - 1; i >= 0; i--) {
            if (key[i] != (byte) 0xff) {
                byte[] s = Arrays.copyOf(key, i + 1);
                s[i]++;
                return s;
            }
        }
        return null;
    }

    private static byte[] hashBytes(long hash) {
        return ByteBuffer.allocate(8).putLong(hash).array();
    }

    /** The hash prefix of a key or bound; a bound shorter than 8 bytes (a successor) is padded with zeros. */
    private static long hashOf(byte[] key) {
        return key.length >= 8 ? ByteBuffer.wrap(key, 0, 8).getLong() : ByteBuffer.wrap(Arrays.copyOf(key, 8)).getLong();
    }

    private static Instant now(long nanos) {
        return Instant.ofEpochSecond(0, nanos);
    }

    // ---------------------------------------------------------------- coverage

    /** The coverage as a mutable working copy. */
    final class Cursor {
        long pass;
        long passStartNanos;
        int nextBucket;
        byte[][] positions;
        boolean[] done;
        long visitsInPass;
        boolean finalPass;
        boolean finalPassNext;
        boolean completed;
        long lastPassDurationNanos = -1;
        boolean fresh;

        void newPass(long nowNanos) {
            pass++;
            passStartNanos = nowNanos;
            nextBucket = 0;
            positions = new byte[bucketCount][];
            Arrays.fill(positions, EMPTY);
            done = new boolean[bucketCount];
            visitsInPass = 0;
            finalPass = finalPassNext;
            finalPassNext = false;
        }
    }

    private Cursor load(long nowNanos) {
        byte[] bytes = coverageStore.get(storeKey);
        Cursor c = new Cursor();
        if (bytes == null) {
            c.pass = -1;
            c.newPass(nowNanos);
            c.fresh = true;
        } else {
            KeyVisitorCoverage r;
            try {
                r = reader.read(null, DecoderFactory.get().binaryDecoder(bytes, null));
            } catch (IOException e) {
                throw new UncheckedIOException("cannot read the coverage of key visitor " + stream, e);
            }
            c.pass = r.getPass();
            c.passStartNanos = r.getPassStartNanos();
            c.visitsInPass = r.getVisitsInPass();
            c.finalPass = r.getFinalPass();
            c.finalPassNext = r.getFinalPassNext();
            c.completed = r.getCompleted();
            c.lastPassDurationNanos = r.getLastPassDurationNanos();
            if (r.getBucketCount() != bucketCount) {
                // bucket_count changed between deployments: positions cannot be mapped; start a new pass
                c.newPass(nowNanos);
                c.fresh = true;
            } else {
                c.nextBucket = r.getNextBucket();
                c.positions = new byte[bucketCount][];
                c.done = new boolean[bucketCount];
                for (int b = 0; b < bucketCount; b++) {
                    ByteBuffer p = r.getPositions().get(b);
                    byte[] a = new byte[p.remaining()];
                    p.duplicate().get(a);
                    c.positions[b] = a;
                    c.done[b] = r.getBucketsDone().get(b);
                }
            }
        }
        currentPass = c.pass;
        lastPassDurationNanos = c.lastPassDurationNanos;
        return c;
    }

    private void save(Cursor c) {
        List<ByteBuffer> positions = new ArrayList<>(bucketCount);
        List<Boolean> done = new ArrayList<>(bucketCount);
        for (int b = 0; b < bucketCount; b++) {
            positions.add(ByteBuffer.wrap(c.positions[b]));
            done.add(c.done[b]);
        }
        KeyVisitorCoverage r = KeyVisitorCoverage.newBuilder().setVisitorStream(stream).setPass(c.pass)
                .setPassStartNanos(c.passStartNanos).setBucketCount(bucketCount).setNextBucket(c.nextBucket)
                .setPositions(positions).setBucketsDone(done).setVisitsInPass(c.visitsInPass)
                .setFinalPass(c.finalPass).setFinalPassNext(c.finalPassNext).setCompleted(c.completed)
                .setLastPassDurationNanos(c.lastPassDurationNanos).build();
        ByteArrayOutputStream out = new ByteArrayOutputStream(64 + 16 * bucketCount);
        BinaryEncoder enc = EncoderFactory.get().directBinaryEncoder(out, null);
        try {
            writer.write(r, enc);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        coverageStore.put(storeKey, out.toByteArray());
        c.fresh = false;
    }

    // ---------------------------------------------------------------- observability

    /** Whether the final pass ended (as of the last step). */
    public boolean completed() {
        return completed;
    }

    /** Where the visitor stands towards its end (as of the last step). */
    public FinalPass finalPass() {
        return finalPass;
    }

    /** When the pass being scanned began, in wall-clock nanoseconds (as of the last step). */
    public long passStartNanos() {
        return passStartNanos;
    }

    /** The share (0 to 1) of the partition's hash span the current pass covered, as of the last step; NaN before. */
    public double passProgress() {
        return passProgress;
    }

    /** The pass being scanned (as of the last step); -1 before the first step. */
    public long pass() {
        return currentPass;
    }

    /** The visit EventTimestamp as of the last step (MAX_VALUE once completed, MIN_VALUE before the first step). */
    public long lastEventTimestamp() {
        return lastEventTimestamp;
    }

    /** Visits made by this task since it started. */
    public long processed() {
        return processed;
    }

    /** The duration of the last completed pass in nanoseconds; -1 before the first. */
    public long lastPassDurationNanos() {
        return lastPassDurationNanos;
    }

    /** The rate needed to visit every key of the partition once per period, per second; NaN if unknown. */
    public double requiredRate(KeyVisitorSettings settings) {
        return rate.requiredRate(settings.period().toNanos());
    }

    /** The visitor stream id. */
    public String stream() {
        return stream;
    }

    /** The coverage as stored, for inspection (null before the first step). */
    public static @Nullable KeyVisitorCoverage coverage(KeyValueStore<Bytes, byte[]> store, String stream) {
        byte[] bytes = store.get(coverageKey(stream));
        return bytes == null ? null : decodeCoverage(bytes);
    }

    /** The key of a visitor stream's coverage row in the coverage store. */
    public static Bytes coverageKey(String stream) {
        return Bytes.wrap(stream.getBytes(StandardCharsets.UTF_8));
    }

    /** Decodes a coverage row's value. */
    public static KeyVisitorCoverage decodeCoverage(byte[] bytes) {
        try {
            return new SpecificDatumReader<>(KeyVisitorCoverage.class).read(null,
                    DecoderFactory.get().binaryDecoder(bytes, null));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The name of a computation's coverage store (also names its changelog topic). */
    public static String storeName(String computationId) {
        return computationId + ".key_visitor_states";
    }

    /** A builder of the persistent (or in-memory), changelogged coverage store. */
    public static org.apache.kafka.streams.state.StoreBuilder<KeyValueStore<Bytes, byte[]>> storeBuilder(
            String computationId, boolean persistent) {
        var supplier = persistent
                ? org.apache.kafka.streams.state.Stores.persistentKeyValueStore(storeName(computationId))
                : org.apache.kafka.streams.state.Stores.inMemoryKeyValueStore(storeName(computationId));
        return org.apache.kafka.streams.state.Stores.keyValueStoreBuilder(supplier,
                org.apache.kafka.common.serialization.Serdes.Bytes(),
                org.apache.kafka.common.serialization.Serdes.ByteArray()).withLoggingEnabled(java.util.Map.of());
    }

    /** Scan sources over a computation's internal states, for visitors that scan them. */
    public static ScanSource internalStates(KeyValueStore<Bytes, byte[]> store, @Nullable List<String> names) {
        return new StateScanSource(store, names, java.util.Set.of());
    }
}
