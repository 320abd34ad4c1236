package io.flowkafka.testing;

import io.flowkafka.spec.ComputationKind;
import io.flowkafka.spec.ComputationSpec;
import io.flowkafka.spec.PipelineSpec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericRecord;
import org.jspecify.annotations.Nullable;

/**
 * Checks that a SwiftMap computation is deterministic, as Flow demands (a SwiftMap's outputs are
 * not materialized: after a failure Flow recomputes them from the same inputs and expects the same
 * messages) but never checks.
 *
 * <p>The check feeds the same input messages to the computation's process function in three runs
 * of a {@link ComputationHarness}, each with a new function instance and empty state:
 * <ol>
 *   <li>the <b>first run</b>, over all inputs: the reference;</li>
 *   <li>the <b>second run</b>, over the same inputs, with the clock {@link #clockShift} later;</li>
 *   <li>the <b>run with a restart</b>: the first {@link #restartAfter} inputs, then
 *       {@link ComputationHarness#restart()} (a new function instance that keeps the state, the
 *       clock moved {@link #clockShift} on), then the rest.</li>
 * </ol>
 * and compares, input by input and in order, each call's output messages with the first run's:
 * their number, stream, payload (field by field), event timestamp, parents and message id, and
 * whether the call threw. Not counts: an output of the same stream with another payload, or the
 * same outputs in another order, is a difference. The {@link Report} names the first difference
 * (the second run is compared first): the run, the input (index, stream, payload, key), the
 * output position and what differed.
 *
 * <pre>{@code
 * DeterminismCheck.of(spec, "enrich")
 *         .message("clicks", Map.of("user", "alice", "url", "/a"), 1_000L)
 *         .message("clicks", Map.of("user", "bob", "url", "/b"), 2_000L)
 *         .assertDeterministic(); // AssertionError describing the first difference
 * }</pre>
 *
 * <p>What it catches: iteration over hash-ordered collections of per-run objects, random numbers,
 * UUIDs, reading the clock ({@code currentTimeNanos()} or the system clock) into an output, and
 * fields of the function instance that outlive a call (counters, caches, start times) where they
 * reach an output; the restart run catches those that only a restart resets. It is a test, not a
 * proof: a function that is non-deterministic only for inputs the test does not feed passes.
 *
 * <p>Limits:
 * <ul>
 *   <li>only messages are fed (a SwiftMap has no timers and may not emit from a key visit);</li>
 *   <li>outputs are compared, not state changes: state that differs shows when it reaches an
 *       output;</li>
 *   <li>message ids are derived as the runtime derives them, from the parents and the output's
 *       position, where the input ids are the harness's (numbered in input order, carried across
 *       the restart, so the same in every run); they differ only where the parents or the
 *       positions do, which the check reports first;</li>
 *   <li>failures are compared by whether the call threw and the exception's class, not its
 *       message; an {@link Error} thrown by the function stops the check;</li>
 *   <li>input watermarks stay {@link Long#MIN_VALUE}, as in a new harness.</li>
 * </ul>
 *
 * <p>Not thread-safe. A check can {@link #run} several times (each run creates its harnesses and
 * closes them).
 */
public final class DeterminismCheck {
    /** The default {@link #clockShift}: one hour. */
    public static final Duration DEFAULT_CLOCK_SHIFT = Duration.ofHours(1);

    /** A run compared with the first run. */
    public enum Run {
        /** A fresh harness over the same inputs. */
        SECOND("the second run (a new function instance over the same inputs)"),
        /** A harness restarted part-way through, keeping its state. */
        AFTER_RESTART("the run with a restart (a new function instance, keeping the state)");

        private final String description;

        Run(String description) {
            this.description = description;
        }

        /**
         * How reports name the run.
         *
         * @return the run's description for reports
         */
        public String description() {
            return description;
        }
    }

    /** What differed in an output message, or for the whole call. */
    public enum What {
        /** The first run had an output at this position, this run none. */
        MISSING_OUTPUT,
        /** This run had an output at this position, the first run none. */
        EXTRA_OUTPUT,
        /** The output went to another stream. */
        STREAM,
        /** A payload field ({@link Difference#field()}) has another value. */
        PAYLOAD_FIELD,
        /** The output's event timestamp. */
        EVENT_TIMESTAMP,
        /** The output's parent ids. */
        PARENTS,
        /** The output's message id. */
        MESSAGE_ID,
        /** One call threw and the other did not, or they threw different exception classes. */
        FAILURE
    }

    /**
     * An input message of the check.
     *
     * @param index its position among the inputs, from 0
     * @param streamId the input stream
     * @param payload the payload, a record of the stream's schema
     * @param eventTimestamp nanoseconds
     */
    public record Input(int index, String streamId, GenericRecord payload, long eventTimestamp) {
    }

    /**
     * The first difference between a run and the first run.
     *
     * @param run the run that differs from the first
     * @param input the input whose call differs
     * @param key the input's key, as the computation's {@code group_by_schema} computes it
     * @param outputPosition the position of the output among the call's outputs, from 0; -1 for
     *     {@link What#FAILURE}
     * @param what what differs
     * @param field the payload field for {@link What#PAYLOAD_FIELD}, else null
     * @param expected the first run's value (the output, field value, timestamp, parents, id or
     *     failure; {@code Utf8} strings as {@code String}); null where the first run had none
     * @param actual this run's value, likewise
     */
    public record Difference(Run run, Input input, GenericRecord key, int outputPosition, What what,
            @Nullable String field, @Nullable Object expected, @Nullable Object actual) {
        /**
         * A sentence for a test failure: the run, the input, the output and both values.
         *
         * @return the description
         */
        public String describe() {
            String where = "input #" + input.index() + " (stream '" + input.streamId() + "', key " + key + ", payload "
                    + input.payload() + ", event timestamp " + input.eventTimestamp() + ")";
            String detail = switch (what) {
                case MISSING_OUTPUT -> "output #" + outputPosition + " is missing; the first run emitted " + expected;
                case EXTRA_OUTPUT -> "output #" + outputPosition + " is extra; the first run emitted no such output, "
                        + "this run emitted " + actual;
                case STREAM -> "output #" + outputPosition + " went to stream '" + actual + "' instead of '"
                        + expected + "'";
                case PAYLOAD_FIELD -> "output #" + outputPosition + " field '" + field + "' is " + quote(actual)
                        + " instead of " + quote(expected);
                case EVENT_TIMESTAMP -> "output #" + outputPosition + " has event timestamp " + actual + " instead of "
                        + expected;
                case PARENTS -> "output #" + outputPosition + " has parents " + actual + " instead of " + expected;
                case MESSAGE_ID -> "output #" + outputPosition + " has message id " + actual + " instead of " + expected;
                case FAILURE -> "the call " + actual + "; in the first run it " + expected;
            };
            return run.description() + " differs from the first run at " + where + ": " + detail;
        }

        private static String quote(@Nullable Object v) {
            return v instanceof String s ? "\"" + s + "\"" : String.valueOf(v);
        }
    }

    /** The outcome of {@link #run()}. Immutable. */
    public static final class Report {
        private final String computationId;
        private final int inputs;
        private final int restartAfter;
        private final @Nullable Difference difference;

        Report(String computationId, int inputs, int restartAfter, @Nullable Difference difference) {
            this.computationId = computationId;
            this.inputs = inputs;
            this.restartAfter = restartAfter;
            this.difference = difference;
        }

        /**
         * Whether every run gave the first run's outputs for every input.
         *
         * @return true if no run differed from the first
         */
        public boolean isDeterministic() {
            return difference == null;
        }

        /**
         * The first difference: the second run's if it has one, else the run with a restart's.
         *
         * @return the first difference, or empty if the computation was deterministic
         */
        public Optional<Difference> firstDifference() {
            return Optional.ofNullable(difference);
        }

        /**
         * How many inputs each run processed.
         *
         * @return the number of inputs
         */
        public int inputCount() {
            return inputs;
        }

        /**
         * How many inputs the run with a restart processed before the restart.
         *
         * @return the number of inputs before the restart
         */
        public int restartAfter() {
            return restartAfter;
        }

        /**
         * This report, if the computation was deterministic.
         *
         * @return this report
         * @throws AssertionError describing the first difference
         */
        public Report assertDeterministic() {
            if (difference != null) {
                throw new AssertionError(toString());
            }
            return this;
        }

        @Override
        public String toString() {
            if (difference == null) {
                return "computation '" + computationId + "' was deterministic over " + inputs
                        + " inputs (3 runs, the third restarted after " + restartAfter + " inputs)";
            }
            return "computation '" + computationId + "' is not deterministic: " + difference.describe()
                    + (difference.run() == Run.AFTER_RESTART ? " (restart after " + restartAfter + " inputs)" : "");
        }
    }

    /** An input as given: a record, or fields turned into one when the check runs. */
    private record Given(String streamId, @Nullable GenericRecord record, @Nullable Map<String, ?> fields, long ets) {
    }

    private final PipelineSpec spec;
    private final String computationId;
    private final List<Given> inputs = new ArrayList<>();
    private int restartAfter = -1;
    private Duration clockShift = DEFAULT_CLOCK_SHIFT;

    private DeterminismCheck(PipelineSpec spec, String computationId) {
        this.spec = spec;
        this.computationId = computationId;
    }

    /**
     * A check of SwiftMap computation {@code computationId} of {@code spec}.
     *
     * @param spec the pipeline spec
     * @param computationId a SwiftMap computation of the spec
     * @return a new check with no inputs
     * @throws IllegalArgumentException if the spec has no such computation, or it is not a
     *     SwiftMap computation (Flow demands determinism only of those; use {@link #ofAnyKind})
     */
    public static DeterminismCheck of(PipelineSpec spec, String computationId) {
        ComputationSpec c = computation(spec, computationId);
        if (c.kind() != ComputationKind.SWIFT_MAP) {
            throw new IllegalArgumentException("computation '" + computationId + "' is a " + c.kind().shortName()
                    + " computation, but Flow demands determinism only of SwiftMap computations (their outputs are "
                    + "recomputed after a failure, not materialized): set its kind to SwiftMap, or call "
                    + "DeterminismCheck.ofAnyKind(spec, \"" + computationId + "\") to check it anyway");
        }
        return new DeterminismCheck(spec, computationId);
    }

    /**
     * A check of computation {@code computationId} of any kind: stricter than Flow for a Transform
     * (whose outputs are materialized, so a replay reads them back). Only messages are fed, so
     * timers the function adds never fire.
     *
     * @param spec the pipeline spec
     * @param computationId a computation of the spec
     * @return a new check with no inputs
     * @throws IllegalArgumentException if the spec has no such computation
     */
    public static DeterminismCheck ofAnyKind(PipelineSpec spec, String computationId) {
        computation(spec, computationId);
        return new DeterminismCheck(spec, computationId);
    }

    private static ComputationSpec computation(PipelineSpec spec, String computationId) {
        Objects.requireNonNull(spec, "spec");
        Objects.requireNonNull(computationId, "computationId");
        ComputationSpec c = spec.computations().get(computationId);
        if (c == null) {
            throw new IllegalArgumentException("pipeline '" + spec.name() + "' has no computation '" + computationId
                    + "'; its computations are " + spec.computations().keySet());
        }
        return c;
    }

    /**
     * Adds an input message, as {@link ComputationHarness#message(String, Map, long)}: numbers are
     * widened to the field's type, fields left out take their default (checked when the check
     * runs).
     *
     * @param streamId an input stream of the computation
     * @param fields the payload's fields by name
     * @param eventTimestampNanos the message's event timestamp, nanoseconds
     * @return this check
     */
    public DeterminismCheck message(String streamId, Map<String, ?> fields, long eventTimestampNanos) {
        inputs.add(new Given(Objects.requireNonNull(streamId, "streamId"), null,
                Collections.unmodifiableMap(new LinkedHashMap<>(Objects.requireNonNull(fields, "fields"))),
                eventTimestampNanos));
        return this;
    }

    /**
     * Adds an input message with a record of the stream's schema, as {@link ComputationHarness#message}.
     *
     * @param streamId an input stream of the computation
     * @param payload a record of the stream's schema
     * @param eventTimestampNanos the message's event timestamp, nanoseconds
     * @return this check
     */
    public DeterminismCheck message(String streamId, GenericRecord payload, long eventTimestampNanos) {
        inputs.add(new Given(Objects.requireNonNull(streamId, "streamId"), Objects.requireNonNull(payload, "payload"),
                null, eventTimestampNanos));
        return this;
    }

    /**
     * How many inputs the run with a restart processes before restarting; by default half the
     * inputs, rounded down.
     *
     * @param inputCount the number of inputs before the restart
     * @return this check
     * @throws IllegalArgumentException if negative
     */
    public DeterminismCheck restartAfter(int inputCount) {
        if (inputCount < 0) {
            throw new IllegalArgumentException("restartAfter must be 0 or more, not " + inputCount);
        }
        this.restartAfter = inputCount;
        return this;
    }

    /**
     * How much later the clock ({@code currentTimeNanos()}) is in the second run, and after the
     * restart, than in the first run (which starts at {@link ComputationHarness#DEFAULT_CLOCK_START});
     * {@link Duration#ZERO} keeps one clock for all runs. Default {@link #DEFAULT_CLOCK_SHIFT}.
     *
     * @param shift how much later the later runs' clock is
     * @return this check
     */
    public DeterminismCheck clockShift(Duration shift) {
        this.clockShift = Objects.requireNonNull(shift, "shift");
        return this;
    }

    /**
     * Runs the three runs and compares them.
     *
     * @return the report of the three runs
     * @throws IllegalStateException if no input was added, or {@link #restartAfter} exceeds the
     *     number of inputs
     * @throws IllegalArgumentException if an input is not a valid message of an input stream of
     *     the computation (or the spec is invalid: {@code InvalidSpecException})
     */
    public Report run() {
        if (inputs.isEmpty()) {
            throw new IllegalStateException("the determinism check of computation '" + computationId
                    + "' has no inputs: add messages with message(stream, fields, eventTimestamp)");
        }
        int restart = restartAfter < 0 ? inputs.size() / 2 : restartAfter;
        if (restart > inputs.size()) {
            throw new IllegalStateException("restartAfter(" + restart + ") exceeds the " + inputs.size() + " inputs");
        }
        long start = ComputationHarness.DEFAULT_CLOCK_START.getEpochSecond() * 1_000_000_000L
                + ComputationHarness.DEFAULT_CLOCK_START.getNano();
        long later = Math.addExact(start, clockShift.toNanos());
        List<Input> resolved = new ArrayList<>();
        List<HarnessResult> first = run(start, -1, start, resolved);
        List<HarnessResult> second = run(later, -1, later, null);
        List<HarnessResult> restarted = run(start, restart, later, null);
        Difference d = compare(Run.SECOND, resolved, first, second);
        if (d == null) {
            d = compare(Run.AFTER_RESTART, resolved, first, restarted);
        }
        return new Report(computationId, inputs.size(), restart, d);
    }

    /**
     * Runs the check and asserts that it found no difference.
     *
     * @return the report, when it found no difference
     * @throws AssertionError describing the first difference
     */
    public Report assertDeterministic() {
        return run().assertDeterministic();
    }

    /** One run: a new harness at {@code clock}; restarted with the clock at {@code clockAfter} after {@code restartAfter} inputs (-1: never). */
    private List<HarnessResult> run(long clock, int restartAfter, long clockAfter, @Nullable List<Input> resolved) {
        List<HarnessResult> results = new ArrayList<>(inputs.size());
        ComputationHarness harness = ComputationHarness.create(spec, computationId);
        try {
            harness.setCurrentTimeNanos(clock);
            for (int i = 0; i < inputs.size(); i++) {
                if (i == restartAfter) {
                    harness = harness.restart();
                    harness.setCurrentTimeNanos(clockAfter);
                }
                Given g = inputs.get(i);
                GenericRecord payload = g.record() != null ? g.record() : harness.payload(g.streamId(), Objects.requireNonNull(g.fields()));
                if (resolved != null) {
                    resolved.add(new Input(i, g.streamId(), payload, g.ets()));
                }
                results.add(harness.message(g.streamId(), payload, g.ets()));
            }
        } finally {
            harness.close();
        }
        return results;
    }

    private static @Nullable Difference compare(Run run, List<Input> inputs, List<HarnessResult> expected,
            List<HarnessResult> actual) {
        for (int i = 0; i < expected.size(); i++) {
            Difference d = compare(run, inputs.get(i), expected.get(i), actual.get(i));
            if (d != null) {
                return d;
            }
        }
        return null;
    }

    private static @Nullable Difference compare(Run run, Input input, HarnessResult e, HarnessResult a) {
        GenericRecord key = e.key();
        if (e.failed() || a.failed()) {
            if (!sameFailureClass(e, a)) {
                return new Difference(run, input, key, -1, What.FAILURE, null, failure(e), failure(a));
            }
            return null;
        }
        List<HarnessResult.Output> eo = e.outputs();
        List<HarnessResult.Output> ao = a.outputs();
        for (int p = 0; p < Math.max(eo.size(), ao.size()); p++) {
            if (p >= ao.size()) {
                return new Difference(run, input, key, p, What.MISSING_OUTPUT, null, describe(eo.get(p)), null);
            }
            if (p >= eo.size()) {
                return new Difference(run, input, key, p, What.EXTRA_OUTPUT, null, null, describe(ao.get(p)));
            }
            HarnessResult.Output x = eo.get(p);
            HarnessResult.Output y = ao.get(p);
            if (!x.streamId().equals(y.streamId())) {
                return new Difference(run, input, key, p, What.STREAM, null, x.streamId(), y.streamId());
            }
            for (Schema.Field f : x.payload().getSchema().getFields()) {
                Object xv = x.get(f.name());
                Object yv = y.get(f.name());
                if (!Objects.equals(xv, yv)) {
                    return new Difference(run, input, key, p, What.PAYLOAD_FIELD, f.name(), xv, yv);
                }
            }
            if (x.eventTimestamp() != y.eventTimestamp()) {
                return new Difference(run, input, key, p, What.EVENT_TIMESTAMP, null, x.eventTimestamp(),
                        y.eventTimestamp());
            }
            if (!x.parentIds().equals(y.parentIds())) {
                return new Difference(run, input, key, p, What.PARENTS, null, x.parentIds(), y.parentIds());
            }
            if (!x.messageId().equals(y.messageId())) {
                return new Difference(run, input, key, p, What.MESSAGE_ID, null, x.messageId(), y.messageId());
            }
        }
        return null;
    }

    private static String describe(HarnessResult.Output o) {
        return "an output to '" + o.streamId() + "' with payload " + o.payload();
    }

    private static String failure(HarnessResult r) {
        return r.failure().map(x -> "threw " + x.getClass().getName()
                + (x.getMessage() == null ? "" : ": " + x.getMessage())).orElse("succeeded");
    }

    private static boolean sameFailureClass(HarnessResult e, HarnessResult a) {
        return e.failure().map(Object::getClass).equals(a.failure().map(Object::getClass));
    }
}
