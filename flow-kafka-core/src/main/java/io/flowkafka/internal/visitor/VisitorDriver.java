package io.flowkafka.internal.visitor;

import io.flowkafka.internal.config.DynamicSpec;
import io.flowkafka.internal.state.KeyStates;
import io.flowkafka.internal.status.StatusBoard;
import io.flowkafka.runtime.StatusError.Severity;
import io.flowkafka.spec.ComputationSpec;
import io.flowkafka.spec.KeyVisitorSettings;
import io.flowkafka.spec.KeyVisitorStreamSpec;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.function.ToDoubleFunction;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Drives the key visitors of one computation task: on each tick, lets each due visitor scan within the
 * punctuation's budget (rows and time, shared by the task's visitors: DESIGN "every punctuation does a bounded
 * amount of work"), and hands each key to the task's call path. Registers the visitors' meters and removes them
 * at close.
 *
 * <p>Every decision comes from the coverage store (pass, cursor, final pass, completed): a visitor reads its
 * cursor from it at each step. One driver per task attempt, built at init and dropped at close, so a revive never
 * sees an aborted attempt's visitors (DESIGN rule 1). Not thread-safe.
 */
public final class VisitorDriver {
    /** Runs the call of one visit (and its dead letter if it fails). */
    public interface Visits {
        void visit(String stream, byte[] encodedKey, long pass, long eventTimestampNanos,
                @Nullable Map<Bytes, byte[]> rows);
    }

    private static final Logger LOG = LoggerFactory.getLogger(VisitorDriver.class);

    private final String pipeline;
    private final String computation;
    private final int partition;
    private final KeyStates states;
    private final DynamicSpec dynamic;
    private final StatusBoard status;
    private final MeterRegistry meters;
    private final int maxRows;
    private final long maxPunctuationMs;
    private final List<KeyVisitor> visitors = new ArrayList<>();
    private final List<KeyVisitorStreamSpec> specs = new ArrayList<>();
    private final List<Meter> registered = new ArrayList<>();
    private final long[] due;
    /** Per visitor: the settings its {@link #due} time was set with; a change of them makes it due at once. */
    private final KeyVisitorSettings[] scheduledWith;
    /** Punctuations with a time bound so far: which visitor steps first. */
    private long punctuations;

    /**
     * @param spec the computation
     * @param pipeline the pipeline's name (a meter tag)
     * @param partition the task's partition
     * @param partitionCount the computation's partition count
     * @param states the task's state access (the scans read its store)
     * @param coverage the task's visitor-coverage store
     * @param dynamic the runtime's dynamic spec (current visitor settings)
     * @param status where diagnostics are reported
     * @param meters where metrics are registered
     * @param maxRows about this many rows per punctuation at most
     * @param maxPunctuationMs at most this long per punctuation; 0: no time bound (rows only)
     * @param tables the store of the table a joiner of the computation reads, by joiner name (null if none), for
     *     visitors that list the joiner in {@code external_names}
     */
    public VisitorDriver(ComputationSpec spec, String pipeline, int partition, int partitionCount, KeyStates states,
            KeyValueStore<Bytes, byte[]> coverage, DynamicSpec dynamic, StatusBoard status, MeterRegistry meters,
            int maxRows, long maxPunctuationMs,
            Function<String, @Nullable ReadOnlyKeyValueStore<Bytes, byte[]>> tables) {
        this(spec, pipeline, partition, partitionCount, states, coverage, dynamic, status, meters, maxRows,
                maxPunctuationMs, tables, name -> null);
    }

    /**
     * A driver whose visitors may scan static tables too.
     *
     * @param spec the computation
     * @param pipeline the pipeline's name (a meter tag)
     * @param partition the task's partition
     * @param partitionCount the computation's partition count
     * @param states the task's state access (the scans read its store)
     * @param coverage the task's visitor-coverage store
     * @param dynamic the runtime's dynamic spec (current visitor settings)
     * @param status where diagnostics are reported
     * @param meters where metrics are registered
     * @param maxRows about this many rows per punctuation at most
     * @param maxPunctuationMs at most this long per punctuation; 0: no time bound (rows only)
     * @param tables the store of the table a joiner of the computation reads, by joiner name (null if none)
     * @param staticTables the scan of a {@code TStaticTableKeyVisitorJoiner}'s table, by joiner name (null if none)
     */
    public VisitorDriver(ComputationSpec spec, String pipeline, int partition, int partitionCount, KeyStates states,
            KeyValueStore<Bytes, byte[]> coverage, DynamicSpec dynamic, StatusBoard status, MeterRegistry meters,
            int maxRows, long maxPunctuationMs,
            Function<String, @Nullable ReadOnlyKeyValueStore<Bytes, byte[]>> tables,
            Function<String, @Nullable ScanSource> staticTables) {
        this.pipeline = pipeline;
        this.computation = spec.id();
        this.partition = partition;
        this.states = states;
        this.dynamic = dynamic;
        this.status = status;
        this.meters = meters;
        this.maxRows = maxRows;
        this.maxPunctuationMs = maxPunctuationMs;
        for (KeyVisitorStreamSpec v : spec.keyVisitorStreams().values()) {
            List<ScanSource> sources = ScanSources.of(spec, v, states.store(), tables, staticTables);
            KeyVisitor visitor = new KeyVisitor(computation, v.id(), partition, partitionCount, v.bucketCount(), sources,
                    coverage, status);
            visitors.add(visitor);
            specs.add(v);
            registerMeters(visitor, v, pipeline);
        }
        due = new long[visitors.size()];
        scheduledWith = new KeyVisitorSettings[visitors.size()];
        Arrays.fill(due, Long.MIN_VALUE);
    }

    private void registerMeters(KeyVisitor visitor, KeyVisitorStreamSpec v, String pipeline) {
        Tags tags = Tags.of("pipeline", pipeline, "computation", computation, "stream", v.id(), "partition",
                Integer.toString(partition));
        ToDoubleFunction<KeyVisitor> required = kv -> kv.requiredRate(dynamic.keyVisitor(computation, v.id()));
        registered.add(Gauge.builder("flow.key_visitor.new_count_per_sec", visitor, required)
                .description("Estimated distinct keys / period: the visit rate needed to visit every key once per "
                        + "period").tags(tags).register(meters));
        registered.add(Gauge.builder("flow.key_visitor.offered_count_per_sec", visitor, required)
                .description("Same estimate as new_count_per_sec (Flow reports both)").tags(tags).register(meters));
        registered.add(Gauge.builder("flow.key_visitor.ready_count", visitor, kv -> 0.0)
                .description("Visits read but not processed; visits run as they are read, so 0 between punctuations")
                .tags(tags).register(meters));
        registered.add(FunctionCounter.builder("flow.key_visitor.processed_count", visitor, kv -> kv.processed())
                .description("Visits processed by this task; its rate is processed_count_per_sec").tags(tags)
                .register(meters));
        registered.add(Gauge.builder("flow.key_visitor.pass_duration_seconds", visitor,
                kv -> kv.lastPassDurationNanos() < 0 ? Double.NaN : kv.lastPassDurationNanos() / 1e9)
                .description("Achieved duration of the last complete pass").tags(tags).register(meters));
        registered.add(Gauge.builder("flow.key_visitor.pass", visitor, kv -> kv.pass())
                .description("The pass being scanned").tags(tags).register(meters));
        registered.add(Gauge.builder("flow.key_visitor.pass_progress", visitor, KeyVisitor::passProgress)
                .description("The share (0 to 1) of the partition's keys the current pass visited").tags(tags)
                .register(meters));
    }

    /** Whether the computation has key visitors. */
    public boolean any() {
        return !visitors.isEmpty();
    }

    /**
     * Lets each due visitor advance within the punctuation's budget.
     *
     * @param nowMs the wall clock
     * @param upstreamCompleted whether every stream a visitor follows completed
     * @param visits runs each visit's call
     */
    public void step(long nowMs, Predicate<KeyVisitorStreamSpec> upstreamCompleted, Visits visits) {
        long nowNanos = nowMs * 1_000_000L;
        // 0: count only (FlowTestDriver's deterministic steps); System.nanoTime() never reaches Long.MAX_VALUE
        long deadline = maxPunctuationMs <= 0 ? Long.MAX_VALUE : System.nanoTime() + maxPunctuationMs * 1_000_000L;
        // with a time bound each punctuation starts at the next visitor, so one that keeps using the whole time
        // starves no other (without one, every due visitor steps in every punctuation, in spec order)
        int first = visitors.isEmpty() || maxPunctuationMs <= 0 ? 0 : (int) (punctuations++ % visitors.size());
        for (int n = 0; n < visitors.size(); n++) {
            int i = (first + n) % visitors.size();
            KeyVisitor visitor = visitors.get(i);
            KeyVisitorStreamSpec v = specs.get(i);
            KeyVisitorSettings settings = dynamic.keyVisitor(computation, v.id());
            if (scheduledWith[i] != null && !settings.equals(scheduledWith[i])) {
                due[i] = Math.min(due[i], nowMs); // changed settings apply now, not once the old wait has passed
            }
            if (visitor.completed() || nowMs < due[i] || System.nanoTime() >= deadline) {
                continue;
            }
            String stream = v.id();
            boolean upstreamDone = upstreamCompleted.test(v);
            states.beginScan();
            KeyVisitor.Step step;
            try {
                step = visitor.step(nowNanos, settings, upstreamDone, maxRows, deadline,
                        (key, pass, ets, scanned) -> visits.visit(stream, key, pass, ets, scanned));
            } finally {
                states.endScan();
            }
            due[i] = step == KeyVisitor.Step.MORE ? nowMs : nowMs + settings.backgroundFillPeriod().toMillis();
            scheduledWith[i] = settings;
            reportFinalPass(visitor, settings, upstreamDone, nowNanos);
        }
    }

    /**
     * A final pass is spread over the visitor's period like any pass, so a finite pipeline may wait that long after
     * the streams it follows completed: says so in {@code status()} ({@code /key_visitor/<stream>/final_pass}, INFO,
     * while it lasts) and in the log (once per computation and visitor on this runtime), with when the pass ends. A
     * visitor with {@code finite: false} whose followed streams completed holds its computation for good: said the
     * same way.
     */
    private void reportFinalPass(KeyVisitor visitor, KeyVisitorSettings settings, boolean upstreamDone,
            long nowNanos) {
        String path = "/key_visitor/" + visitor.stream() + "/final_pass";
        KeyVisitor.FinalPass finalPass = visitor.finalPass();
        if (finalPass == KeyVisitor.FinalPass.NONE && upstreamDone && !settings.finite()) {
            String message = "Key visitor '" + visitor.stream() + "' has finite: false: the streams it follows "
                    + "completed, but it scans for the pipeline's lifetime and computation '" + computation
                    + "' never completes; set finite: true with FlowRuntime.reconfigureKeyVisitor to request its final "
                    + "pass";
            status.report(computation, partition, path, message, Instant.ofEpochSecond(0, nowNanos), Severity.INFO);
            if (status.firstAnnouncement(computation + path + "/never")) {
                LOG.info("pipeline '{}': {}", pipeline, message);
            }
            return;
        }
        if (finalPass != KeyVisitor.FinalPass.CURRENT && finalPass != KeyVisitor.FinalPass.NEXT) {
            status.clear(computation, partition, path);
            return;
        }
        long period = settings.period().toNanos();
        long end = visitor.passStartNanos() + (finalPass == KeyVisitor.FinalPass.NEXT ? 2 : 1) * period;
        Instant endsAt = Instant.ofEpochSecond(0, end).truncatedTo(ChronoUnit.SECONDS);
        String what = finalPass == KeyVisitor.FinalPass.CURRENT
                ? "is in its final pass, spread over its period (" + human(settings.period()) + ")"
                : "finishes its current pass, then makes a full final pass (full_final_pass), each spread over its "
                        + "period (" + human(settings.period()) + ")";
        String when = end >= nowNanos ? "it ends about " + endsAt
                : "it was due to end by " + endsAt + " and is behind schedule";
        String message = "Key visitor '" + visitor.stream() + "' " + what + ": " + when + "; computation '"
                + computation + "' completes after it (a shorter period, set with FlowRuntime.reconfigureKeyVisitor, "
                + "ends it sooner)";
        status.report(computation, partition, path, message, Instant.ofEpochSecond(0, nowNanos), Severity.INFO);
        if (status.firstAnnouncement(computation + path)) {
            LOG.info("pipeline '{}' waits for key visitor '{}' of computation '{}': the streams it follows completed "
                    + "and it {}: {} (partition {}); the pipeline completes after it", pipeline, visitor.stream(),
                    computation, what, when, partition);
        }
    }

    /** A period as a spec writes it: {@code 90s}, {@code 30m}, {@code 1h}, {@code 1500ms}. */
    static String human(Duration d) {
        long ms = d.toMillis();
        if (ms > 0 && ms % 3_600_000 == 0) {
            return ms / 3_600_000 + "h";
        }
        if (ms > 0 && ms % 60_000 == 0) {
            return ms / 60_000 + "m";
        }
        if (ms % 1000 == 0) {
            return ms / 1000 + "s";
        }
        return ms + "ms";
    }

    /**
     * Whether every key visitor finished its final pass. A visitor with {@code finite: false} has none (reference
     * 000: "there is no final pass and the visitor keeps scanning"), so it holds completion until a reconfiguration
     * sets {@code finite: true} and the final pass that follows ends.
     */
    public boolean allDone() {
        for (KeyVisitor v : visitors) {
            if (!v.completed()) {
                return false;
            }
        }
        return true;
    }

    /** The visitor of a stream, or null if the computation has no such visitor stream. */
    public @Nullable KeyVisitor visitor(String stream) {
        for (int i = 0; i < specs.size(); i++) {
            if (specs.get(i).id().equals(stream)) {
                return visitors.get(i);
            }
        }
        return null;
    }

    /** Removes the meters and the task's diagnostics. */
    public void close() {
        registered.forEach(meters::remove);
        registered.clear();
        if (!visitors.isEmpty()) {
            status.clearTask(computation, partition);
        }
    }
}
