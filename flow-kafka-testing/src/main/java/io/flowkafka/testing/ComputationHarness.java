package io.flowkafka.testing;

import io.flowkafka.api.MessageId;
import io.flowkafka.api.ProcessFunction;
import io.flowkafka.api.Timer;
import io.flowkafka.spec.ComputationSpec;
import io.flowkafka.spec.KeyVisitorStreamSpec;
import io.flowkafka.spec.PipelineSpec;
import io.flowkafka.spec.StateSpec;
import io.flowkafka.spec.TimerStreamSpec;
import io.flowkafka.spi.ComputationCalls;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.specific.SpecificRecord;
import org.apache.kafka.common.serialization.Serde;
import org.jspecify.annotations.Nullable;

/**
 * Runs the process function of one computation of a pipeline spec in memory, call by call: no
 * Kafka, no topology, no threads (Flow's {@code TestComputationHarness}). The quickest way to test
 * a process function's logic; use {@link FlowTestDriver} to test the pipeline around it.
 *
 * <p>The harness takes everything from the spec: the function (supplier or class name), the
 * states and their schemas, the output streams and their schemas, the timer streams, the
 * key-visitor streams, {@code streams_dependency} and the parameters. A test feeds one input at a
 * time, for one key: {@link #message} (the key is computed from the payload by the computation's
 * {@code group_by_schema}, exactly as the runtime computes it), {@link #timer}, {@link #visit};
 * or it fires the due timers with {@link #advanceWatermark}. Each call returns a
 * {@link HarnessResult}: the output messages, the timers added and the state changes of that
 * call. State and pending timers persist between calls and can be inspected
 * ({@link #state}, {@link #pendingTimers()}) or seeded ({@link #putState}); {@link #restart()}
 * carries them over to a new function instance, as a restart of the process does.
 *
 * <p>Example, the wait-click join of the examples module
 * ({@code io.flowkafka.examples.waitclick.WaitClickJoin}: an impression waits 30 minutes of event
 * time for its click, then emits {@code no_click}; the code below is compiled and run as
 * {@code io.flowkafka.examples.waitclick.WaitClickJoinHarnessTest}):
 *
 * <pre>{@code
 * PipelineSpec spec = WaitClickJoin.spec("wcj", "impressions", "clicks", "results", 4, false);
 * try (ComputationHarness join = ComputationHarness.create(spec, "join")) {
 *     join.message("impressions", Map.of("impression_id", "i1", "user", "u1", "ts", 0L), 0L);
 *     HarnessResult click = join.message("clicks", Map.of("impression_id", "i1", "ts", 60_000L), 60_000 * MS);
 *     assertThat(click.outputs("results")).singleElement()
 *             .satisfies(out -> assertThat(out.get("result")).isEqualTo("joined"));
 *
 *     HarnessResult impression = join.message("impressions",
 *             Map.of("impression_id", "i2", "user", "u2", "ts", 0L), 0L);
 *     assertThat(impression.timers()).containsExactly(HarnessTimer.of("timeout", impression.key(), 30 * MIN * MS, 0L));
 *     List<HarnessResult> fired = join.advanceWatermark(30 * MIN * MS + 1);
 *     assertThat(fired).flatMap(r -> r.outputs("results")).extracting(o -> o.get("impression_id"), o -> o.get("result"))
 *             .containsExactly(tuple("i2", "no_click"));
 *     assertThat(join.state("join", impression.key())).isEmpty();
 * }
 * }</pre>
 *
 * <p>Contract, the runtime's rules:
 * <ul>
 *   <li><b>All or nothing.</b> If the function throws (or an output cannot be encoded with its
 *       stream's schema), none of the call's state writes, outputs or timers are applied, and the
 *       call's result {@link HarnessResult#failed() failed} with the exception; reading its
 *       outputs throws an {@link AssertionError} carrying it. Failed results are also kept in
 *       {@link #failures()} (the runtime sends such inputs to the dead-letter topic and goes on).
 *       A failed timer is deleted, as the runtime deletes it. A failure the runtime takes for an outage (a
 *       Kafka {@code RetriableException}, a connect or socket timeout in its causes) is thrown instead, as
 *       the runtime retries such a call rather than dead-lettering its input. {@link Error}s (an
 *       {@code AssertionError} in the function) are rethrown, after dropping the call's
 *       effects.</li>
 *   <li><b>The runtime's own call code</b> (through {@link ComputationCalls}): the function gets
 *       the runtime's {@code RuntimeContext}, message builder, messages and visits, so the checks
 *       and their messages are the runtime's: writing to a stream that is not an output, an
 *       undeclared state or timer stream, a timer in a computation without timer streams, outputs
 *       from {@code onVisit} without the visitor in {@code streams_dependency}, SwiftMap outputs
 *       from {@code onVisit}, the message builder's field checks.</li>
 *   <li><b>Records as the runtime sees them.</b> Input payloads, outputs and state values are
 *       encoded to Avro binary with the runtime's codecs and decoded back (strings arrive as
 *       {@code Utf8}, a later change to the object passed in does not leak into the harness); keys
 *       are the runtime's key records.</li>
 *   <li><b>Timers.</b> A timer fires when its stream's watermark <em>exceeds</em> its trigger
 *       ({@code trigger < watermark}); per timer stream, in trigger order (so per key in trigger
 *       order). With {@code deduplicate_equal_timestamps} (the default), a key has at most one
 *       pending timer per stream and trigger: the one with the smaller event timestamp stays (the
 *       earlier one on a tie). A timer that {@code onTimer} adds for its own trigger is kept.</li>
 *   <li><b>Batch functions</b> get batches of one input, as the runtime calls them today.</li>
 *   <li><b>Deterministic.</b> The clock starts at {@link #DEFAULT_CLOCK_START} and moves only by
 *       {@link #setCurrentTimeNanos} or {@link #advanceTime}; input watermarks are
 *       {@link Long#MIN_VALUE} until {@link #setInputWatermark}. The ids of input messages (and of
 *       timers passed to {@link #timer}) come from a counter, as there are no source offsets;
 *       outputs, timers added by calls and visits get the ids the runtime derives from those (an
 *       output's from its parents and position, a visit's from its key and pass in partition
 *       0).</li>
 * </ul>
 *
 * <p>Limitations:
 * <ol>
 *   <li>one partition: {@code getPartition()} is 0, {@code getPartitionCount()} is 1;</li>
 *   <li>timer watermarks are set by the test ({@link #advanceWatermark}), whatever the timer
 *       stream's {@code time_type}: the harness does not derive them from the input watermarks,
 *       {@code streams_with_delays} or the clock, and it holds no watermark for pending
 *       timers;</li>
 *   <li>among timers of equal trigger in one stream, different keys fire in the order they were
 *       added (the runtime orders them by key hash);</li>
 *   <li>{@link #visit} visits the key it is given, with or without state; key-visitor scheduling
 *       ({@code period}, passes, completion) is not modelled ({@link #visitAll} is one pass over
 *       the keys with state);</li>
 *   <li>nothing downstream: outputs are not routed to sinks or other computations, and a sink or
 *       source connector does not run (a Source computation without a function forwards its input
 *       to its first output, as the runtime does).</li>
 * </ol>
 *
 * <p>Not thread-safe: use an instance from one thread. The caller closes it ({@link #close()}
 * calls the function's {@code close()}).
 *
 * <p>Over 700 lines, most of it the public API's Javadoc: the calls themselves run in the runtime's own code
 * ({@code ComputationCalls}).
 */
public final class ComputationHarness implements AutoCloseable {
    /** The clock's start unless the test sets it: 2026-01-01T00:00:00Z, as {@link FlowTestDriver}'s. */
    public static final Instant DEFAULT_CLOCK_START = FlowTestDriver.DEFAULT_WALL_CLOCK_START;

    /** At most this many timers fire in one {@link #advanceWatermark} call. */
    public static final int MAX_TIMERS_PER_ADVANCE = 1_000_000;

    private final PipelineSpec spec;
    private final ComputationSpec computation;
    private final ComputationCalls calls;
    private final Schema keySchema;
    private final @Nullable ProcessFunction function;
    private final ComputationCalls.Call call;
    /** Committed state: key -> state name -> value bytes. */
    private final Map<GenericRecord, Map<String, byte[]>> states = new LinkedHashMap<>();
    /** The rows of the tables read through joiners and state joiners, by name then key. */
    private final Map<String, Map<GenericRecord, byte[]>> joinedRows = new LinkedHashMap<>();
    /** Pending timers in the order added (ties of equal trigger fire in this order). */
    private final List<HarnessTimer> pending = new ArrayList<>();
    private final Map<String, Long> timerWatermarks = new LinkedHashMap<>();
    private final Map<String, Long> inputWatermarks = new LinkedHashMap<>();
    private final List<HarnessResult> failures = new ArrayList<>();
    private long clockNanos;
    private long sequence;
    private boolean closed;

    private ComputationHarness(PipelineSpec spec, String computationId) {
        Objects.requireNonNull(spec, "spec");
        Objects.requireNonNull(computationId, "computationId");
        if (!spec.computations().containsKey(computationId)) {
            spec.validated(); // an invalid spec reports its errors first: InvalidSpecException lists every one
            throw new IllegalArgumentException("pipeline '" + spec.name() + "' has no computation '" + computationId
                    + "'; its computations are " + spec.computations().keySet()
                    + ": pass one of them to ComputationHarness.create");
        }
        this.calls = ComputationCalls.of(spec, computationId); // validates the spec
        this.spec = spec;
        this.computation = calls.computation();
        this.keySchema = calls.keySchema();
        for (TimerStreamSpec t : computation.timers()) {
            timerWatermarks.put(t.id(), Long.MIN_VALUE);
        }
        for (String in : calls.inputStreamIds()) {
            inputWatermarks.put(in, Long.MIN_VALUE);
        }
        this.clockNanos = DEFAULT_CLOCK_START.getEpochSecond() * 1_000_000_000L + DEFAULT_CLOCK_START.getNano();
        this.call = calls.newCall(new Host(), 0, 1);
        this.function = calls.newFunction();
        if (function != null) {
            function.open(call.context());
        }
    }

    /**
     * A harness for computation {@code computationId} of {@code spec}; opens the process function
     * (a new instance from the spec's supplier or class).
     *
     * @param spec the pipeline spec; validated first
     * @param computationId the computation to run
     * @return a new harness with no state and no timers, its clock at {@link #DEFAULT_CLOCK_START}; close it after the
     *     test
     * @throws io.flowkafka.spec.InvalidSpecException if the spec is invalid, listing every error
     * @throws IllegalArgumentException if the spec has no such computation, naming those it has
     * @throws IllegalStateException if the function cannot be created
     */
    public static ComputationHarness create(PipelineSpec spec, String computationId) {
        return new ComputationHarness(spec, computationId);
    }

    /**
     * Simulates a restart of the process that runs this computation: closes this harness (the
     * function's {@code close()}) and returns a new harness of the same computation, with a new
     * function instance (opened) and what the runtime keeps across a restart: the committed
     * state of every key, the pending timers, the timer and input watermarks, and the rows seeded into joined
     * tables ({@link #putExternalRow}). The clock and the
     * message-id counter carry on too, so a replay of the same inputs gets the same input ids; set
     * a later clock with {@link #setCurrentTimeNanos} to model the time the restart took.
     * {@link #failures()} of the new harness starts empty. Nothing kept in the old function
     * instance's fields survives: that is what a restart test checks.
     *
     * @return the new harness; the caller closes it (this one is closed)
     * @throws IllegalStateException if this harness is closed, or the new function cannot be created
     */
    public ComputationHarness restart() {
        checkOpen();
        close();
        ComputationHarness next = new ComputationHarness(spec, computation.id());
        states.forEach((k, rows) -> {
            Map<String, byte[]> copied = new LinkedHashMap<>();
            rows.forEach((name, bytes) -> copied.put(name, bytes.clone()));
            next.states.put(copy(k), copied);
        });
        joinedRows.forEach((name, rows) -> { // the joined tables are topics: the restart finds them as they were
            Map<GenericRecord, byte[]> copied = new LinkedHashMap<>();
            rows.forEach((k, bytes) -> copied.put(copy(k), bytes.clone()));
            next.joinedRows.put(name, copied);
        });
        next.pending.addAll(pending); // HarnessTimer is immutable
        next.timerWatermarks.putAll(timerWatermarks);
        next.inputWatermarks.putAll(inputWatermarks);
        next.clockNanos = clockNanos;
        next.sequence = sequence;
        return next;
    }

    // ------------------------------------------------------------------ inputs

    /**
     * Calls {@code onMessage} (or {@code onMessages} with a batch of one) with a message of input
     * stream {@code streamId}, for the key the computation's {@code group_by_schema} computes from
     * the payload.
     *
     * @param streamId an input stream of the computation
     * @param payload a record of the stream's schema
     * @param eventTimestampNanos the message's event timestamp, nanoseconds
     * @return what the call did: outputs, timers, state changes, or its failure
     * @throws IllegalArgumentException if the stream is not an input of the computation or the
     *     payload is not a valid record of its schema
     */
    public HarnessResult message(String streamId, GenericRecord payload, long eventTimestampNanos) {
        checkOpen();
        Objects.requireNonNull(payload, "payload");
        Schema schema = inputSchema(streamId);
        if (!payload.getSchema().equals(schema)) {
            throw new IllegalArgumentException("payload of schema " + payload.getSchema().getFullName()
                    + " is not a record of stream '" + streamId + "' (schema " + schema.getFullName()
                    + "): build it with the stream's schema, or pass a Map of fields");
        }
        GenericRecord decoded = roundTrip(streamId, schema, payload, "the payload of stream '" + streamId + "'");
        GenericRecord key = canonicalKey(calls.keyOf(streamId, decoded), "the key");
        MessageId id = nextId('m');
        long systemTimestamp = clockNanos;
        return run(HarnessResult.InputKind.MESSAGE, streamId, key, id, "message " + id + " of stream '" + streamId + "'",
                () -> call.runMessage(function, id, streamId, copy(key), decoded, eventTimestampNanos, systemTimestamp),
                null);
    }

    /**
     * Like {@link #message(String, GenericRecord, long)} with the payload given as fields: numbers
     * are widened to the field's type ({@code 1} for a {@code long} field), fields left out take
     * their default, or null where the field is nullable.
     *
     * @param streamId an input stream of the computation
     * @param fields the payload's fields by name
     * @param eventTimestampNanos the message's event timestamp, nanoseconds
     * @return what the call did: outputs, timers, state changes, or its failure
     * @throws IllegalArgumentException for an unknown field, or a required field left out
     */
    public HarnessResult message(String streamId, Map<String, ?> fields, long eventTimestampNanos) {
        checkOpen();
        return message(streamId, record(inputSchema(streamId), fields, "stream '" + streamId + "'", true),
                eventTimestampNanos);
    }

    /** The payload {@link #message(String, Map, long)} would send: a record of the stream's schema from fields. */
    GenericRecord payload(String streamId, Map<String, ?> fields) {
        return record(inputSchema(streamId), fields, "stream '" + streamId + "'", true);
    }

    /**
     * Calls {@code onTimer} (or {@code onTimers}) with a timer of {@code timerStreamId} for
     * {@code key}, whether or not such a timer is pending. A pending timer of the same stream, key
     * and trigger (with {@code deduplicate_equal_timestamps}) is deleted, as when the runtime fires
     * it.
     *
     * @param timerStreamId a timer stream of the computation
     * @param key a key of the computation ({@link #keyOf}, {@link #key}, or a result's key)
     * @param triggerTimestampNanos the timer's trigger timestamp, nanoseconds
     * @param eventTimestampNanos the timer's event timestamp, nanoseconds
     * @return what the call did: outputs, timers, state changes, or its failure
     * @throws IllegalArgumentException if the computation has no such timer stream, or the key has
     *     other columns than the computation's {@code group_by_schema}
     */
    public HarnessResult timer(String timerStreamId, GenericRecord key, long triggerTimestampNanos,
            long eventTimestampNanos) {
        checkOpen();
        int index = timerIndex(timerStreamId);
        GenericRecord k = canonicalKey(key, "the timer's key");
        HarnessTimer matching = null;
        if (computation.timers().get(index).deduplicateEqualTimestamps()) {
            matching = pending.stream().filter(t -> t.getStreamId().equals(timerStreamId)
                    && t.getTriggerTimestamp() == triggerTimestampNanos && sameKey(t.getKey(), k)).findFirst().orElse(null);
        }
        HarnessTimer timer = new HarnessTimer(nextId('t'), timerStreamId, copy(k), triggerTimestampNanos,
                eventTimestampNanos, clockNanos);
        return fire(timer, matching);
    }

    /**
     * Calls {@code onVisit} (or {@code onVisits}) with a visit of key-visitor stream
     * {@code visitorStreamId} to {@code key}. Outputs need the visitor stream in the output's
     * {@code streams_dependency}; a SwiftMap computation may not emit from a visit.
     *
     * @param visitorStreamId a key-visitor stream of the computation
     * @param key a key of the computation
     * @param pass the number of the visitor's pass
     * @param eventTimestampNanos the visit's event timestamp, nanoseconds
     * @return what the call did: outputs, timers, state changes, or its failure
     * @throws IllegalArgumentException if the computation has no such key-visitor stream, or the
     *     key has other columns than the computation's {@code group_by_schema}
     */
    public HarnessResult visit(String visitorStreamId, GenericRecord key, long pass, long eventTimestampNanos) {
        checkOpen();
        checkVisitor(visitorStreamId);
        GenericRecord k = canonicalKey(key, "the visited key");
        MessageId id = calls.visitId(visitorStreamId, k, pass, 0);
        return run(HarnessResult.InputKind.VISIT, visitorStreamId, k, id,
                "visit " + id + " (pass " + pass + ") of key-visitor stream '" + visitorStreamId + "'",
                () -> call.runVisit(function, id, visitorStreamId, copy(k), pass, eventTimestampNanos), null);
    }

    /**
     * One pass of key-visitor stream {@code visitorStreamId}: {@link #visit}s every key that the
     * visitor scans, in the order the keys first got state (then the keys only in a joined table, in
     * the order they were seeded), each once. As in the runtime (reference 000's rules): {@code names}
     * given: keys holding one of those states; only {@code external_names} given: keys holding a row of
     * a listed manager or joiner; neither: keys holding any internal state, not a manager's row alone.
     *
     * @param visitorStreamId a key-visitor stream of the computation
     * @param pass the number of the visitor's pass
     * @param eventTimestampNanos the event timestamp of every visit, nanoseconds
     * @return one result per visited key
     */
    public List<HarnessResult> visitAll(String visitorStreamId, long pass, long eventTimestampNanos) {
        checkOpen();
        KeyVisitorStreamSpec v = checkVisitor(visitorStreamId);
        Set<String> names = new LinkedHashSet<>(v.names());
        List<String> joiners = new ArrayList<>();
        for (String name : v.externalNames()) {
            if (computation.externalStateManagers().containsKey(name)) {
                names.add(name); // a manager's rows are state rows under its name
            } else {
                joiners.add(name);
            }
        }
        boolean all = names.isEmpty() && v.externalNames().isEmpty();
        Set<String> managers = computation.externalStateManagers().keySet();
        Set<GenericRecord> keys = new LinkedHashSet<>();
        states.forEach((k, rows) -> {
            if (all ? rows.keySet().stream().anyMatch(n -> !managers.contains(n))
                    : rows.keySet().stream().anyMatch(names::contains)) {
                keys.add(k);
            }
        });
        for (String joiner : joiners) {
            keys.addAll(joinedRows.getOrDefault(joiner, Map.of()).keySet());
        }
        List<HarnessResult> results = new ArrayList<>();
        for (GenericRecord k : keys) {
            results.add(visit(visitorStreamId, k, pass, eventTimestampNanos));
        }
        return results;
    }

    /**
     * Moves the watermark of every timer stream to at least {@code watermarkNanos} and fires the
     * timers that became due ({@code trigger < watermark}), see
     * {@link #advanceWatermark(String, long)}.
     *
     * @param watermarkNanos the new watermark, nanoseconds
     * @return one result per fired timer, in firing order (empty if none was due)
     * @throws IllegalStateException if the computation declares no timer stream
     */
    public List<HarnessResult> advanceWatermark(long watermarkNanos) {
        checkOpen();
        if (computation.timers().isEmpty()) {
            throw new IllegalStateException("computation '" + computation.id() + "' declares no timer stream, so no "
                    + "timer can fire: add one under 'timers' in the spec (a Transform computation)");
        }
        for (TimerStreamSpec t : computation.timers()) {
            timerWatermarks.merge(t.id(), watermarkNanos, Math::max);
        }
        return fireDue();
    }

    /**
     * Moves the watermark of timer stream {@code timerStreamId} to at least {@code watermarkNanos}
     * (watermarks never go back: a smaller value changes nothing) and fires every pending timer
     * whose trigger is below the watermark: per timer stream in spec order, in trigger order, each
     * timer in its own call. Timers that those calls add below the watermark fire too, in the same
     * call of this method.
     *
     * @param timerStreamId a timer stream of the computation
     * @param watermarkNanos the new watermark, nanoseconds
     * @return one result per fired timer, in firing order (empty if none was due)
     * @throws IllegalArgumentException if the computation has no such timer stream
     * @throws IllegalStateException if more than {@link #MAX_TIMERS_PER_ADVANCE} timers fire (a
     *     function that keeps adding due timers)
     */
    public List<HarnessResult> advanceWatermark(String timerStreamId, long watermarkNanos) {
        checkOpen();
        timerIndex(timerStreamId);
        timerWatermarks.merge(timerStreamId, watermarkNanos, Math::max);
        return fireDue();
    }

    /**
     * The watermark of a timer stream; {@link Long#MIN_VALUE} until {@link #advanceWatermark}.
     *
     * @param timerStreamId a timer stream of the computation
     * @return the watermark, nanoseconds
     */
    public long watermark(String timerStreamId) {
        timerIndex(timerStreamId);
        return timerWatermarks.get(timerStreamId);
    }

    private List<HarnessResult> fireDue() {
        List<HarnessResult> results = new ArrayList<>();
        boolean progress = true;
        while (progress) {
            progress = false;
            for (TimerStreamSpec t : computation.timers()) {
                long wm = timerWatermarks.get(t.id());
                while (true) {
                    HarnessTimer next = null;
                    for (HarnessTimer p : pending) {
                        if (p.getStreamId().equals(t.id()) && p.getTriggerTimestamp() < wm
                                && (next == null || p.getTriggerTimestamp() < next.getTriggerTimestamp())) {
                            next = p;
                        }
                    }
                    if (next == null) {
                        break;
                    }
                    if (results.size() >= MAX_TIMERS_PER_ADVANCE) {
                        throw new IllegalStateException("computation '" + computation.id() + "' fired "
                                + MAX_TIMERS_PER_ADVANCE + " timers in one advanceWatermark and more are due: its "
                                + "onTimer keeps adding timers below the watermark (a timer fires when the watermark "
                                + "exceeds its trigger); add timers with a trigger at or above the watermark");
                    }
                    results.add(fire(next, next));
                    progress = true;
                }
            }
        }
        return results;
    }

    private HarnessResult fire(HarnessTimer timer, @Nullable HarnessTimer firedPending) {
        return run(HarnessResult.InputKind.TIMER, timer.getStreamId(), canonicalKey(timer.getKey(), "the timer's key"),
                timer.getMessageId(), "timer " + timer.getMessageId() + " of stream '" + timer.getStreamId()
                        + "' (trigger " + timer.getTriggerTimestamp() + ")",
                () -> call.runTimer(function, timer), firedPending);
    }

    // ------------------------------------------------------------------ the call

    /**
     * Runs one call with all-or-nothing effects: the runtime's call code returns the effects of a
     * call that returned (outputs encoded with their streams' schemas) and none of one that threw;
     * this applies the state writes and timers of the former.
     */
    private HarnessResult run(HarnessResult.InputKind kind, String stream, GenericRecord key, MessageId inputId,
            String what, Supplier<ComputationCalls.Effects> call, @Nullable HarnessTimer firedPending) {
        String input = "computation '" + computation.id() + "': " + what + " for key " + key;
        ComputationCalls.Effects effects;
        try {
            effects = call.get();
        } catch (Exception e) {
            if (ComputationCalls.retriedByTheRuntime(e)) {
                // the runtime fails the task and retries from the last commit: no dead letter, the timer stays
                throw new IllegalStateException(input + " failed with an outage (" + e + "): the runtime retries the "
                        + "call, it sends no dead letter; none of this call's effects were applied (timers fired "
                        + "before it in the same advance stay fired, their results lost with this exception)", e);
            }
            if (firedPending != null) {
                pending.remove(firedPending); // as the runtime's dead letter: the timer does not fire again
            }
            HarnessResult failed = new HarnessResult(computation, kind, input, stream, key, inputId, List.of(), List.of(),
                    List.of(), e);
            failures.add(failed);
            return failed;
        }
        List<HarnessResult.StateChange> changes = commitState(effects.stateWrites());
        if (firedPending != null) {
            pending.remove(firedPending);
        }
        List<HarnessTimer> added = commitTimers(effects.timers());
        List<HarnessResult.Output> outputs = effects.outputs().stream().map(o -> new HarnessResult.Output(
                o.messageId(), o.streamId(), o.payload(), o.eventTimestamp(), o.systemTimestamp(), o.parentIds()))
                .toList();
        return new HarnessResult(computation, kind, input, stream, key, inputId, outputs, added, changes, null);
    }

    private List<HarnessResult.StateChange> commitState(List<ComputationCalls.StateWrite> writes) {
        List<HarnessResult.StateChange> changes = new ArrayList<>();
        for (ComputationCalls.StateWrite w : writes) {
            GenericRecord k = canonicalKey(w.key(), "the state key");
            String name = w.stateName();
            byte[] bytes = w.bytes();
            if (bytes == null) {
                Map<String, byte[]> rows = states.get(k);
                if (rows != null) {
                    rows.remove(name);
                    if (rows.isEmpty()) {
                        states.remove(k);
                    }
                }
            } else {
                states.computeIfAbsent(k, x -> new LinkedHashMap<>()).put(name, bytes);
            }
            changes.add(new HarnessResult.StateChange(name, copy(k), w.value()));
        }
        return changes;
    }

    /**
     * Adds the call's timers (already merged within the call by the runtime's timer store) to the
     * pending ones: with {@code deduplicate_equal_timestamps}, of a pending and an added timer of
     * equal stream, key and trigger the one with the smaller event timestamp stays (the pending one
     * on a tie).
     */
    private List<HarnessTimer> commitTimers(List<Timer> timers) {
        List<HarnessTimer> added = new ArrayList<>();
        for (Timer t : timers) {
            TimerStreamSpec stream = computation.timers().get(timerIndex(t.getStreamId()));
            GenericRecord key = canonicalKey(t.getKey(), "the timer's key");
            HarnessTimer timer = new HarnessTimer(t.getMessageId(), stream.id(), key, t.getTriggerTimestamp(),
                    t.getEventTimestamp(), t.getSystemTimestamp());
            added.add(timer);
            if (stream.deduplicateEqualTimestamps()) {
                HarnessTimer old = pending.stream().filter(p -> p.getStreamId().equals(stream.id())
                        && p.getTriggerTimestamp() == t.getTriggerTimestamp() && sameKey(p.getKey(), key))
                        .findFirst().orElse(null);
                if (old != null) {
                    if (old.getEventTimestamp() <= t.getEventTimestamp()) {
                        continue; // the pending timer has the smaller event timestamp and stays
                    }
                    pending.remove(old);
                }
            }
            pending.add(timer);
        }
        return added;
    }

    // ------------------------------------------------------------------ state

    /**
     * The value of Avro state {@code name} of {@code key}, as the function would read it.
     *
     * @param name the Avro state's name
     * @param key a key of the computation
     * @return the value, or empty when the key has no such state (never set, or cleared)
     * @throws IllegalArgumentException if the computation declares no Avro state {@code name}
     */
    public Optional<GenericRecord> state(String name, GenericRecord key) {
        checkOpen();
        checkAvroState(name, "read it with state(name, key, serde)");
        GenericRecord k = canonicalKey(key, "the state key");
        return call.inspect(k, c -> c.getState(name).get());
    }

    /**
     * The row of external state {@code name} of {@code key}, as the function would read it: a manager's row
     * (written by calls, or seeded), or the row a joiner or state joiner reads (seeded).
     *
     * @param name a manager, joiner or state joiner of the computation
     * @param key a key of the computation
     * @return the row, or empty when absent
     * @throws IllegalArgumentException if the computation declares no external state {@code name}
     */
    public Optional<GenericRecord> externalRow(String name, GenericRecord key) {
        checkOpen();
        GenericRecord k = canonicalKey(key, "the key");
        return call.inspect(k, c -> c.getExternalState(name).get());
    }

    /**
     * Seeds the row of external state {@code name} of {@code key}: a manager's row, committed as if a call had
     * written it; or the row a joiner or state joiner reads from its table.
     *
     * @param name a manager, joiner or state joiner of the computation
     * @param key a key of the computation
     * @param row a record of the table's schema
     * @return this harness
     */
    public ComputationHarness putExternalRow(String name, GenericRecord key, GenericRecord row) {
        checkOpen();
        Objects.requireNonNull(row, "row");
        GenericRecord k = canonicalKey(key, "the key");
        if (computation.externalStateManagers().containsKey(name)) {
            commitState(call.seed(k, c -> c.getExternalState(name).set(row)));
        } else {
            org.apache.avro.Schema schema = call.inspect(k, c -> c.getExternalState(name).newRecord().getSchema());
            joinedRows.computeIfAbsent(name, n -> new LinkedHashMap<>()).put(k,
                    io.flowkafka.spi.PipelineCodecs.encodeRow(schema, row));
        }
        return this;
    }

    /**
     * The value of state {@code name} of {@code key}, stored with a user serde.
     *
     * @param <T> the state's value type
     * @param name the state's name
     * @param key a key of the computation
     * @param serde the serde the function stores the state with
     * @return the value, or empty when the key has no such state
     */
    public <T> Optional<T> state(String name, GenericRecord key, Serde<T> serde) {
        checkOpen();
        GenericRecord k = canonicalKey(key, "the state key");
        return call.inspect(k, c -> c.getState(name, serde).get());
    }

    /**
     * The value of state {@code name} of {@code key} as a generated Avro class.
     *
     * @param <T> the generated class
     * @param name the state's name
     * @param key a key of the computation
     * @param type the generated class of the state's schema
     * @return the value, or empty when the key has no such state
     */
    public <T extends SpecificRecord> Optional<T> state(String name, GenericRecord key, Class<T> type) {
        checkOpen();
        GenericRecord k = canonicalKey(key, "the state key");
        return call.inspect(k, c -> c.getState(name, type).get());
    }

    /**
     * Sets Avro state {@code name} of {@code key} before a call (a test's starting point).
     *
     * @param name the Avro state's name
     * @param key a key of the computation
     * @param value the state's new value, a record of its schema
     * @return this harness
     * @throws IllegalArgumentException if the computation declares no Avro state {@code name}, or
     *     the value is not a valid record of its schema
     */
    public ComputationHarness putState(String name, GenericRecord key, GenericRecord value) {
        checkOpen();
        checkAvroState(name, "read it with a function call");
        Objects.requireNonNull(value, "value");
        GenericRecord k = canonicalKey(key, "the state key");
        commitState(call.seed(k, c -> c.getState(name).set(value)));
        return this;
    }

    /**
     * Refuses a declared state without an Avro schema, with a hint for this harness's methods (an
     * undeclared state is refused by the runtime's accessor, with its message).
     */
    private void checkAvroState(String name, String hint) {
        Objects.requireNonNull(name, "name");
        StateSpec s = computation.states().get(name);
        if (s != null && s.schema() == null) {
            throw new IllegalArgumentException("state '" + name + "' of computation '" + computation.id()
                    + "' has no Avro schema: " + hint);
        }
    }

    /**
     * The keys holding at least one state, in the order they first got one (copies).
     *
     * @return the keys, empty if none
     */
    public List<GenericRecord> keys() {
        return states.keySet().stream().map(ComputationHarness::copy).toList();
    }

    private byte @Nullable [] committed(String name, GenericRecord key) {
        Map<String, byte[]> rows = states.get(key);
        return rows == null ? null : rows.get(name);
    }

    // ------------------------------------------------------------------ timers, watermarks, clock

    /**
     * The pending timers of every key, in firing order: timer streams in spec order, then by trigger.
     *
     * @return the pending timers, empty if none
     */
    public List<HarnessTimer> pendingTimers() {
        List<String> order = computation.timers().stream().map(TimerStreamSpec::id).toList();
        return pending.stream().sorted(Comparator.<HarnessTimer>comparingInt(t -> order.indexOf(t.getStreamId()))
                .thenComparingLong(HarnessTimer::getTriggerTimestamp)).toList();
    }

    /**
     * The pending timers of {@code key}, in firing order.
     *
     * @param key a key of the computation
     * @return the key's pending timers, empty if none
     */
    public List<HarnessTimer> pendingTimers(GenericRecord key) {
        GenericRecord k = canonicalKey(key, "the key");
        return pendingTimers().stream().filter(t -> sameKey(t.getKey(), k)).toList();
    }

    /**
     * Sets what {@code getInputWatermark(streamId)} returns (and so {@code getMinInputWatermark()}).
     * Does not fire timers: use {@link #advanceWatermark}.
     *
     * @param streamId an input or source stream of the computation
     * @param watermarkNanos the watermark, nanoseconds
     * @return this harness
     * @throws IllegalArgumentException if the stream is not an input or source of the computation
     */
    public ComputationHarness setInputWatermark(String streamId, long watermarkNanos) {
        inputSchema(streamId);
        inputWatermarks.put(streamId, watermarkNanos);
        return this;
    }

    /**
     * The harness clock, what {@code currentTimeNanos()} returns and timers and outputs are stamped with.
     *
     * @return the clock, nanoseconds
     */
    public long currentTimeNanos() {
        return clockNanos;
    }

    /**
     * Sets the clock.
     *
     * @param nanos the new clock, nanoseconds; may go back
     * @return this harness
     */
    public ComputationHarness setCurrentTimeNanos(long nanos) {
        this.clockNanos = nanos;
        return this;
    }

    /**
     * Moves the clock forward.
     *
     * @param duration how far to move the clock; a negative one moves it back (ArithmeticException on overflow)
     * @return this harness
     */
    public ComputationHarness advanceTime(Duration duration) {
        this.clockNanos = Math.addExact(clockNanos, duration.toNanos());
        return this;
    }

    // ------------------------------------------------------------------ keys

    /**
     * The key that a payload of input {@code streamId} maps to, computed as the runtime does.
     *
     * @param streamId an input stream of the computation
     * @param payload a record of the stream's schema
     * @return the key record
     * @throws IllegalArgumentException if the stream is not an input of the computation
     */
    public GenericRecord keyOf(String streamId, GenericRecord payload) {
        inputSchema(streamId);
        return canonicalKey(calls.keyOf(streamId, payload), "the key");
    }

    /**
     * The key that a payload of input {@code streamId} with these fields maps to; only the fields
     * the {@code group_by_schema} reads are needed.
     *
     * @param streamId an input stream of the computation
     * @param fields payload fields by name
     * @return the key record
     */
    public GenericRecord keyOf(String streamId, Map<String, ?> fields) {
        return keyOf(streamId, record(inputSchema(streamId), fields, "stream '" + streamId + "'", false));
    }

    /**
     * A key of the computation from its {@code group_by_schema} columns, e.g.
     * {@code key(Map.of("user_hash", 7L, "user", "alice"))}; nullable columns may be left out.
     *
     * @param columns the key's columns by name
     * @return the key record
     * @throws IllegalArgumentException for an unknown column, or a missing required one
     */
    public GenericRecord key(Map<String, ?> columns) {
        return record(keySchema, columns, "the key of computation '" + computation.id() + "'", true);
    }

    // ------------------------------------------------------------------ the rest

    /**
     * The spec the harness runs.
     *
     * @return the spec
     */
    public PipelineSpec spec() {
        return spec;
    }

    /**
     * The computation the harness runs.
     *
     * @return the computation's spec
     */
    public ComputationSpec computation() {
        return computation;
    }

    /**
     * The results of every failed call so far, oldest first (the runtime's dead letters).
     *
     * @return the failed calls' results, empty if none
     */
    public List<HarnessResult> failures() {
        return List.copyOf(failures);
    }

    /** Calls the function's {@code close()}. Idempotent; the harness is unusable afterwards. */
    @Override
    public void close() {
        if (!closed) {
            closed = true;
            if (function != null) {
                function.close();
            }
        }
    }

    // ------------------------------------------------------------------ helpers

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("the harness of computation '" + computation.id() + "' is closed: "
                    + "after restart() use the harness it returned (harness = harness.restart()), else create a new "
                    + "one");
        }
    }

    private Schema inputSchema(String streamId) {
        Objects.requireNonNull(streamId, "streamId");
        if (!calls.inputStreamIds().contains(streamId)) {
            throw new IllegalArgumentException("stream '" + streamId + "' is not an input of computation '"
                    + computation.id() + "'; its inputs are " + calls.inputStreamIds()
                    + " (add it to input_stream_ids, or test the computation that reads it)");
        }
        return calls.inputSchema(streamId);
    }

    private int timerIndex(String timerStreamId) {
        Objects.requireNonNull(timerStreamId, "timerStreamId");
        List<TimerStreamSpec> timers = computation.timers();
        for (int i = 0; i < timers.size(); i++) {
            if (timers.get(i).id().equals(timerStreamId)) {
                return i;
            }
        }
        if (timers.isEmpty()) {
            throw new IllegalArgumentException("computation '" + computation.id() + "' has no timer stream '"
                    + timerStreamId + "': it declares none (add one under 'timers' in the spec, a Transform computation)");
        }
        throw new IllegalArgumentException("computation '" + computation.id() + "' has no timer stream '" + timerStreamId
                + "'; its timer streams are " + timers.stream().map(TimerStreamSpec::id).toList());
    }

    private KeyVisitorStreamSpec checkVisitor(String visitorStreamId) {
        Objects.requireNonNull(visitorStreamId, "visitorStreamId");
        KeyVisitorStreamSpec v = computation.keyVisitorStreams().get(visitorStreamId);
        if (v == null) {
            throw new IllegalArgumentException("computation '" + computation.id() + "' has no key-visitor stream '"
                    + visitorStreamId + "'; its key-visitor streams are " + computation.keyVisitorStreams().keySet()
                    + " (add it under 'key_visitor_streams' in the spec)");
        }
        return v;
    }

    private MessageId nextId(char kind) {
        return MessageId.of(ByteBuffer.allocate(9).put((byte) kind).putLong(++sequence).array());
    }

    /**
     * A key as the runtime hands it to functions: a record of the key schema, strings as
     * {@code String}. Keys with other columns are refused.
     */
    GenericRecord canonicalKey(GenericRecord key, String what) {
        Objects.requireNonNull(key, what);
        Set<String> given = new LinkedHashSet<>();
        key.getSchema().getFields().forEach(f -> given.add(f.name()));
        Set<String> expected = new LinkedHashSet<>();
        keySchema.getFields().forEach(f -> expected.add(f.name()));
        if (!given.equals(expected)) {
            throw new IllegalArgumentException(what + " " + key + " has columns " + given + " but keys of computation '"
                    + computation.id() + "' have " + expected + " (its group_by_schema): build keys with "
                    + "harness.keyOf(stream, payload), harness.key(columns), or take a result's key()");
        }
        GenericData.Record out = new GenericData.Record(keySchema);
        for (Schema.Field f : keySchema.getFields()) {
            out.put(f.pos(), coerce(key.get(f.name()), f.schema()));
        }
        return out;
    }

    /** Whether two keys have the same columns and values ({@code Utf8} and {@code String} alike). */
    static boolean sameKey(GenericRecord a, GenericRecord b) {
        List<Schema.Field> fa = a.getSchema().getFields();
        List<Schema.Field> fb = b.getSchema().getFields();
        if (fa.size() != fb.size()) {
            return false;
        }
        for (Schema.Field f : fa) {
            if (b.getSchema().getField(f.name()) == null
                    || !Objects.equals(loose(a.get(f.name())), loose(b.get(f.name())))) {
                return false;
            }
        }
        return true;
    }

    private static @Nullable Object loose(@Nullable Object v) {
        if (v instanceof CharSequence s) {
            return s.toString();
        }
        if (v instanceof Integer || v instanceof Short || v instanceof Byte) {
            return ((Number) v).longValue();
        }
        return v;
    }

    private static GenericRecord copy(GenericRecord r) {
        return GenericData.get().deepCopy(r.getSchema(), r);
    }

    /** A payload as the runtime delivers it: encoded with the stream's schema and decoded. */
    private GenericRecord roundTrip(String streamId, Schema schema, GenericRecord record, String what) {
        try {
            return calls.asRead(streamId, record);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(what + " is not a valid record of schema " + schema.getFullName() + ": "
                    + e.getMessage() + " (check the types of its fields)", e);
        }
    }

    /** A record of {@code schema} from fields; numbers widened to the field type. */
    private static GenericRecord record(Schema schema, Map<String, ?> fields, String what, boolean strict) {
        Objects.requireNonNull(fields, "fields");
        GenericData.Record r = new GenericData.Record(schema);
        for (Map.Entry<String, ?> e : fields.entrySet()) {
            Schema.Field f = schema.getField(e.getKey());
            if (f == null) {
                throw new IllegalArgumentException(what + " has no field '" + e.getKey() + "'; its fields are "
                        + schema.getFields().stream().map(Schema.Field::name).toList());
            }
            r.put(f.pos(), coerce(e.getValue(), f.schema()));
        }
        for (Schema.Field f : schema.getFields()) {
            if (r.get(f.pos()) == null && !fields.containsKey(f.name())) {
                if (f.hasDefaultValue()) {
                    r.put(f.pos(), GenericData.get().deepCopy(f.schema(), GenericData.get().getDefaultValue(f)));
                } else if (strict && !isNullable(f.schema())) {
                    throw new IllegalArgumentException(what + ": field '" + f.name()
                            + "' was not given and has no default; add it to the map");
                }
            }
        }
        return r;
    }

    private static boolean isNullable(Schema s) {
        return s.getType() == Schema.Type.NULL || (s.getType() == Schema.Type.UNION
                && s.getTypes().stream().anyMatch(t -> t.getType() == Schema.Type.NULL));
    }

    /** Widens numbers to the (non-null branch of the) field type; strings of a String-typed field become {@code String}. */
    static @Nullable Object coerce(@Nullable Object v, Schema schema) {
        if (v == null) {
            return null;
        }
        Schema s = schema;
        if (s.getType() == Schema.Type.UNION) {
            Schema nonNull = null;
            for (Schema b : s.getTypes()) {
                if (b.getType() != Schema.Type.NULL) {
                    nonNull = nonNull == null ? b : null;
                    if (nonNull == null) {
                        return v; // a union of several types: leave the value as it is
                    }
                }
            }
            if (nonNull == null) {
                return v;
            }
            s = nonNull;
        }
        if (v instanceof Number n && !(v instanceof Double || v instanceof Float)) {
            return switch (s.getType()) {
                case LONG -> n.longValue();
                case INT -> n.longValue() == n.intValue() ? n.intValue() : v; // out of range: refused as it is
                case DOUBLE -> n.doubleValue();
                case FLOAT -> n.floatValue();
                default -> v;
            };
        }
        if (v instanceof Float f && s.getType() == Schema.Type.DOUBLE) {
            return f.doubleValue();
        }
        if (v instanceof CharSequence cs && s.getType() == Schema.Type.STRING
                && "String".equals(s.getProp(GenericData.STRING_PROP))) {
            return cs.toString();
        }
        return v;
    }

    /** What the runtime's call context reads from the harness: committed state, watermarks, clock. */
    private final class Host implements ComputationCalls.Host {
        @Override
        public byte @Nullable [] committedState(GenericRecord key, String stateName) {
            return committed(stateName, canonicalKey(key, "the state key"));
        }

        @Override
        public byte @Nullable [] externalRow(String name, GenericRecord key) {
            Map<GenericRecord, byte[]> rows = joinedRows.get(name);
            return rows == null ? null : rows.get(canonicalKey(key, "the key"));
        }

        @Override
        public long inputWatermark(String stream) {
            return inputWatermarks.getOrDefault(stream, Long.MIN_VALUE);
        }

        @Override
        public long minInputWatermark() {
            long min = Long.MAX_VALUE;
            for (long wm : inputWatermarks.values()) {
                min = Math.min(min, wm);
            }
            return min == Long.MAX_VALUE ? Long.MIN_VALUE : min;
        }

        @Override
        public long currentTimeNanos() {
            return clockNanos;
        }
    }
}
