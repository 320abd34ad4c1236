package io.flowkafka.runtime;

import io.flowkafka.api.FlowException;
import io.flowkafka.internal.compiler.CompileOptions;
import io.flowkafka.internal.compiler.CompiledPipeline;
import io.flowkafka.internal.compiler.InternalTopicPurger;
import io.flowkafka.internal.compiler.PipelineCompiler;
import io.flowkafka.internal.outbox.CommitObservingProducer;
import io.flowkafka.internal.outbox.EpochCommits;
import io.flowkafka.internal.runtime.GuaranteeReport;
import io.flowkafka.internal.runtime.ProducerBatchSize;
import io.flowkafka.internal.runtime.RuntimeSchedulers;
import io.flowkafka.internal.runtime.StreamsProperties;
import io.flowkafka.internal.runtime.TopicPreparation;
import io.flowkafka.internal.serde.PluggableSerdes;
import io.flowkafka.spec.PipelineSpec;
import io.flowkafka.spi.ClientProperties;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.UnaryOperator;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.jspecify.annotations.Nullable;

/**
 * Runs one instance of a pipeline: compiles the spec into a Kafka Streams application, creates
 * its topics and runs it. Several instances with the same pipeline name (on any hosts) share the
 * pipeline's partitions; that is how a pipeline scales out.
 *
 * <pre>{@code
 * Properties props = new Properties();
 * props.put("bootstrap.servers", "localhost:9092");
 * try (FlowRuntime runtime = FlowRuntime.create(spec, props)) {
 *     runtime.start();
 *     runtime.awaitState(FlowRuntime.State.RUNNING, Duration.ofMinutes(1));
 *     ...
 * }
 * }</pre>
 *
 * <p>Properties: the {@code flow.*} keys of {@link FlowConfig}; everything else passes through to
 * Kafka Streams unchanged (security settings included). flow-kafka sets, unless given:
 * {@code application.id} (prefix + pipeline name), {@code processing.guarantee=exactly_once_v2},
 * its dead-letter processing-exception handler, byte-array default serdes, and
 * {@code restore.consumer.fetch.max.wait.ms=50} (unless {@code fetch.max.wait.ms} is given plain or with the
 * {@code consumer.} or {@code restore.consumer.} prefix), {@code producer.batch.size=262144} and
 * {@code producer.compression.type=lz4} (each unless given plain or with the {@code producer.} prefix). Every computation
 * runs on {@code exactly_once_v2}, whatever its {@code processing_mode}: another
 * {@code processing.guarantee} is rejected. The gauge {@value #GUARANTEE_METRIC} and a log line at
 * {@link #start()} say what each computation runs with.
 *
 * <p>Thread-safe: lifecycle methods may be called from any thread.
 */
public final class FlowRuntime implements AutoCloseable {
    /**
     * Name of the gauge (value 1, one per computation) whose tags say what a computation runs with:
     * {@code pipeline}, {@code computation}, {@code kind}, {@code processing_mode},
     * {@code processing_guarantee} (always {@code exactly_once_v2}) and {@code relaxed_batching}.
     */
    public static final String GUARANTEE_METRIC = "flow.computation.guarantee";

    private static final Logger LOG = LoggerFactory.getLogger(FlowRuntime.class);

    static {
        io.flowkafka.avro.FlowAvroClasses.trust();
    }

    /** What the runtime is doing, as a user sees it. */
    public enum State {
        /** Created, not started. */
        CREATED,
        /** Creating topics, restoring state or rebalancing. */
        STARTING,
        /** Processing. */
        RUNNING,
        /** Paused by {@link #pause()}; nothing is processed until {@link #resume()}. */
        PAUSED,
        /**
         * {@link #drain(Duration)} in progress: source topics are no longer read, everything already
         * read is processed; then the runtime stops.
         */
        DRAINING,
        /** Shutting down after {@link #stop(Duration)}, {@link #drain(Duration)} or {@link #close()}. */
        STOPPING,
        /** Stopped; all processed work committed. */
        STOPPED,
        /** Every finite source done and every timer fired (finite pipelines). */
        COMPLETED,
        /** Stopped by an error; see the log. */
        FAILED
    }

    private final PipelineSpec spec;
    private final Properties userProps;
    private final FlowConfig config;
    private final CompiledPipeline compiled;
    /** Orders pause(), resume() and the start of a drain: Kafka Streams' pause and the idleness clock change together. */
    private final Object pauseLock = new Object();
    private final Properties streamsProps;
    /**
     * Key of an object in the properties (not a string): a {@code UnaryOperator<Producer<byte[], byte[]>>} applied to
     * each stream thread's producer. For tests that break a commit on a real broker (as Kafka Streams' own tests
     * do); not for production use.
     */
    public static final String PRODUCER_DECORATOR_CONFIG = "flow.internal.producer.decorator";
    private final @Nullable Object producerDecorator;
    private final AtomicReference<State> state = new AtomicReference<>(State.CREATED);
    private volatile KafkaStreams streams;
    private volatile io.flowkafka.internal.drain.@Nullable DrainingClientSupplier clientSupplier;
    private volatile io.flowkafka.internal.watermarks.@Nullable AlignmentReader alignmentReader;
    private org.apache.kafka.clients.consumer.KafkaConsumer<String, String> statusConsumer;
    private final java.util.Set<String> completedTasks = new java.util.HashSet<>();
    /** Background work: admin calls on one thread, the alignment poll on its own. */
    private RuntimeSchedulers schedulers;
    private Admin admin;
    private final List<io.flowkafka.internal.outbox.OutboxService> outboxServices = new java.util.ArrayList<>();
    private final List<io.flowkafka.internal.outbox.AtMostOnceDelivery> atMostOnceDeliveries = new java.util.ArrayList<>();
    private final List<io.flowkafka.spi.SyncSinkWriter> syncWriters = new java.util.ArrayList<>();

    private final io.flowkafka.internal.visitor.DynamicSpec dynamicSpec;
    private final io.flowkafka.internal.status.StatusBoard statusBoard = new io.flowkafka.internal.status.StatusBoard();
    private final io.micrometer.core.instrument.MeterRegistry meterRegistry;

    private FlowRuntime(PipelineSpec spec, Properties props, io.micrometer.core.instrument.@Nullable MeterRegistry meters) {
        this.spec = spec.validated();
        this.userProps = StreamsProperties.copy(props);
        this.config = new FlowConfig(userProps);
        this.dynamicSpec = new io.flowkafka.internal.visitor.DynamicSpec(this.spec);
        this.meterRegistry = meters != null ? meters : new io.micrometer.core.instrument.simple.SimpleMeterRegistry();
        this.compiled = PipelineCompiler.compile(this.spec, CompileOptions.of(config, this.spec.streams().keySet(),
                dynamicSpec, statusBoard, meterRegistry));
        this.streamsProps = StreamsProperties.of(this.spec, userProps, compiled.deadLetterTopic(), config);
        this.producerDecorator = streamsProps.remove(PRODUCER_DECORATOR_CONFIG);
        StreamsProperties.requireExactlyOnce(streamsProps);
        GuaranteeReport.registerGauges(this.spec, meterRegistry);
        registerOutputLimitGauges();
        PluggableSerdes.checkValueSerdes(this.spec, userProps);
    }

    /**
     * Per stream with an output limit ({@code flow.output.limit.records}) and a topic: {@code flow.output.backlog},
     * the offsets of its topic written but not yet consumed downstream as last measured (records, watermark control
     * records and transaction markers alike), and {@code flow.output.blocked}, 1 while that is over the limit (the
     * timer-stream groups writing to it are held back), else 0. Removed on {@link #close()}.
     */
    private void registerOutputLimitGauges() {
        var limits = compiled.outputLimits();
        for (String stream : limits.limits().keySet()) {
            if (compiled.streamTopics().getOrDefault(stream, List.of()).isEmpty()) {
                continue; // no topic of its own (e.g. written only to sinks): nothing to measure
            }
            runtimeGauges.add(io.micrometer.core.instrument.Gauge.builder("flow.output.backlog", limits,
                            l -> l.backlogOf(stream))
                    .description("Offsets of the stream's topic written but not yet consumed downstream (its records, "
                            + "watermark control records and transaction markers), as last measured for its output "
                            + "limit")
                    .tags("pipeline", spec.name(), "stream", stream).register(meterRegistry));
            runtimeGauges.add(io.micrometer.core.instrument.Gauge.builder("flow.output.blocked", limits,
                            l -> l.isBlocked(stream) ? 1.0 : 0.0)
                    .description("1 while the stream's backlog is over its output limit: the timer-stream groups "
                            + "writing to it are held back")
                    .tags("pipeline", spec.name(), "stream", stream).register(meterRegistry));
        }
    }

    /** Gauges that read this runtime's objects: removed on {@link #close()}, so a later runtime can register its own. */
    private final List<io.micrometer.core.instrument.Meter> runtimeGauges =
            new java.util.concurrent.CopyOnWriteArrayList<>();

    /**
     * Validates and compiles the spec; starts nothing.
     *
     * @throws io.flowkafka.spec.InvalidSpecException listing every spec error
     * @throws org.apache.kafka.common.config.ConfigException for a bad {@code flow.*} property, or a
     *     {@code processing.guarantee} other than {@code exactly_once_v2}, or a
     *     {@code value_serde} that rejects its configuration ({@code serde_config} over
     *     {@code flow.serde.*})
     */
    public static FlowRuntime create(PipelineSpec spec, Properties props) {
        Objects.requireNonNull(spec, "spec");
        Objects.requireNonNull(props, "props");
        return new FlowRuntime(spec, props, null);
    }

    /**
     * Validates and compiles the spec, registering flow-kafka's metrics (key visitors) in
     * {@code meters}; starts nothing.
     *
     * @throws io.flowkafka.spec.InvalidSpecException listing every spec error
     * @throws org.apache.kafka.common.config.ConfigException for a bad {@code flow.*} property, or a
     *     {@code processing.guarantee} other than {@code exactly_once_v2}
     */
    public static FlowRuntime create(PipelineSpec spec, Properties props, io.micrometer.core.instrument.MeterRegistry meters) {
        Objects.requireNonNull(spec, "spec");
        Objects.requireNonNull(props, "props");
        Objects.requireNonNull(meters, "meters");
        return new FlowRuntime(spec, props, meters);
    }

    /**
     * Changes the dynamic spec of the running pipeline without a restart (Flow's
     * {@code dynamic_spec}); tasks pick the change up at their next punctuation. Today the dynamic
     * settings are those of key visitors: {@code {"computations": {"<id>": {"key_visitor_streams":
     * {"<name>": {"period": "1h", "max_scan_rows_per_iteration": 5000, "finite": false, ...}}}}}}.
     *
     * <p>The change applies to the tasks of this instance; with several instances, apply it on
     * each (a dynamic-spec topic shared by all instances is planned).
     *
     * @throws IllegalArgumentException listing every problem; nothing is applied then
     */
    public void reconfigure(Map<String, ?> dynamicSpecChange) {
        Objects.requireNonNull(dynamicSpecChange, "dynamicSpecChange");
        dynamicSpec.apply(dynamicSpecChange);
        LOG.info("pipeline '{}': dynamic spec changed: {}", spec.name(), dynamicSpecChange);
    }

    /**
     * Changes the dynamic settings of one key-visitor stream; shorthand for {@link #reconfigure(Map)}.
     *
     * @throws IllegalArgumentException for an unknown computation, stream or setting, or a bad value
     */
    public void reconfigureKeyVisitor(String computation, String visitorStream, Map<String, ?> settings) {
        reconfigure(Map.of("computations", Map.of(computation, Map.of("key_visitor_streams",
                Map.of(visitorStream, settings)))));
    }

    /**
     * Declares a partition of a finite source ({@code finite: true}) fully read. The runtime
     * detects this itself on a broker (from the end offsets seen at start); test drivers, which
     * have no end offsets, call this to let a finite pipeline complete.
     *
     * @throws IllegalArgumentException if no finite source reads {@code topic}
     */
    public void completeFiniteSource(String topic, int partition) {
        boolean finite = spec.computations().values().stream().flatMap(c -> c.sourceStreams().stream())
                .anyMatch(s -> Boolean.parseBoolean(String.valueOf(s.parameters().getOrDefault("finite", "false")))
                        && PipelineCompiler.topicsOf(s).contains(topic));
        if (!finite) {
            throw new IllegalArgumentException("no finite source (\"finite\": true) of pipeline '" + spec.name()
                    + "' reads topic '" + topic + "'");
        }
        compiled.finiteSources().markDone(new org.apache.kafka.common.TopicPartition(topic, partition));
    }

    /** Tests: the finite sources' bounds, which a real start reads from the broker before the tasks start. */
    io.flowkafka.internal.watermarks.FiniteSources finiteSources() {
        return compiled.finiteSources();
    }

    /** The current dynamic settings of a key-visitor stream. */
    public io.flowkafka.spec.KeyVisitorSettings keyVisitorSettings(String computation, String visitorStream) {
        return dynamicSpec.keyVisitor(computation, visitorStream);
    }

    /**
     * The errors the pipeline's tasks on this instance currently report without failing, e.g.
     * {@code /key_visitor/<stream>/scan_cap_stall}; each clears itself when its cause goes away.
     */
    public List<StatusError> status() {
        return statusBoard.errors();
    }

    /** The registry holding flow-kafka's metrics (the one given to {@code create}, or a private one). */
    public io.micrometer.core.instrument.MeterRegistry meterRegistry() {
        return meterRegistry;
    }

    /**
     * The compiled topology of a spec, for users who embed it in their own {@link KafkaStreams}
     * or test it with {@code TopologyTestDriver}; run it with {@link #streamsProperties}.
     */
    public static Topology topology(PipelineSpec spec, Properties props) {
        return create(spec, props).topology();
    }

    /** The Kafka Streams properties the runtime uses for {@code spec} and {@code props}. */
    public static Properties streamsProperties(PipelineSpec spec, Properties props) {
        return create(spec, props).streamsProperties();
    }

    /** The compiled topology (one sub-topology per computation). */
    public Topology topology() {
        return compiled.topology();
    }

    /** What says a silent source partition is not idle (tests). */
    io.flowkafka.internal.watermarks.SourceIdleness sourceIdleness() {
        return compiled.sourceIdleness();
    }

    /** A copy of the Kafka Streams properties this runtime runs with. */
    public Properties streamsProperties() {
        return StreamsProperties.copy(streamsProps);
    }

    /** The Kafka Streams {@code application.id}, which is also the consumer group id. */
    public String applicationId() {
        return streamsProps.getProperty(StreamsConfig.APPLICATION_ID_CONFIG);
    }

    /** The spec this runtime runs. */
    public PipelineSpec spec() {
        return spec;
    }

    /**
     * The topic(s) carrying a stream: internal topics first, then sink topics.
     *
     * @throws IllegalArgumentException if the stream is not materialized in a topic (source streams are read from the user's topics)
     */
    public List<String> streamTopics(String streamId) {
        List<String> t = compiled.streamTopics().get(streamId);
        if (t == null) {
            throw new IllegalArgumentException("stream '" + streamId + "' of pipeline '" + spec.name()
                    + "' has no topic of its own; materialized streams are " + compiled.streamTopics().keySet());
        }
        return t;
    }

    /** The dead-letter topic, {@code <prefix><pipeline>.dlq}. */
    public String deadLetterTopic() {
        return compiled.deadLetterTopic();
    }

    /** The internal topics flow-kafka owns, with partition counts. */
    public Map<String, Integer> internalTopics() {
        return compiled.internalTopics();
    }

    /**
     * Holds back (or releases) the timers of every timer-stream group that writes to
     * {@code streamId}, as if the stream's output limit were exceeded. For operations and tests;
     * measured output limits ({@code flow.output.limit.records}) do the same on their own.
     *
     * @throws IllegalArgumentException if the pipeline has no such stream
     */
    public void blockOutputStream(String streamId, boolean blocked) {
        if (!spec.streams().containsKey(streamId)) {
            throw new IllegalArgumentException("pipeline '" + spec.name() + "' has no stream '" + streamId + "'");
        }
        compiled.outputLimits().setBlocked(streamId, blocked);
    }

    /** The current state. */
    public State state() {
        return state.get();
    }

    /**
     * Creates (or checks) the topics, then starts processing. Returns at once; use
     * {@link #awaitState} to wait for {@link State#RUNNING}.
     *
     * @throws IllegalStateException if already started
     * @throws FlowException if topics are missing or cannot be created, or the consumer group
     *     cannot be seeded from a source's {@code group_id}
     */
    public synchronized void start() {
        if (!state.compareAndSet(State.CREATED, State.STARTING)) {
            throw new IllegalStateException("pipeline '" + spec.name() + "' was already started (state " + state.get() + ")");
        }
        LOG.info(GuaranteeReport.summary(spec));
        admin = Admin.create(ClientProperties.admin(streamsProps));
        try {
            new TopicPreparation(spec, compiled, config, streamsProps).prepare(admin);
            ProducerBatchSize.fitDefault(admin, streamsProps, userProps, compiled, spec.name());
        } catch (RuntimeException e) {
            state.set(State.FAILED);
            admin.close(Duration.ofSeconds(5));
            throw e;
        }
        var alignment = compiled.alignment();
        var supplier = new io.flowkafka.internal.drain.DrainingClientSupplier(
                new java.util.HashSet<>(compiled.sourceTopics()), alignment.active() ? alignment::blocked : null,
                compiled.sourceIdleness());
        if (!config.getBoolean(FlowConfig.LEAVE_GROUP_ON_CLOSE_CONFIG)) {
            supplier.stayInGroupOnClose();
        }
        // at-most-once sinks release an epoch's messages once its transaction committed, as the producer sees it
        EpochCommits commits = new EpochCommits();
        @SuppressWarnings("unchecked")
        UnaryOperator<Producer<byte[], byte[]>> decorate = producerDecorator instanceof UnaryOperator<?> u
                ? (UnaryOperator<Producer<byte[], byte[]>>) u : UnaryOperator.identity();
        supplier.decorateProducers(p -> new CommitObservingProducer(decorate.apply(p), commits));
        Properties startProps = StreamsProperties.copy(streamsProps);
        startProps.put(EpochCommits.CONFIG, commits);
        clientSupplier = supplier;
        KafkaStreams ks = new KafkaStreams(compiled.topology(), startProps, supplier);
        boolean replace = "replace".equals(config.getString(FlowConfig.STREAM_THREAD_FAILURE_CONFIG));
        ks.setUncaughtExceptionHandler(e -> {
            var fatalSink = io.flowkafka.internal.outbox.FatalSinkException.in(e);
            if (fatalSink != null) {
                // replaying would fail the same way forever: stop with the reason rather than loop
                LOG.error("pipeline '{}' stops: {}", spec.name(), fatalSink.getMessage());
                statusBoard.report("*", -1, "/sinks/" + fatalSink.sink() + "/stopped", fatalSink.getMessage(),
                        java.time.Instant.now());
                return StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
            }
            boolean inputFailure = causedByInput(e);
            if (!inputFailure) {
                // a failure of the machinery (a send error, a broker problem): the transaction was aborted, a new
                // thread restores the tasks from their changelogs and replays from the last commit
                LOG.warn("pipeline '{}': a stream thread died of a runtime failure, replacing it: {}", spec.name(),
                        e.toString());
                return StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.REPLACE_THREAD;
            }
            LOG.error("pipeline '{}': a stream thread died processing an input with dead letters disabled: {}",
                    spec.name(), e.toString());
            return replace ? StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.REPLACE_THREAD
                    : StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
        });
        ks.setStateListener((newState, oldState) -> onStreamsState(newState));
        streams = ks;
        installSyncWriters();
        ks.start();
        long purgeMs = config.getLong(FlowConfig.PURGE_INTERVAL_MS_CONFIG);
        schedulers = new RuntimeSchedulers(spec.name());
        schedulers.scheduleSlow(this::watchCompletion, 500, 500);
        if (purgeMs > 0 && !compiled.internalTopics().isEmpty()) {
            schedulers.scheduleSlow(new InternalTopicPurger(admin, applicationId(),
                    compiled.internalTopics().keySet()), purgeMs, purgeMs);
        }
        startOutboxServices(purgeMs);
        if (alignment.active()) {
            if (StreamsProperties.streamsGroupProtocol(streamsProps)) {
                LOG.warn("pipeline '{}': watermark_alignment of {} does nothing with group.protocol=streams (Kafka "
                        + "Streams creates its main consumer itself, so no source partition can be paused); use "
                        + "group.protocol=classic", spec.name(), alignment.computations());
            }
            runtimeGauges.add(io.micrometer.core.instrument.Gauge.builder("flow.watermark.alignment.paused", supplier,
                            io.flowkafka.internal.drain.DrainingClientSupplier::alignmentPaused)
                    .description("Source partitions this instance keeps paused for watermark_alignment now (ahead "
                            + "of their group by more than drift_bound)")
                    .tag("pipeline", spec.name()).register(meterRegistry));
            Map<String, Integer> partitions = new java.util.LinkedHashMap<>();
            alignment.computations().forEach(c -> partitions.put(c, compiled.partitionCounts().of(c)));
            alignment.expect(partitions);
            alignment.activate();
            Map<String, String> changelogs = new java.util.LinkedHashMap<>();
            for (String c : alignment.computations()) {
                changelogs.put(applicationId() + "-" + io.flowkafka.internal.watermarks.WatermarkTracker.storeName(c)
                        + "-changelog", c);
            }
            var reader = new io.flowkafka.internal.watermarks.AlignmentReader(clientProperties(),
                    applicationId() + "-alignment-reader", changelogs, alignment);
            alignmentReader = reader;
            // on its own thread: an admin call of the maintenance thread may wait up to 30 s
            schedulers.scheduleFast(() -> {
                try {
                    reader.poll();
                    alignment.tick();
                } catch (RuntimeException e) {
                    // an exception would cancel this schedule, and remote members would freeze where they are
                    LOG.warn("pipeline '{}': watermark alignment: following the other instances failed, retrying: {}",
                            spec.name(), e.toString());
                }
            }, 200, 200);
        }
    }

    /** The pipeline cluster's client properties (bootstrap servers, security). */
    private Map<String, Object> clientProperties() {
        return ClientProperties.admin(streamsProps);
    }

    private io.flowkafka.spi.SinkContext sinkContext(io.flowkafka.internal.compiler.CompiledPipeline.AsyncSink async,
            Map<String, Object> client) {
        String prefix = FlowConfig.SINK_PREFIX + async.sink().id() + ".";
        Map<String, Object> sinkProps = new java.util.HashMap<>();
        userProps.forEach((k, v) -> {
            if (k.toString().startsWith(prefix)) {
                sinkProps.put(k.toString().substring(prefix.length()), v);
            }
        });
        return new io.flowkafka.spi.SinkContext(spec.name(), applicationId(), async.computation(), async.sink(), client,
                sinkProps, meterRegistry, compiled.deadLetterTopic());
    }

    /** Installs the writers of synchronous external sinks; before processing starts. */
    private void installSyncWriters() {
        Map<String, Object> client = clientProperties();
        for (var async : compiled.asyncSinks()) {
            if (async.writer() != null) {
                var provider = java.util.Objects.requireNonNull(
                        io.flowkafka.internal.outbox.Sinks.provider(async.sink().sinkClassName()));
                var writer = provider.createWriter(sinkContext(async, client));
                syncWriters.add(writer);
                async.writer().set(writer);
            }
        }
    }

    /** Starts one delivery service per async sink (see {@link io.flowkafka.spi.OutboxDeliverer}). */
    private void startOutboxServices(long purgeMs) {
        if (compiled.asyncSinks().isEmpty()) {
            return;
        }
        Map<String, Object> client = clientProperties();
        for (var async : compiled.asyncSinks()) {
            if (async.writer() != null) {
                continue; // synchronous: its writer was installed before processing started
            }
            var provider = java.util.Objects.requireNonNull(
                    io.flowkafka.internal.outbox.Sinks.provider(async.sink().sinkClassName()));
            var deliverer = provider.createDeliverer(sinkContext(async, client));
            int maxBatch = Integer.parseInt(String.valueOf(async.sink().parameters().getOrDefault("max_batch_records", "500")));
            if (async.queue() != null) {
                var delivery = new io.flowkafka.internal.outbox.AtMostOnceDelivery(spec.name(), async.sink().id(),
                        async.computation(), async.queue(), deliverer, maxBatch,
                        io.flowkafka.spec.AtMostOnceStrategy.of(async.sink()).suspendDestructionDuration(), statusBoard);
                atMostOnceDeliveries.add(delivery);
                delivery.start();
                continue;
            }
            var service = new io.flowkafka.internal.outbox.OutboxService(spec.name(), async.sink().id(),
                    async.computation(), async.outboxTopic(), deliverer, client,
                    applicationId() + ".outbox." + async.sink().id(), maxBatch, admin, statusBoard, meterRegistry, purgeMs);
            outboxServices.add(service);
            service.start();
        }
    }

    private void closeOutboxServices() {
        for (var s : outboxServices) {
            s.close();
        }
        outboxServices.clear();
        for (var d : atMostOnceDeliveries) {
            d.close();
        }
        atMostOnceDeliveries.clear();
        for (var w : syncWriters) {
            try {
                w.close();
            } catch (RuntimeException e) {
                LOG.warn("pipeline '{}': closing a sink writer failed: {}", spec.name(), e.toString());
            }
        }
        syncWriters.clear();
    }

    /**
     * Creates (or checks) the pipeline's topics, learns its source topics' partition counts and
     * end offsets (finite sources), and seeds its consumer group from the {@code group_id} of
     * sources with {@code use_consumer_group_offset}, without starting anything. {@link #start()}
     * does this itself; call it when you run {@link #topology()} in your own {@link KafkaStreams},
     * before that starts.
     *
     * @throws FlowException if topics are missing or cannot be created, or the consumer group
     *     cannot be seeded
     */
    public void prepareTopics() {
        try (Admin a = Admin.create(ClientProperties.admin(streamsProps))) {
            new TopicPreparation(spec, compiled, config, streamsProps).prepare(a);
        }
    }

    /** Runs on the maintenance thread: measures the backlog of streams with an output limit. */
    private void measureOutputLimits() {
        var limits = compiled.outputLimits();
        if (limits.limits().isEmpty()) {
            return;
        }
        try {
            var committed = admin.listConsumerGroupOffsets(applicationId()).partitionsToOffsetAndMetadata()
                    .get(30, TimeUnit.SECONDS);
            Map<org.apache.kafka.common.TopicPartition, org.apache.kafka.clients.admin.OffsetSpec> request =
                    new java.util.HashMap<>();
            for (String stream : limits.limits().keySet()) {
                for (String topic : compiled.streamTopics().getOrDefault(stream, List.of())) {
                    Integer n = compiled.internalTopics().get(topic);
                    for (int p = 0; n != null && p < n; p++) {
                        request.put(new org.apache.kafka.common.TopicPartition(topic, p),
                                org.apache.kafka.clients.admin.OffsetSpec.latest());
                    }
                }
            }
            var ends = admin.listOffsets(request).all().get(30, TimeUnit.SECONDS);
            for (String stream : limits.limits().keySet()) {
                long backlog = 0;
                for (var e : ends.entrySet()) {
                    if (compiled.streamTopics().getOrDefault(stream, List.of()).contains(e.getKey().topic())) {
                        var om = committed.get(e.getKey());
                        backlog += Math.max(0, e.getValue().offset() - (om == null ? 0 : om.offset()));
                    }
                }
                limits.backlog(stream, backlog);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Exception e) {
            LOG.debug("pipeline '{}': measuring output limits failed, will retry: {}", spec.name(), e.toString());
        }
    }

    /** Runs on the maintenance thread: finite sources done by committed offsets, completion from the status topic. */
    private void watchCompletion() {
        measureOutputLimits();
        try {
            if (!compiled.finiteSources().bounds().isEmpty()) {
                var committed = admin.listConsumerGroupOffsets(applicationId()).partitionsToOffsetAndMetadata()
                        .get(30, TimeUnit.SECONDS);
                compiled.finiteSources().bounds().forEach((tp, bound) -> {
                    var om = committed.get(tp);
                    if (bound == 0L || (om != null && om.offset() >= bound)) {
                        compiled.finiteSources().markDone(tp);
                    }
                });
            }
            if (statusConsumer == null) {
                Map<String, Object> cp = ClientProperties.consumer(streamsProps);
                cp.put(org.apache.kafka.clients.consumer.ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
                cp.put(org.apache.kafka.clients.consumer.ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG,
                        org.apache.kafka.common.serialization.StringDeserializer.class.getName());
                cp.put(org.apache.kafka.clients.consumer.ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG,
                        org.apache.kafka.common.serialization.StringDeserializer.class.getName());
                statusConsumer = new org.apache.kafka.clients.consumer.KafkaConsumer<>(cp);
                var tp = new org.apache.kafka.common.TopicPartition(compiled.statusTopic(), 0);
                statusConsumer.assign(List.of(tp));
                statusConsumer.seekToBeginning(List.of(tp));
            }
            for (var r : statusConsumer.poll(Duration.ofMillis(100))) {
                if ("completed".equals(r.value())) {
                    completedTasks.add(r.key());
                }
            }
            int expected = 0;
            for (var c : spec.computations().values()) {
                expected += compiled.partitionCounts().of(c.id());
            }
            if (completedTasks.size() >= expected && state.get() == State.RUNNING) {
                LOG.info("pipeline '{}' completed: all {} tasks reported completion", spec.name(), expected);
                state.set(State.COMPLETED);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Exception e) {
            LOG.debug("pipeline '{}': completion check failed, will retry: {}", spec.name(), e.toString());
        }
    }

    /**
     * Waits until the pipeline {@link State#COMPLETED completed}: every finite source was fully
     * processed, every event- and system-time timer fired, every computation completed.
     *
     * @return true if it completed within {@code timeout}
     */
    public boolean awaitCompletion(Duration timeout) throws InterruptedException {
        return awaitState(State.COMPLETED, timeout);
    }

    /**
     * Whether a stream thread died of one input's failure (with dead letters disabled) rather than
     * of the machinery or of a retriable outage ({@link io.flowkafka.internal.dlq.Failures}), which
     * always gets the thread replaced.
     */
    static boolean causedByInput(Throwable e) {
        return io.flowkafka.internal.dlq.Failures.causedByInput(e);
    }

    private void onStreamsState(KafkaStreams.State s) {
        boolean paused = s == KafkaStreams.State.RUNNING && streams != null && streams.isPaused();
        state.updateAndGet(current -> next(current, s, paused));
    }

    /** The runtime's state after Kafka Streams moved to {@code s}. */
    static State next(State current, KafkaStreams.State s, boolean paused) {
        if (current == State.STOPPING || current == State.STOPPED) {
            return s == KafkaStreams.State.NOT_RUNNING ? State.STOPPED : current;
        }
        if (current == State.COMPLETED && (s == KafkaStreams.State.RUNNING || s == KafkaStreams.State.REBALANCING)) {
            return current; // completed is terminal until the runtime is closed
        }
        if (current == State.DRAINING) {
            // rebalances do not end a drain; a shutdown or an error does
            return switch (s) {
                case PENDING_SHUTDOWN -> State.STOPPING;
                case NOT_RUNNING -> State.STOPPED;
                case PENDING_ERROR, ERROR -> State.FAILED;
                default -> current;
            };
        }
        return switch (s) {
            case CREATED, REBALANCING -> State.STARTING;
            case RUNNING -> paused ? State.PAUSED : State.RUNNING;
            case PENDING_SHUTDOWN -> State.STOPPING;
            case NOT_RUNNING -> State.STOPPED;
            case PENDING_ERROR, ERROR -> State.FAILED;
            default -> current;
        };
    }

    /**
     * Pauses processing at once; state and offsets stay as committed. The time paused does not count
     * towards {@code idle_partitions.duration}: source partitions that were not idle when the pause
     * began are not idle when it ends (their records were waiting, not missing), so readers do not skip
     * them and their records do not arrive behind the watermark.
     *
     * @throws IllegalStateException if not started
     */
    public void pause() {
        KafkaStreams ks = requireStarted();
        synchronized (pauseLock) { // Kafka Streams and the idleness clock pause together
            compiled.sourceIdleness().pause(System.currentTimeMillis());
            ks.pause();
        }
        state.compareAndSet(State.RUNNING, State.PAUSED);
    }

    /** Resumes after {@link #pause()}. */
    public void resume() {
        KafkaStreams ks = requireStarted();
        synchronized (pauseLock) {
            compiled.sourceIdleness().resume(System.currentTimeMillis()); // not while a drain keeps sources paused
            ks.resume();
        }
        state.compareAndSet(State.PAUSED, State.RUNNING);
    }

    /**
     * Stops this instance at once (the fast stop): finishes the records in hand, commits, closes.
     * Records already read from source topics but still in internal streams, between computations,
     * stay there for the next start; {@link #drain(Duration)} processes them first. The instance leaves
     * the consumer group (unless {@code group.instance.id} makes it a static member), so its partitions
     * move to the other instances of the pipeline, if any, at once; a later start resumes from the commit.
     *
     * @return true if it stopped within {@code timeout}; false leaves the runtime {@link State#FAILED}
     */
    public boolean stop(Duration timeout) {
        KafkaStreams ks = streams;
        if (ks == null) {
            state.set(State.STOPPED);
            return true;
        }
        state.set(State.STOPPING);
        boolean done = ks.close(org.apache.kafka.streams.CloseOptions.timeout(timeout).withGroupMembershipOperation(
                leavesGroupOnClose() ? org.apache.kafka.streams.CloseOptions.GroupMembershipOperation.LEAVE_GROUP
                        : org.apache.kafka.streams.CloseOptions.GroupMembershipOperation.REMAIN_IN_GROUP));
        if (done) {
            closeOutboxServices();
        } else {
            // stream threads may still run and write to synchronous sinks: leave the writers and services open
            // (daemon threads) rather than fail records of calls whose state already committed
            LOG.warn("pipeline '{}': Kafka Streams did not close within {}; its sink writers and outbox services are "
                    + "left running", spec.name(), timeout);
        }
        shutdownMaintenance();
        state.set(done ? State.STOPPED : State.FAILED);
        return done;
    }

    /**
     * Whether a stop leaves the consumer group: yes, unless the user configured static membership
     * ({@code group.instance.id}, plain or with a consumer prefix). Kafka Streams' own close stays in the group, so
     * that a static member coming back within its session gets its tasks back without a rebalance; a dynamic member
     * comes back as a new member anyway, and staying only keeps its partitions unprocessed, and a restart's
     * rebalance waiting, until {@code session.timeout.ms} (45 s) passes.
     */
    boolean leavesGroupOnClose() {
        return config.getBoolean(FlowConfig.LEAVE_GROUP_ON_CLOSE_CONFIG) && StreamsProperties.leavesGroupOnClose(streamsProps);
    }

    /** What {@link #drain(Duration)} gives Kafka Streams' close at least, whatever was left of its timeout. */
    private static final Duration DRAIN_MIN_CLOSE = Duration.ofSeconds(30);

    /**
     * Drains, then stops this instance (Flow's "stop"): source topics are no longer read, every
     * message already read is processed through every computation, then the instance stops as
     * {@link #stop(Duration)} does. Use it before a spec change that alters internal streams.
     *
     * <p>Drained means: every record this instance's stream threads took from source topics is
     * processed and committed, and no partition of an internal stream (the topics between
     * computations; not sink, outbox, dead-letter, status or key-visitor control topics) holds a
     * committed data record after the pipeline's committed offset (watermark control records and
     * transaction markers do not count), seen twice in a row, a commit interval apart (at most
     * 1 s). Sink topics then hold the outputs of every source record consumed, and the source
     * offsets committed mark where the next start resumes.
     *
     * <ul>
     *   <li><b>Several instances:</b> the internal streams are checked as a whole, but this call
     *       stops only this instance's sources; while other instances still read sources they keep
     *       feeding the internal streams and this call waits until its timeout. Drain every
     *       instance (concurrently); an instance that stops first leaves its partitions to the others
     *       (at once; a static member once its session times out), which keep their sources paused too.
     *   <li><b>Timers:</b> watermarks do not jump (no source partition's watermark moves while
     *       its source is paused), so event-time timers do not fire early: those whose watermark has
     *       not passed stay pending for the next start. The time the drain takes does not count
     *       towards {@code idle_partitions.duration}: a source partition that was not idle when the
     *       drain began does not turn idle while it waits (its records wait in the topic), and a
     *       busy one's system watermark stays at its last record's instead of following the clock.
     *       Timers whose watermark passes keep firing while the drain waits (real-time ones on the
     *       clock); their outputs are processed like any other message, but a firing after the last
     *       check is not waited for. Key visitors keep visiting likewise.
     *   <li><b>Not drained in time:</b> the instance stops anyway and this returns false; nothing is
     *       lost: what is left in internal streams is processed at the next start, as after
     *       {@code stop}.
     *   <li>A {@link State#PAUSED paused} runtime is resumed (its sources stay paused).
     *   <li>Not with {@code group.protocol=streams}: Kafka Streams then creates its consumer
     *       itself, and flow-kafka cannot pause source topics alone.
     * </ul>
     *
     * <p>The state is {@link State#DRAINING} while waiting, then {@link State#STOPPING} and
     * {@link State#STOPPED}.
     *
     * @param timeout how long to wait for the drain; closing then takes what is left of it, but at
     *     least 30 s (the bound of {@link #close()})
     * @return true if the pipeline drained and this instance stopped in time
     * @throws IllegalStateException if not started, or already stopping, stopped or failed
     * @throws UnsupportedOperationException with {@code group.protocol=streams}
     */
    public boolean drain(Duration timeout) {
        Objects.requireNonNull(timeout, "timeout");
        long deadline = System.nanoTime() + timeout.toNanos();
        if (StreamsProperties.streamsGroupProtocol(streamsProps)) {
            throw new UnsupportedOperationException("pipeline '" + spec.name() + "': drain needs group.protocol=classic; "
                    + "with group.protocol=streams Kafka Streams creates its main consumer itself, so source topics "
                    + "cannot be paused alone. Use stop(Duration)");
        }
        KafkaStreams ks = requireStarted();
        var supplier = Objects.requireNonNull(clientSupplier);
        State before = state.getAndUpdate(s -> s == State.STOPPING || s == State.STOPPED || s == State.FAILED
                ? s : State.DRAINING);
        if (before == State.STOPPING || before == State.STOPPED || before == State.FAILED) {
            throw new IllegalStateException("pipeline '" + spec.name() + "' is " + before + ": nothing to drain");
        }
        synchronized (pauseLock) {
            compiled.sourceIdleness().drain(System.currentTimeMillis()); // their silence from now on is not idleness
            supplier.startDraining();
            if (ks.isPaused()) {
                ks.resume(); // nothing would drain otherwise; the sources stay paused
            }
        }
        Map<String, Integer> topics = drainTopics();
        LOG.info("pipeline '{}' drains: source topics {} are no longer read; waiting up to {} until {} hold no data "
                + "record the pipeline has not consumed", spec.name(), compiled.sourceTopics(), timeout, topics.keySet());
        long started = System.nanoTime();
        String left;
        try {
            left = awaitDrained(ks, supplier, topics, deadline);
        } catch (RuntimeException e) {
            left = "the drain check failed: " + e; // stop all the same
        }
        if (left == null) {
            LOG.info("pipeline '{}' drained in {} ms; stopping", spec.name(),
                    TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started));
        } else {
            LOG.warn("pipeline '{}' did not drain within {} ({}); stopping anyway: what is left is processed at the "
                    + "next start", spec.name(), timeout, left);
        }
        Duration remaining = Duration.ofNanos(Math.max(0, deadline - System.nanoTime()));
        boolean stopped = stop(remaining.compareTo(DRAIN_MIN_CLOSE) > 0 ? remaining : DRAIN_MIN_CLOSE);
        return left == null && stopped;
    }

    /** Waits until drained (null) or the deadline; returns what was left at the last check. */
    private @Nullable String awaitDrained(KafkaStreams ks, io.flowkafka.internal.drain.DrainingClientSupplier supplier,
            Map<String, Integer> topics, long deadline) {
        long gapMs = Math.max(50, Math.min(1000, StreamsProperties.commitIntervalMs(streamsProps)));
        int clean = 0;
        String left = "not checked";
        try (var backlog = new io.flowkafka.internal.drain.InternalBacklog(admin, applicationId(), topics,
                consumerClientConfig())) {
            while (true) {
                KafkaStreams.State s = ks.state();
                if (!s.isRunningOrRebalancing()) {
                    return "Kafka Streams is " + s;
                }
                left = drainCheck(supplier, backlog, deadline);
                clean = left == null ? clean + 1 : 0;
                if (clean >= 2) {
                    return null;
                }
                LOG.debug("pipeline '{}' drain check: {}", spec.name(), left == null ? "drained, confirming" : left);
                long remainingMs = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
                if (remainingMs <= 0) {
                    return left == null ? "drained once, not confirmed" : left;
                }
                Thread.sleep(Math.min(gapMs, remainingMs)); // let a commit interval pass between two checks
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "interrupted; " + left;
        }
    }

    /** One check: null if drained, else what is left. */
    private @Nullable String drainCheck(io.flowkafka.internal.drain.DrainingClientSupplier supplier,
            io.flowkafka.internal.drain.InternalBacklog backlog, long deadline) throws InterruptedException {
        var inHand = supplier.sourcesInHand();
        if (inHand.isEmpty()) {
            return "a stream thread has not yet polled with its source partitions paused";
        }
        Map<org.apache.kafka.common.TopicPartition, org.apache.kafka.clients.consumer.OffsetAndMetadata> committed;
        try {
            committed = backlog.committed(Duration.ofNanos(Math.max(0, deadline - System.nanoTime())));
        } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
            return "committed offsets unknown: " + e;
        }
        List<String> behind = new java.util.ArrayList<>();
        inHand.get().forEach((tp, offset) -> {
            var om = committed.get(tp);
            if (om == null || om.offset() < offset) {
                behind.add(tp + " committed " + (om == null ? "nothing" : om.offset()) + " < " + offset);
            }
        });
        if (!behind.isEmpty()) {
            return "source records read but not yet processed and committed: " + behind;
        }
        io.flowkafka.internal.drain.InternalBacklog.Look look;
        try {
            look = backlog.look(committed, Duration.ofNanos(Math.max(0, deadline - System.nanoTime())));
        } catch (org.apache.kafka.common.KafkaException e) {
            return "internal topics unreadable: " + e; // retried at the next check
        }
        if (!look.withData().isEmpty()) {
            return "data records not yet consumed in " + look.withData();
        }
        if (!look.unread().isEmpty()) {
            return "not read to their end in time: " + look.unread();
        }
        return null;
    }

    /**
     * The internal topics a drain waits on: those read by a computation, except the control topics
     * of computations without inputs (key-visitor only), whose heartbeats never stop.
     */
    private Map<String, Integer> drainTopics() {
        java.util.Set<String> read = new java.util.HashSet<>();
        for (var sub : compiled.topology().describe().subtopologies()) {
            for (var node : sub.nodes()) {
                if (node instanceof org.apache.kafka.streams.TopologyDescription.Source source
                        && source.topicSet() != null) {
                    read.addAll(source.topicSet());
                }
            }
        }
        String prefix = config.getString(FlowConfig.TOPIC_PREFIX_CONFIG);
        for (var c : spec.computations().values()) {
            if (c.sourceStreams().isEmpty() && c.inputStreamIds().isEmpty()) {
                read.remove(PipelineCompiler.controlTopic(prefix, spec.name(), c.id()));
            }
        }
        Map<String, Integer> topics = new java.util.LinkedHashMap<>();
        compiled.internalTopics().forEach((topic, partitions) -> {
            if (read.contains(topic)) {
                topics.put(topic, partitions);
            }
        });
        return topics;
    }

    /** Consumer settings of the pipeline's cluster (bootstrap servers, security), without the group. */
    private Map<String, Object> consumerClientConfig() {
        return ClientProperties.consumer(streamsProps);
    }

    /**
     * Waits until the runtime is in {@code expected}, or failed, or the timeout passed.
     *
     * @return true if the expected state was reached
     */
    public boolean awaitState(State expected, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            State s = state.get();
            if (s == expected) {
                return true;
            }
            if (s == State.FAILED && expected != State.FAILED) {
                return false;
            }
            Thread.sleep(20);
        }
        return state.get() == expected;
    }

    /** Stops (with a 30 s bound) and releases everything. Idempotent. */
    @Override
    public void close() {
        if (streams != null && state.get() != State.STOPPED) {
            stop(Duration.ofSeconds(30));
        }
        shutdownMaintenance();
        runtimeGauges.forEach(meterRegistry::remove);
        runtimeGauges.clear();
    }

    private void shutdownMaintenance() {
        if (schedulers != null) {
            schedulers.shutdown(Duration.ofSeconds(5));
        }
        if (alignmentReader != null) {
            alignmentReader.close(); // the thread that polled it has stopped
            alignmentReader = null;
        }
        if (statusConsumer != null) {
            statusConsumer.close(Duration.ofSeconds(2));
            statusConsumer = null;
        }
        if (admin != null) {
            admin.close(Duration.ofSeconds(5));
            admin = null;
        }
    }

    private KafkaStreams requireStarted() {
        KafkaStreams ks = streams;
        if (ks == null) {
            throw new IllegalStateException("pipeline '" + spec.name() + "' is not started");
        }
        return ks;
    }
}
