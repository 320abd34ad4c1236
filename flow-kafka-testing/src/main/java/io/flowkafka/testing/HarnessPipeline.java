package io.flowkafka.testing;

import io.flowkafka.runtime.FlowConfig;
import io.flowkafka.runtime.FlowRuntime;
import io.flowkafka.spec.ComputationSpec;
import io.flowkafka.spec.PipelineSpec;
import io.flowkafka.spec.TimeType;
import io.flowkafka.spec.TimerStreamSpec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import org.apache.avro.generic.GenericRecord;
import org.apache.kafka.streams.StreamsConfig;

/**
 * {@link FlowTestLevel#HARNESS}: one computation on {@link ComputationHarness}, with the runtime's
 * derivation of timer watermarks from input watermarks added on top (the harness itself leaves
 * timer watermarks to the test).
 *
 * <p>Model: per internal input stream, an event watermark (MIN until advanced, MAX once
 * completed). An {@code event_time} timer stream's watermark is the minimum over the streams it
 * waits on ({@code streams} and {@code streams_with_delays}, else every input) of the stream's
 * watermark minus its delay, as {@code ComputationProcessor} computes it; {@code system_time}
 * takes the harness clock at the last step once every stream it waits on has a watermark (MAX
 * once all completed); {@code real_time} is left to the harness. After each change the harness
 * fires what became due. Single-threaded, like the harness.
 */
final class HarnessPipeline implements PipelineUnderTest {
    private final PipelineSpec spec;
    private final ComputationSpec computation;
    private final ComputationHarness harness;
    private final boolean follow;
    private final Map<String, Long> watermarks = new LinkedHashMap<>();
    private final Map<String, Long> explicit = new HashMap<>();
    private final Set<String> completed = new TreeSet<>();
    private final Map<String, List<GenericRecord>> outputs = new HashMap<>();
    private boolean closed;
    /** Whether a failed call becomes a dead letter ({@code flow.dead.letter.enabled}); else it fails the task. */
    private final boolean deadLetters;

    HarnessPipeline(PipelineSpec spec, String computationId, Properties props) {
        this.follow = DriverPipeline.follows(props);
        checkAsTheRuntimeDoes(spec, props);
        this.deadLetters = !"false".equalsIgnoreCase(
                String.valueOf(props.getOrDefault(FlowConfig.DEAD_LETTER_ENABLED_CONFIG, "true")).trim());
        this.spec = spec;
        this.harness = ComputationHarness.create(spec, computationId);
        this.computation = harness.computation();
        for (String in : computation.inputStreamIds()) {
            watermarks.put(in, Long.MIN_VALUE);
        }
    }

    /**
     * The properties and spec as {@code FlowRuntime.create} takes them (an unknown {@code flow.*} key, a processing
     * guarantee other than {@code exactly_once_v2}, spec warnings with {@code flow.spec.warnings=fail}, a
     * {@code value_serde} that does not load): what the runtime refuses, this level refuses too.
     */
    private static void checkAsTheRuntimeDoes(PipelineSpec spec, Properties props) {
        Properties p = new Properties();
        p.putAll(props);
        p.remove(FlowTestDriver.PIPE_WATERMARKS_CONFIG);
        p.remove(FlowTestDriver.WALL_CLOCK_START_CONFIG);
        p.remove(FlowTestDriver.WATERMARK_SENDS_CONFIG);
        p.put(FlowConfig.TOPOLOGY_TEST_DRIVER_CONFIG, "true");
        p.putIfAbsent(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "flow-harness:9092");
        FlowRuntime.create(spec, p).close();
    }

    @Override
    public FlowTestLevel level() {
        return FlowTestLevel.HARNESS;
    }

    @Override
    public PipelineSpec spec() {
        return spec;
    }

    @Override
    public String computationId() {
        return computation.id();
    }

    @Override
    public void pipe(String streamId, Map<String, ?> fields, long eventTimestampNanos) {
        checkInput(streamId);
        if (completed.contains(streamId)) {
            throw new IllegalStateException("stream '" + streamId + "' was completed with completeStream: its writer "
                    + "sends no more messages, so none can be piped into it");
        }
        collect(harness.message(streamId, harness.payload(streamId, fields), eventTimestampNanos));
        if (follow && eventTimestampNanos > watermarks.get(streamId)) {
            move(streamId, eventTimestampNanos);
        }
    }

    @Override
    public void advanceWatermark(String streamId, long eventWatermarkNanos) {
        checkInput(streamId);
        checkNotCompleted(streamId);
        FlowTestDriver.checkNotBack(streamId, explicit.get(streamId), eventWatermarkNanos);
        explicit.put(streamId, eventWatermarkNanos);
        if (eventWatermarkNanos > watermarks.get(streamId)) { // per producer the largest value counts
            move(streamId, eventWatermarkNanos);
        }
    }

    @Override
    public void advanceWatermark(long eventWatermarkNanos) {
        for (String in : computation.inputStreamIds()) {
            if (!completed.contains(in) && eventWatermarkNanos > watermarks.get(in)) {
                advanceWatermark(in, eventWatermarkNanos);
            }
        }
    }

    @Override
    public void completeStream(String streamId) {
        checkInput(streamId);
        if (completed.add(streamId)) {
            move(streamId, Long.MAX_VALUE);
        }
    }

    private void move(String streamId, long watermark) {
        watermarks.put(streamId, watermark);
        harness.setInputWatermark(streamId, watermark);
        for (TimerStreamSpec t : computation.timers()) {
            long wm = timerWatermark(t);
            if (wm != Long.MIN_VALUE) {
                harness.advanceWatermark(t.id(), wm).forEach(this::collect);
            }
        }
    }

    private long timerWatermark(TimerStreamSpec t) {
        if (t.timeType() == TimeType.REAL_TIME) {
            return Long.MIN_VALUE;
        }
        Map<String, Duration> watched = computation.timerWatchedStreams(t); // its streams, or its streams_dependency
        List<String> streams = watched == null ? computation.inputStreamIds() : new ArrayList<>(watched.keySet());
        long min = Long.MAX_VALUE;
        for (String s : streams) {
            long wm = watermarks.getOrDefault(s, Long.MIN_VALUE);
            if (t.timeType() == TimeType.SYSTEM_TIME) {
                wm = completed.contains(s) ? Long.MAX_VALUE : wm == Long.MIN_VALUE ? wm : harness.currentTimeNanos();
            }
            if (wm != Long.MAX_VALUE && wm != Long.MIN_VALUE) { // a stream's delay, for both time types (the runtime's)
                long delay = watched == null ? 0 : watched.get(s).toNanos();
                wm = wm - delay > wm ? Long.MIN_VALUE : wm - delay;
            }
            min = Math.min(min, wm);
        }
        return streams.isEmpty() ? Long.MIN_VALUE : min;
    }

    private void collect(HarnessResult result) {
        if (result.failed() && !deadLetters) {
            // as the runtime's task: without dead letters a failed call fails it, and it retries the input
            throw new IllegalStateException("computation '" + computation.id() + "' failed on " + result.kind()
                    + " " + result.inputId() + " with flow.dead.letter.enabled=false: on a broker its task fails and "
                    + "retries the input", result.failure().orElseThrow());
        }
        if (result.failed()) {
            return; // as the runtime's dead letter: nothing of the call is applied; see harness.failures()
        }
        for (HarnessResult.Output o : result.outputs()) {
            outputs.computeIfAbsent(o.streamId(), s -> new ArrayList<>()).add(o.payload());
        }
    }

    @Override
    public List<GenericRecord> readPayloads(String streamId) {
        checkOpen();
        if (!computation.outputStreamIds().contains(streamId)) {
            throw new IllegalArgumentException("stream '" + streamId + "' is not an output of computation '"
                    + computation.id() + "', the only one the HARNESS level runs; its outputs are "
                    + computation.outputStreamIds() + " (leave HARNESS out of @FlowTestLevels for this test)");
        }
        List<GenericRecord> out = outputs.remove(streamId);
        return out == null ? List.of() : List.copyOf(out);
    }

    @Override
    public List<GenericRecord> awaitPayloads(String streamId, int count) {
        List<GenericRecord> out = readPayloads(streamId);
        if (out.size() < count) {
            throw new AssertionError("expected at least " + count + " payload(s) of stream '" + streamId
                    + "' but the HARNESS level has " + out.size() + ": " + out
                    + " (every call runs synchronously here, so no more will come)");
        }
        return out;
    }

    @Override
    public Optional<GenericRecord> stateForPayload(String computationId, String stateName, String inputStreamId,
            Map<String, ?> payloadFields) {
        checkOpen();
        if (!computation.id().equals(computationId)) {
            throw new IllegalArgumentException("the HARNESS level runs only computation '" + computation.id()
                    + "', not '" + computationId + "' (leave HARNESS out of @FlowTestLevels for this test)");
        }
        return harness.state(stateName, harness.keyOf(inputStreamId, payloadFields));
    }

    @Override
    public Optional<GenericRecord> externalRowForPayload(String computationId, String name, String inputStreamId,
            Map<String, ?> payloadFields) {
        checkOpen();
        if (!computation.id().equals(computationId)) {
            throw new IllegalArgumentException("the HARNESS level runs only computation '" + computation.id()
                    + "', not '" + computationId + "' (leave HARNESS out of @FlowTestLevels for this test)");
        }
        return harness.externalRow(name, harness.keyOf(inputStreamId, payloadFields));
    }

    @Override
    public Set<String> completedComputations() {
        checkOpen();
        boolean inputsDone = !computation.inputStreamIds().isEmpty()
                && completed.containsAll(computation.inputStreamIds());
        boolean timersDone = harness.pendingTimers().stream().noneMatch(t -> computation.timers().stream()
                .anyMatch(s -> s.id().equals(t.getStreamId()) && s.timeType() != TimeType.REAL_TIME));
        return inputsDone && timersDone ? Set.of(computation.id()) : Set.of();
    }

    @Override
    public void awaitCompleted(String computationId) {
        if (!completedComputations().contains(computationId)) {
            throw new AssertionError("computation '" + computationId + "' has not completed on the HARNESS level: "
                    + "inputs completed " + completed + " of " + computation.inputStreamIds() + ", pending timers "
                    + harness.pendingTimers());
        }
    }

    @Override
    public void close() {
        closed = true;
        harness.close();
    }

    private void checkInput(String streamId) {
        checkOpen();
        if (!computation.inputStreamIds().contains(streamId)) {
            throw new IllegalArgumentException("stream '" + streamId + "' is not an internal input of computation '"
                    + computation.id() + "', the only one the HARNESS level runs; its inputs are "
                    + computation.inputStreamIds() + " (leave HARNESS out of @FlowTestLevels for this test)");
        }
    }

    private void checkNotCompleted(String streamId) {
        if (completed.contains(streamId)) {
            throw new IllegalStateException("stream '" + streamId + "' was completed with completeStream: its "
                    + "watermark is +infinity and cannot move");
        }
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("the HARNESS pipeline of computation '" + computation.id() + "' is closed");
        }
    }

    @Override
    public String toString() {
        return "HARNESS[" + spec.name() + "/" + computation.id() + "]";
    }
}
