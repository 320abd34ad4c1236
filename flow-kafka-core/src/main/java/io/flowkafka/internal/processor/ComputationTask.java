package io.flowkafka.internal.processor;

import io.flowkafka.api.BatchFunction;
import io.flowkafka.api.Message;
import io.flowkafka.api.MessageId;
import io.flowkafka.api.ProcessFunction;
import io.flowkafka.internal.dlq.DeadLetterWriter;
import io.flowkafka.internal.dlq.FlowProcessingException;
import io.flowkafka.internal.message.FlowHeaders;
import io.flowkafka.internal.message.FlowMessage;
import io.flowkafka.internal.message.MessageIds;
import io.flowkafka.internal.outbox.AtMostOnceEpochs;
import io.flowkafka.internal.outbox.EpochCommits;
import io.flowkafka.internal.serde.AvroCodec;
import io.flowkafka.internal.serde.JsonRecords;
import io.flowkafka.internal.serde.KeyCodec;
import io.flowkafka.internal.source.FiniteSourceProgress;
import io.flowkafka.internal.source.SourceDecoder;
import io.flowkafka.internal.timers.TimerFiring;
import io.flowkafka.internal.visitor.VisitorDriver;
import io.flowkafka.internal.state.KeyStates;
import io.flowkafka.internal.watermarks.ControlRecords;
import io.flowkafka.internal.watermarks.SourceClocks;
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
    /** Encodes and routes the outputs of this attempt's calls. */
    private OutputRouter router;
    private CallContext call;
    private long computationTag;
    private WatermarkTracker watermarks;
    private final ControlRecords controlCodec = new ControlRecords();
    private final List<String> controlNodes = new ArrayList<>();
    private boolean sourceComputation;
    /** Whether a timer stream lists the streams it waits on ({@code streams}, {@code streams_with_delays}). */
    private boolean anyTimerWatchesStreams;
    private int maxIdleProducers;
    /** The clocks of this task's source streams (empty for a computation without sources). */
    private SourceClocks clocks;
    /** watermark_alignment: the source partitions this task reads, reported with its watermark; null if not aligned. */
    private java.util.@Nullable Set<org.apache.kafka.common.TopicPartition> alignedPartitions;
    private io.flowkafka.internal.watermarks.WatermarkAlignment.@Nullable Limit alignmentLimit;
    private long alignmentLimitReported = Long.MIN_VALUE;
    private long alignedWatermark = Long.MIN_VALUE;
    private long lastEmitWallMs = Long.MIN_VALUE;
    private long controlSequence;
    private WatermarkTracker.Output lastEmitted;
    private io.flowkafka.internal.timers.@Nullable TimerStore timerStore;
    private io.flowkafka.spec.TimeType[] timeTypes = new io.flowkafka.spec.TimeType[0];
    /** Fires this attempt's due timers in bounded steps; null without timers. */
    private @Nullable TimerFiring firing;
    private List<@Nullable Map<String, java.time.Duration>> watchedStreams = List.of();
    private final List<String> dlqNodes = new ArrayList<>();
    /** This attempt's key visitors. */
    private VisitorDriver visitors;
    private final Map<String, Integer> visitOrigins = new HashMap<>();
    private final List<io.micrometer.core.instrument.Meter> meters = new ArrayList<>();
    /** Control sink nodes by output stream. */
    private final Map<String, List<String>> controlNodesByStream = new java.util.LinkedHashMap<>();
    /** Output streams with their own streams_dependency, and those dependencies. */
    private final Map<String, List<String>> ownDependencies = new java.util.LinkedHashMap<>();
    private Map<String, WatermarkTracker.Output> lastEmittedOwn = Map.of();
    /** How far this task read its finite source partitions (from the changelogged store). */
    private FiniteSourceProgress finite;
    /** The input buffer of a SwiftMap with allow_batching_with_relaxed_guarantees; null otherwise. */
    private @Nullable BatchBuffer batch;
    private int maxBatchSize;
    private long maxBatchDelayMs;
    private io.micrometer.core.instrument.DistributionSummary batchSizes;
    /** Batches cut, by rule: size, delay, completion. */
    private io.micrometer.core.instrument.Counter[] batchCuts;

    /** Builds the task's state from its stores: what {@code init()} of the processor does, each time it is called. */
    ComputationTask(ComputationPlan plan, ProcessorContext<byte[], byte[]> context) {
        this.plan = plan;
        this.spec = plan.spec();
        this.context = context;
        Object rejected = context.appConfigs().get(io.flowkafka.internal.dlq.RejectedOutputs.CONFIG);
        rejectedOutputs = rejected instanceof io.flowkafka.internal.dlq.RejectedOutputs r ? r : null;
        atMostOnce = new AtMostOnceEpochs(context.appConfigs().get(EpochCommits.CONFIG) instanceof EpochCommits c ? c
                : null);
        if (plan.hasEpochBarrier()) {
            io.flowkafka.internal.outbox.EpochBarrierStore barrier = context.getStateStore(
                    io.flowkafka.internal.outbox.EpochBarrierStore.storeName(spec.id()));
            barrier.beforeCommit(atMostOnce::beforeCommit);
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
        this.sourceComputation = !spec.sourceStreams().isEmpty();
        boolean aligned = sourceComputation && plan.alignment().aligned(spec.id());
        // finite progress is read from the watermark store, made below: settled partitions are asked for later
        this.clocks = new SourceClocks(plan.sourceIdleness(), context::currentSystemTimeMs,
                spec.watermarkStrategy().outOfOrdernessBound(), plan.watermarks().intervalMs(),
                spec.watermarkStrategy().idleDuration(), tp -> finite.filtered(tp) || finite.readToEnd(tp),
                aligned ? plan.alignment().pauseClock(spec.id(), context.taskId().partition()) : null);
        for (ComputationPlan.Input in : plan.inputs().values()) {
            SourceDecoder decoder = new SourceDecoder(in, plan.inputSchemas().get(in.streamId()), keyCodec, spec,
                    context.appConfigs());
            SourceClocks.Clock clock = in.source() == null ? null : clocks.register(in.streamId(),
                    new org.apache.kafka.common.TopicPartition(in.topic(), context.taskId().partition()));
            inputs.put(in.topic(), new InputBinding(decoder, clock));
        }
        Map<String, WatermarkTracker.ExpectedProducers> expected = new java.util.LinkedHashMap<>();
        plan.writers().forEach((stream, writer) -> expected.put(stream,
                new WatermarkTracker.ExpectedProducers(writer, plan.partitionCounts().of(writer))));
        this.watermarks = new WatermarkTracker(context.getStateStore(WatermarkTracker.storeName(spec.id())), expected);
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
        if (aligned) {
            java.util.Set<org.apache.kafka.common.TopicPartition> tps = new java.util.HashSet<>();
            plan.inputs().values().stream().filter(i -> i.source() != null)
                    .forEach(i -> tps.add(new org.apache.kafka.common.TopicPartition(i.topic(), context.taskId().partition())));
            this.alignedPartitions = java.util.Set.copyOf(tps);
            this.alignmentLimit = plan.alignment().limit(spec.id());
            this.alignedWatermark = watermarks.alignedWatermark(); // where the task was before a restart
        }
        this.lastEmitted = watermarks.output();
        this.finite = new FiniteSourceProgress(spec.sourceStreams(), context.taskId().partition(), watermarks,
                plan.finiteSources(), plan.partitionCounts().singleTask());
        this.call = new CallContext(spec, states, keyCodec, plan.outputSchemas(),
                () -> context.currentSystemTimeMs() * 1_000_000L, context.taskId().partition(), partitionCount,
                this::inputWatermark, this::minInputWatermark);
        this.recordLimit = io.flowkafka.internal.dlq.RecordSizeLimit.of(context.appConfigs());
        this.router = new OutputRouter(plan, context.taskId().partition(), context.appConfigs(), recordLimit,
                rejectedOutputs, atMostOnce);
        this.deadLetters = new DeadLetterWriter(spec.id(), String.valueOf(context.appConfigs().getOrDefault(
                io.flowkafka.internal.dlq.DeadLetterHandler.TOPIC_CONFIG, "dlq")), recordLimit, rejectedOutputs);
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
        if (in.decoder().partitionFilter != null && !in.decoder().partitionFilter.accepts(md.partition())) {
            return; // partition_filter: consumed (its offset commits) but skipped, no output, no dead letter
        }
        if (in.source() != null && finite.anyFinite() && finite.beyondFiniteRange(md)) {
            return;
        }
        if (in.source() == null && FlowHeaders.isControl(record.headers())) {
            if (watermarks.onControl(in.streamId(), controlCodec.decode(record.value()))) {
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
            message = in.decoder().decode(record, md);
            encodedKey = in.source() == null ? record.key() : keyCodec.encode(message.key());
        } catch (RuntimeException e) {
            throw new FlowProcessingException(spec.id(), "decode the record of topic " + md.topic(), e);
        }
        if (batch != null) {
            bufferForBatch(record, md, message);
            return;
        }
        if (in.source() != null) {
            SourceClocks.Clock clock = java.util.Objects.requireNonNull(in.clock());
            clocks.onRecord(clock, message.eventTimestamp(), message.systemTimestamp());
            if (alignmentLimit != null) {
                long limit = alignmentLimit.value();
                if (limit != alignmentLimitReported && clock.eventWatermark() > limit && clocks.eventWatermark() > limit) {
                    alignmentLimitReported = limit; // once per limit: until it moves, another report changes nothing
                    reportAlignment(false, sourcesIdle()); // ahead of the group: be paused now, not at the next emission
                }
            }
        }
        runCall(message.key(), encodedKey, message.messageId(), message.eventTimestamp(), "message",
                () -> call.deliverMessage(function, message, call, call), null);
        if (in.source() != null) {
            if (firing != null && firing.mayBeDue(sourceTimerWatermarkBound())) {
                // a keyed source's event-time timers fire as its watermark passes them, like on a control record;
                // checked against a lower bound of the pending triggers, so most records cost no store read
                fireTimers();
            }
            maybeEmitWatermarks();
        }
    }

    /**
     * Runs one process-function call on an input (message, timer or visit) with all-or-nothing effects
     * ({@link #applyCall}); {@code firedTimer} is deleted with the call's writes.
     */
    private void runCall(GenericRecord key, byte[] encodedKey, MessageId parentId, long defaultEts, String what,
            Runnable user, io.flowkafka.internal.timers.@Nullable PendingTimer firedTimer) {
        call.begin(key, encodedKey, parentId);
        applyCall(what + " " + parentId, user, nodes -> router.encode(call.outputs, parentId, defaultEts,
                context.currentSystemTimeMs() * 1_000_000L, nodes), firedTimer);
    }

    /**
     * The one path of every call, single or batched: runs the user code against the call buffer and encodes its
     * outputs for every route; only if all of that and the row checks succeeded are the buffered state and timer
     * writes applied (plus the deletion of {@code firedTimer}), the outputs forwarded, the synchronous sink writes
     * sent and the at-most-once messages held with the epoch. On failure everything is dropped and
     * {@link FlowProcessingException} thrown.
     */
    private void applyCall(String what, Runnable user,
            java.util.function.Function<List<String>, List<Record<byte[], byte[]>>> encode,
            io.flowkafka.internal.timers.@Nullable PendingTimer firedTimer) {
        router.beginCall();
        atMostOnce.callFailed(); // leftovers of a call whose forward threw belong to no call
        List<Record<byte[], byte[]>> forwards;
        List<String> nodes = new ArrayList<>(2);
        try {
            try {
                user.run();
            } catch (Exception e) {
                throw new FlowProcessingException(spec.id(), "process " + what, e);
            }
            try {
                forwards = encode.apply(nodes);
            } catch (RuntimeException e) {
                throw new FlowProcessingException(spec.id(), "write the outputs of " + what, e);
            }
            try {
                checkStateRows();
            } catch (RuntimeException e) {
                throw new FlowProcessingException(spec.id(), "write the state of " + what, e);
            }
            try {
                checkTimerRows();
            } catch (RuntimeException e) {
                throw new FlowProcessingException(spec.id(), "write the timers of " + what, e);
            }
        } catch (FlowProcessingException e) {
            router.callFailed();
            atMostOnce.callFailed();
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
            java.util.Objects.requireNonNull(firing).noteAdds();
            timerStore.commitCall();
        }
        call.end();
        for (int i = 0; i < forwards.size(); i++) {
            context.forward(forwards.get(i), nodes.get(i));
        }
        router.callSucceeded();
        atMostOnce.callSucceeded();
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
    /** Builds the dead letters of this task's timers, visits and batched messages. */
    private DeadLetterWriter deadLetters;
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

    /** This attempt's at-most-once sink messages, per call and per epoch. */
    private AtMostOnceEpochs atMostOnce;

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
        timersChangelogTarget = io.flowkafka.internal.dlq.RejectedOutputs.changelogTarget(context.applicationId(),
                io.flowkafka.internal.timers.TimerStore.timersStoreName(spec.id()));
        if (ComputationPlan.writesInternalStreams(plan.outputs())) {
            holdsChangelogTarget = io.flowkafka.internal.dlq.RejectedOutputs.changelogTarget(context.applicationId(),
                    io.flowkafka.internal.timers.TimerStore.holdsStoreName(spec.id()));
        }
        call.timers(timerStore, MessageIds.timerTag(spec.id()));
        firing = new TimerFiring(spec, timerStore, plan.outputLimits()::isBlocked, plan.timers().maxPerPunctuation(),
                plan.timers().maxPunctuationMs(), plan.visitors().meters(), List.of("pipeline", plan.pipeline(),
                        "computation", spec.id(), "partition", Integer.toString(context.taskId().partition())),
                sourceComputation);
        for (String name : List.of(io.flowkafka.internal.timers.TimerStore.timersStoreName(spec.id()),
                io.flowkafka.internal.timers.TimerStore.holdsStoreName(spec.id()))) {
            if (name.endsWith(".timers") || ComputationPlan.writesInternalStreams(plan.outputs())) {
                meters.addAll(io.flowkafka.internal.streams.WriteBackStore.registerMeters(context.getStateStore(name),
                        plan.visitors().meters(), storeTags()));
            }
        }
        TimerFiring timers = firing;
        schedule(java.time.Duration.ofMillis(plan.timers().punctuationIntervalMs()), now -> {
            fireTimers();
            timers.buildHolds();
            maybeEmitWatermarks();
        });
        // a backlog of due timers, or a holds index to build, advances in bounded steps as often as the stream
        // thread comes back to punctuate, not only once per interval, with polling and commits in between
        schedule(java.time.Duration.ofMillis(Math.max(1, plan.timers().punctuationIntervalMs() / 10)), now -> {
            boolean behind = timers.behind();
            if (behind || timers.buildingHolds()) {
                if (behind) {
                    fireTimers();
                }
                timers.buildHolds();
                maybeEmitWatermarks(); // the exact hold once the build completed
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
            return clocks.eventWatermark();
        }
        return clocks.maxEventWatermark();
    }

    /** The sources' event or system watermark; +infinity once the finite sources are done. */
    private long sourceWatermark(boolean event) {
        if (finite.allDone()) {
            return Long.MAX_VALUE;
        }
        return event ? clocks.eventWatermark() : clocks.systemWatermark(context.currentSystemTimeMs());
    }

    /** One source stream's event or system watermark; +infinity once the finite sources are done. */
    private long sourceWatermark(String stream, boolean event) {
        SourceClocks.Clock clock = clocks.get(stream);
        if (clock == null || finite.allDone()) {
            return Long.MAX_VALUE;
        }
        return event ? clock.eventWatermark() : clocks.systemWatermark(clock, context.currentSystemTimeMs());
    }

    /** Fires due timers for one bounded step (see {@link TimerFiring}). */
    private void fireTimers() {
        if (firing != null) {
            firing.step(this::timerWatermark, this::fireOne);
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
            Map<String, String> where, Map<String, byte[]> original) {
        var letter = deadLetters.letter(e, what, key, value, where, original);
        context.forward(new Record<>(letter.key(), letter.value(), context.currentSystemTimeMs(), letter.headers()),
                plan.deadLetterNode());
    }

    // ---------------------------------------------------------------- key visitors

    private void initVisitors() {
        int partitionCount = plan.partitionCounts().singleTask() ? 1 : spec.desiredPartitionCount();
        KeyValueStore<Bytes, byte[]> coverage = spec.keyVisitorStreams().isEmpty() ? null
                : context.getStateStore(io.flowkafka.internal.visitor.KeyVisitor.storeName(spec.id()));
        visitors = new VisitorDriver(spec, plan.pipeline(), context.taskId().partition(), partitionCount, states,
                coverage, plan.visitors().dynamic(), plan.visitors().status(), plan.visitors().meters(),
                plan.visitors().maxRowsPerPunctuation(), plan.visitors().maxPunctuationMs());
        if (!visitors.any()) {
            return;
        }
        schedule(java.time.Duration.ofMillis(plan.visitors().tickMs()), now -> {
            visitors.step(now, this::upstreamCompleted, this::visit);
            maybeEmitWatermarks();
        });
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
            if (source ? !finite.allDone() : !watermarks.completed(s)) {
                return false;
            }
        }
        return true;
    }

    /** Runs the process function for one visit; a failing visit goes to the dead-letter topic. */
    private void visit(String stream, byte[] encodedKey, long pass, long eventTimestamp,
            @Nullable Map<Bytes, byte[]> rows) {
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
        return in.decoder().decode(record, new RecordMetadata() {
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

    /** Runs one batched call with all-or-nothing effects, through the same path as {@link #runCall}. */
    private void runBatch(List<FlowMessage> messages) {
        call.beginBatch(messages);
        String what = messages.size() == 1 ? "message " + messages.get(0).messageId()
                : "batch of " + messages.size() + " messages " + messages.get(0).messageId() + ".."
                        + messages.get(messages.size() - 1).messageId();
        List<Message> batch = java.util.Collections.unmodifiableList(messages);
        applyCall(what, () -> ((BatchFunction) function).onMessages(batch, call, call),
                nodes -> router.encodeBatch(call, context.currentSystemTimeMs() * 1_000_000L, nodes), null);
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

    // ---------------------------------------------------------------- watermarks

    private long inputWatermark(String stream) {
        if (watermarks.streams().contains(stream)) {
            return watermarks.eventWatermark(stream);
        }
        SourceClocks.Clock clock = clocks.get(stream);
        if (clock != null) {
            return clock.eventWatermark();
        }
        throw new IllegalArgumentException("stream '" + stream + "' is not an input of computation '" + spec.id() + "'");
    }

    private long minInputWatermark() {
        long min = sourceComputation ? clocks.eventWatermark() : Long.MAX_VALUE;
        for (String s : watermarks.streams()) {
            min = Math.min(min, watermarks.eventWatermark(s));
        }
        return min == Long.MAX_VALUE ? Long.MIN_VALUE : min;
    }

    /**
     * Whether the task's sources are idle (the one computation of it: the control records' flag and alignment's
     * report use the same answer).
     */
    private boolean sourcesIdle() {
        return clocks.idle(alignmentPaused(), finite.partitions());
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
    private void reportAlignment(boolean emission, boolean sourcesIdle) {
        boolean completed = finite.allDone();
        boolean idle = completed || sourcesIdle;
        // monotonic, like any watermark, also across restarts (the sources' clocks start over empty after one)
        alignedWatermark = Math.max(alignedWatermark, completed ? Long.MAX_VALUE : clocks.eventWatermark());
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
            event = clocks.eventWatermark();
            system = clocks.systemWatermark(now);
            // a source partition paused by watermark_alignment has data waiting: not idle, or readers would skip it
            // (its records would then arrive behind their watermark); it holds nothing back, being ahead of its group
            // nor is one with records waiting in its topic (the consumer has not handed them over yet)
            idle = sourcesIdle();
            completed = finite.allDone() && visitors.allDone();
            if (alignedPartitions != null) {
                reportAlignment(true, idle);
            }
            if (timerStore != null) { // a keyed source with timers: the same hold as on internal inputs
                event = Math.min(event, timerStore.watermarkHold());
                boolean holding = java.util.Objects.requireNonNull(firing).holdingPending();
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
                completed = visitors.any(); // no inputs: nothing to wait for but the visitors
            }
            completed &= visitors.allDone();
            if (timerStore != null) {
                event = Math.min(event, timerStore.watermarkHold()); // the watermark hold
                completed &= !java.util.Objects.requireNonNull(firing).holdingPending();
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
            io.flowkafka.internal.visitor.KeyVisitor visitor = visitors.visitor(d);
            if (watermarks.streams().contains(d)) {
                event = Math.min(event, watermarks.eventWatermark(d));
                system = Math.min(system, watermarks.systemWatermark(d));
                completed &= watermarks.completed(d);
            } else if (clocks.get(d) != null) {
                boolean done = finite.allDone();
                if (!done) {
                    SourceClocks.Clock clock = java.util.Objects.requireNonNull(clocks.get(d));
                    event = Math.min(event, clock.eventWatermark());
                    system = Math.min(system, clocks.systemWatermark(clock, nowMs));
                }
                completed &= done;
            } else if (visitor != null) {
                if (!visitor.completed()) {
                    event = Math.min(event, visitor.lastEventTimestamp());
                    system = Math.min(system, nowMs * 1_000_000L);
                    completed = false;
                }
            } else if (timer >= 0 && timerStore != null) {
                boolean pending = timerStore.hasPending(timer);
                boolean inputsDone = !sourceComputation || finite.allDone();
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
        if (firing != null) {
            firing.close();
        }
        for (io.micrometer.core.instrument.Meter m : meters) {
            plan.visitors().meters().remove(m);
        }
        meters.clear();
        if (visitors != null) {
            visitors.close();
        }
        if (function != null) {
            function.close();
        }
        inputs.values().forEach(in -> in.decoder().close());
        if (router != null) {
            router.close();
        }
    }

    /** An input topic: its decoder, and for a source the clock of its stream. */
    private record InputBinding(SourceDecoder decoder, SourceClocks.@Nullable Clock clock) {
        String streamId() {
            return decoder.streamId;
        }

        @Nullable SourceSpec source() {
            return decoder.source;
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
