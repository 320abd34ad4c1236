package io.flowkafka.internal.processor;

import io.flowkafka.api.BatchFunction;
import io.flowkafka.api.Message;
import io.flowkafka.api.MessageId;
import io.flowkafka.api.ProcessFunction;
import io.flowkafka.internal.dlq.FlowProcessingException;
import io.flowkafka.internal.message.FlowHeaders;
import io.flowkafka.internal.message.MessageIds;
import io.flowkafka.internal.serde.AvroCodec;
import io.flowkafka.internal.serde.JsonRecords;
import io.flowkafka.internal.serde.KeyCodec;
import io.flowkafka.internal.state.KeyStates;
import io.flowkafka.internal.watermarks.ControlRecords;
import io.flowkafka.internal.watermarks.WatermarkTracker;
import io.flowkafka.spec.ComputationKind;
import io.flowkafka.spec.ComputationSpec;
import io.flowkafka.spec.SinkSpec;
import io.flowkafka.spec.SourceSpec;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.processor.api.RecordMetadata;
import org.apache.kafka.streams.state.KeyValueStore;
import org.jspecify.annotations.Nullable;

/**
 * One attempt of a computation's task: built from the task's stores when {@link ComputationProcessor} is
 * initialised, dropped when it closes, so nothing of an aborted attempt survives a revive. It decodes an input
 * record, runs the process function, and applies its effects atomically.
 *
 * <p>Model: one call = decode, run user code against a call buffer, encode every output for every
 * route, then (only if all of that succeeded) apply the buffered state writes and forward the
 * outputs. Any failure before that point drops the buffer and throws
 * {@link FlowProcessingException}, which the dead-letter handler turns into a dead letter. State
 * writes and forwarded records then commit in the task's Kafka transaction together with the
 * input offset (exactly_once_v2).
 *
 * <p>Message ids derive from the input's id, the computation and the output position
 * ({@link MessageIds}), so a replay after an aborted transaction writes the same ids.
 *
 * <p>Threading: one instance per task attempt, used by its stream thread only.
 */
final class ComputationTask {
    private final ComputationPlan plan;
    private final ComputationSpec spec;
    private final ProcessorContext<byte[], byte[]> context;
    private KeyStates states;
    private @Nullable ProcessFunction function;
    private KeyCodec keyCodec;
    private final Map<String, InputBinding> inputs = new HashMap<>();
    private final Map<String, OutputBinding> outputs = new HashMap<>();
    private CallContext call;
    private long computationTag;
    private WatermarkTracker watermarks;
    private final ControlRecords controlCodec = new ControlRecords();
    private final List<String> controlNodes = new ArrayList<>();
    private boolean sourceComputation;
    /**
     * A lower bound of the triggers of pending event-time timers (keyed sources): exact after each
     * firing step, lowered by every timer added since. A source watermark at or below it fires nothing.
     */
    private long eventTriggerFloor = Long.MIN_VALUE;
    /** Whether a timer stream lists the streams it waits on ({@code streams}, {@code streams_with_delays}). */
    private boolean anyTimerWatchesStreams;
    private int maxIdleProducers;
    /**
     * Per source stream: the largest event and system timestamps read and when the last record came.
     * A Source computation has one source stream (all its topics share one clock); a keyed
     * Transform may read several co-partitioned sources, and its watermark is the minimum over them.
     */
    private final Map<String, SourceClock> sourceClocks = new java.util.LinkedHashMap<>();
    /**
     * When the task last read a source record, on the sources' active clock ({@link #activeNowMs()}: the
     * wall clock less the time the runtime kept its sources paused), as are the source clocks' times.
     */
    private long lastRecordActiveMs;
    private final io.flowkafka.internal.watermarks.SourceIdleness sourceIdleness;
    /** watermark_alignment: the source partitions this task reads, reported with its watermark; null if not aligned. */
    private java.util.@Nullable Set<org.apache.kafka.common.TopicPartition> alignedPartitions;
    private io.flowkafka.internal.watermarks.WatermarkAlignment.@Nullable Limit alignmentLimit;
    private long alignmentLimitReported = Long.MIN_VALUE;
    private long alignedWatermark = Long.MIN_VALUE;
    private io.flowkafka.internal.watermarks.WatermarkAlignment.@Nullable PauseClock pauseClock;
    private long lastEmitWallMs = Long.MIN_VALUE;
    private long controlSequence;
    private WatermarkTracker.Output lastEmitted;
    private io.flowkafka.internal.timers.@Nullable TimerStore timerStore;
    private @Nullable TimerGroups timerGroups;
    private io.flowkafka.spec.TimeType[] timeTypes = new io.flowkafka.spec.TimeType[0];
    private List<@Nullable Map<String, java.time.Duration>> watchedStreams = List.of();
    private final List<String> dlqNodes = new ArrayList<>();
    private final List<io.flowkafka.internal.visitor.KeyVisitor> visitors = new ArrayList<>();
    private final List<io.flowkafka.spec.KeyVisitorStreamSpec> visitorSpecs = new ArrayList<>();
    private final Map<String, Integer> visitOrigins = new HashMap<>();
    private final List<io.micrometer.core.instrument.Meter> meters = new ArrayList<>();
    private long[] visitorDue = new long[0];
    private io.micrometer.core.instrument.Timer timerSteps;
    private io.micrometer.core.instrument.Counter firedTimers;
    private int firedInStep;
    private boolean timersBehind;
    /** Control sink nodes by output stream. */
    private final Map<String, List<String>> controlNodesByStream = new java.util.LinkedHashMap<>();
    /** Output streams with their own streams_dependency, and those dependencies. */
    private final Map<String, List<String>> ownDependencies = new java.util.LinkedHashMap<>();
    private Map<String, WatermarkTracker.Output> lastEmittedOwn = Map.of();
    /** Finite source partitions of this task and their bounds (from the changelogged store). */
    private final Map<org.apache.kafka.common.TopicPartition, Long> finiteBounds = new HashMap<>();
    private final java.util.Set<org.apache.kafka.common.TopicPartition> finiteDone = new java.util.HashSet<>();
    /** The input buffer of a SwiftMap with allow_batching_with_relaxed_guarantees; null otherwise. */
    private @Nullable BatchBuffer batch;
    private int maxBatchSize;
    private long maxBatchDelayMs;
    private io.micrometer.core.instrument.DistributionSummary batchSizes;
    /** Batches cut, by rule: size, delay, completion. */
    private io.micrometer.core.instrument.Counter[] batchCuts;
    /** This task's source partitions, and those a partition_filter excludes (they count as done). */
    private final List<org.apache.kafka.common.TopicPartition> sourcePartitions = new ArrayList<>();
    private final java.util.Set<org.apache.kafka.common.TopicPartition> filteredPartitions = new java.util.HashSet<>();

    /** Builds the task's state from its stores: what {@code init()} of the processor does, each time it is called. */
    ComputationTask(ComputationPlan plan, ProcessorContext<byte[], byte[]> context) {
        this.plan = plan;
        this.sourceIdleness = plan.sourceIdleness();
        this.spec = plan.spec();
        this.context = context;
        Object rejected = context.appConfigs().get(io.flowkafka.internal.dlq.RejectedOutputs.CONFIG);
        rejectedOutputs = rejected instanceof io.flowkafka.internal.dlq.RejectedOutputs r ? r : null;
        epochOffers = new ArrayList<>(0);
        committedOffers = new ArrayList<>(0);
        if (plan.hasEpochBarrier()) {
            io.flowkafka.internal.outbox.EpochBarrierStore barrier = context.getStateStore(
                    io.flowkafka.internal.outbox.EpochBarrierStore.storeName(spec.id()));
            barrier.beforeCommit(this::beforeCommit);
        }
        KeyValueStore<Bytes, byte[]> store = spec.states().isEmpty() ? null
                : context.getStateStore(KeyStates.storeName(spec.id()));
        this.states = new KeyStates(store);
        if (store != null) {
            meters.addAll(io.flowkafka.internal.streams.WriteBackStore.registerMeters(store, plan.visitors().meters(),
                    storeTags()));
        }
        this.keyCodec = KeyCodec.of(spec.groupBySchema(), spec.id());
        this.computationTag = MessageIds.computationTag(spec.id());
        for (ComputationPlan.Input in : plan.inputs().values()) {
            inputs.put(in.topic(), new InputBinding(in, plan.inputSchemas().get(in.streamId())));
        }
        for (Map.Entry<String, List<ComputationPlan.Route>> e : plan.outputs().entrySet()) {
            outputs.put(e.getKey(), new OutputBinding(e.getKey(), plan.outputSchemas().get(e.getKey()), e.getValue()));
        }
        Map<String, WatermarkTracker.ExpectedProducers> expected = new java.util.LinkedHashMap<>();
        plan.writers().forEach((stream, writer) -> expected.put(stream,
                new WatermarkTracker.ExpectedProducers(writer, plan.partitionCounts().of(writer))));
        this.watermarks = new WatermarkTracker(context.getStateStore(WatermarkTracker.storeName(spec.id())), expected);
        this.sourceComputation = !spec.sourceStreams().isEmpty();
        int partitionCount = plan.partitionCounts().singleTask() ? 1
                : sourceComputation ? plan.partitionCounts().of(spec.id()) : spec.desiredPartitionCount();
        this.maxIdleProducers = sourceComputation ? spec.watermarkStrategy().maxIdlePartitions(partitionCount) : 0;
        for (Map.Entry<String, List<ComputationPlan.Route>> e : plan.outputs().entrySet()) {
            for (ComputationPlan.Route r : e.getValue()) {
                if (r instanceof ComputationPlan.InternalRoute) {
                    controlNodes.add(r.sinkNode());
                    controlNodesByStream.computeIfAbsent(e.getKey(), k -> new ArrayList<>()).add(r.sinkNode());
                }
            }
            List<String> deps = spec.streamsDependency().get(e.getKey());
            if (deps != null && controlNodesByStream.containsKey(e.getKey())) {
                ownDependencies.put(e.getKey(), deps);
            }
        }
        this.lastRecordActiveMs = activeNowMs();
        sourceClocks.values().forEach(c -> c.lastRecordActiveMs = lastRecordActiveMs);
        if (sourceComputation && plan.alignment().aligned(spec.id())) {
            java.util.Set<org.apache.kafka.common.TopicPartition> tps = new java.util.HashSet<>();
            plan.inputs().values().stream().filter(i -> i.source() != null)
                    .forEach(i -> tps.add(new org.apache.kafka.common.TopicPartition(i.topic(), context.taskId().partition())));
            this.alignedPartitions = java.util.Set.copyOf(tps);
            this.alignmentLimit = plan.alignment().limit(spec.id());
            this.alignedWatermark = watermarks.alignedWatermark(); // where the task was before a restart
            this.pauseClock = plan.alignment().pauseClock(spec.id(), context.taskId().partition());
        }
        this.lastEmitted = watermarks.output();
        initFiniteSources();
        this.call = new CallContext(spec, states, keyCodec, plan.outputSchemas(),
                () -> context.currentSystemTimeMs() * 1_000_000L, context.taskId().partition(), partitionCount,
                this::inputWatermark, this::minInputWatermark);
        this.recordLimit = io.flowkafka.internal.dlq.RecordSizeLimit.of(context.appConfigs());
        this.deadLetterTopic = String.valueOf(context.appConfigs().getOrDefault(
                io.flowkafka.internal.dlq.DeadLetterHandler.TOPIC_CONFIG, "dlq"));
        if (store != null) {
            stateChangelogTarget = io.flowkafka.internal.dlq.RejectedOutputs.changelogTarget(context.applicationId(),
                    KeyStates.storeName(spec.id()));
        }
        schedule(java.time.Duration.ofMillis(plan.watermarks().intervalMs()), now -> emitWatermarks());
        initTimers();
        initVisitors();
        this.function = FunctionFactory.create(spec);
        initBatching();
        if (function != null) {
            function.open(call);
        }
    }

    void process(Record<byte[], byte[]> record) {
        RecordMetadata md = context.recordMetadata().orElseThrow();
        InputBinding in = inputs.get(md.topic());
        if (in == null && md.topic().equals(plan.controlTopic())) {
            return; // the control topic only gives the computation its tasks
        }
        if (in == null) {
            throw new IllegalStateException("computation '" + spec.id() + "' got a record of unexpected topic " + md.topic());
        }
        if (in.partitionFilter != null && !in.partitionFilter.accepts(md.partition())) {
            return; // partition_filter: consumed (its offset commits) but skipped, no output, no dead letter
        }
        if (in.source != null && !finiteBounds.isEmpty() && beyondFiniteRange(md)) {
            return;
        }
        if (in.source == null && FlowHeaders.isControl(record.headers())) {
            if (watermarks.onControl(in.streamId, controlCodec.decode(record.value()))) {
                fireTimers();
                if (batch != null && !batch.isEmpty() && inputsCompleted()) {
                    flushBatch(CUT_COMPLETION);
                }
                maybeEmitWatermarks();
            }
            return;
        }
        FlowMessage message;
        byte[] encodedKey;
        try {
            message = in.decode(record, md);
            encodedKey = in.source == null ? record.key() : keyCodec.encode(message.key());
        } catch (RuntimeException e) {
            throw new FlowProcessingException(spec.id(), "decode the record of topic " + md.topic(), e);
        }
        if (batch != null) {
            bufferForBatch(record, md, message);
            return;
        }
        if (in.source != null) {
            SourceClock clock = in.clock;
            clock.maxEventTs = Math.max(clock.maxEventTs, message.eventTimestamp());
            clock.lastSystemTs = Math.max(clock.lastSystemTs, message.systemTimestamp());
            lastRecordActiveMs = activeNowMs();
            clock.lastRecordActiveMs = lastRecordActiveMs;
            if (alignmentLimit != null) {
                long limit = alignmentLimit.value();
                if (limit != alignmentLimitReported && clock.eventWatermark() > limit && sourceEventWatermark() > limit) {
                    alignmentLimitReported = limit; // once per limit: until it moves, another report changes nothing
                    reportAlignment(false); // ahead of the group: be paused now, not at the next emission
                }
            }
        }
        runCall(message.key(), encodedKey, message.messageId(), message.eventTimestamp(), "message",
                () -> call.deliverMessage(function, message, call, call), null);
        if (in.source != null) {
            if (timerStore != null && sourceTimerWatermarkBound() > eventTriggerFloor) {
                // a keyed source's event-time timers fire as its watermark passes them, like on a control record;
                // checked against a lower bound of the pending triggers, so most records cost no store read
                fireTimers();
            }
            maybeEmitWatermarks();
        }
    }

    /**
     * Runs one process-function call with all-or-nothing effects: on success the buffered state
     * and timer writes are applied (plus the deletion of {@code firedTimer}) and the outputs
     * forwarded; on failure everything is dropped and {@link FlowProcessingException} thrown.
     */
    private void runCall(GenericRecord key, byte[] encodedKey, MessageId parentId, long defaultEts, String what,
            Runnable user, io.flowkafka.internal.timers.@Nullable PendingTimer firedTimer) {
        call.begin(key, encodedKey, parentId);
        callSinkWrites.clear(); // leftovers of a call whose forward threw belong to no call
        callQueueOffers.clear();
        List<Record<byte[], byte[]>> forwards;
        List<String> nodes = new ArrayList<>(2);
        try {
            try {
                user.run();
            } catch (Exception e) {
                throw new FlowProcessingException(spec.id(), "process " + what + " " + parentId, e);
            }
            try {
                forwards = encodeOutputs(parentId, defaultEts, nodes);
            } catch (RuntimeException e) {
                throw new FlowProcessingException(spec.id(), "write the outputs of " + what + " " + parentId, e);
            }
            try {
                checkStateRows();
            } catch (RuntimeException e) {
                throw new FlowProcessingException(spec.id(), "write the state of " + what + " " + parentId, e);
            }
            try {
                checkTimerRows();
            } catch (RuntimeException e) {
                throw new FlowProcessingException(spec.id(), "write the timers of " + what + " " + parentId, e);
            }
        } catch (FlowProcessingException e) {
            callSinkWrites.clear();
            callQueueOffers.clear();
            states.abortCall();
            if (timerStore != null) {
                timerStore.abortCall();
            }
            call.end();
            throw e;
        }
        states.commitCall();
        if (timerStore != null) {
            if (firedTimer != null) {
                timerStore.delete(firedTimer);
            }
            if (sourceComputation && timerStore.hasBufferedWrites()) {
                for (io.flowkafka.internal.timers.PendingTimer t : timerStore.bufferedAdds()) {
                    if (timeTypes[t.streamIndex()] == io.flowkafka.spec.TimeType.EVENT_TIME) {
                        eventTriggerFloor = Math.min(eventTriggerFloor, t.triggerTs());
                    }
                }
            }
            timerStore.commitCall();
        }
        call.end();
        for (int i = 0; i < forwards.size(); i++) {
            context.forward(forwards.get(i), nodes.get(i));
        }
        if (!callSinkWrites.isEmpty()) {
            callSinkWrites.forEach(Runnable::run);
            callSinkWrites.clear();
        }
        if (!callQueueOffers.isEmpty()) {
            epochOffers.addAll(callQueueOffers);
            callQueueOffers.clear();
        }
    }

    /** Outputs brokers rejected for good, shared by the runtime's tasks; null outside a FlowRuntime. */
    private io.flowkafka.internal.dlq.@Nullable RejectedOutputs rejectedOutputs;

    /** Fails with the reason if a state row is larger than the producer sends (also the unit harness's check). */
    static void checkStateRowSize(io.flowkafka.internal.dlq.RecordSizeLimit limit, String computation, Bytes storeKey,
            byte[] value) {
        byte[] k = storeKey.get();
        if (!limit.fits(k, value, null)) {
            throw new io.flowkafka.internal.dlq.RejectedRecordException(limit.tooLarge("state '"
                    + KeyStates.stateNameOf(storeKey) + "' of computation '" + computation
                    + "' (a row of its changelog topic)", k, value, null) + "; keep state rows small (hold large values "
                    + "elsewhere, or split them over several states), or " + limit.raiseAdvice());
        }
    }

    /** The largest record Kafka Streams' producer sends. */
    private io.flowkafka.internal.dlq.RecordSizeLimit recordLimit;
    private String deadLetterTopic = "dlq";
    /** The state store's changelog topic as {@link io.flowkafka.internal.dlq.RejectedOutputs} names it; null without state. */
    private @Nullable String stateChangelogTarget;

    /**
     * Fails the call if a state row it writes (a key's last value in the call) is larger than the producer sends or
     * was rejected by the state store's changelog topic before: its input then goes to the dead-letter topic instead
     * of the commit failing the task's transaction, on every replay. Checked after the function returned, so the
     * function cannot swallow it, and a row it overwrote or cleared in the same call is not held against it.
     */
    private void checkStateRows() {
        if (stateChangelogTarget != null) {
            states.forEachBufferedPut(stateRowCheck);
        }
    }

    /** {@link #checkStateRow} as one object, not a new method reference per call. */
    private final java.util.function.BiConsumer<Bytes, byte[]> stateRowCheck = this::checkStateRow;

    private void checkStateRow(Bytes storeKey, byte[] value) {
        checkStateRowSize(recordLimit, spec.id(), storeKey, value);
        var rejected = rejectedOutputs;
        if (rejected != null) {
            rejected.check(stateChangelogTarget, storeKey.get(), value, -1L);
        }
    }

    /** The timers store's and the timer-holds store's changelog topics as RejectedOutputs names them; null without. */
    private @Nullable String timersChangelogTarget;
    private @Nullable String holdsChangelogTarget;

    /**
     * Fails the call if a timer it adds makes a row of the timers store larger than the producer sends, or a row the
     * timers or timer-holds changelog topic rejected before, recognised by its key (a timer's value holds the
     * wall-clock time it was added; a real- or system-time stream's trigger, often the clock plus a delay, is left out
     * too: {@code TimerStore.timelessTimerKey}): its input then goes to the dead-letter topic, as for a state row.
     * Costs a size sum per added timer; a row is encoded here only when that sum is over the limit.
     */
    private void checkTimerRows() {
        if (timerStore != null && timerStore.hasBufferedWrites()) {
            timerStore.forEachBufferedAdd(timerRowCheck);
        }
    }

    /** {@link #checkTimerRow} as one object, not a new method reference per call. */
    private final java.util.function.BiConsumer<Bytes, io.flowkafka.internal.timers.PendingTimer> timerRowCheck =
            this::checkTimerRow;

    /**
     * Fails with the reason if the timers-store row of a timer (key {@code key}) is larger than the producer sends
     * (also the unit harness's check).
     */
    static void checkTimerRowSize(io.flowkafka.internal.dlq.RecordSizeLimit limit, String computation,
            io.flowkafka.internal.timers.TimerStore store, Bytes key, io.flowkafka.internal.timers.PendingTimer timer) {
        if (limit.surelyFits(key.get().length, store.valueSizeBound(timer))) {
            return;
        }
        byte[] value = store.encodeValue(timer);
        if (!limit.fits(key.get(), value, null)) {
            throw new io.flowkafka.internal.dlq.RejectedRecordException(limit.tooLarge("a timer of timer stream '"
                    + store.streamId(timer.streamIndex()) + "' of computation '" + computation
                    + "' (a row of its timers changelog topic)", key.get(), value, null) + "; a timer row holds its "
                    + "group-by key twice: keep group-by keys small, or " + limit.raiseAdvice());
        }
    }

    private void checkTimerRow(Bytes key, io.flowkafka.internal.timers.PendingTimer timer) {
        checkTimerRowSize(recordLimit, spec.id(), java.util.Objects.requireNonNull(timerStore), key, timer);
        var rejected = rejectedOutputs;
        if (rejected != null && rejected.any()) {
            // a clock-driven trigger is not repeated by the replay: such a row is recognised without its times
            boolean clock = timeTypes[timer.streamIndex()] != io.flowkafka.spec.TimeType.EVENT_TIME;
            String timers = java.util.Objects.requireNonNull(timersChangelogTarget);
            if (rejected.rejectedAny(timers)) {
                rejected.check(timers, clock ? io.flowkafka.internal.timers.TimerStore.timelessTimerKey(key.get())
                        : key.get(), null, -1L);
            }
            String holds = holdsChangelogTarget;
            if (holds != null && rejected.rejectedAny(holds)) {
                byte[] hold = io.flowkafka.internal.timers.TimerStore.holdKey(timer, key.get());
                rejected.check(holds, clock ? io.flowkafka.internal.timers.TimerStore.timelessHoldKey(hold) : hold, null,
                        -1L);
            }
        }
    }

    /**
     * Fails the call if {@code r}, an output Kafka Streams' producer sends to {@code target}, is larger than the
     * producer sends or was rejected by its topic before: its input then goes to the dead-letter topic.
     */
    private void checkOutput(String target, Record<byte[], byte[]> r) {
        if (!recordLimit.fits(r.key(), r.value(), r.headers())) {
            throw new io.flowkafka.internal.dlq.RejectedRecordException(recordLimit.tooLarge("this output to " + target,
                    r.key(), r.value(), r.headers()));
        }
        checkNotRejected(target, r);
    }

    /**
     * Fails the call if {@code r} was rejected by {@code target} before (see
     * {@link io.flowkafka.internal.dlq.RejectedOutputs}): its input then goes to the dead-letter topic. One volatile
     * read per output while no output was ever rejected.
     */
    private void checkNotRejected(String target, Record<byte[], byte[]> r) {
        var rejected = rejectedOutputs;
        if (rejected != null) {
            rejected.check(target, r.key(), r.value(), r.timestamp());
        }
    }

    /** Writes of the current call to synchronous external sinks, run once the call succeeded. */
    private final List<Runnable> callSinkWrites = new ArrayList<>(0);
    /** Messages of the current call to at-most-once sinks, held with the epoch once the call succeeded. */
    private final List<Runnable> callQueueOffers = new ArrayList<>(0);
    /**
     * Messages of at-most-once sinks from calls of the current epoch, and from the epoch before it:
     * a message enters its queue only once its epoch committed (an aborted epoch is replayed and
     * would queue it twice). The pre-commit hook of epoch N releases epoch N-1's messages (N-1
     * committed, or the task would have been closed, dropping both lists) and holds epoch N's.
     */
    private List<Runnable> epochOffers = new ArrayList<>(0);
    private List<Runnable> committedOffers = new ArrayList<>(0);

    /** Runs before each commit of this task (see {@link io.flowkafka.internal.outbox.EpochBarrierStore}). */
    private void beforeCommit() {
        if (!committedOffers.isEmpty()) {
            committedOffers.forEach(Runnable::run);
        }
        committedOffers = epochOffers;
        epochOffers = new ArrayList<>(0);
    }

    // ---------------------------------------------------------------- timers

    private void initTimers() {
        if (spec.timers().isEmpty()) {
            return;
        }
        int n = spec.timers().size();
        boolean[] dedup = new boolean[n];
        timeTypes = new io.flowkafka.spec.TimeType[n];
        List<@Nullable Map<String, java.time.Duration>> watched = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            dedup[i] = spec.timers().get(i).deduplicateEqualTimestamps();
            timeTypes[i] = spec.timers().get(i).timeType();
            watched.add(spec.timers().get(i).watchedStreams());
        }
        watchedStreams = watched;
        anyTimerWatchesStreams = watched.stream().anyMatch(java.util.Objects::nonNull);
        timerStore = new io.flowkafka.internal.timers.TimerStore(
                context.getStateStore(io.flowkafka.internal.timers.TimerStore.timersStoreName(spec.id())),
                ComputationPlan.writesInternalStreams(plan.outputs())
                        ? context.getStateStore(io.flowkafka.internal.timers.TimerStore.holdsStoreName(spec.id()))
                        : null, // nobody reads this computation's output watermark: no holds index
                spec.timers().stream().map(io.flowkafka.spec.TimerStreamSpec::id).toList(), dedup);
        timerGroups = new TimerGroups(spec);
        timersChangelogTarget = io.flowkafka.internal.dlq.RejectedOutputs.changelogTarget(context.applicationId(),
                io.flowkafka.internal.timers.TimerStore.timersStoreName(spec.id()));
        if (ComputationPlan.writesInternalStreams(plan.outputs())) {
            holdsChangelogTarget = io.flowkafka.internal.dlq.RejectedOutputs.changelogTarget(context.applicationId(),
                    io.flowkafka.internal.timers.TimerStore.holdsStoreName(spec.id()));
        }
        call.timers(timerStore, MessageIds.timerTag(spec.id()));
        timerSteps = io.micrometer.core.instrument.Timer.builder("flow.timers.punctuation")
                .description("Duration of a timer-firing step that fired at least one timer")
                .tags("pipeline", plan.pipeline(), "computation", spec.id(), "partition",
                        Integer.toString(context.taskId().partition()))
                .publishPercentiles(0.5, 0.99, 0.999).register(plan.visitors().meters());
        meters.add(timerSteps);
        firedTimers = io.micrometer.core.instrument.Counter.builder("flow.timers.fired")
                .description("Timers fired (their calls committed or sent to the dead-letter topic)")
                .tags("pipeline", plan.pipeline(), "computation", spec.id(), "partition",
                        Integer.toString(context.taskId().partition()))
                .register(plan.visitors().meters());
        meters.add(firedTimers);
        for (String name : List.of(io.flowkafka.internal.timers.TimerStore.timersStoreName(spec.id()),
                io.flowkafka.internal.timers.TimerStore.holdsStoreName(spec.id()))) {
            if (name.endsWith(".timers") || ComputationPlan.writesInternalStreams(plan.outputs())) {
                meters.addAll(io.flowkafka.internal.streams.WriteBackStore.registerMeters(context.getStateStore(name),
                        plan.visitors().meters(), storeTags()));
            }
        }
        schedule(java.time.Duration.ofMillis(plan.timers().punctuationIntervalMs()),
                now -> {
                    fireTimers();
                    maybeEmitWatermarks();
                });
        // a backlog of due timers fires in bounded steps as often as the stream thread comes back to punctuate,
        // not only once per interval, with polling and commits in between
        schedule(java.time.Duration.ofMillis(Math.max(1, plan.timers().punctuationIntervalMs() / 10)),
                now -> {
                    if (timersBehind) {
                        fireTimers();
                        maybeEmitWatermarks();
                    }
                });
    }

    /** The watermark timer stream {@code i} compares triggers with (exclusive). */
    private long timerWatermark(int i) {
        if (timeTypes[i] == io.flowkafka.spec.TimeType.REAL_TIME) {
            return context.currentSystemTimeMs() * 1_000_000L;
        }
        boolean event = timeTypes[i] == io.flowkafka.spec.TimeType.EVENT_TIME;
        Map<String, java.time.Duration> watched = watchedStreams.get(i);
        java.util.Collection<String> streams = watched == null ? watermarks.streams() : watched.keySet();
        boolean followSources = sourceComputation && watched == null; // a keyed source's timers follow its sources
        if (streams.isEmpty() && !followSources) {
            return event ? Long.MIN_VALUE : context.currentSystemTimeMs() * 1_000_000L;
        }
        long min = followSources ? sourceWatermark(event) : Long.MAX_VALUE;
        for (String s : streams) {
            long wm = !watermarks.streams().contains(s) ? sourceWatermark(s, event)
                    : event ? watermarks.eventWatermark(s) : watermarks.systemWatermark(s);
            long delay = watched == null ? 0 : watched.get(s).toNanos();
            if (wm != Long.MAX_VALUE && wm != Long.MIN_VALUE) {
                wm = wm - delay > wm ? Long.MIN_VALUE : wm - delay;
            }
            min = Math.min(min, wm);
        }
        return min;
    }

    /**
     * An upper bound of the event watermarks the timer streams of a keyed source compare with: the
     * sources' watermark, or the largest source's when a timer stream lists its own streams.
     */
    private long sourceTimerWatermarkBound() {
        if (!anyTimerWatchesStreams) {
            return sourceEventWatermark();
        }
        long max = Long.MIN_VALUE;
        for (SourceClock c : sourceClocks.values()) {
            max = Math.max(max, c.eventWatermark());
        }
        return max;
    }

    /** The sources' event or system watermark; +infinity once the finite sources are done. */
    private long sourceWatermark(boolean event) {
        if (finiteSourcesDone()) {
            return Long.MAX_VALUE;
        }
        return event ? sourceEventWatermark() : sourceSystemWatermark(context.currentSystemTimeMs());
    }

    /** One source stream's event or system watermark; +infinity once the finite sources are done. */
    private long sourceWatermark(String stream, boolean event) {
        SourceClock clock = sourceClocks.get(stream);
        if (clock == null || finiteSourcesDone()) {
            return Long.MAX_VALUE;
        }
        return event ? clock.eventWatermark() : clock.systemWatermark(context.currentSystemTimeMs(), activeNowMs());
    }

    /**
     * Fires due timers in bounded steps: at most {@code maxPerPunctuation} timers and
     * {@code maxPunctuationMs} per call, so the stream thread keeps polling and committing; the rest
     * waits for the next call. Groups writing to a blocked output stream are skipped whole.
     */
    private void fireTimers() {
        if (timerStore == null) {
            return;
        }
        int budget = plan.timers().maxPerPunctuation();
        long started = System.nanoTime();
        long deadline = started + plan.timers().maxPunctuationMs() * 1_000_000L;
        try {
            fireTimers(budget, deadline);
        } finally {
            int fired = firedInStep;
            // stopped by the step's limits rather than by running out of due timers: step again soon
            timersBehind = fired >= budget || System.nanoTime() >= deadline;
            if (fired > 0) {
                timerSteps.record(System.nanoTime() - started, java.util.concurrent.TimeUnit.NANOSECONDS);
                firedTimers.increment(fired);
            }
            firedInStep = 0;
            if (sourceComputation) {
                long floor = Long.MAX_VALUE;
                for (int i = 0; i < timeTypes.length; i++) {
                    if (timeTypes[i] == io.flowkafka.spec.TimeType.EVENT_TIME) {
                        floor = Math.min(floor, timerStore.minPendingTriggerTimestamp(i));
                    }
                }
                eventTriggerFloor = floor;
            }
        }
    }

    private void fireTimers(int initialBudget, long deadline) {
        int budget = initialBudget;
        boolean[] blocked = new boolean[timerGroups.groups()];
        for (int g = 0; g < blocked.length; g++) {
            for (String o : timerGroups.outputsOf(g)) {
                blocked[g] |= plan.outputLimits().isBlocked(o);
            }
        }
        for (int i = 0; i < timeTypes.length && budget > 0; i++) {
            if (blocked[timerGroups.groupOf(i)]) {
                continue;
            }
            long wm = timerWatermark(i);
            if (wm == Long.MIN_VALUE) {
                continue;
            }
            outer:
            while (budget > 0 && System.nanoTime() < deadline) {
                List<io.flowkafka.internal.timers.PendingTimer> due = timerStore.due(i, wm, Math.min(budget, 256));
                if (due.isEmpty()) {
                    break;
                }
                for (io.flowkafka.internal.timers.PendingTimer t : due) {
                    if (timerStore.overtaken(t)) {
                        continue outer; // a timer added by this batch's calls sorts before: ask again
                    }
                    fireOne(t);
                    firedInStep++;
                    budget--;
                    if (budget == 0 || System.nanoTime() >= deadline) {
                        break outer;
                    }
                }
            }
        }
    }

    private void fireOne(io.flowkafka.internal.timers.PendingTimer t) {
        GenericRecord key = keyCodec.decode(t.encodedKey());
        MessageId id = MessageId.of(t.messageId());
        FlowTimer timer = new FlowTimer(id, spec.timers().get(t.streamIndex()).id(), key, t.triggerTs(), t.eventTs(),
                t.systemTs());
        try {
            runCall(key, t.encodedKey(), id, t.eventTs(), "timer", () -> call.deliverTimer(function, timer, call, call), t);
        } catch (FlowProcessingException e) {
            if (!plan.deadLetters() || io.flowkafka.internal.dlq.Failures.retriable(e)) {
                throw e; // an outage: the timer stays, the task fails and fires it again from the last commit
            }
            // the timer goes to the dead-letter topic and is deleted, so it does not fire again
            timerStore.delete(t);
            timerStore.commitCall();
            Map<String, String> extra = new java.util.LinkedHashMap<>();
            extra.put("flow.dlq.timer.stream", timer.getStreamId());
            extra.put("flow.dlq.timer.trigger", Long.toString(t.triggerTs()));
            extra.put("flow.dlq.timer.id", MessageId.of(t.messageId()).toString());
            deadLetter(e, "timer " + id + " of stream " + timer.getStreamId(), t.encodedKey(),
                    Long.toString(t.triggerTs()).getBytes(StandardCharsets.UTF_8), extra);
        }
    }

    /** Sends the input of a failed timer or visit call to the dead-letter topic, with the reason in headers. */
    private void deadLetter(FlowProcessingException e, String what, byte[] key, byte[] value, Map<String, String> extra) {
        deadLetter(e, what, key, value, extra, Map.of());
    }

    private void deadLetter(FlowProcessingException e, String what, byte @Nullable [] key, byte @Nullable [] value,
            Map<String, String> extra, Map<String, byte[]> original) {
        if (io.flowkafka.internal.dlq.Failures.retriable(e)) {
            throw e; // an outage, not a bad input: fail the task and retry from the last commit (Failures)
        }
        Throwable cause = e.getCause() == null ? e : e.getCause();
        RecordHeaders h = new RecordHeaders();
        original.forEach(h::add);
        h.add("flow.dlq.error.class", cause.getClass().getName().getBytes(StandardCharsets.UTF_8));
        h.add("flow.dlq.error.message", String.valueOf(cause.getMessage()).getBytes(StandardCharsets.UTF_8));
        h.add("flow.dlq.computation", spec.id().getBytes(StandardCharsets.UTF_8));
        h.add("flow.dlq.stage", e.stage().getBytes(StandardCharsets.UTF_8));
        extra.forEach((k, v) -> h.add(k, v.getBytes(StandardCharsets.UTF_8)));
        org.slf4j.LoggerFactory.getLogger(ComputationTask.class).warn(
                "computation '{}' failed to process {}: {}; sent to the dead-letter topic", spec.id(), what, cause.toString());
        var letter = io.flowkafka.internal.dlq.DeadLetterFit.fit(recordLimit, rejectedOutputs, deadLetterTopic, key,
                value, h);
        context.forward(new Record<>(letter.key(), letter.value(), context.currentSystemTimeMs(), letter.headers()),
                plan.deadLetterNode());
    }

    /** Whether event- or system-time timers are pending (they hold completion; real-time ones do not). */
    private boolean holdingTimersPending() {
        if (timerStore == null) {
            return false;
        }
        for (int i = 0; i < timeTypes.length; i++) {
            if (timeTypes[i] != io.flowkafka.spec.TimeType.REAL_TIME && timerStore.hasPending(i)) {
                return true;
            }
        }
        return false;
    }

    // ---------------------------------------------------------------- key visitors

    private void initVisitors() {
        if (spec.keyVisitorStreams().isEmpty()) {
            return;
        }
        int partition = context.taskId().partition();
        int partitionCount = plan.partitionCounts().singleTask() ? 1 : spec.desiredPartitionCount();
        KeyValueStore<Bytes, byte[]> coverage = context.getStateStore(
                io.flowkafka.internal.visitor.KeyVisitor.storeName(spec.id()));
        for (io.flowkafka.spec.KeyVisitorStreamSpec v : spec.keyVisitorStreams().values()) {
            List<io.flowkafka.internal.visitor.ScanSource> sources = new ArrayList<>();
            if (v.scansInternalStates() && states.store() != null) {
                sources.add(io.flowkafka.internal.visitor.KeyVisitor.internalStates(states.store(), v.names()));
            }
            io.flowkafka.internal.visitor.KeyVisitor visitor = new io.flowkafka.internal.visitor.KeyVisitor(spec.id(),
                    v.id(), partition, partitionCount, v.bucketCount(), sources, coverage, plan.visitors().status());
            visitors.add(visitor);
            visitorSpecs.add(v);
            registerVisitorMeters(visitor, v, partition);
        }
        visitorDue = new long[visitors.size()];
        java.util.Arrays.fill(visitorDue, Long.MIN_VALUE);
        schedule(java.time.Duration.ofMillis(plan.visitors().tickMs()),
                now -> {
                    runVisitors(now);
                    maybeEmitWatermarks();
                });
    }

    private void registerVisitorMeters(io.flowkafka.internal.visitor.KeyVisitor visitor,
            io.flowkafka.spec.KeyVisitorStreamSpec v, int partition) {
        io.micrometer.core.instrument.MeterRegistry registry = plan.visitors().meters();
        io.micrometer.core.instrument.Tags tags = io.micrometer.core.instrument.Tags.of("pipeline", plan.pipeline(),
                "computation", spec.id(), "stream", v.id(), "partition", Integer.toString(partition));
        java.util.function.ToDoubleFunction<io.flowkafka.internal.visitor.KeyVisitor> required = kv -> kv.requiredRate(
                plan.visitors().dynamic().keyVisitor(spec.id(), v.id()));
        meters.add(io.micrometer.core.instrument.Gauge.builder("flow.key_visitor.new_count_per_sec", visitor, required)
                .description("Estimated distinct keys / period: the visit rate needed to visit every key once per "
                        + "period").tags(tags).register(registry));
        meters.add(io.micrometer.core.instrument.Gauge.builder("flow.key_visitor.offered_count_per_sec", visitor,
                required).description("Same estimate as new_count_per_sec (Flow reports both)").tags(tags)
                .register(registry));
        meters.add(io.micrometer.core.instrument.Gauge.builder("flow.key_visitor.ready_count", visitor, kv -> 0.0)
                .description("Visits read but not processed; visits run as they are read, so 0 between punctuations")
                .tags(tags).register(registry));
        meters.add(io.micrometer.core.instrument.FunctionCounter.builder("flow.key_visitor.processed_count", visitor,
                kv -> kv.processed()).description("Visits processed by this task; its rate is processed_count_per_sec")
                .tags(tags).register(registry));
        meters.add(io.micrometer.core.instrument.Gauge.builder("flow.key_visitor.pass_duration_seconds", visitor,
                kv -> kv.lastPassDurationNanos() < 0 ? Double.NaN : kv.lastPassDurationNanos() / 1e9)
                .description("Achieved duration of the last complete pass").tags(tags).register(registry));
        meters.add(io.micrometer.core.instrument.Gauge.builder("flow.key_visitor.pass", visitor, kv -> kv.pass())
                .description("The pass being scanned").tags(tags).register(registry));
    }

    /** Lets each due visitor advance within the punctuation's budget. */
    private void runVisitors(long nowMs) {
        long nowNanos = nowMs * 1_000_000L;
        long deadline = System.nanoTime() + plan.visitors().maxPunctuationMs() * 1_000_000L;
        int rows = plan.visitors().maxRowsPerPunctuation();
        for (int i = 0; i < visitors.size(); i++) {
            io.flowkafka.internal.visitor.KeyVisitor visitor = visitors.get(i);
            io.flowkafka.spec.KeyVisitorSettings settings = plan.visitors().dynamic().keyVisitor(spec.id(),
                    visitorSpecs.get(i).id());
            if (visitor.completed() || nowMs < visitorDue[i] || System.nanoTime() >= deadline) {
                continue;
            }
            int index = i;
            states.beginScan();
            io.flowkafka.internal.visitor.KeyVisitor.Step step;
            try {
                step = visitor.step(nowNanos, settings,
                        upstreamCompleted(visitorSpecs.get(i)), rows, deadline,
                        (key, pass, ets, scanned) -> visit(index, key, pass, ets, scanned));
            } finally {
                states.endScan();
            }
            visitorDue[i] = step == io.flowkafka.internal.visitor.KeyVisitor.Step.MORE ? nowMs
                    : nowMs + settings.backgroundFillPeriod().toMillis();
        }
    }

    /** Whether every stream a visitor follows ({@code upstream_streams}, default all inputs and sources) completed. */
    private boolean upstreamCompleted(io.flowkafka.spec.KeyVisitorStreamSpec v) {
        List<String> followed = v.upstreamStreams();
        if (followed == null) {
            followed = new ArrayList<>(spec.inputStreamIds());
            for (SourceSpec s : spec.sourceStreams()) {
                followed.add(s.streamId());
            }
        }
        for (String s : followed) {
            boolean source = spec.sourceStreams().stream().anyMatch(src -> src.streamId().equals(s));
            if (source ? !finiteSourcesDone() : !watermarks.completed(s)) {
                return false;
            }
        }
        return true;
    }

    /**
     * Whether every key visitor finished its final pass. A visitor with {@code finite: false} has none (reference
     * 000: "there is no final pass and the visitor keeps scanning"), so it holds completion until a reconfiguration
     * sets {@code finite: true} and the final pass that follows ends.
     */
    private boolean visitorsDone() {
        for (io.flowkafka.internal.visitor.KeyVisitor v : visitors) {
            if (!v.completed()) {
                return false;
            }
        }
        return true;
    }

    /** Runs the process function for one visit; a failing visit goes to the dead-letter topic. */
    private void visit(int index, byte[] encodedKey, long pass, long eventTimestamp,
            @Nullable Map<Bytes, byte[]> rows) {
        String stream = visitorSpecs.get(index).id();
        GenericRecord key = keyCodec.decode(encodedKey);
        MessageId id = MessageIds.visit(visitOrigins.computeIfAbsent(stream,
                s -> MessageIds.visitOrigin(spec.id(), s, context.taskId().partition())), pass, encodedKey);
        FlowVisit v = new FlowVisit(id, stream, key, eventTimestamp, context.currentSystemTimeMs() * 1_000_000L, pass);
        if (rows != null) {
            states.prefetch(encodedKey, rows); // the scan just read this key's rows: serve the visit's reads from them
        }
        try {
            runCall(key, encodedKey, id, eventTimestamp, "visit", () -> call.deliverVisit(function, v, call, call), null);
        } catch (FlowProcessingException e) {
            states.clearPrefetch();
            if (!plan.deadLetters() || io.flowkafka.internal.dlq.Failures.retriable(e)) {
                throw e;
            }
            Map<String, String> extra = new java.util.LinkedHashMap<>();
            extra.put("flow.dlq.visit.stream", stream);
            extra.put("flow.dlq.visit.pass", Long.toString(pass));
            extra.put("flow.dlq.visit.id", id.toString());
            deadLetter(e, "visit " + id + " of stream " + stream, encodedKey,
                    Long.toString(pass).getBytes(StandardCharsets.UTF_8), extra);
        } finally {
            states.clearPrefetch();
        }
    }

    // ---------------------------------------------------------------- SwiftMap batching

    private static final int CUT_SIZE = 0;
    private static final int CUT_DELAY = 1;
    private static final int CUT_COMPLETION = 2;

    /**
     * Sets up SwiftMap batching ({@code allow_batching_with_relaxed_guarantees}): the buffer
     * restored from its store, the delay punctuator and the metrics. See {@link BatchBuffer} for
     * the cut rules.
     */
    private void initBatching() {
        if (spec.kind() != ComputationKind.SWIFT_MAP || !spec.allowBatchingWithRelaxedGuarantees()) {
            return;
        }
        if (!(function instanceof BatchFunction)) {
            throw new IllegalStateException("SwiftMap computation '" + spec.id() + "' has "
                    + ComputationSpec.ALLOW_BATCHING_PARAMETER + " on, but its processing_function is "
                    + (function == null ? "missing" : "a " + function.getClass().getName())
                    + ": implement io.flowkafka.api.BatchFunction, or remove the parameter");
        }
        maxBatchSize = spec.maxBatchSize();
        maxBatchDelayMs = spec.maxBatchDelay().toMillis();
        batch = new BatchBuffer(context.getStateStore(BatchBuffer.storeName(spec.id())));
        batch.restore(this::decodeBuffered, context.currentSystemTimeMs());
        io.micrometer.core.instrument.Tags tags = io.micrometer.core.instrument.Tags.of("pipeline", plan.pipeline(),
                "computation", spec.id(), "partition", Integer.toString(context.taskId().partition()));
        batchSizes = io.micrometer.core.instrument.DistributionSummary.builder("flow.batching.batch_size")
                .description("Input messages per batch of a SwiftMap with allow_batching_with_relaxed_guarantees")
                .tags(tags).register(plan.visitors().meters());
        meters.add(batchSizes);
        String[] rules = {"size", "delay", "completion"};
        batchCuts = new io.micrometer.core.instrument.Counter[rules.length];
        for (int i = 0; i < rules.length; i++) {
            batchCuts[i] = io.micrometer.core.instrument.Counter.builder("flow.batching.batches")
                    .description("Batches cut, by rule: size (max_batch_size, reproduced by a replay of one input "
                            + "stream), delay (max_batch_delay, timing-dependent), completion (inputs completed)")
                    .tags(tags).tag("cut", rules[i]).register(plan.visitors().meters());
            meters.add(batchCuts[i]);
        }
        schedule(java.time.Duration.ofMillis(Math.max(1, Math.min(maxBatchDelayMs, 1000) / 2)),
                now -> {
                    if (!batch.isEmpty() && now - batch.firstBufferedWallMs() >= maxBatchDelayMs) {
                        flushBatch(CUT_DELAY);
                        maybeEmitWatermarks();
                    }
                });
    }

    /** Decodes a record restored from the batch store, as {@link #process} decoded it when it was read. */
    private FlowMessage decodeBuffered(io.flowkafka.avro.BatchedInput r) {
        InputBinding in = inputs.get(r.getTopic());
        if (in == null) {
            throw new IllegalStateException("computation '" + spec.id() + "' no longer reads topic " + r.getTopic());
        }
        RecordHeaders headers = new RecordHeaders();
        if (r.getMeta() != null) {
            headers.add(FlowHeaders.META, bytes(r.getMeta()));
        }
        Record<byte[], byte[]> record = new Record<>(r.getKey() == null ? null : bytes(r.getKey()),
                r.getValue() == null ? null : bytes(r.getValue()), r.getTimestamp(), headers);
        String topic = r.getTopic();
        int partition = r.getPartition();
        long offset = r.getOffset();
        return in.decode(record, new RecordMetadata() {
            @Override
            public String topic() {
                return topic;
            }

            @Override
            public int partition() {
                return partition;
            }

            @Override
            public long offset() {
                return offset;
            }
        });
    }

    private static byte[] bytes(java.nio.ByteBuffer b) {
        byte[] a = new byte[b.remaining()];
        b.duplicate().get(a);
        return a;
    }

    /** Buffers a decoded input (and its record, for dead letters); cuts the batch when it is full. */
    private void bufferForBatch(Record<byte[], byte[]> record, RecordMetadata md, FlowMessage message) {
        org.apache.kafka.common.header.Header meta = record.headers().lastHeader(FlowHeaders.META);
        io.flowkafka.avro.BatchedInput r = io.flowkafka.avro.BatchedInput.newBuilder().setTopic(md.topic())
                .setPartition(md.partition()).setOffset(md.offset()).setTimestamp(record.timestamp())
                .setKey(record.key() == null ? null : java.nio.ByteBuffer.wrap(record.key()))
                .setValue(record.value() == null ? null : java.nio.ByteBuffer.wrap(record.value()))
                .setMeta(meta == null || meta.value() == null ? null : java.nio.ByteBuffer.wrap(meta.value()))
                .build();
        batch.add(message, r, context.currentSystemTimeMs());
        if (batch.size() >= maxBatchSize) {
            flushBatch(CUT_SIZE);
        }
    }

    /** Whether every input stream of the computation has completed. */
    private boolean inputsCompleted() {
        for (String s : watermarks.streams()) {
            if (!watermarks.completed(s)) {
                return false;
            }
        }
        return true;
    }

    /**
     * Cuts the buffered inputs into one batch and runs it. If the batch's call fails, each message
     * is run again as a batch of one, so only the messages that fail on their own go to the
     * dead-letter topic, as without batching.
     */
    private void flushBatch(int cut) {
        List<BatchBuffer.Entry> entries = batch.drain();
        batchSizes.record(entries.size());
        batchCuts[cut].increment();
        List<FlowMessage> messages = new ArrayList<>(entries.size());
        List<BatchBuffer.Entry> decoded = new ArrayList<>(entries.size());
        for (BatchBuffer.Entry e : entries) {
            if (e.message() == null) {
                deadLetterBuffered(e, new FlowProcessingException(spec.id(), "decode the record of topic "
                        + e.record().getTopic(), java.util.Objects.requireNonNull(e.decodeError())));
            } else {
                messages.add(e.message());
                decoded.add(e);
            }
        }
        if (messages.isEmpty()) {
            return;
        }
        try {
            runBatch(messages);
        } catch (FlowProcessingException e) {
            if (!plan.deadLetters()) {
                throw e;
            }
            if (messages.size() == 1) {
                deadLetterBuffered(decoded.get(0), e);
                return;
            }
            for (BatchBuffer.Entry one : decoded) {
                try {
                    runBatch(List.of(one.message()));
                } catch (FlowProcessingException alone) {
                    deadLetterBuffered(one, alone);
                }
            }
        }
    }

    /** Runs one batched call with all-or-nothing effects, like {@link #runCall}. */
    private void runBatch(List<FlowMessage> messages) {
        call.beginBatch(messages);
        String what = messages.size() == 1 ? "message " + messages.get(0).messageId()
                : "batch of " + messages.size() + " messages " + messages.get(0).messageId() + ".."
                        + messages.get(messages.size() - 1).messageId();
        List<Record<byte[], byte[]>> forwards;
        List<String> nodes = new ArrayList<>();
        try {
            try {
                ((BatchFunction) function).onMessages(java.util.Collections.unmodifiableList(messages), call, call);
            } catch (Exception e) {
                throw new FlowProcessingException(spec.id(), "process " + what, e);
            }
            try {
                forwards = encodeBatchOutputs(nodes);
            } catch (RuntimeException e) {
                throw new FlowProcessingException(spec.id(), "write the outputs of " + what, e);
            }
            try {
                checkStateRows();
            } catch (RuntimeException e) {
                throw new FlowProcessingException(spec.id(), "write the state of " + what, e);
            }
        } catch (FlowProcessingException e) {
            states.abortCall();
            call.end();
            throw e;
        }
        states.commitCall();
        call.end();
        for (int i = 0; i < forwards.size(); i++) {
            context.forward(forwards.get(i), nodes.get(i));
        }
    }

    /**
     * Encodes the outputs of a batched call. An output's parents are the whole batch unless it
     * named a subset; its id derives from that set and its position among the call's outputs with
     * the same set ({@link MessageIds#deriveFromSet}), so it does not depend on the order of the
     * batch or on outputs for other sets; its default event timestamp is its parents' largest.
     */
    private List<Record<byte[], byte[]>> encodeBatchOutputs(List<String> nodes) {
        List<CallContext.Output> outs = call.outputs;
        if (outs.isEmpty()) {
            return List.of();
        }
        List<MessageId> all = call.batchIds();
        Map<List<MessageId>, int[]> positions = new HashMap<>();
        List<Record<byte[], byte[]>> records = new ArrayList<>(outs.size());
        long nowNanos = context.currentSystemTimeMs() * 1_000_000L;
        for (CallContext.Output o : outs) {
            List<MessageId> parents = o.parents() == null ? all : o.parents();
            int position = positions.computeIfAbsent(parents, k -> new int[1])[0]++;
            MessageId id = MessageIds.deriveFromSet(parents, computationTag, position);
            long ets = o.message().eventTimestamp != Long.MIN_VALUE ? o.message().eventTimestamp
                    : call.batchEventTimestamp(parents);
            outputs.get(o.message().streamId).encode(o.message().payload, id, ets, nowNanos, parents, records, nodes);
        }
        return records;
    }

    /** Sends a buffered input whose call failed to the dead-letter topic, with the headers of the dead-letter handler. */
    private void deadLetterBuffered(BatchBuffer.Entry e, FlowProcessingException failure) {
        io.flowkafka.avro.BatchedInput r = e.record();
        Map<String, String> extra = new java.util.LinkedHashMap<>();
        extra.put("flow.dlq.topic", r.getTopic());
        extra.put("flow.dlq.partition", Integer.toString(r.getPartition()));
        extra.put("flow.dlq.offset", Long.toString(r.getOffset()));
        extra.put("flow.dlq.task", context.taskId().toString());
        Map<String, byte[]> original = r.getMeta() == null ? Map.of() : Map.of(FlowHeaders.META, bytes(r.getMeta()));
        deadLetter(failure, "message at " + r.getTopic() + "-" + r.getPartition() + "@" + r.getOffset(),
                r.getKey() == null ? null : bytes(r.getKey()), r.getValue() == null ? null : bytes(r.getValue()),
                extra, original);
    }

    // ---------------------------------------------------------------- finite sources

    private void initFiniteSources() {
        int p = context.taskId().partition();
        for (SourceSpec source : spec.sourceStreams()) {
            io.flowkafka.internal.source.PartitionFilter filter =
                    io.flowkafka.internal.source.KafkaSourceParameters.partitionFilter(source);
            boolean finite = io.flowkafka.internal.source.KafkaSourceParameters.finite(source);
            for (String topic : io.flowkafka.internal.compiler.PipelineCompiler.topicsOf(source)) {
                org.apache.kafka.common.TopicPartition tp = new org.apache.kafka.common.TopicPartition(topic, p);
                sourcePartitions.add(tp);
                if (filter != null && !filter.accepts(p)) {
                    // a filtered partition is never processed: like a finished finite one, it holds nothing back
                    filteredPartitions.add(tp);
                    continue;
                }
                if (!finite) {
                    continue;
                }
                String key = "bound|" + topic + "|" + p;
                Long bound = watermarks.getLong(key);
                if (bound == null) {
                    bound = plan.finiteSources().boundOf(tp);
                    if (bound == null) {
                        // no such partition of this topic (or bounds unknown, e.g. on TopologyTestDriver): nothing to read
                        bound = plan.partitionCounts().singleTask() ? Long.MAX_VALUE : 0L;
                    }
                    watermarks.putLong(key, bound);
                }
                finiteBounds.put(tp, bound);
                if (bound == 0L || Long.valueOf(1L).equals(watermarks.getLong("done|" + topic + "|" + p))) {
                    finiteDone.add(tp);
                }
            }
        }
    }

    /** Whether a source record lies at or above its partition's finite bound; marks the partition done at bound - 1. */
    private boolean beyondFiniteRange(RecordMetadata md) {
        org.apache.kafka.common.TopicPartition tp = new org.apache.kafka.common.TopicPartition(md.topic(), md.partition());
        Long bound = finiteBounds.get(tp);
        if (bound == null) {
            return false;
        }
        if (finiteReadToEnd(tp)) {
            return true; // every record up to the bound was processed (or a test driver ended the source)
        }
        if (md.offset() >= bound) {
            markFiniteDone(tp);
            return true;
        }
        if (md.offset() == bound - 1) {
            markFiniteDone(tp);
        }
        return false;
    }

    /**
     * Whether a finite source partition is read to its bound: by this task, or as the runtime saw from
     * the committed offsets (or a test driver ended the source), which this then records.
     */
    private boolean finiteReadToEnd(org.apache.kafka.common.TopicPartition tp) {
        if (finiteDone.contains(tp)) {
            return true;
        }
        if (finiteBounds.containsKey(tp) && plan.finiteSources().isDone(tp)) {
            markFiniteDone(tp);
            return true;
        }
        return false;
    }

    private void markFiniteDone(org.apache.kafka.common.TopicPartition tp) {
        if (finiteDone.add(tp)) {
            watermarks.putLong("done|" + tp.topic() + "|" + tp.partition(), 1L);
        }
    }

    /**
     * Whether every source partition of this task is done: read up to its finite bound, or
     * excluded by a partition_filter. A partition of an infinite source is never done.
     */
    private boolean finiteSourcesDone() {
        if (sourcePartitions.isEmpty()) {
            return false;
        }
        for (org.apache.kafka.common.TopicPartition tp : sourcePartitions) {
            if (filteredPartitions.contains(tp)) {
                continue;
            }
            if (!finiteBounds.containsKey(tp)) {
                return false;
            }
            if (!finiteReadToEnd(tp)) {
                return false;
            }
        }
        return true;
    }

    // ---------------------------------------------------------------- watermarks

    private long inputWatermark(String stream) {
        if (watermarks.streams().contains(stream)) {
            return watermarks.eventWatermark(stream);
        }
        SourceClock clock = sourceClocks.get(stream);
        if (clock != null) {
            return clock.eventWatermark();
        }
        throw new IllegalArgumentException("stream '" + stream + "' is not an input of computation '" + spec.id() + "'");
    }

    private long minInputWatermark() {
        long min = sourceComputation ? sourceEventWatermark() : Long.MAX_VALUE;
        for (String s : watermarks.streams()) {
            min = Math.min(min, watermarks.eventWatermark(s));
        }
        return min == Long.MAX_VALUE ? Long.MIN_VALUE : min;
    }

    /**
     * The sources' system watermark: per source, the newest record's system time, or the clock once
     * the source is quiet; the minimum over the sources.
     */
    private long sourceSystemWatermark(long nowMs) {
        catchUpPause();
        long activeMs = sourceIdleness.activeMs(nowMs);
        long min = Long.MAX_VALUE;
        for (SourceClock c : sourceClocks.values()) {
            min = Math.min(min, c.systemWatermark(nowMs, activeMs));
        }
        return min == Long.MAX_VALUE ? nowMs * 1_000_000L : min;
    }

    /**
     * The sources' event watermark: the watermark of the one source stream; with several (a keyed
     * Transform), the minimum over those that read a record within {@code idle_partitions.duration}
     * (over all of them when every one is idle).
     */
    private long sourceEventWatermark() {
        catchUpPause();
        if (sourceClocks.size() == 1) {
            return sourceClocks.values().iterator().next().eventWatermark();
        }
        long now = activeNowMs();
        long idleMs = spec.watermarkStrategy().idleDuration().toMillis();
        long active = Long.MAX_VALUE;
        long all = Long.MAX_VALUE;
        for (SourceClock c : sourceClocks.values()) {
            long wm = c.eventWatermark();
            all = Math.min(all, wm);
            if (now - c.lastRecordActiveMs < idleMs || recordsWaiting(c.partitions)) {
                active = Math.min(active, wm);
            }
        }
        long min = active != Long.MAX_VALUE ? active : all;
        return min == Long.MAX_VALUE ? Long.MIN_VALUE : min;
    }

    /** The timestamps one source stream has read, for its watermarks. */
    private final class SourceClock {
        long maxEventTs = Long.MIN_VALUE;
        long lastSystemTs = Long.MIN_VALUE;
        /** On the active clock, as {@link #lastRecordActiveMs}. */
        long lastRecordActiveMs;
        /** This task's partitions of the source's topics. */
        final List<org.apache.kafka.common.TopicPartition> partitions = new ArrayList<>(1);

        long eventWatermark() {
            if (maxEventTs == Long.MIN_VALUE) {
                return Long.MIN_VALUE;
            }
            long wm = maxEventTs - spec.watermarkStrategy().outOfOrdernessBound().toNanos();
            return wm > maxEventTs ? Long.MIN_VALUE : wm; // wrapped below Long.MIN_VALUE
        }

        /** The clock once the source is quiet (no record for the watermark interval, paused time not counted). */
        long systemWatermark(long nowMs, long activeMs) {
            boolean quiet = activeMs - lastRecordActiveMs >= plan.watermarks().intervalMs()
                    && !recordsWaiting(partitions); // records waiting: not caught up
            return quiet ? nowMs * 1_000_000L : lastSystemTs;
        }
    }

    /**
     * watermark_alignment: a source partition paused by alignment has records waiting, so it is not
     * quiet: its idleness (and its clocks' quiet time) counts from the end of its last pause, not from
     * its last record, or readers could skip it as idle right after it resumed.
     */
    private void catchUpPause() {
        if (pauseClock == null) {
            return;
        }
        long pausedMs = pauseClock.lastPausedMs();
        if (pausedMs == Long.MIN_VALUE) {
            return;
        }
        long paused = sourceIdleness.activeMs(pausedMs);
        if (paused > lastRecordActiveMs) {
            lastRecordActiveMs = paused;
            for (SourceClock c : sourceClocks.values()) {
                c.lastRecordActiveMs = Math.max(c.lastRecordActiveMs, paused);
            }
        }
    }

    /**
     * Now on the clock source idleness is measured on: the wall clock less the time the runtime kept its
     * sources paused ({@code FlowRuntime.pause()}, a drain), when their silence says nothing about them.
     */
    private long activeNowMs() {
        return sourceIdleness.activeMs(context.currentSystemTimeMs());
    }

    /**
     * Whether this task's main consumer knows of records waiting in one of the partitions (not counting
     * those a partition_filter excludes or a finite source has read to its bound: their records are
     * dropped, so their lag says nothing about input to come).
     */
    private boolean recordsWaiting(List<org.apache.kafka.common.TopicPartition> partitions) {
        for (org.apache.kafka.common.TopicPartition tp : partitions) {
            if (sourceIdleness.waiting(tp) && !filteredPartitions.contains(tp) && !finiteReadToEnd(tp)) {
                return true;
            }
        }
        return false;
    }

    /** Whether watermark_alignment keeps this task's source partitions paused now. */
    private boolean alignmentPaused() {
        return alignedPartitions != null && plan.alignment().blocked().containsAll(alignedPartitions);
    }

    /**
     * watermark_alignment: reports the sources' own watermark (not held by timers) and idleness to
     * this instance's alignment and, on a watermark emission, to the watermark store for the other
     * instances; a completed finite source no longer holds its group back.
     */
    private void reportAlignment(boolean emission) {
        long now = activeNowMs();
        catchUpPause();
        boolean completed = finiteSourcesDone();
        boolean idle = completed || now - lastRecordActiveMs >= spec.watermarkStrategy().idleDuration().toMillis()
                && !alignmentPaused() && !recordsWaiting(sourcePartitions);
        // monotonic, like any watermark, also across restarts (the sources' clocks start over empty after one)
        alignedWatermark = Math.max(alignedWatermark, completed ? Long.MAX_VALUE : sourceEventWatermark());
        plan.alignment().reportLocal(spec.id(), context.taskId().partition(), alignedWatermark, idle, alignedPartitions);
        if (emission) {
            watermarks.recordAlignment(alignedWatermark, idle);
        }
    }

    /** Sends watermarks if they changed and the interval passed since the last send. */
    private void maybeEmitWatermarks() {
        long now = context.currentSystemTimeMs();
        if (lastEmitWallMs == Long.MIN_VALUE || now - lastEmitWallMs >= plan.watermarks().intervalMs()) {
            emitWatermarks();
        }
    }

    /**
     * Computes this task's output watermarks and completion and sends them to every partition of
     * every internal output topic when they changed, or when the heartbeat is due.
     */
    private void emitWatermarks() {
        long now = context.currentSystemTimeMs();
        long event;
        long system;
        boolean idle = false;
        boolean completed = false;
        if (sourceComputation) {
            catchUpPause();
            event = sourceEventWatermark();
            system = sourceSystemWatermark(now);
            // a source partition paused by watermark_alignment has data waiting: not idle, or readers would skip it
            // (its records would then arrive behind their watermark); it holds nothing back, being ahead of its group
            // nor is one with records waiting in its topic (the consumer has not handed them over yet)
            idle = activeNowMs() - lastRecordActiveMs >= spec.watermarkStrategy().idleDuration().toMillis()
                    && !alignmentPaused() && !recordsWaiting(sourcePartitions);
            completed = finiteSourcesDone() && visitorsDone();
            if (alignedPartitions != null) {
                reportAlignment(true);
            }
            if (timerStore != null) { // a keyed source with timers: the same hold as on internal inputs
                event = Math.min(event, timerStore.watermarkHold());
                boolean holding = holdingTimersPending();
                completed &= !holding;
                idle &= !holding; // its pending timers' outputs are still to come: readers must wait for them
            }
        } else {
            event = Long.MAX_VALUE;
            system = Long.MAX_VALUE;
            completed = !watermarks.streams().isEmpty();
            for (String s : watermarks.streams()) {
                event = Math.min(event, watermarks.eventWatermark(s));
                system = Math.min(system, watermarks.systemWatermark(s));
                completed &= watermarks.completed(s);
            }
            if (watermarks.streams().isEmpty()) {
                event = Long.MIN_VALUE;
                system = now * 1_000_000L;
                completed = !visitors.isEmpty(); // no inputs: nothing to wait for but the visitors
            }
            completed &= visitorsDone();
            if (timerStore != null) {
                event = Math.min(event, timerStore.watermarkHold()); // the watermark hold
                completed &= !holdingTimersPending();
            }
            if (batch != null) {
                event = Math.min(event, batch.minEventTimestamp()); // buffered inputs hold it too
                completed &= batch.isEmpty();
            }
        }
        if (completed) {
            event = Long.MAX_VALUE;
            system = Long.MAX_VALUE;
        }
        boolean wasCompleted = watermarks.output().completed();
        WatermarkTracker.Output out = watermarks.recordOutput(event, system, completed);
        Map<String, WatermarkTracker.Output> own = ownDependencies.isEmpty() ? Map.of() : new HashMap<>();
        boolean ownCompletedNow = false;
        for (Map.Entry<String, List<String>> e : ownDependencies.entrySet()) {
            long[] w = dependencyWatermarks(e.getValue(), now);
            boolean ownWasCompleted = watermarks.output(e.getKey()).completed();
            WatermarkTracker.Output o = watermarks.recordOutput(e.getKey(), w[0], w[1], w[2] != 0);
            ownCompletedNow |= o.completed() && !ownWasCompleted;
            own.put(e.getKey(), o);
        }
        boolean changed = !out.equals(lastEmitted) || !own.equals(lastEmittedOwn);
        if (out.completed() && !wasCompleted) {
            String task = spec.id() + "/" + context.taskId().partition();
            context.forward(new Record<>(task.getBytes(java.nio.charset.StandardCharsets.UTF_8),
                    "completed".getBytes(java.nio.charset.StandardCharsets.UTF_8), now), plan.statusNode());
        }
        if ((out.completed() && !wasCompleted) || ownCompletedNow) {
            // Kafka Streams commits the task right after this punctuation (the control records below included),
            // not up to commit.interval.ms later: the readers of a completed output (the next computation,
            // awaitCompletion) wait for these records
            context.commit();
        }
        boolean heartbeat = lastEmitWallMs == Long.MIN_VALUE || now - lastEmitWallMs >= plan.watermarks().heartbeatMs();
        if ((changed || heartbeat) && !controlNodes.isEmpty()) {
            long sequence = ++controlSequence;
            for (Map.Entry<String, List<String>> e : controlNodesByStream.entrySet()) {
                WatermarkTracker.Output o = own.getOrDefault(e.getKey(), out);
                io.flowkafka.avro.ControlRecord r = io.flowkafka.avro.ControlRecord.newBuilder()
                        .setComputation(spec.id()).setPartition(context.taskId().partition())
                        .setEventWatermark(o.eventWatermark()).setSystemWatermark(o.systemWatermark())
                        .setCompleted(o.completed()).setIdle(idle && !o.completed())
                        .setMaxIdleProducers(maxIdleProducers).setSequence(sequence).build();
                byte[] value = controlCodec.encode(r);
                for (String node : e.getValue()) {
                    RecordHeaders h = new RecordHeaders();
                    h.add(FlowHeaders.CONTROL, new byte[] {1});
                    context.forward(new Record<>(new byte[8], value, now, h), node);
                }
            }
        }
        if (heartbeat && plan.controlTopic() != null) {
            context.forward(new Record<>(io.flowkafka.internal.partition.OwnPartitioner.keyOf(
                    context.taskId().partition()), new byte[0], now), spec.id() + ".sink.control");
        }
        if (changed || heartbeat) {
            lastEmitted = out;
            lastEmittedOwn = own;
            lastEmitWallMs = now;
        }
    }

    /**
     * The watermarks and completion of an output stream from its own {@code streams_dependency}:
     * the minimum over the inputs, sources, timer streams and key visitors it lists; complete when
     * all of them are. Returns {event, system, completed (1/0)}.
     */
    private long[] dependencyWatermarks(List<String> deps, long nowMs) {
        long event = Long.MAX_VALUE;
        long system = Long.MAX_VALUE;
        boolean completed = true;
        for (String d : deps) {
            int timer = timerIndex(d);
            int visitor = visitorIndex(d);
            if (watermarks.streams().contains(d)) {
                event = Math.min(event, watermarks.eventWatermark(d));
                system = Math.min(system, watermarks.systemWatermark(d));
                completed &= watermarks.completed(d);
            } else if (sourceClocks.containsKey(d)) {
                boolean done = finiteSourcesDone();
                if (!done) {
                    event = Math.min(event, sourceClocks.get(d).eventWatermark());
                    system = Math.min(system, sourceClocks.get(d).systemWatermark(nowMs, sourceIdleness.activeMs(nowMs)));
                }
                completed &= done;
            } else if (visitor >= 0) {
                io.flowkafka.internal.visitor.KeyVisitor v = visitors.get(visitor);
                if (!v.completed()) {
                    event = Math.min(event, v.lastEventTimestamp());
                    system = Math.min(system, nowMs * 1_000_000L);
                    completed = false;
                }
            } else if (timer >= 0 && timerStore != null) {
                boolean pending = timerStore.hasPending(timer);
                boolean inputsDone = !sourceComputation || finiteSourcesDone();
                for (String s : watermarks.streams()) {
                    inputsDone &= watermarks.completed(s);
                }
                if (!(inputsDone && (!pending || timeTypes[timer] == io.flowkafka.spec.TimeType.REAL_TIME))) {
                    long hold = timerStore.watermarkHold();
                    event = Math.min(event, Math.min(timerWatermark(timer), hold));
                    system = Math.min(system, timeTypes[timer] == io.flowkafka.spec.TimeType.EVENT_TIME
                            ? nowMs * 1_000_000L : timerWatermark(timer));
                    completed = false;
                }
            }
        }
        if (batch != null && !batch.isEmpty()) {
            event = Math.min(event, batch.minEventTimestamp()); // a batch may write to any output
            completed = false;
        }
        if (completed) {
            return new long[] {Long.MAX_VALUE, Long.MAX_VALUE, 1};
        }
        return new long[] {event, system, 0};
    }

    private int timerIndex(String stream) {
        for (int i = 0; i < spec.timers().size(); i++) {
            if (spec.timers().get(i).id().equals(stream)) {
                return i;
            }
        }
        return -1;
    }

    private int visitorIndex(String stream) {
        for (int i = 0; i < visitorSpecs.size(); i++) {
            if (visitorSpecs.get(i).id().equals(stream)) {
                return i;
            }
        }
        return -1;
    }

    private List<Record<byte[], byte[]>> encodeOutputs(MessageId inputId, long inputEts, List<String> nodes) {
        List<CallContext.Output> outs = call.outputs;
        if (outs.isEmpty()) {
            return List.of();
        }
        List<Record<byte[], byte[]>> records = new ArrayList<>(outs.size());
        long nowNanos = context.currentSystemTimeMs() * 1_000_000L;
        for (int position = 0; position < outs.size(); position++) {
            CallContext.Output o = outs.get(position);
            List<MessageId> parents = o.parentsOrInput(inputId);
            MessageId id = MessageIds.output(parents, computationTag, position);
            long ets = o.eventTimestampOr(inputEts);
            OutputBinding binding = outputs.get(o.message().streamId);
            binding.encode(o.message().payload, id, ets, nowNanos, parents, records, nodes);
        }
        return records;
    }

    /** This task's wall-clock punctuations, cancelled at close so none runs against a dropped task. */
    private final List<org.apache.kafka.streams.processor.Cancellable> punctuations = new ArrayList<>();

    private void schedule(java.time.Duration interval, org.apache.kafka.streams.processor.Punctuator punctuator) {
        punctuations.add(context.schedule(interval, org.apache.kafka.streams.processor.PunctuationType.WALL_CLOCK_TIME,
                punctuator));
    }

    void close() {
        punctuations.forEach(org.apache.kafka.streams.processor.Cancellable::cancel);
        punctuations.clear();
        if (alignedPartitions != null) {
            plan.alignment().releaseLocal(spec.id(), context.taskId().partition());
        }
        for (io.micrometer.core.instrument.Meter m : meters) {
            plan.visitors().meters().remove(m);
        }
        meters.clear();
        if (!visitors.isEmpty()) {
            plan.visitors().status().clearTask(spec.id(), context.taskId().partition());
        }
        if (function != null) {
            function.close();
        }
        inputs.values().forEach(InputBinding::close);
        outputs.values().forEach(o -> o.sinks.forEach(sb -> {
            if (sb != null) {
                sb.close();
            }
        }));
    }

    /** Decodes records of one input topic. */
    private final class InputBinding {
        final String streamId;
        final @Nullable SourceSpec source;
        final AvroCodec payloadCodec;
        final Schema schema;
        final boolean json;
        final @Nullable String keyColumn;
        final @Nullable String timestampColumn;
        final long timestampUnitNanos;
        final io.flowkafka.internal.source.@Nullable PartitionFilter partitionFilter;
        /** The source's value_serde and the converter of its records to the stream's schema, or null. */
        final org.apache.kafka.common.serialization.@Nullable Serde<Object> valueSerde;
        final @Nullable String valueSerdeClass;
        final io.flowkafka.internal.serde.@Nullable RecordConverter converter;
        /** The clock of the source stream, or null for an internal stream. */
        final @Nullable SourceClock clock;
        /** A source read by a keyed Transform: computes the group-by key from the record; else null. */
        final KeyCodec.@Nullable Extractor keyExtractor;
        int origin;
        int originPartition = -1;

        InputBinding(ComputationPlan.Input in, Schema schema) {
            this.streamId = in.streamId();
            this.source = in.source();
            this.schema = schema;
            this.payloadCodec = new AvroCodec(schema);
            if (source != null) {
                Map<String, Object> p = source.parameters();
                this.partitionFilter = io.flowkafka.internal.source.KafkaSourceParameters.partitionFilter(source);
                Object serdeClass = p.get("value_serde");
                if (serdeClass != null) {
                    this.valueSerde = io.flowkafka.internal.serde.PluggableSerdes.create(serdeClass.toString(),
                            io.flowkafka.internal.serde.PluggableSerdes.configs(p.get("serde_config"),
                                    context.appConfigs()), false,
                            "computation '" + spec.id() + "', source '" + streamId + "'");
                    this.valueSerdeClass = serdeClass.toString();
                    this.converter = new io.flowkafka.internal.serde.RecordConverter(schema, "stream '" + streamId + "'");
                } else {
                    this.valueSerde = null;
                    this.valueSerdeClass = null;
                    this.converter = null;
                }
                this.json = !"avro".equals(String.valueOf(p.getOrDefault("format", "json")));
                this.keyColumn = p.containsKey("key_column") ? String.valueOf(p.get("key_column")) : null;
                String strategyColumn = spec.watermarkStrategy().timestampColumn();
                this.timestampColumn = strategyColumn != null ? strategyColumn
                        : p.containsKey("event_timestamp_column") ? String.valueOf(p.get("event_timestamp_column")) : null;
                this.timestampUnitNanos = unitNanos(String.valueOf(p.getOrDefault("event_timestamp_unit", "ms")));
                this.keyExtractor = spec.readsKeyedSource() ? keyCodec.extractor(spec.groupBySchema(), schema) : null;
                this.clock = sourceClocks.computeIfAbsent(streamId, k -> new SourceClock());
                this.clock.partitions.add(new org.apache.kafka.common.TopicPartition(in.topic(), context.taskId().partition()));
            } else {
                this.keyExtractor = null;
                this.clock = null;
                this.json = false;
                this.keyColumn = null;
                this.timestampColumn = null;
                this.timestampUnitNanos = 1;
                this.partitionFilter = null;
                this.valueSerde = null;
                this.valueSerdeClass = null;
                this.converter = null;
            }
        }

        void close() {
            if (valueSerde != null) {
                valueSerde.close();
            }
        }

        FlowMessage decode(Record<byte[], byte[]> record, RecordMetadata md) {
            if (source == null) {
                FlowHeaders.Metadata meta = FlowHeaders.read(record.headers());
                GenericRecord key = keyCodec.decode(record.key());
                GenericRecord payload = payloadCodec.decode(record.value());
                return new FlowMessage(meta.messageId(), meta.eventTimestamp(), meta.systemTimestamp(), streamId,
                        key, payload, meta.parents());
            }
            if (record.value() == null) {
                throw new IllegalArgumentException("record value is null (a tombstone); source '" + streamId
                        + "' expects a " + (valueSerde != null ? "record of value_serde " + valueSerdeClass
                                : json ? "JSON object" : "Avro record"));
            }
            GenericRecord payload;
            if (valueSerde != null) {
                Object read = valueSerde.deserializer().deserialize(md.topic(), record.headers(), record.value());
                if (!(read instanceof GenericRecord r)) {
                    throw new IllegalArgumentException("value_serde " + valueSerdeClass + " of source '"
                            + streamId + "' read " + (read == null ? "null" : "a " + read.getClass().getName())
                            + ", not a GenericRecord");
                }
                payload = converter.convert(r);
            } else {
                payload = json ? JsonRecords.fromJson(record.value(), schema) : payloadCodec.decode(record.value());
            }
            if (keyColumn != null) {
                if (record.key() == null) {
                    throw new IllegalArgumentException("record key is null, but source '" + streamId
                            + "' has key_column '" + keyColumn + "' and needs a key");
                }
                ((GenericData.Record) payload).put(keyColumn, new String(record.key(), StandardCharsets.UTF_8));
            }
            long ets;
            if (timestampColumn != null) {
                Object v = payload.get(timestampColumn);
                if (!(v instanceof Number n)) {
                    throw new IllegalArgumentException("event_timestamp_column '" + timestampColumn + "' is "
                            + (v == null ? "null" : "not a number: " + v));
                }
                ets = n.longValue() * timestampUnitNanos;
            } else {
                ets = record.timestamp() * 1_000_000L;
            }
            if (md.partition() != originPartition) {
                origin = MessageIds.origin(md.topic(), md.partition());
                originPartition = md.partition();
            }
            MessageId id = MessageIds.source(origin, md.offset());
            long sts = record.timestamp() * 1_000_000L;
            GenericRecord key = keyExtractor == null ? keyCodec.emptyKey() : keyExtractor.key(payload);
            return new FlowMessage(id, ets, sts, streamId, key, payload, List.of());
        }
    }

    private static long unitNanos(String unit) {
        return switch (unit) {
            case "ns" -> 1L;
            case "us" -> 1_000L;
            case "ms" -> 1_000_000L;
            case "s" -> 1_000_000_000L;
            default -> throw new IllegalArgumentException("event_timestamp_unit must be one of ns, us, ms, s but was " + unit);
        };
    }

    /** Encodes one output stream's messages for each of its routes. */
    private final class OutputBinding {
        final AvroCodec codec;
        final List<ComputationPlan.Route> routes;
        final List<KeyCodec> keyCodecs = new ArrayList<>();
        final List<KeyCodec.Extractor> extractors = new ArrayList<>();
        final List<SinkBinding> sinks = new ArrayList<>();
        /** Per route, what rejects its records: {@code topic <name>}, or {@code sink '<id>'} for a synchronous sink. */
        final List<String> targets = new ArrayList<>();

        OutputBinding(String streamId, Schema schema, List<ComputationPlan.Route> routes) {
            this.codec = new AvroCodec(schema);
            this.routes = routes;
            for (ComputationPlan.Route r : routes) {
                targets.add(r instanceof ComputationPlan.SinkRoute sr && sr.writer() != null
                        ? "sink '" + sr.sink().id() + "'" : "topic " + r.topic());
                if (r instanceof ComputationPlan.InternalRoute ir) {
                    KeyCodec kc = KeyCodec.of(ir.consumerGroupBy(), ir.consumerId());
                    keyCodecs.add(kc);
                    extractors.add(kc.extractor(ir.consumerGroupBy(), schema));
                    sinks.add(null);
                } else {
                    keyCodecs.add(null);
                    extractors.add(null);
                    sinks.add(SinkBinding.of(((ComputationPlan.SinkRoute) r).sink(), context.appConfigs(), spec.id()));
                }
            }
        }

        void encode(GenericRecord payload, MessageId id, long ets, long sts, List<MessageId> parents,
                List<Record<byte[], byte[]>> out, List<String> nodes) {
            byte[] value = null;
            byte[] meta = null;
            for (int i = 0; i < routes.size(); i++) {
                ComputationPlan.Route route = routes.get(i);
                if (route instanceof ComputationPlan.InternalRoute) {
                    if (value == null) { // payload and metadata are the same for every internal route
                        value = codec.encode(payload);
                        meta = FlowHeaders.encode(id, ets, sts, parents);
                    }
                    byte[] key = keyCodecs.get(i).encode(extractors.get(i).key(payload));
                    Headers headers = new RecordHeaders();
                    headers.add(FlowHeaders.META, meta);
                    Record<byte[], byte[]> r = new Record<>(key, value, sts / 1_000_000L, headers);
                    checkOutput(targets.get(i), r);
                    out.add(r);
                    nodes.add(route.sinkNode());
                    continue;
                }
                ComputationPlan.SinkRoute sinkRoute = (ComputationPlan.SinkRoute) route;
                if (sinkRoute.writer() != null) {
                    // a synchronous external sink: sent once the call succeeded, acknowledged before the epoch commits
                    Record<byte[], byte[]> r = sinkRecord(sinks.get(i), payload, id, ets, sts);
                    checkNotRejected(targets.get(i), r);
                    var writer = sinkRoute.writer();
                    int partition = context.taskId().partition();
                    callSinkWrites.add(() -> writer.write(partition, new io.flowkafka.spi.OutboxRecord(-1, id, r.key(),
                            r.value(), r.headers(), r.timestamp())));
                    continue;
                } else if (sinkRoute.queue() != null) {
                    // at most once: into the sink's in-memory queue once the call's epoch committed (dropped when full)
                    Record<byte[], byte[]> r = sinkRecord(sinks.get(i), payload, id, ets, sts);
                    var queue = sinkRoute.queue();
                    int partition = context.taskId().partition();
                    callQueueOffers.add(() -> queue.offer(partition, id, r.key(), r.value(), r.headers(), r.timestamp()));
                    continue;
                } else if (sinkRoute.outbox()) {
                    // an async sink: the record the sink will write, plus its message metadata and the writing task's
                    // partition, into the outbox inside this transaction
                    Record<byte[], byte[]> r = sinkRecord(sinks.get(i), payload, id, ets, sts);
                    if (meta == null) {
                        meta = FlowHeaders.encode(id, ets, sts, parents);
                    }
                    Headers headers = new RecordHeaders();
                    for (org.apache.kafka.common.header.Header h : r.headers()) {
                        headers.add(h);
                    }
                    headers.add(FlowHeaders.META, meta);
                    headers.add(io.flowkafka.internal.outbox.OutboxService.PARTITION_HEADER, outboxPartitionHeader());
                    Record<byte[], byte[]> outbox = new Record<>(r.key(), r.value(), r.timestamp(), headers);
                    checkOutput(targets.get(i), outbox);
                    out.add(outbox);
                } else {
                    Record<byte[], byte[]> r = sinkRecord(sinks.get(i), payload, id, ets, sts);
                    checkOutput(targets.get(i), r);
                    out.add(r);
                }
                nodes.add(route.sinkNode());
            }
        }

        private Record<byte[], byte[]> sinkRecord(SinkBinding sink, GenericRecord payload, MessageId id, long ets, long sts) {
            Headers headers = null;
            if (sink.idHeader != null) {
                headers = new RecordHeaders();
                headers.add(sink.idHeader, id.toString().getBytes(StandardCharsets.UTF_8));
            }
            byte[] value;
            if (sink.valueSerde != null) {
                // a pluggable serde may add headers (e.g. a schema id): give it the record's headers
                if (headers == null) {
                    headers = new RecordHeaders();
                }
                value = sink.valueSerde.serializer().serialize(sink.topic, headers, payload);
            } else if (sink.payloadColumn != null) {
                value = bytesOf(payload.get(sink.payloadColumn), "payload_column", sink.payloadColumn);
            } else if (sink.avro) {
                value = codec.encode(payload);
            } else {
                value = JsonRecords.toJson(payload);
            }
            byte[] key = sink.keyColumn == null ? null : bytesOf(payload.get(sink.keyColumn), "key_column", sink.keyColumn);
            long ts = (sink.systemTime ? sts : ets) / 1_000_000L;
            return headers == null ? new Record<>(key, value, ts) : new Record<>(key, value, ts, headers);
        }

        private static byte @Nullable [] bytesOf(@Nullable Object v, String param, String column) {
            if (v == null) {
                return null;
            }
            if (v instanceof java.nio.ByteBuffer b) {
                byte[] a = new byte[b.remaining()];
                b.duplicate().get(a);
                return a;
            }
            if (v instanceof CharSequence || v instanceof Number || v instanceof Boolean) {
                return v.toString().getBytes(StandardCharsets.UTF_8);
            }
            throw new IllegalArgumentException(param + " '" + column + "' must be a string, number or bytes column");
        }
    }

    private byte @Nullable [] outboxPartitionHeader;

    private byte[] outboxPartitionHeader() {
        byte[] h = outboxPartitionHeader;
        if (h == null) {
            h = io.flowkafka.internal.outbox.OutboxService.partitionHeader(context.taskId().partition());
            outboxPartitionHeader = h;
        }
        return h;
    }

    /**
     * A Kafka sink's parameters, read once, and its value_serde (configured from
     * {@code serde_config} over the deployment's {@code flow.serde.*}), if any; {@code topic} is the
     * target topic the serde is told about (for TKafkaSink too, whose records go through the outbox).
     */
    private record SinkBinding(@Nullable String payloadColumn, boolean avro, @Nullable String keyColumn,
            @Nullable String idHeader, boolean systemTime, String topic,
            org.apache.kafka.common.serialization.@Nullable Serde<Object> valueSerde) {
        static SinkBinding of(SinkSpec sink, Map<String, Object> deployment, String computation) {
            Map<String, Object> p = sink.parameters();
            Object serdeClass = p.get("value_serde");
            return new SinkBinding(p.containsKey("payload_column") ? p.get("payload_column").toString() : null,
                    "avro".equals(String.valueOf(p.getOrDefault("format", "json"))),
                    p.containsKey("key_column") ? p.get("key_column").toString() : null,
                    p.containsKey("message_id_header") ? p.get("message_id_header").toString() : null,
                    "system".equals(String.valueOf(p.getOrDefault("timestamp", "event"))),
                    String.valueOf(p.get("topic")),
                    serdeClass == null ? null : io.flowkafka.internal.serde.PluggableSerdes.create(serdeClass.toString(),
                            io.flowkafka.internal.serde.PluggableSerdes.configs(p.get("serde_config"), deployment), false,
                            "computation '" + computation + "', sink '" + sink.id() + "'"));
        }

        void close() {
            if (valueSerde != null) {
                valueSerde.close();
            }
        }
    }

    /** For tests: the computation kind. */
    ComputationKind kind() {
        return spec.kind();
    }

    /** The tags of this task's store meters. */
    private List<io.micrometer.core.instrument.Tag> storeTags() {
        return List.of(io.micrometer.core.instrument.Tag.of("pipeline", plan.pipeline()),
                io.micrometer.core.instrument.Tag.of("computation", spec.id()),
                io.micrometer.core.instrument.Tag.of("partition", Integer.toString(context.taskId().partition())));
    }
}
