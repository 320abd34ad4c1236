package io.flowkafka.internal.processor;

import io.flowkafka.api.BatchFunction;
import io.flowkafka.api.Message;
import io.flowkafka.api.MessageId;
import io.flowkafka.api.ProcessFunction;
import io.flowkafka.avro.BatchedInput;
import io.flowkafka.avro.ControlRecord;
import io.flowkafka.internal.dlq.DeadLetterCounts;
import io.flowkafka.internal.dlq.DeadLetterHandler;
import io.flowkafka.internal.dlq.DeadLetterWriter;
import io.flowkafka.internal.dlq.Failures;
import io.flowkafka.internal.dlq.FlowProcessingException;
import io.flowkafka.internal.dlq.RecordSizeLimit;
import io.flowkafka.internal.dlq.RejectedOutputs;
import io.flowkafka.internal.dlq.RejectedRecordException;
import io.flowkafka.internal.message.FlowHeaders;
import io.flowkafka.internal.message.FlowMessage;
import io.flowkafka.internal.message.MessageIds;
import io.flowkafka.internal.metrics.InputLag;
import io.flowkafka.internal.metrics.TaskMeters;
import io.flowkafka.internal.outbox.AtMostOnceEpochs;
import io.flowkafka.internal.outbox.EpochBarrierStore;
import io.flowkafka.internal.outbox.EpochCommits;
import io.flowkafka.internal.outbox.OutboxWatermarks;
import io.flowkafka.internal.outbox.StagedEpochs;
import io.flowkafka.internal.outbox.SyncSinkSlot;
import io.flowkafka.internal.serde.KeyCodec;
import io.flowkafka.internal.skip.MessageSkipper;
import io.flowkafka.internal.source.FiniteSourceProgress;
import io.flowkafka.internal.source.PunctuatedSourceSteps;
import io.flowkafka.internal.source.PunctuatedSources;
import io.flowkafka.internal.source.SourceDecoder;
import io.flowkafka.internal.external.TablePublisher;
import io.flowkafka.internal.state.KeyStates;
import io.flowkafka.internal.state.StateDeletes;
import io.flowkafka.internal.streams.WriteBackStore;
import io.flowkafka.internal.timers.PendingTimer;
import io.flowkafka.internal.timers.TimerFiring;
import io.flowkafka.internal.timers.TimerStore;
import io.flowkafka.internal.external.TableStore;
import io.flowkafka.internal.source.ServiceLogScan;
import io.flowkafka.internal.status.StatusBoard;
import io.flowkafka.internal.status.TaskReading;
import io.flowkafka.internal.visitor.KeyVisitor;
import io.flowkafka.internal.visitor.StaticTableScanSource;
import io.flowkafka.internal.visitor.VisitorDriver;
import io.flowkafka.internal.watermarks.ControlRecords;
import io.flowkafka.internal.watermarks.SourceClocks;
import io.flowkafka.internal.watermarks.WatermarkEmitter;
import io.flowkafka.internal.watermarks.WatermarkAlignment;
import io.flowkafka.internal.watermarks.WatermarkTracker;
import io.flowkafka.spec.ComputationKind;
import io.flowkafka.spec.ComputationSpec;
import io.flowkafka.spec.KeyVisitorStreamSpec;
import io.flowkafka.spec.SourceSpec;
import io.flowkafka.spec.TimeType;
import io.flowkafka.spec.TimerStreamSpec;
import io.flowkafka.spi.PunctuatedSource;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Function;
import java.util.function.Supplier;
import org.apache.avro.generic.GenericRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.processor.Cancellable;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.Punctuator;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.processor.api.RecordMetadata;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;
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
 * <p>Each concept lives in its part, built here from the stores: {@link SourceDecoder} and
 * {@link FiniteSourceProgress} (sources), {@link SourceClocks} (source watermarks and idleness),
 * {@link TimerFiring} (timers), {@link VisitorDriver} (key visitors), {@link SwiftMapBatching},
 * {@link OutputRouter} (outputs and synchronous sinks), {@link AtMostOnceEpochs}, {@link CallRowChecks},
 * {@link DeadLetterWriter}, {@link WatermarkEmitter} (recording and sending output watermarks). What stays
 * here is what joins them, and why the class is over 700 lines: the one atomic-call path, and the computation
 * of the task's output watermarks and completion (also per output stream with its own dependencies), which
 * reads every part: inputs, sources, timers, visitors and the batch.
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
    /** This task's watermarks and pending timers on the status page. */
    private TaskReading reading;
    private io.flowkafka.internal.external.@Nullable ExternalReads externalReads;
    private final List<StaticTableScanSource> staticScans = new ArrayList<>();
    private final Map<String, InputBinding> inputs = new HashMap<>();
    /** Encodes and routes the outputs of this attempt's calls. */
    private OutputRouter router;
    private CallContext call;
    private long computationTag;
    private WatermarkTracker watermarks;
    private boolean sourceComputation;
    /** Whether a timer stream lists the streams it waits on ({@code streams}, {@code streams_with_delays}). */
    private boolean anyTimerWatchesStreams;
    /** The clocks of this task's source streams (empty for a computation without sources). */
    private SourceClocks clocks;
    /** watermark_alignment: the source partitions this task reads, reported with its watermark; null if not aligned. */
    private @Nullable Set<TopicPartition> alignedPartitions;
    private WatermarkAlignment.@Nullable Limit alignmentLimit;
    private long alignmentLimitReported = Long.MIN_VALUE;
    private long alignedWatermark = Long.MIN_VALUE;
    private @Nullable TimerStore timerStore;
    private TimeType[] timeTypes = new TimeType[0];
    /** Fires this attempt's due timers in bounded steps; null without timers. */
    private @Nullable TimerFiring firing;
    private List<@Nullable Map<String, Duration>> watchedStreams = List.of();
    private final List<String> dlqNodes = new ArrayList<>();
    /** This attempt's key visitors. */
    private VisitorDriver visitors;
    /** This attempt's service-log sources; null without. */
    private @Nullable ServiceLogScan serviceLogs;
    /** This attempt's readers of punctuated sources (closed with the task). */
    private final List<PunctuatedSource.Reader> punctuatedReaders = new ArrayList<>();
    private final Map<String, Integer> visitOrigins = new HashMap<>();
    private final List<Meter> meters = new ArrayList<>();
    /** This attempt's gauges: input lag, watermark lag, pending timers (removed at close). */
    private TaskMeters taskMeters;
    /** Counts this computation's dead letters; null outside a FlowRuntime. */
    private @Nullable DeadLetterCounts deadLetterCounts;
    /** Decodes the control records of internal inputs. */
    private final ControlRecords controlCodec = new ControlRecords();
    /** Records and sends this task's output watermarks and completion. */
    private WatermarkEmitter emitter;
    /**
     * FlowTestDriver's each-change watermarks on one-partition topics: the internal output sink nodes of a source
     * computation, to their streams, whose last message of a call carries the watermark after it instead of a
     * control record following it ({@link FlowHeaders#WATERMARK_AFTER}); null otherwise.
     */
    private @Nullable Map<String, String> stampNodes;
    /** Whether the call running is a Kafka source record's, whose emission follows right after it (stamps allowed). */
    private boolean stampingCall;
    /** Writes this task's input system watermark to its async sinks' outboxes. */
    private OutboxWatermarks outboxWatermarks;
    /** Records what the task's staged sinks prepare in each epoch; null without staged sinks. */
    private @Nullable StagedEpochs stagedEpochs;
    /** How far this task read its finite source partitions (from the changelogged store). */
    private FiniteSourceProgress finite;
    /** Produces the committed rows of managers and state-joined states to their table topics. */
    private TablePublisher publisher;
    /** Skips the input messages that the computation's current skip_if_expression matches. */
    private MessageSkipper skipper;
    /** The input buffer of a SwiftMap with allow_batching_with_relaxed_guarantees; null otherwise. */
    private @Nullable SwiftMapBatching batch;

    /** Builds the task's state from its stores: what {@code init()} of the processor does, each time it is called. */
    ComputationTask(ComputationPlan plan, ProcessorContext<byte[], byte[]> context) {
        this.plan = plan;
        this.spec = plan.spec();
        this.context = context;
        try {
            Object rejected = context.appConfigs().get(RejectedOutputs.CONFIG);
            rejectedOutputs = rejected instanceof RejectedOutputs r ? r : null;
            atMostOnce = new AtMostOnceEpochs(context.appConfigs().get(EpochCommits.CONFIG) instanceof EpochCommits c
                    ? c : null);
            EpochBarrierStore barrier = null;
            if (plan.hasEpochBarrier()) {
                barrier = context.getStateStore(EpochBarrierStore.storeName(spec.id()));
                barrier.beforeCommit(atMostOnce::beforeCommit);
            }
            KeyValueStore<Bytes, byte[]> store = !ComputationPlan.hasStateStore(spec, plan.external()) ? null
                    : context.getStateStore(KeyStates.storeName(spec.id()));
            this.states = new KeyStates(store);
            if (store != null) {
                meters.addAll(WriteBackStore.registerMeters(store, plan.visitors().meters(),
                        storeTags()));
            }
            this.keyCodec = KeyCodec.of(spec.groupBySchema(), spec.id());
            this.reading = plan.visitors().status().reading(spec.id(), context.taskId().partition());
            this.skipper = new MessageSkipper(plan.visitors().dynamic().skipIf(spec.id()), plan.visitors().meters(),
                    plan.pipeline(), spec.id());
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
                        new TopicPartition(in.topic(), context.taskId().partition()));
                inputs.put(in.topic(), new InputBinding(decoder, clock));
            }
            List<TopicPartition> inputPartitions = new ArrayList<>();
            for (ComputationPlan.Input in : plan.inputs().values()) {
                inputPartitions.add(new TopicPartition(in.topic(), context.taskId().partition()));
            }
            this.taskMeters = new TaskMeters(plan.visitors().meters(), Tags.of(storeTags()),
                    context.appConfigs().get(InputLag.CONFIG) instanceof InputLag lag ? lag : null, inputPartitions,
                    !spec.timers().isEmpty());
            this.deadLetterCounts = context.appConfigs().get(DeadLetterCounts.CONFIG) instanceof DeadLetterCounts d ? d
                    : null;
            Map<String, WatermarkTracker.ExpectedProducers> expected = new LinkedHashMap<>();
            plan.writers().forEach((stream, writer) -> expected.put(stream,
                    new WatermarkTracker.ExpectedProducers(writer, plan.partitionCounts().of(writer))));
            this.watermarks = new WatermarkTracker(context.getStateStore(WatermarkTracker.storeName(spec.id())),
                    expected);
            int partitionCount = plan.partitionCounts().singleTask() ? 1
                    : sourceComputation ? plan.partitionCounts().of(spec.id()) : spec.desiredPartitionCount();
            Map<String, List<String>> controlNodesByStream = new LinkedHashMap<>();
            Map<String, String> internalNodes = new HashMap<>();
            for (Map.Entry<String, List<ComputationPlan.Route>> e : plan.outputs().entrySet()) {
                for (ComputationPlan.Route r : e.getValue()) {
                    if (r instanceof ComputationPlan.InternalRoute) {
                        controlNodesByStream.computeIfAbsent(e.getKey(), k -> new ArrayList<>()).add(r.sinkNode());
                        internalNodes.put(r.sinkNode(), e.getKey());
                    }
                }
            }
            this.stampNodes = plan.partitionCounts().singleTask() && plan.watermarks().eachChange() && sourceComputation
                    && !internalNodes.isEmpty() ? internalNodes : null;
            this.emitter = new WatermarkEmitter(spec.id(), watermarks, context, controlNodesByStream,
                    outputDependencies(spec), plan.statusNode(), plan.controlTopic() == null ? null
                            : spec.id() + ".sink.control",
                    sourceComputation ? spec.watermarkStrategy().maxIdlePartitions(partitionCount) : 0,
                    plan.watermarks().intervalMs(), plan.watermarks().heartbeatMs());
            Map<String, String> outboxNodes = new LinkedHashMap<>(); // one sink node per outbox topic
            plan.outputs().values().stream().flatMap(List::stream)
                    .filter(r -> r instanceof ComputationPlan.SinkRoute sr && sr.outbox())
                    .forEach(r -> outboxNodes.putIfAbsent(r.topic(), r.sinkNode()));
            this.outboxWatermarks = new OutboxWatermarks(List.copyOf(outboxNodes.values()),
                    context.taskId().partition(),
                    partitionCount, plan.watermarks().intervalMs());
            List<SyncSinkSlot> stagedSinks = plan.stagedSinks();
            if (!stagedSinks.isEmpty() && barrier != null) {
                StagedEpochs epochs = new StagedEpochs(context.getStateStore(StagedEpochs.storeName(spec.id())),
                        stagedSinks, context.taskId().partition(), partitionCount,
                        context.appConfigs().get(EpochCommits.CONFIG) instanceof EpochCommits c ? c : null);
                epochs.open();
                barrier.afterFlush(epochs::beforeCommit);
                this.stagedEpochs = epochs;
            }
            if (aligned) {
                Set<TopicPartition> tps = new HashSet<>();
                plan.inputs().values().stream().filter(i -> i.source() != null)
                        .forEach(i -> tps.add(new TopicPartition(i.topic(), context.taskId().partition())));
                this.alignedPartitions = Set.copyOf(tps);
                this.alignmentLimit = plan.alignment().limit(spec.id());
                this.alignedWatermark = watermarks.alignedWatermark(); // where the task was before a restart
            }
            this.finite = new FiniteSourceProgress(spec.sourceStreams(), context.taskId().partition(), watermarks,
                    plan.finiteSources(), plan.partitionCounts().singleTask(), plan.sourceIdleness());
            this.call = new CallContext(spec, states, keyCodec, plan.outputSchemas(),
                    () -> context.currentSystemTimeMs() * 1_000_000L, context.taskId().partition(), partitionCount,
                    this::inputWatermark, this::minInputWatermark);
            if (!plan.external().reads().isEmpty()) {
                externalReads = new io.flowkafka.internal.external.ExternalReads(plan.external().reads(),
                        r -> io.flowkafka.internal.external.TableReader.of(context, r.topic(), r.versioned()),
                        () -> context.currentSystemTimeMs() * 1_000_000L);
                call.external(externalReads);
            }
            this.publisher = new TablePublisher(plan.external(), states);
            this.recordLimit = RecordSizeLimit.of(context.appConfigs());
            this.router = new OutputRouter(plan, context.taskId().partition(), context.appConfigs(), recordLimit,
                    rejectedOutputs, atMostOnce);
            this.deadLetters = new DeadLetterWriter(spec.id(), String.valueOf(context.appConfigs().getOrDefault(
                    DeadLetterHandler.TOPIC_CONFIG, "dlq")), recordLimit, rejectedOutputs);
            schedule(Duration.ofMillis(plan.watermarks().intervalMs()), now -> emitWatermarks());
            initTimers();
            this.rowChecks = new CallRowChecks(spec, recordLimit, rejectedOutputs, context.applicationId(), states,
                    timerStore, ComputationPlan.writesInternalStreams(plan.outputs()));
            initVisitors();
            initStateDeletes(store);
            initServiceLogs(partitionCount);
            initPunctuatedSources(partitionCount);
            this.function = FunctionFactory.create(spec);
            initBatching();
            if (function != null) {
                function.open(call);
            }
            plan.visitors().status().clear(spec.id(), context.taskId().partition(), StatusBoard.TASK_START_PATH);
        } catch (RuntimeException | Error e) {
            // Kafka Streams does not close a processor whose init() threw: release what this attempt registered and
            // opened (meters, sources, the function), or every failed retry would leave its own set behind
            try {
                close();
            } catch (RuntimeException | Error suppressed) {
                e.addSuppressed(suppressed);
            }
            // a failure at every retry (a bad parameter in open()) would else show only in the log
            plan.visitors().status().report(spec.id(), context.taskId().partition(), StatusBoard.TASK_START_PATH,
                    "task " + context.taskId() + " of computation '" + spec.id() + "' cannot start: " + e
                            + "; nothing of it runs while Kafka Streams retries it (it replaces the stream thread). "
                            + "Fix the cause: the process function's open(), its parameters, or what it reaches",
                    Instant.now());
            throw e;
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
            applyControl(in, decodeControl(record.value(), md));
            return;
        }
        byte[] after = in.source() == null ? FlowHeaders.watermarkAfter(record.headers()) : null;
        if (after == null) {
            processMessage(record, md, in);
            return;
        }
        ControlRecord control = decodeControl(after, md);
        try {
            processMessage(record, md, in);
        } catch (RuntimeException e) {
            if (e instanceof FlowProcessingException && plan.deadLetters() && !Failures.retriable(e)) {
                applyControl(in, control); // the message becomes a dead letter: the control record still follows
            }
            throw e; // otherwise the task fails and retries the message, its watermark with it
        }
        applyControl(in, control); // as the control record that would have followed the message
    }

    private ControlRecord decodeControl(byte[] value, RecordMetadata md) {
        try {
            return controlCodec.decode(value);
        } catch (RuntimeException e) { // not written by a task: a dead letter, not a task failing on it forever
            throw new FlowProcessingException(spec.id(), "decode the control record of topic " + md.topic(), e);
        }
    }

    /** A writer's watermarks and completion on an internal input: timers they make due fire. */
    private void applyControl(InputBinding in, ControlRecord control) {
        if (watermarks.onControl(in.streamId(), control)) {
            fireTimers();
            if (batch != null && !batch.isEmpty() && inputsCompleted()) {
                batch.cutAtCompletion();
            }
            maybeEmitWatermarks();
        }
    }

    private void processMessage(Record<byte[], byte[]> record, RecordMetadata md, InputBinding in) {
        FlowMessage message;
        byte[] encodedKey;
        try {
            message = in.decoder().decode(record, md);
            encodedKey = in.source() == null ? record.key() : keyCodec.encode(message.key());
        } catch (RuntimeException e) {
            throw new FlowProcessingException(spec.id(), "decode the record of topic " + md.topic(), e);
        }
        // skip_if_expression: consumed (its offset commits) with no call; a source's clock still sees it
        boolean skipped = skipper.skips(message);
        if (batch != null) {
            if (!skipped) {
                try {
                    batch.add(record, md, message, context.currentSystemTimeMs());
                } catch (RejectedRecordException e) {
                    throw new FlowProcessingException(spec.id(), "buffer the record for its batch", e);
                }
            }
            return;
        }
        if (in.source() != null) {
            SourceClocks.Clock clock = Objects.requireNonNull(in.clock());
            clocks.onRecord(clock, message.eventTimestamp(), message.systemTimestamp());
            if (alignmentLimit != null) {
                long limit = alignmentLimit.value();
                if (limit != alignmentLimitReported && clock.eventWatermark() > limit && clocks.eventWatermark() > limit) {
                    alignmentLimitReported = limit; // once per limit: until it moves, another report changes nothing
                    reportAlignment(false, sourcesIdle()); // ahead of the group: be paused now, not at the next emission
                }
            }
        }
        if (!skipped) {
            stampingCall = in.source() != null;
            try {
                runCall(message.key(), encodedKey, message.messageId(), message.eventTimestamp(), "message",
                        () -> call.deliverMessage(function, message, call, call), null);
            } finally {
                stampingCall = false;
            }
        }
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
            Runnable user, @Nullable PendingTimer firedTimer) {
        call.begin(key, encodedKey, parentId);
        applyCall(() -> what + " " + parentId, user, nodes -> router.encode(call.outputs, parentId, defaultEts,
                context.currentSystemTimeMs() * 1_000_000L, nodes), firedTimer);
    }

    /**
     * The one path of every call, single or batched: runs the user code against the call buffer and encodes its
     * outputs for every route; only if all of that and the row checks succeeded are the buffered state and timer
     * writes applied (plus the deletion of {@code firedTimer}), the outputs forwarded, the synchronous sink writes
     * sent and the at-most-once messages held with the epoch. On failure everything is dropped and
     * {@link FlowProcessingException} thrown. {@code what} names the input in errors; built only for one.
     */
    private void applyCall(Supplier<String> what, Runnable user,
            Function<List<String>, List<Record<byte[], byte[]>>> encode,
            @Nullable PendingTimer firedTimer) {
        router.beginCall();
        atMostOnce.callFailed(); // leftovers of a call whose forward threw belong to no call
        List<Record<byte[], byte[]>> forwards;
        List<String> nodes = new ArrayList<>(2);
        try {
            try {
                user.run();
            } catch (Exception e) {
                throw new FlowProcessingException(spec.id(), "process " + what.get(), e);
            }
            try {
                forwards = encode.apply(nodes);
            } catch (RuntimeException e) {
                throw new FlowProcessingException(spec.id(), "write the outputs of " + what.get(), e);
            }
            try {
                rowChecks.checkStateRows();
            } catch (RuntimeException e) {
                throw new FlowProcessingException(spec.id(), "write the state of " + what.get(), e);
            }
            try {
                rowChecks.checkTimerRows();
            } catch (RuntimeException e) {
                throw new FlowProcessingException(spec.id(), "write the timers of " + what.get(), e);
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
        List<TablePublisher.Row> tableRows = publisher.rows(context.currentSystemTimeMs());
        states.commitCall();
        if (timerStore != null) {
            if (firedTimer != null) {
                timerStore.delete(firedTimer);
            }
            Objects.requireNonNull(firing).noteAdds();
            timerStore.commitCall();
        }
        call.end();
        if (stampNodes != null && stampingCall && !forwards.isEmpty()) {
            stampWatermarks(stampNodes, forwards, nodes);
        }
        for (int i = 0; i < forwards.size(); i++) {
            context.forward(forwards.get(i), nodes.get(i));
        }
        TablePublisher.forward(tableRows, context);
        router.callSucceeded();
        atMostOnce.callSucceeded();
    }

    /** Outputs brokers rejected for good, shared by the runtime's tasks; null outside a FlowRuntime. */
    private @Nullable RejectedOutputs rejectedOutputs;

    /** The largest record Kafka Streams' producer sends. */
    private RecordSizeLimit recordLimit;
    /** Builds the dead letters of this task's timers, visits and batched messages. */
    private DeadLetterWriter deadLetters;
    /** Checks the state and timer rows a call writes. */
    private CallRowChecks rowChecks;

    /** This attempt's at-most-once sink messages, per call and per epoch. */
    private AtMostOnceEpochs atMostOnce;

    // ---------------------------------------------------------------- timers

    private void initTimers() {
        if (spec.timers().isEmpty()) {
            return;
        }
        int n = spec.timers().size();
        boolean[] dedup = new boolean[n];
        timeTypes = new TimeType[n];
        List<@Nullable Map<String, Duration>> watched = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            dedup[i] = spec.timers().get(i).deduplicateEqualTimestamps();
            timeTypes[i] = spec.timers().get(i).timeType();
            watched.add(spec.timerWatchedStreams(spec.timers().get(i)));
        }
        watchedStreams = watched;
        anyTimerWatchesStreams = watched.stream().anyMatch(Objects::nonNull);
        timerStore = new TimerStore(
                context.getStateStore(TimerStore.timersStoreName(spec.id())),
                ComputationPlan.writesInternalStreams(plan.outputs())
                        ? context.getStateStore(TimerStore.holdsStoreName(spec.id()))
                        : null, // nobody reads this computation's output watermark: no holds index
                spec.timers().stream().map(TimerStreamSpec::id).toList(), dedup);
        call.timers(timerStore, MessageIds.timerTag(spec.id()));
        firing = new TimerFiring(spec, timerStore, plan.outputLimits()::isBlocked, plan.timers().maxPerPunctuation(),
                plan.timers().maxPunctuationMs(), plan.visitors().meters(), List.of("pipeline", plan.pipeline(),
                        "computation", spec.id(), "partition", Integer.toString(context.taskId().partition())),
                sourceComputation);
        for (String name : List.of(TimerStore.timersStoreName(spec.id()),
                TimerStore.holdsStoreName(spec.id()))) {
            if (name.endsWith(".timers") || ComputationPlan.writesInternalStreams(plan.outputs())) {
                meters.addAll(WriteBackStore.registerMeters(context.getStateStore(name),
                        plan.visitors().meters(), storeTags()));
            }
        }
        TimerFiring timers = firing;
        TimerStore store = timerStore;
        taskMeters.pendingTimers(store.count());
        schedule(Duration.ofMillis(plan.timers().punctuationIntervalMs()), now -> {
            long deadline = timers.deadline(); // firing and the holds build share one step's time
            fireTimers(deadline);
            timers.buildHolds(deadline);
            maybeEmitWatermarks();
            taskMeters.pendingTimers(store.count()); // an estimate read once per interval, not per call
        });
        // a backlog of due timers, or a holds index to build, advances in bounded steps as often as the stream
        // thread comes back to punctuate, not only once per interval, with polling and commits in between
        schedule(Duration.ofMillis(Math.max(1, plan.timers().punctuationIntervalMs() / 10)), now -> {
            boolean behind = timers.behind();
            if (behind || timers.buildingHolds()) {
                long deadline = timers.deadline();
                if (behind) {
                    fireTimers(deadline);
                }
                timers.buildHolds(deadline);
                maybeEmitWatermarks(); // the exact hold once the build completed
            }
        });
    }

    /** The watermark timer stream {@code i} compares triggers with (exclusive). */
    private long timerWatermark(int i) {
        if (timeTypes[i] == TimeType.REAL_TIME) {
            return context.currentSystemTimeMs() * 1_000_000L;
        }
        boolean event = timeTypes[i] == TimeType.EVENT_TIME;
        Map<String, Duration> watched = watchedStreams.get(i);
        Collection<String> streams = watched == null ? watermarks.streams() : watched.keySet();
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

    /**
     * Fires due timers for one bounded step (see {@link TimerFiring}). With deterministic steps (FlowTestDriver),
     * steps bounded by count follow at once until no due timer is left (at most {@value #MAX_STEPS_UNTIL_DONE}, in
     * case timers keep adding due timers), the watermarks sent between them as after separate punctuations: what
     * fires does not wait for a punctuation whose wall-clock time the test may never advance.
     */
    private void fireTimers() {
        if (firing != null) {
            fireTimers(firing.deadline());
        }
    }

    private void fireTimers(long deadline) {
        if (firing == null) {
            return;
        }
        firing.step(this::timerWatermark, this::fireOne, deadline);
        if (!plan.timers().untilDone()) {
            return;
        }
        for (int steps = 1; firing.behind() && steps < MAX_STEPS_UNTIL_DONE; steps++) {
            maybeEmitWatermarks(); // between steps, as the punctuations between them would (the output watermark moves)
            firing.step(this::timerWatermark, this::fireOne);
        }
    }

    /** At most this many timer steps in a row with deterministic steps; the rest wait for the next punctuation. */
    private static final int MAX_STEPS_UNTIL_DONE = 10_000;
    /** Where a punctuated source's reports go in the status, under its stream's id. */
    private static final String PUNCTUATED_STATUS_PREFIX = "source_streams/";

    private void fireOne(PendingTimer t) {
        MessageId id = MessageId.of(t.messageId());
        String stream = spec.timers().get(t.streamIndex()).id();
        try {
            GenericRecord key;
            try {
                key = keyCodec.decode(t.encodedKey());
            } catch (RuntimeException e) { // stored under another group_by: it can never be called
                throw new FlowProcessingException(spec.id(), "decode the key of timer " + id + " of stream " + stream
                        + " (stored under a group_by_schema other than the spec's)", e);
            }
            FlowTimer timer = new FlowTimer(id, stream, key, t.triggerTs(), t.eventTs(), t.systemTs());
            runCall(key, t.encodedKey(), id, t.eventTs(), "timer", () -> call.deliverTimer(function, timer, call, call), t);
        } catch (FlowProcessingException e) {
            if (!plan.deadLetters() || Failures.retriable(e)) {
                throw e; // an outage: the timer stays, the task fails and fires it again from the last commit
            }
            // the timer goes to the dead-letter topic and is deleted, so it does not fire again
            timerStore.delete(t);
            timerStore.commitCall();
            Map<String, String> extra = new LinkedHashMap<>();
            extra.put("flow.dlq.timer.stream", stream);
            extra.put("flow.dlq.timer.trigger", Long.toString(t.triggerTs()));
            extra.put("flow.dlq.timer.id", id.toString());
            deadLetter(e, "timer " + id + " of stream " + stream, t.encodedKey(),
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
        if (deadLetterCounts != null) {
            deadLetterCounts.count(spec.id());
        }
        context.forward(new Record<>(letter.key(), letter.value(), context.currentSystemTimeMs(), letter.headers()),
                plan.deadLetterNode());
    }

    // ---------------------------------------------------------------- key visitors

    private void initVisitors() {
        int partitionCount = plan.partitionCounts().singleTask() ? 1 : spec.desiredPartitionCount();
        KeyValueStore<Bytes, byte[]> coverage = spec.keyVisitorStreams().isEmpty() ? null
                : context.getStateStore(KeyVisitor.storeName(spec.id()));
        visitors = new VisitorDriver(spec, plan.pipeline(), context.taskId().partition(), partitionCount, states,
                coverage, plan.visitors().dynamic(), plan.visitors().status(), plan.visitors().meters(),
                plan.visitors().maxRowsPerPunctuation(), plan.visitors().maxPunctuationMs(), this::joinerTable,
                this::staticTable);
        if (!visitors.any()) {
            return;
        }
        schedule(Duration.ofMillis(plan.visitors().tickMs()), now -> {
            visitors.step(now, this::upstreamCompleted, this::visit);
            maybeEmitWatermarks();
        });
    }

    /**
     * The scan of the static table of {@code TStaticTableKeyVisitorJoiner} {@code name}, whose rows the visits read;
     * null without a {@link io.flowkafka.spi.StaticTableProvider} on the class path.
     */
    private io.flowkafka.internal.visitor.@Nullable ScanSource staticTable(String name) {
        io.flowkafka.spi.StaticTableProvider provider = io.flowkafka.spi.StaticTableProvider.findOrNull();
        var joiner = spec.externalStateJoiners().get(name);
        if (provider == null || joiner == null || externalReads == null) {
            return null;
        }
        var scan = new StaticTableScanSource(name, spec.groupBySchema(), keyCodec,
                provider, joiner.parameters());
        String scanning = spec.keyVisitorStreams().values().stream().filter(v -> v.externalNames().contains(name))
                .map(v -> v.id()).findFirst().orElse("");
        externalReads.staticRows(name, scanning, scan::row);
        staticScans.add(scan);
        return scan;
    }

    /** The store of the table joiner {@code name} reads (a global store shared by the pipeline's readers). */
    private @Nullable ReadOnlyKeyValueStore<Bytes, byte[]> joinerTable(String name) {
        var read = plan.external().reads().get(name);
        if (read == null || read.stateJoiner()) {
            return null;
        }
        if (read.versioned()) {
            throw new IllegalStateException("computation '" + spec.id() + "' lists joiner '" + name + "' of a "
                    + "versioned reference in external_names; a versioned reference cannot be scanned by a key visitor");
        }
        return context.getStateStore(TableStore.storeName(read.topic()));
    }

    /** Whether every stream a visitor follows ({@code upstream_streams}, default all inputs and sources) completed. */
    private boolean upstreamCompleted(KeyVisitorStreamSpec v) {
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

    /**
     * Runs the process function for one visit; a failing visit goes to the dead-letter topic, and so does a key that
     * is not one of the computation's (a row written outside the pipeline into a scanned joiner's topic).
     */
    private void visit(String stream, byte[] encodedKey, long pass, long eventTimestamp,
            @Nullable Map<Bytes, byte[]> rows) {
        MessageId id = MessageIds.visit(visitOrigins.computeIfAbsent(stream,
                s -> MessageIds.visitOrigin(spec.id(), s, context.taskId().partition())), pass, encodedKey);
        GenericRecord key;
        try {
            key = keyCodec.decode(encodedKey);
        } catch (RuntimeException e) {
            FlowProcessingException failure = new FlowProcessingException(spec.id(), "decode the key of visit " + id
                    + " of stream " + stream + " (a scanned row whose key is not of the computation's "
                    + "group_by_schema, such as a joiner's row written outside the pipeline; fix or delete that row)",
                    e);
            if (!plan.deadLetters()) {
                throw failure;
            }
            deadLetter(failure, "visit " + id + " of stream " + stream, encodedKey,
                    Long.toString(pass).getBytes(StandardCharsets.UTF_8), visitWhere(stream, pass, id));
            return;
        }
        // the visit's outputs are dated as the visit: never behind what their stream already sent
        long visitEventTimestamp = Math.max(eventTimestamp, sentWatermarkOf(stream));
        FlowVisit v = new FlowVisit(id, stream, key, visitEventTimestamp, context.currentSystemTimeMs() * 1_000_000L,
                pass);
        if (rows != null) {
            states.prefetch(encodedKey, rows); // the scan just read this key's rows: serve the visit's reads from them
        }
        try {
            runCall(key, encodedKey, id, visitEventTimestamp, "visit", () -> call.deliverVisit(function, v, call, call),
                    null);
        } catch (FlowProcessingException e) {
            states.clearPrefetch();
            if (!plan.deadLetters() || Failures.retriable(e)) {
                throw e;
            }
            deadLetter(e, "visit " + id + " of stream " + stream, encodedKey,
                    Long.toString(pass).getBytes(StandardCharsets.UTF_8), visitWhere(stream, pass, id));
        } finally {
            states.clearPrefetch();
        }
    }

    /**
     * The outputs' {@code streams_dependency} as the emitter follows it. With key visitors and no timers, an output
     * that names none depends on the inputs and sources and not on the visitors, which cannot emit to it: reference
     * 000, "a stuck visitor shouldn't block the completion of output streams". With timers it waits for the visitors
     * too: a visit may set a timer, whose call may emit to any such output. The task's own completion waits for
     * them in every case.
     */
    static Map<String, List<String>> outputDependencies(ComputationSpec spec) {
        if (spec.keyVisitorStreams().isEmpty() || !spec.timers().isEmpty()) {
            return spec.streamsDependency();
        }
        List<String> defaults = new ArrayList<>(spec.inputStreamIds());
        spec.sourceStreams().forEach(s -> defaults.add(s.streamId()));
        Map<String, List<String>> out = new LinkedHashMap<>(spec.streamsDependency());
        for (String output : spec.outputStreamIds()) {
            out.putIfAbsent(output, List.copyOf(defaults));
        }
        return out;
    }

    /**
     * The largest event watermark already sent (and persisted) on an output a visit of {@code stream} may emit to:
     * those listing it in {@code streams_dependency}. A visit dated below it would come late, as after a restart
     * under a shorter period, which re-dates the rest of a pass the visitor's memory no longer floors.
     */
    private long sentWatermarkOf(String stream) {
        long floor = Long.MIN_VALUE;
        for (Map.Entry<String, List<String>> e : spec.streamsDependency().entrySet()) {
            if (e.getValue().contains(stream) && spec.outputStreamIds().contains(e.getKey())) {
                floor = Math.max(floor, watermarks.output(e.getKey()).eventWatermark());
            }
        }
        return floor;
    }

    /** The dead-letter headers that say which visit failed. */
    private static Map<String, String> visitWhere(String stream, long pass, MessageId id) {
        Map<String, String> where = new LinkedHashMap<>();
        where.put("flow.dlq.visit.stream", stream);
        where.put("flow.dlq.visit.pass", Long.toString(pass));
        where.put("flow.dlq.visit.id", id.toString());
        return where;
    }

    // ---------------------------------------------------------------- service-log sources

    // ---------------------------------------------------------------- state deletes

    /**
     * Applies the state deletes asked through the runtime ({@link StateDeletes}, the CLI's {@code delete-states}) on
     * a punctuator, at most one request of at most {@link StateDeletes#MAX_ROWS} rows per step, as a call's writes:
     * published to external tables like them, committed in the task's transaction.
     */
    private void initStateDeletes(@Nullable KeyValueStore<Bytes, byte[]> store) {
        if (store == null || spec.states().isEmpty()
                || !(context.appConfigs().get(StateDeletes.CONFIG) instanceof StateDeletes deletes)) {
            return;
        }
        int partition = context.taskId().partition();
        schedule(Duration.ofMillis(200), now -> {
            StateDeletes.Request r = deletes.poll(spec.id(), partition);
            if (r == null) {
                return;
            }
            r.storeKeys().forEach(states::delete);
            List<TablePublisher.Row> tableRows = publisher.rows(context.currentSystemTimeMs());
            states.commitCall();
            TablePublisher.forward(tableRows, context);
            r.applied().complete(r.storeKeys().size());
        });
    }

    /** Reads the service-log sources ({@link ServiceLogScan}) on a punctuator, bounded per step. */
    private void initServiceLogs(int partitionCount) {
        if (plan.serviceLogs().isEmpty()) {
            return;
        }
        int partition = context.taskId().partition();
        for (ServiceLogScan.Table t : plan.serviceLogs()) {
            clocks.register(t.source().streamId(), new TopicPartition(t.topic(), partition));
        }
        ServiceLogScan scan = new ServiceLogScan(spec.id(), partition, partitionCount, plan.serviceLogs(),
                context.getStateStore(ServiceLogScan.storeName(spec.id())),
                topic -> context.getStateStore(TableStore.storeName(topic)), plan.visitors().maxPunctuationMs());
        serviceLogs = scan;
        finite.alsoWaitFor(scan::allDone);
        meters.addAll(scan.registerMeters(plan.visitors().meters(), storeTags()));
        schedule(Duration.ofMillis(plan.visitors().tickMs()), now -> {
            if (!sourcesHeld()) {
                scan.step(now, this::serviceLogRow);
            }
            maybeEmitWatermarks();
        });
    }

    /**
     * Whether this computation's punctuated sources (static tables, service logs) are not read now: the runtime is
     * paused or drains ({@code FlowRuntime.pause()}, {@code drain()}), or the dynamic spec drains this
     * computation ({@code computations.<id>.draining}), as its topic sources' partitions are paused then.
     */
    private boolean sourcesHeld() {
        return plan.sourceIdleness().paused() || plan.visitors().dynamic().drainingComputations().contains(spec.id());
    }

    /** Runs the call of one service-log row; a failing row goes to the dead-letter topic. */
    private void serviceLogRow(ServiceLogScan.Table table, MessageId id, byte[] tableKey, byte[] row,
            @Nullable GenericRecord payload, @Nullable RuntimeException failure, long cycle, long cycleStartMs) {
        long nowNanos = context.currentSystemTimeMs() * 1_000_000L;
        long eventNanos = cycleStartMs * 1_000_000L; // every row of a cycle: the cycle's start, the same on a replay
        String stream = table.source().streamId();
        Map<String, String> where = new LinkedHashMap<>();
        where.put("flow.dlq.service_log.stream", stream);
        where.put("flow.dlq.service_log.cycle", Long.toString(cycle));
        where.put("flow.dlq.service_log.id", id.toString());
        try {
            if (failure != null) {
                throw new FlowProcessingException(spec.id(), "decode row of service-log table " + table.topic(),
                        failure);
            }
            GenericRecord key = keyCodec.emptyKey();
            FlowMessage message = new FlowMessage(id, eventNanos, nowNanos, stream, key,
                    Objects.requireNonNull(payload), List.of());
            SourceClocks.Clock clock = clocks.get(stream);
            if (clock != null) {
                clocks.onRecord(clock, eventNanos, nowNanos);
            }
            if (skipper.skips(message)) {
                return;
            }
            runCall(key, keyCodec.encode(key), id, eventNanos, "message",
                    () -> call.deliverMessage(function, message, call, call), null);
        } catch (FlowProcessingException e) {
            if (!plan.deadLetters() || Failures.retriable(e)) {
                throw e;
            }
            deadLetter(e, "row " + id + " of service-log source " + stream, tableKey, row, where);
        }
    }

    // ---------------------------------------------------------------- punctuated sources

    /**
     * Reads the sources a {@link PunctuatedSource} serves (no topic) on a punctuator: each step of
     * each reader runs in the punctuation's transaction, with its progress and a message counter in the changelogged
     * store, so a restart resumes after the last committed step with the same message ids.
     */
    private void initPunctuatedSources(int partitionCount) {
        PunctuatedSourceSteps steps = new PunctuatedSourceSteps(context::currentSystemTimeMs,
                plan.visitors().maxPunctuationMs());
        int partition = context.taskId().partition();
        for (io.flowkafka.spec.SourceSpec source : spec.sourceStreams()) {
            PunctuatedSource kind = PunctuatedSources.of(source);
            if (kind == null) {
                continue;
            }
            String stream = source.streamId();
            KeyValueStore<Bytes, byte[]> store = context.getStateStore(
                    PunctuatedSources.storeName(spec.id()));
            PunctuatedSource.Progress progress =
                    PunctuatedSources.progress(store, stream);
            SourceClocks.Clock clock = clocks.register(stream, new TopicPartition(
                    "punctuated." + spec.id() + "." + stream, partition));
            String statusPrefix = PUNCTUATED_STATUS_PREFIX + stream + "/";
            PunctuatedSource.Status status = new PunctuatedSource.Status() {
                @Override
                public void report(String path, String message) {
                    plan.visitors().status().report(spec.id(), partition, statusPrefix + path, message,
                            Instant.ofEpochMilli(context.currentSystemTimeMs()));
                }

                @Override
                public void clear(String path) {
                    plan.visitors().status().clear(spec.id(), partition, statusPrefix + path);
                }
            };
            PunctuatedSource.Reader reader = kind.open(new PunctuatedSource.Context(
                    spec.id(), source, plan.inputSchemas().get(stream), partition, partitionCount,
                    () -> plan.visitors().dynamic().sourceParameters(spec.id(), source), status));
            punctuatedReaders.add(reader);
            steps.add(MessageIds.origin("punctuated:" + spec.id() + ":" + stream, partition), reader, progress,
                    new PunctuatedSourceSteps.Rows() {
                        @Override
                        public void row(MessageId id, GenericRecord payload, long timestampMs, long watermarkMs) {
                            punctuatedRow(stream, clock, id, payload, timestampMs, watermarkMs);
                        }

                        @Override
                        public void advance(long watermarkMs) {
                            clocks.advance(clock, watermarkMs * 1_000_000L);
                        }
                    });
        }
        if (steps.isEmpty()) {
            return;
        }
        finite.alsoWaitFor(steps::allDone);
        schedule(Duration.ofMillis(plan.visitors().tickMs()), now -> {
            if (!sourcesHeld()) {
                steps.punctuate(true);
            }
            maybeEmitWatermarks();
        });
        if (plan.visitors().maxPunctuationMs() > 0) {
            // a reader with rows ready reads on as often as the stream thread comes back to punctuate, not only once
            // per tick, with polling and commits in between (not under deterministic steps: one step per tick)
            schedule(Duration.ofMillis(Math.max(1, plan.visitors().tickMs() / 10)), now -> {
                if (!sourcesHeld() && steps.anyReady()) {
                    steps.punctuate(false);
                    maybeEmitWatermarks();
                }
            });
        }
    }

    /** Runs the call of one message of a punctuated source; a failing call goes to the dead-letter topic. */
    private void punctuatedRow(String stream, SourceClocks.Clock clock, MessageId id, GenericRecord payload,
            long timestampMs, long watermarkMs) {
        long nanos = timestampMs * 1_000_000L;
        clocks.onRecord(clock, Math.min(nanos, watermarkMs * 1_000_000L), nanos);
        try {
            GenericRecord key = keyCodec.emptyKey();
            FlowMessage message = new FlowMessage(id, nanos, nanos, stream, key, payload, List.of());
            if (skipper.skips(message)) {
                return;
            }
            runCall(key, keyCodec.encode(key), id, nanos, "message",
                    () -> call.deliverMessage(function, message, call, call), null);
        } catch (FlowProcessingException e) {
            if (!plan.deadLetters() || Failures.retriable(e)) {
                throw e;
            }
            Map<String, String> where = new LinkedHashMap<>();
            where.put("flow.dlq.source.stream", stream);
            where.put("flow.dlq.source.id", id.toString());
            deadLetter(e, "message " + id + " of source " + stream, new byte[0],
                    new io.flowkafka.internal.serde.AvroCodec(payload.getSchema()).encode(payload), where);
        }
    }

    // ---------------------------------------------------------------- SwiftMap batching

    /**
     * Sets up SwiftMap batching ({@code allow_batching_with_relaxed_guarantees}): the buffer restored from its store
     * and the delay punctuator. See {@link SwiftMapBatching} for the cut rules.
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
        BatchBuffer buffer = new BatchBuffer(context.getStateStore(BatchBuffer.storeName(spec.id())), recordLimit);
        buffer.restore(this::decodeBuffered, context.currentSystemTimeMs());
        batch = new SwiftMapBatching(spec.id(), buffer, spec.maxBatchSize(), spec.maxBatchDelay().toMillis(),
                plan.deadLetters(), new SwiftMapBatching.Calls() {
                    @Override
                    public void run(List<FlowMessage> messages) {
                        runBatch(messages);
                    }

                    @Override
                    public void deadLetter(BatchBuffer.Entry entry, FlowProcessingException failure) {
                        deadLetterBuffered(entry, failure);
                    }
                }, plan.visitors().meters(), Tags.of("pipeline", plan.pipeline(),
                        "computation", spec.id(), "partition", Integer.toString(context.taskId().partition())));
        SwiftMapBatching b = batch;
        schedule(Duration.ofMillis(b.checkIntervalMs()), now -> {
            if (b.cutIfDue(now)) {
                maybeEmitWatermarks();
            }
        });
    }

    /** Decodes a record restored from the batch store, as {@link #process} decoded it when it was read. */
    private FlowMessage decodeBuffered(BatchedInput r) {
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

    private static byte[] bytes(ByteBuffer b) {
        byte[] a = new byte[b.remaining()];
        b.duplicate().get(a);
        return a;
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

    /** Runs one batched call with all-or-nothing effects, through the same path as {@link #runCall}. */
    private void runBatch(List<FlowMessage> messages) {
        call.beginBatch(messages);
        String what = messages.size() == 1 ? "message " + messages.get(0).messageId()
                : "batch of " + messages.size() + " messages " + messages.get(0).messageId() + ".."
                        + messages.get(messages.size() - 1).messageId();
        List<Message> batch = Collections.unmodifiableList(messages);
        applyCall(() -> what, () -> ((BatchFunction) function).onMessages(batch, call, call),
                nodes -> router.encodeBatch(call, context.currentSystemTimeMs() * 1_000_000L, nodes), null);
    }


    /** Sends a buffered input whose call failed to the dead-letter topic, with the headers of the dead-letter handler. */
    private void deadLetterBuffered(BatchBuffer.Entry e, FlowProcessingException failure) {
        BatchedInput r = e.record();
        Map<String, String> extra = new LinkedHashMap<>();
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

    /**
     * Sends watermarks if they changed and the interval passed since the last send; with deterministic steps
     * (FlowTestDriver) whenever they changed, so a piped record's watermark reaches downstream computations before
     * the pipe returns, without the test moving the wall clock.
     */
    private void maybeEmitWatermarks() {
        if (plan.watermarks().eachChange() || emitter.due(context.currentSystemTimeMs())) {
            emitWatermarks();
        }
    }

    /**
     * Computes this task's output watermarks and completion and sends them to every partition of
     * every internal output topic when they changed, or when the heartbeat is due.
     */
    private void emitWatermarks() {
        long now = context.currentSystemTimeMs();
        TaskWatermarks w = taskWatermarks(now);
        if (sourceComputation && alignedPartitions != null) {
            reportAlignment(true, w.sourcesIdle());
        }
        long system = w.system();
        outboxWatermarks.maybeWrite(now, system, context); // the input system watermark, to the async sinks
        if (stagedEpochs != null) {
            stagedEpochs.inputSystemWatermark(system); // and to the staged ones, after the epoch commits
        }
        taskMeters.watermarks(w.inputEvent(), w.inputSystem());
        reading.update(w.event(), system,
                timerStore == null ? TaskReading.NO_TIMERS : timerStore.approximatePending());
        emitter.emit(now, new WatermarkEmitter.Values(w.event(), system, w.idle(), w.completed()),
                deps -> dependencyWatermarks(deps, now));
    }

    /** A task's watermarks as {@link #emitWatermarks} computes them, before it records and sends them. */
    private record TaskWatermarks(long event, long system, boolean idle, boolean completed, long inputEvent,
            long inputSystem, boolean sourcesIdle) {
    }

    /**
     * The task's output watermarks and completion now, from its inputs, sources, timer holds, batch and visitors;
     * no side effect, so that {@link #stampWatermarks} gets the values {@link #emitWatermarks} would send.
     */
    private TaskWatermarks taskWatermarks(long now) {
        long event;
        long system;
        boolean idle = false;
        boolean sourcesIdle = false;
        boolean completed = false;
        long inputEvent; // the input watermarks, before timer holds and batches: what the watermark-lag gauges show
        long inputSystem;
        if (sourceComputation) {
            event = clocks.eventWatermark();
            system = clocks.systemWatermark(now);
            boolean sourcesDone = finite.allDone();
            inputEvent = sourcesDone ? Long.MAX_VALUE : event;
            inputSystem = sourcesDone ? Long.MAX_VALUE : system;
            // a source partition paused by watermark_alignment has data waiting: not idle, or readers would skip it
            // (its records would then arrive behind their watermark); it holds nothing back, being ahead of its group
            // nor is one with records waiting in its topic (the consumer has not handed them over yet)
            idle = sourcesIdle();
            sourcesIdle = idle;
            completed = sourcesDone && visitors.allDone();
            if (timerStore != null) { // a keyed source with timers: the same hold as on internal inputs
                event = Math.min(event, timerStore.watermarkHold());
                boolean holding = Objects.requireNonNull(firing).holdingPending();
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
            inputEvent = event;
            inputSystem = system;
            completed &= visitors.allDone();
            if (timerStore != null) {
                event = Math.min(event, timerStore.watermarkHold()); // the watermark hold
                completed &= !Objects.requireNonNull(firing).holdingPending();
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
        return new TaskWatermarks(event, system, idle, completed, inputEvent, inputSystem, sourcesIdle);
    }

    /** The nodes {@link #stampWatermarks} stamped in the current call; reused across calls. */
    private final Set<String> stampedNodes = new HashSet<>(4);

    /**
     * Gives the last message of a call to each internal output node the watermarks {@link #emitWatermarks} would
     * send after it ({@link #stampNodes}). Only where nothing between this call and the next emission can lower
     * them: the call of one Kafka source record (a punctuated source's step runs several streams' rows, whose
     * clocks move between them), of a source computation without timers (a fired timer's call may hold the
     * watermark back), key visitors or batches, whose watermarks follow its source clocks alone.
     */
    private void stampWatermarks(Map<String, String> nodeStreams, List<Record<byte[], byte[]>> forwards,
            List<String> nodes) {
        if (timerStore != null || batch != null || visitors.any()) {
            return;
        }
        WatermarkEmitter.Values values = null;
        Set<String> stamped = stampedNodes;
        stamped.clear();
        for (int i = forwards.size() - 1; i >= 0; i--) {
            String node = nodes.get(i);
            String stream = nodeStreams.get(node);
            if (stream == null) {
                continue; // a sink route
            }
            if (!stamped.add(node)) {
                continue; // not the node's last message of the call
            }
            if (values == null) {
                TaskWatermarks w = taskWatermarks(context.currentSystemTimeMs());
                values = new WatermarkEmitter.Values(w.event(), w.system(), w.idle(), w.completed());
            }
            byte[] control = emitter.stamp(node, stream, values);
            if (control != null) {
                forwards.get(i).headers().add(FlowHeaders.WATERMARK_AFTER, control);
            }
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
            KeyVisitor visitor = visitors.visitor(d);
            if (watermarks.streams().contains(d)) {
                event = Math.min(event, watermarks.eventWatermark(d));
                system = Math.min(system, watermarks.systemWatermark(d));
                completed &= watermarks.completed(d);
            } else if (clocks.get(d) != null) {
                boolean done = finite.allDone();
                if (!done) {
                    SourceClocks.Clock clock = Objects.requireNonNull(clocks.get(d));
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
                if (!(inputsDone && (!pending || timeTypes[timer] == TimeType.REAL_TIME))) {
                    long hold = timerStore.watermarkHold();
                    event = Math.min(event, Math.min(timerWatermark(timer), hold));
                    system = Math.min(system, timeTypes[timer] == TimeType.EVENT_TIME
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
    private final List<Cancellable> punctuations = new ArrayList<>();

    private void schedule(Duration interval, Punctuator punctuator) {
        punctuations.add(context.schedule(interval, PunctuationType.WALL_CLOCK_TIME,
                punctuator));
    }

    void close() {
        punctuations.forEach(Cancellable::cancel);
        punctuations.clear();
        if (!punctuatedReaders.isEmpty()) { // what they reported belongs to this task: it may now run elsewhere
            punctuatedReaders.forEach(PunctuatedSource.Reader::close);
            punctuatedReaders.clear();
            plan.visitors().status().clearTask(spec.id(), context.taskId().partition(), PUNCTUATED_STATUS_PREFIX);
        }
        if (alignedPartitions != null) {
            plan.alignment().releaseLocal(spec.id(), context.taskId().partition());
        }
        if (firing != null) {
            firing.close();
        }
        if (batch != null) {
            batch.close();
        }
        for (Meter m : meters) {
            plan.visitors().meters().remove(m);
        }
        meters.clear();
        if (taskMeters != null) {
            taskMeters.close();
        }
        if (visitors != null) {
            visitors.close();
            staticScans.forEach(StaticTableScanSource::close);
            staticScans.clear();
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
    private List<Tag> storeTags() {
        return List.of(Tag.of("pipeline", plan.pipeline()),
                Tag.of("computation", spec.id()),
                Tag.of("partition", Integer.toString(context.taskId().partition())));
    }
}
