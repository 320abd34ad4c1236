package io.flowkafka.runtime;

import io.flowkafka.api.FlowException;
import io.flowkafka.internal.compiler.CompiledPipeline;
import io.flowkafka.internal.compiler.InternalTopicPurger;
import io.flowkafka.internal.compiler.PipelineCompiler;
import io.flowkafka.internal.compiler.TopicManager;
import io.flowkafka.internal.dlq.DeadLetterHandler;
import io.flowkafka.internal.outbox.CommitObservingProducer;
import io.flowkafka.internal.outbox.EpochCommits;
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
import org.apache.kafka.common.serialization.Serdes;
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
        this.userProps = copy(props);
        this.config = new FlowConfig(userProps);
        this.dynamicSpec = new io.flowkafka.internal.visitor.DynamicSpec(this.spec);
        this.meterRegistry = meters != null ? meters : new io.micrometer.core.instrument.simple.SimpleMeterRegistry();
        this.compiled = PipelineCompiler.compile(this.spec, new io.flowkafka.internal.compiler.CompileOptions(
                config.getString(FlowConfig.TOPIC_PREFIX_CONFIG),
                !"memory".equals(config.getString(FlowConfig.STATE_STORES_CONFIG)),
                config.getBoolean(FlowConfig.TOPOLOGY_TEST_DRIVER_CONFIG),
                new io.flowkafka.internal.processor.ComputationPlan.WatermarkSettings(
                        config.getLong(FlowConfig.WATERMARK_INTERVAL_MS_CONFIG),
                        config.getLong(FlowConfig.WATERMARK_HEARTBEAT_MS_CONFIG)),
                new io.flowkafka.internal.processor.ComputationPlan.TimerSettings(
                        config.getLong(FlowConfig.TIMERS_INTERVAL_MS_CONFIG),
                        config.getInt(FlowConfig.TIMERS_MAX_PER_STEP_CONFIG),
                        config.getLong(FlowConfig.TIMERS_MAX_STEP_MS_CONFIG)),
                new io.flowkafka.internal.watermarks.OutputLimits(config.outputLimits(this.spec.streams().keySet())),
                config.getBoolean(FlowConfig.DEAD_LETTER_ENABLED_CONFIG),
                new io.flowkafka.internal.processor.ComputationPlan.VisitorRuntime(
                        config.getLong(FlowConfig.VISITOR_TICK_MS_CONFIG),
                        config.getInt(FlowConfig.VISITOR_MAX_ROWS_CONFIG),
                        config.getLong(FlowConfig.VISITOR_MAX_MS_CONFIG), dynamicSpec, statusBoard, meterRegistry),
                config.getBoolean(FlowConfig.STORE_CHANGELOGS_CONFIG)));
        this.streamsProps = streamsProperties(this.spec, userProps, compiled.deadLetterTopic(), config);
        this.producerDecorator = streamsProps.remove(PRODUCER_DECORATOR_CONFIG);
        Object guarantee = streamsProps.get(StreamsConfig.PROCESSING_GUARANTEE_CONFIG);
        if (!StreamsConfig.EXACTLY_ONCE_V2.equals(String.valueOf(guarantee).trim())) {
            throw new org.apache.kafka.common.config.ConfigException(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, guarantee,
                    "flow-kafka runs every computation on " + StreamsConfig.EXACTLY_ONCE_V2 + ", whatever its "
                            + "processing_mode: Kafka Streams' at_least_once would let state writes run ahead of "
                            + "committed offsets. Remove processing.guarantee from the properties, and choose "
                            + "processing_mode per Transform computation in the spec");
        }
        registerGuaranteeGauges();
        registerOutputLimitGauges();
        checkValueSerdes();
    }

    /**
     * One gauge {@code flow.computation.guarantee} (value 1) per computation, tagged with what the
     * computation runs with: its {@code processing_mode}, Kafka Streams' {@code processing.guarantee}
     * and whether SwiftMap batching with relaxed guarantees is on.
     */
    private void registerGuaranteeGauges() {
        for (io.flowkafka.spec.ComputationSpec c : spec.computations().values()) {
            io.micrometer.core.instrument.Gauge.builder(GUARANTEE_METRIC, () -> 1.0)
                    .description("What a computation runs with (tags); processing_mode at_least_once_consistent runs "
                            + "on exactly_once_v2 like exactly_once")
                    .tags("pipeline", spec.name(), "computation", c.id(), "kind", c.kind().shortName(),
                            "processing_mode", c.processingMode().specName(),
                            "processing_guarantee", StreamsConfig.EXACTLY_ONCE_V2,
                            "relaxed_batching", Boolean.toString(c.kind() == io.flowkafka.spec.ComputationKind.SWIFT_MAP
                                    && c.allowBatchingWithRelaxedGuarantees()))
                    .register(meterRegistry);
        }
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
     * One line saying what each computation of {@code spec} runs with, as {@link #start()} logs it:
     * the Kafka Streams guarantee, the computations by {@code processing_mode}, and the SwiftMap
     * computations that batch with relaxed guarantees.
     */
    static String guaranteeSummary(PipelineSpec spec) {
        Map<String, List<String>> byMode = new java.util.LinkedHashMap<>();
        List<String> batching = new java.util.ArrayList<>();
        for (io.flowkafka.spec.ComputationSpec c : spec.computations().values()) {
            byMode.computeIfAbsent(c.processingMode().specName(), k -> new java.util.ArrayList<>()).add(c.id());
            if (c.kind() == io.flowkafka.spec.ComputationKind.SWIFT_MAP && c.allowBatchingWithRelaxedGuarantees()) {
                batching.add(c.id() + " (max_batch_size " + c.maxBatchSize() + ", max_batch_delay "
                        + c.maxBatchDelay().toMillis() + "ms)");
            }
        }
        StringBuilder b = new StringBuilder("pipeline '").append(spec.name())
                .append("' runs every computation on Kafka Streams ").append(StreamsConfig.EXACTLY_ONCE_V2)
                .append("; processing_mode ");
        b.append(byMode.entrySet().stream().map(e -> e.getKey() + ": " + e.getValue())
                .collect(java.util.stream.Collectors.joining(", ")));
        if (byMode.containsKey(io.flowkafka.spec.ProcessingMode.AT_LEAST_ONCE_CONSISTENT.specName())) {
            b.append(" (at_least_once_consistent behaves as exactly_once here: on Kafka the input dedup it would skip "
                    + "is the transactional offset commit, which costs nothing extra)");
        }
        if (!batching.isEmpty()) {
            b.append("; SwiftMap batching with relaxed guarantees (outputs with several parents, ids from the parent "
                    + "set, no id order per key downstream): ").append(batching);
        }
        return b.toString();
    }

    /**
     * Instantiates and configures every {@code value_serde} once, so that a serde that rejects its
     * configuration fails here, naming the source or sink, rather than failing every task at init.
     */
    private void checkValueSerdes() {
        Map<String, Object> deployment = new java.util.HashMap<>();
        userProps.forEach((k, v) -> deployment.put(k.toString(), v));
        for (var c : spec.computations().values()) {
            List<Map.Entry<String, Map<String, Object>>> users = new java.util.ArrayList<>();
            c.sourceStreams().forEach(s -> users.add(Map.entry("source '" + s.streamId() + "'", s.parameters())));
            c.sinks().forEach(s -> users.add(Map.entry("sink '" + s.id() + "'", s.parameters())));
            for (var u : users) {
                Object serdeClass = u.getValue().get("value_serde");
                if (serdeClass == null) {
                    continue;
                }
                String owner = "computation '" + c.id() + "', " + u.getKey();
                try {
                    io.flowkafka.internal.serde.PluggableSerdes.create(serdeClass.toString(),
                            io.flowkafka.internal.serde.PluggableSerdes.configs(u.getValue().get("serde_config"),
                                    deployment), false, owner).close();
                } catch (IllegalArgumentException e) {
                    throw e;
                } catch (RuntimeException e) {
                    throw new org.apache.kafka.common.config.ConfigException(owner + ": value_serde " + serdeClass
                            + " rejected its configuration (serde_config over the flow.serde.* properties): "
                            + e.getMessage());
                }
            }
        }
    }

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

    /**
     * {@code restore.consumer.fetch.max.wait.ms} unless the user sets {@code fetch.max.wait.ms} for the consumers
     * (with or without a prefix): how long the restore consumer's fetch of a caught-up changelog waits for data.
     */
    static final String RESTORE_FETCH_MAX_WAIT_MS = "50";

    /**
     * {@code producer.batch.size} unless the user sets {@code batch.size} (plain or with the {@code producer.}
     * prefix): 256 KiB instead of Kafka's 16 KiB. At each commit the stores' write-back caches hand their
     * changed rows to the producer at once, thousands per changelog partition; in 16 KiB batches the broker's
     * per-batch work dominated (benchmarks/RESULTS.md). At start, {@link ProducerBatchSize} halves it (not below
     * Kafka's 16 KiB) until two batches of every partition a stream thread may write fit in {@code buffer.memory}.
     */
    static final String PRODUCER_BATCH_SIZE = "262144";

    /**
     * {@code producer.compression.type} unless the user sets {@code compression.type} (plain or with the
     * {@code producer.} prefix): changelog rows are small and alike, so lz4 batches are several times smaller,
     * for less broker work and less to read back on restore; any Kafka client reads them.
     */
    static final String PRODUCER_COMPRESSION_TYPE = "lz4";

    private static Properties streamsProperties(PipelineSpec spec, Properties user, String dlq, FlowConfig config) {
        Properties p = copy(user);
        p.putIfAbsent(StreamsConfig.APPLICATION_ID_CONFIG,
                config.getString(FlowConfig.APPLICATION_ID_PREFIX_CONFIG) + spec.name());
        p.putIfAbsent(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
        p.putIfAbsent(StreamsConfig.DEFAULT_KEY_SERDE_CLASS_CONFIG, Serdes.ByteArraySerde.class.getName());
        p.putIfAbsent(StreamsConfig.DEFAULT_VALUE_SERDE_CLASS_CONFIG, Serdes.ByteArraySerde.class.getName());
        p.putIfAbsent(StreamsConfig.PROCESSING_EXCEPTION_HANDLER_CLASS_CONFIG, DeadLetterHandler.class.getName());
        p.putIfAbsent("processing.exception.handler.global.enabled", "true");
        // an output its topic rejects for good: remembered, so the replayed input that produces it is a dead letter
        if (!p.containsKey(StreamsConfig.PRODUCTION_EXCEPTION_HANDLER_CLASS_CONFIG)
                && !p.containsKey(StreamsConfig.DEFAULT_PRODUCTION_EXCEPTION_HANDLER_CLASS_CONFIG)) {
            p.put(StreamsConfig.PRODUCTION_EXCEPTION_HANDLER_CLASS_CONFIG,
                    io.flowkafka.internal.dlq.RejectedOutputHandler.class.getName());
        }
        p.put(io.flowkafka.internal.dlq.RejectedOutputs.CONFIG, new io.flowkafka.internal.dlq.RejectedOutputs());
        String fetchWait = org.apache.kafka.clients.consumer.ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG;
        if (!p.containsKey(fetchWait) && !p.containsKey(StreamsConfig.consumerPrefix(fetchWait))
                && !p.containsKey(StreamsConfig.restoreConsumerPrefix(fetchWait))) {
            // The restore consumer's fetch of a caught-up (e.g. empty) changelog long-polls the broker for
            // fetch.max.wait.ms (500 ms), and the broker answers the next request on that connection (the offset
            // lookup of the next tasks' changelogs at start or after a rebalance) only after it: a start of
            // 4 tasks waited ~0.4 s for nothing. Restore fetches with data return at once either way.
            p.put(StreamsConfig.restoreConsumerPrefix(fetchWait), RESTORE_FETCH_MAX_WAIT_MS);
        }
        // Kafka Streams keeps state in changelog topics: its producers' defaults are set for that traffic
        putProducerDefault(p, org.apache.kafka.clients.producer.ProducerConfig.BATCH_SIZE_CONFIG, PRODUCER_BATCH_SIZE);
        putProducerDefault(p, org.apache.kafka.clients.producer.ProducerConfig.COMPRESSION_TYPE_CONFIG,
                PRODUCER_COMPRESSION_TYPE);
        p.put(DeadLetterHandler.TOPIC_CONFIG, dlq);
        p.put(DeadLetterHandler.ENABLED_CONFIG, String.valueOf(config.getBoolean(FlowConfig.DEAD_LETTER_ENABLED_CONFIG)));
        int rf = config.getInt(FlowConfig.REPLICATION_FACTOR_CONFIG);
        if (rf > 0) {
            p.putIfAbsent(StreamsConfig.REPLICATION_FACTOR_CONFIG, rf);
        }
        int isr = config.getInt(FlowConfig.MIN_INSYNC_REPLICAS_CONFIG);
        if (isr > 0) {
            p.putIfAbsent(StreamsConfig.topicPrefix("min.insync.replicas"), String.valueOf(isr));
        }
        return p;
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
        return copy(streamsProps);
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
        LOG.info(guaranteeSummary(spec));
        admin = Admin.create(ClientProperties.admin(streamsProps));
        try {
            prepare(admin);
            fitProducerBatchSize(admin);
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
        Properties startProps = copy(streamsProps);
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
            if (streamsGroupProtocol()) {
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

    /**
     * Whether Kafka Streams runs the streams group protocol, under which it creates its main consumer
     * itself (no source partition can be paused: no drain, no watermark alignment).
     */
    private boolean streamsGroupProtocol() {
        return "streams".equalsIgnoreCase(String.valueOf(streamsProps.get(StreamsConfig.GROUP_PROTOCOL_CONFIG)).trim());
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
            prepare(a);
        }
    }

    /**
     * The sources a keyed Transform reads must be co-partitioned: task p reads partition p of each, so
     * the records of a key meet only if every topic has the same partition count.
     */
    private void checkKeyedSourcesCoPartitioned(Map<String, org.apache.kafka.clients.admin.TopicDescription> described) {
        for (var c : spec.computations().values()) {
            if (!c.readsKeyedSource() || c.sourceStreams().size() < 2) {
                continue;
            }
            Map<String, Integer> counts = new java.util.LinkedHashMap<>();
            c.sourceStreams().forEach(src -> PipelineCompiler.topicsOf(src).forEach(
                    t -> counts.put(t, described.get(t).partitions().size())));
            if (counts.values().stream().distinct().count() > 1) {
                throw new FlowException("computation '" + c.id() + "' reads key-partitioned sources whose topics have "
                        + "different partition counts " + counts + "; a key's records meet in one task only if every "
                        + "topic has the same number of partitions, partitioned by the same key: repartition the "
                        + "topics to one count, or read them in Source computations and their outputs in the Transform");
            }
        }
    }

    private void prepare(Admin a) {
        new TopicManager(a, config.getInt(FlowConfig.REPLICATION_FACTOR_CONFIG),
                config.getInt(FlowConfig.MIN_INSYNC_REPLICAS_CONFIG))
                .prepare(spec.name(), compiled, "create".equals(config.getString(FlowConfig.TOPICS_MODE_CONFIG)));
        if (compiled.sourceTopicsByComputation().isEmpty()) {
            return;
        }
        try {
            java.util.Set<String> all = new java.util.HashSet<>();
            compiled.sourceTopicsByComputation().values().forEach(all::addAll);
            var described = a.describeTopics(all).allTopicNames().get(60, TimeUnit.SECONDS);
            compiled.sourceTopicsByComputation().forEach((computation, topics) -> compiled.partitionCounts().put(
                    computation, topics.stream().mapToInt(t -> described.get(t).partitions().size()).max().orElse(1)));
            checkKeyedSourcesCoPartitioned(described);
            // use_consumer_group_offset: start where another consumer group left off, once
            io.flowkafka.internal.source.GroupOffsetSeeder.seed(a, spec, applicationId(),
                    streamsGroupProtocol(),
                    described);
            // finite sources: bounded by the last stable offsets seen now (partitions a partition_filter excludes
            // are done without reading)
            Map<org.apache.kafka.common.TopicPartition, org.apache.kafka.clients.admin.OffsetSpec> request =
                    new java.util.HashMap<>();
            for (var c : spec.computations().values()) {
                for (var source : c.sourceStreams()) {
                    if (io.flowkafka.internal.source.KafkaSourceParameters.finite(source)) {
                        var filter = io.flowkafka.internal.source.KafkaSourceParameters.partitionFilter(source);
                        for (String topic : PipelineCompiler.topicsOf(source)) {
                            for (var p : described.get(topic).partitions()) {
                                if (filter != null && !filter.accepts(p.partition())) {
                                    continue;
                                }
                                request.put(new org.apache.kafka.common.TopicPartition(topic, p.partition()),
                                        org.apache.kafka.clients.admin.OffsetSpec.latest());
                            }
                        }
                    }
                }
            }
            if (!request.isEmpty()) {
                a.listOffsets(request, new org.apache.kafka.clients.admin.ListOffsetsOptions(
                                org.apache.kafka.common.IsolationLevel.READ_COMMITTED))
                        .all().get(60, TimeUnit.SECONDS)
                        .forEach((tp, info) -> compiled.finiteSources().bound(tp, info.offset()));
            }
        } catch (FlowException e) {
            throw e;
        } catch (Exception e) {
            throw new FlowException("pipeline '" + spec.name() + "' could not describe its source topics: " + e, e);
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
        return config.getBoolean(FlowConfig.LEAVE_GROUP_ON_CLOSE_CONFIG) && leavesGroupOnClose(streamsProps);
    }

    static boolean leavesGroupOnClose(Properties props) {
        String key = org.apache.kafka.clients.consumer.ConsumerConfig.GROUP_INSTANCE_ID_CONFIG;
        for (String k : List.of(key, StreamsConfig.consumerPrefix(key), StreamsConfig.mainConsumerPrefix(key))) {
            Object v = props.get(k);
            if (v != null && !v.toString().isBlank()) {
                return false;
            }
        }
        return true;
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
        if (streamsGroupProtocol()) {
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
        long gapMs = Math.max(50, Math.min(1000, commitIntervalMs()));
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

    private long commitIntervalMs() {
        Object v = streamsProps.get(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG);
        try {
            return v == null ? 100 : Long.parseLong(v.toString().trim()); // 100 ms: Kafka Streams' exactly-once default
        } catch (NumberFormatException e) {
            return 100;
        }
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

    /**
     * Lowers flow-kafka's default {@code producer.batch.size} (not a user's) so that the batches of every partition a
     * stream thread may write at once fit in its producer's {@code buffer.memory} (see {@link ProducerBatchSize}).
     */
    private void fitProducerBatchSize(Admin a) {
        String key = StreamsConfig.producerPrefix(org.apache.kafka.clients.producer.ProducerConfig.BATCH_SIZE_CONFIG);
        if (!PRODUCER_BATCH_SIZE.equals(streamsProps.get(key)) || userProps.containsKey(key)) {
            // the user chose it (plain batch.size leaves no prefixed default)
            return;
        }
        var description = compiled.topology().describe();
        Map<String, Integer> partitions = new java.util.HashMap<>(compiled.internalTopics());
        java.util.Set<String> external = new java.util.HashSet<>();
        for (var sub : description.subtopologies()) {
            for (var node : sub.nodes()) {
                if (node instanceof org.apache.kafka.streams.TopologyDescription.Source source
                        && source.topicSet() != null) {
                    external.addAll(source.topicSet());
                } else if (node instanceof org.apache.kafka.streams.TopologyDescription.Sink sink
                        && sink.topic() != null) {
                    external.add(sink.topic());
                }
            }
        }
        external.removeAll(partitions.keySet());
        if (!external.isEmpty()) {
            try {
                a.describeTopics(external).topicNameValues().forEach((topic, future) -> {
                    try {
                        partitions.put(topic, future.get(60, TimeUnit.SECONDS).partitions().size());
                    } catch (Exception e) {
                        // a topic that cannot be described (a sink topic created later) counts as one partition
                    }
                });
            } catch (RuntimeException e) {
                LOG.debug("pipeline '{}': topics not described for the producer batch size: {}", spec.name(), e.toString());
            }
        }
        int threads = Integer.parseInt(String.valueOf(streamsProps.getOrDefault(StreamsConfig.NUM_STREAM_THREADS_CONFIG,
                "1")).trim());
        long bufferMemory = io.flowkafka.internal.dlq.RecordSizeLimit.producerSetting(streamsProps,
                org.apache.kafka.clients.producer.ProducerConfig.BUFFER_MEMORY_CONFIG, 32L * 1024 * 1024);
        int perThread = ProducerBatchSize.partitionsPerThread(description, partitions, threads);
        int size = ProducerBatchSize.fit(Integer.parseInt(PRODUCER_BATCH_SIZE), perThread, bufferMemory);
        if (size < Integer.parseInt(PRODUCER_BATCH_SIZE)) {
            streamsProps.put(key, String.valueOf(size));
            LOG.info("pipeline '{}': producer.batch.size {} instead of {}: a stream thread may write {} partitions at "
                    + "once (changelogs and output streams), and two batches of each must fit in buffer.memory ({} "
                    + "bytes); set producer.batch.size or producer.buffer.memory to choose", spec.name(), size,
                    PRODUCER_BATCH_SIZE, perThread, bufferMemory);
        }
    }

    /** Sets {@code producer.<key>} unless the user gives {@code key} plain or with the {@code producer.} prefix. */
    private static void putProducerDefault(Properties p, String key, String value) {
        if (!p.containsKey(key) && !p.containsKey(StreamsConfig.producerPrefix(key))) {
            p.put(StreamsConfig.producerPrefix(key), value);
        }
    }

    private static Properties copy(Properties p) {
        Properties c = new Properties();
        c.putAll(p);
        return c;
    }
}
