package io.flowkafka.runtime;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.flowkafka.api.FlowException;
import io.flowkafka.avro.FlowAvroClasses;
import io.flowkafka.internal.compiler.CompileOptions;
import io.flowkafka.internal.compiler.CompiledPipeline;
import io.flowkafka.internal.compiler.PipelineCompiler;
import io.flowkafka.internal.drain.DrainCondition;
import io.flowkafka.internal.drain.DrainingClientSupplier;
import io.flowkafka.internal.metrics.PipelineMeters;
import io.flowkafka.internal.http.StateQueryHandler;
import io.flowkafka.internal.state.StateDeletes;
import io.flowkafka.internal.outbox.SinkServices;
import io.flowkafka.internal.outbox.Sinks;
import io.flowkafka.internal.http.OperationsServer;
import io.flowkafka.internal.http.StatusPage;
import io.flowkafka.internal.runtime.AlignmentFollower;
import io.flowkafka.internal.runtime.ClusterReachability;
import io.flowkafka.internal.runtime.CompletionWatch;
import io.flowkafka.internal.runtime.DynamicControls;
import io.flowkafka.internal.runtime.FlowStreams;
import io.flowkafka.internal.runtime.GuaranteeReport;
import io.flowkafka.internal.runtime.OutputLimitMeter;
import io.flowkafka.internal.runtime.PipelineMeterSweep;
import io.flowkafka.internal.runtime.ProducerBatchSize;
import io.flowkafka.internal.runtime.RuntimeMaintenance;
import io.flowkafka.internal.runtime.RuntimeStates;
import io.flowkafka.internal.runtime.StreamThreadFailures;
import io.flowkafka.internal.runtime.StreamsProperties;
import io.flowkafka.internal.runtime.TopicOwners;
import io.flowkafka.internal.runtime.TopicPreparation;
import io.flowkafka.internal.serde.PluggableSerdes;
import io.flowkafka.internal.status.InstanceReport;
import io.flowkafka.internal.status.InstanceStatusTopic;
import io.flowkafka.internal.status.StatusBoard;
import io.flowkafka.internal.config.DynamicSpec;
import io.flowkafka.internal.dynamic.DynamicSpecDocument;
import io.flowkafka.internal.dynamic.DynamicSpecTopic;
import io.flowkafka.internal.watermarks.FiniteSources;
import io.flowkafka.internal.watermarks.SourceIdleness;
import io.flowkafka.internal.drain.DrainingSources;
import io.flowkafka.spec.KeyVisitorSettings;
import io.flowkafka.spec.InvalidSpecException;
import io.flowkafka.spec.PipelineGraph;
import io.flowkafka.spec.PipelineSpec;
import io.flowkafka.spec.PipelineSpecLoader;
import io.flowkafka.spec.SinkSpec;
import io.flowkafka.spec.SpecProblem;
import io.flowkafka.spi.ClientProperties;
import com.sun.net.httpserver.HttpHandler;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.streams.CloseOptions;
import org.apache.kafka.streams.CloseOptions.GroupMembershipOperation;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TaskMetadata;
import org.apache.kafka.streams.ThreadMetadata;
import org.apache.kafka.streams.Topology;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

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
 * <p>With {@code flow.http.port} the instance serves a status page ({@link #httpAddress()}) showing every instance of
 * the pipeline, which each publishes its status to the compacted topic {@code <prefix><pipeline>.instances}.
 *
 * <p>Thread-safe: lifecycle methods may be called from any thread.
 *
 * <p>Over 700 lines of which most are the public API's Javadoc: the work is in {@code internal/runtime}
 * (topic preparation, completion watching, output limits, drain, Streams properties, sink services, the dynamic
 * spec's controls) and {@code internal/http} (the operations server, the status page, state queries).
 */
public final class FlowRuntime implements AutoCloseable {
    /**
     * Name of the gauge (value 1, one per computation) whose tags say what a computation runs with:
     * {@code pipeline}, {@code computation}, {@code kind}, {@code processing_mode},
     * {@code processing_guarantee} (always {@code exactly_once_v2}) and {@code relaxed_batching}.
     */
    public static final String GUARANTEE_METRIC = "flow.computation.guarantee";

    /**
     * Key of an object in the properties (not a string): a {@code UnaryOperator<Producer<byte[], byte[]>>} applied to
     * each stream thread's producer. For tests that break a commit on a real broker (as Kafka Streams' own tests
     * do); not for production use.
     */
    public static final String PRODUCER_DECORATOR_CONFIG = "flow.internal.producer.decorator";

    /**
     * Internal, for {@code io.flowkafka.testing.FlowTestDriver} only (it sets it; not for production use, and may
     * change without notice): {@code true} makes every task's work deterministic on Kafka Streams'
     * TopologyTestDriver. A task sends its watermarks as soon as they change, not at most once per
     * {@code flow.watermark.interval.ms} of wall-clock time; timer firing and key-visitor steps are bounded by count
     * only ({@code flow.timers.max.punctuation.ms} and {@code flow.key.visitor.max.punctuation.ms} are ignored);
     * and once timers fire, steps follow at once until no due timer is left. What happens then depends on the
     * inputs and the (test's) wall clock only, never on the machine's speed or load.
     */
    public static final String DETERMINISTIC_STEPS_CONFIG = "flow.internal.deterministic.steps";

    /**
     * Internal, for {@code io.flowkafka.testing.FlowTestDriver} only: with {@link #DETERMINISTIC_STEPS_CONFIG},
     * {@code false} keeps the broker's pacing of watermarks (at most once per {@code flow.watermark.interval.ms} of
     * the driver's wall clock) instead of sending them as they change; timer and key-visitor steps stay bounded by
     * count. Default {@code true}.
     */
    public static final String DETERMINISTIC_WATERMARKS_CONFIG = "flow.internal.deterministic.watermarks";

    private static final Logger LOG = LoggerFactory.getLogger(FlowRuntime.class);

    /** What {@link #drain(Duration)} gives Kafka Streams' close at least, whatever was left of its timeout. */
    private static final Duration DRAIN_MIN_CLOSE = Duration.ofSeconds(30);

    static {
        FlowAvroClasses.trust();
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
    private final List<SpecProblem> specWarnings;
    private final Properties userProps;
    private final FlowConfig config;
    private final CompiledPipeline compiled;
    /** Orders pause(), resume() and the start of a drain: Kafka Streams' pause and the idleness clock change together. */
    private final Object pauseLock = new Object();
    private final Properties streamsProps;
    private final @Nullable Object producerDecorator;
    private final AtomicReference<State> state = new AtomicReference<>(State.CREATED);
    private final DynamicSpec dynamicSpec;
    private final StatusBoard statusBoard = new StatusBoard();
    private final MeterRegistry meterRegistry;
    /** The spec file's name and text when created from a file, for {@code flow-kafka get-spec}. */
    private @Nullable String specFile;
    private @Nullable String specText;
    /** How long a stop asked by the dynamic spec drains before it stops anyway. */
    private static final Duration STOP_BY_SPEC_TIMEOUT = Duration.ofMinutes(5);
    private final OutputLimitMeter outputLimitMeter;
    /** Gauges that read this runtime's objects: removed on {@link #close()}, so a later runtime can register its own. */
    private final List<Meter> runtimeGauges = new CopyOnWriteArrayList<>();
    private volatile KafkaStreams streams;
    private volatile @Nullable DrainingClientSupplier clientSupplier;
    /** Background work: admin calls on one thread, the alignment poll on its own. */
    private volatile @Nullable RuntimeMaintenance maintenance;
    private Admin admin;
    private volatile @Nullable SinkServices sinkServices;
    /** The dynamic spec shared by every instance, from {@link #start()} on; before (and on test drivers) none. */
    private volatile @Nullable DynamicSpecTopic sharedSpec;
    /** The meters of the running instance (epoch commits, dead letters, Kafka Streams' own), from start to close. */
    private volatile @Nullable PipelineMeters pipelineMeters;
    /** State deletes asked through {@link #stateQueryHandler()}, applied by the tasks. */
    private final StateDeletes stateDeletes = new StateDeletes();
    /** With {@code flow.http.port}, from {@link #start()} until stop: the operations server and the status topic. */
    private volatile @Nullable OperationsServer operationsServer;
    private volatile @Nullable InstanceStatusTopic instanceStatus;
    /** Whether {@link #close()} released this runtime's meters. */
    private final AtomicBoolean metersSwept = new AtomicBoolean();
    /** From {@link #start()}: the dynamic spec's pause and stop, and who paused the instance. */
    private volatile @Nullable DynamicControls controls;
    /** Whether a stop closed Kafka Streams and the sink services: nothing is left for another stop. Guarded by this. */
    private boolean stopped;
    /** While {@link #stop(Duration)} runs: Kafka Streams closing then does not make the state STOPPED, the stop does. */
    private volatile boolean stopRunning;

    private FlowRuntime(PipelineSpec spec, Properties props, @Nullable MeterRegistry meters) {
        List<SpecProblem> problems = spec.validate();
        List<SpecProblem> errors = problems.stream().filter(p -> p.severity() == SpecProblem.Severity.ERROR).toList();
        if (!errors.isEmpty()) {
            throw InvalidSpecException.of(spec.name(), problems);
        }
        this.spec = spec;
        this.userProps = StreamsProperties.copy(props);
        this.config = new FlowConfig(userProps);
        this.specWarnings = problems.stream().filter(p -> p.severity() == SpecProblem.Severity.WARNING).toList();
        reportWarnings(spec.name(), specWarnings, config);
        this.dynamicSpec = new DynamicSpec(this.spec);
        this.meterRegistry = meters != null ? meters : new SimpleMeterRegistry();
        PipelineMeterSweep.opened(meterRegistry, this.spec.name()); // before any meter is registered
        try {
            this.compiled = PipelineCompiler.compile(this.spec, CompileOptions.of(config,
                    this.spec.streams().keySet(), dynamicSpec, statusBoard, meterRegistry));
            List<SinkSpec> sinks = this.spec.computations().values().stream().flatMap(c -> c.sinks().stream())
                    .toList();
            config.rejectUnknownTargets(sinks.stream().filter(s -> Sinks.isAsync(s.sinkClassName()))
                    .map(SinkSpec::id).toList(), sinks.stream().map(SinkSpec::id).toList(),
                    this.spec.streams().keySet());
            this.streamsProps = StreamsProperties.of(this.spec, userProps, compiled.deadLetterTopic(), config);
            this.producerDecorator = streamsProps.remove(PRODUCER_DECORATOR_CONFIG);
            StreamsProperties.requireExactlyOnce(streamsProps);
            GuaranteeReport.registerGauges(this.spec, meterRegistry);
            this.outputLimitMeter = new OutputLimitMeter(this.spec.name(), compiled, applicationId());
            runtimeGauges.addAll(outputLimitMeter.registerGauges(meterRegistry));
            PluggableSerdes.checkValueSerdes(this.spec, userProps);
        } catch (RuntimeException | Error e) {
            // a runtime that is never returned is never closed: its meters go now
            metersSwept.set(true);
            PipelineMeterSweep.closed(meterRegistry, this.spec.name());
            throw e;
        }
    }

    /**
     * Logs every warning of the spec at WARN, or with {@code flow.spec.warnings=fail} rejects them.
     *
     * @throws InvalidSpecException listing the warnings, with {@code flow.spec.warnings=fail}
     */
    private static void reportWarnings(String pipeline, List<SpecProblem> warnings, FlowConfig config) {
        if (warnings.isEmpty()) {
            return;
        }
        if (FlowConfig.SPEC_WARNINGS_FAIL.equals(config.getString(FlowConfig.SPEC_WARNINGS_CONFIG))) {
            throw InvalidSpecException.ofWarnings(pipeline, warnings,
                    FlowConfig.SPEC_WARNINGS_CONFIG + "=" + FlowConfig.SPEC_WARNINGS_FAIL);
        }
        for (SpecProblem w : warnings) {
            LOG.warn("pipeline '{}': spec warning: {}", pipeline, w);
        }
        LOG.warn("pipeline '{}': the spec has {} warning(s), each naming something the pipeline ignores; set {}={} to "
                + "reject them", pipeline, warnings.size(), FlowConfig.SPEC_WARNINGS_CONFIG, FlowConfig.SPEC_WARNINGS_FAIL);
    }

    /**
     * Validates and compiles the spec; starts nothing. Logs each warning of the spec
     * ({@link PipelineSpec#allWarnings()}) at WARN, or rejects them with {@code flow.spec.warnings=fail}.
     *
     * @param spec the pipeline spec
     * @param props the deployment properties: {@code flow.*} keys ({@link FlowConfig}) and Kafka Streams and client
     *     properties
     * @return a runtime, not started
     * @throws io.flowkafka.spec.InvalidSpecException listing every spec error, or every warning with
     *     {@code flow.spec.warnings=fail}
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
     * Loads the spec from a JSON or YAML file ({@link PipelineSpecLoader#fromFile}), then validates
     * and compiles it as {@link #create(PipelineSpec, Properties)}; starts nothing. Process functions
     * are the classes named by {@code processing_function}.
     *
     * @param specFile the spec: YAML if its name ends in {@code .yaml} or {@code .yml}, JSON otherwise
     * @param props the deployment properties: {@code flow.*} keys ({@link FlowConfig}) and Kafka Streams and client
     *     properties
     * @return a runtime, not started
     * @throws io.flowkafka.spec.InvalidSpecException listing every spec error (a syntax error with the
     *     file, line and column), or every warning with {@code flow.spec.warnings=fail}
     * @throws java.io.UncheckedIOException if the file cannot be read
     * @throws org.apache.kafka.common.config.ConfigException for a bad {@code flow.*} property
     */
    public static FlowRuntime create(Path specFile, Properties props) {
        Objects.requireNonNull(specFile, "specFile");
        Objects.requireNonNull(props, "props");
        FlowRuntime runtime = new FlowRuntime(PipelineSpecLoader.fromFile(specFile), props, null);
        try {
            runtime.specFile = specFile.getFileName().toString();
            runtime.specText = Files.readString(specFile);
        } catch (IOException e) {
            runtime.specText = null; // loaded a moment ago: only get-spec loses the text
        }
        return runtime;
    }

    /**
     * Validates and compiles the spec, registering flow-kafka's metrics in {@code meters}; starts nothing. From
     * {@link #start()} to {@link #close()} the registry also holds each task's meters (tagged {@code pipeline},
     * {@code computation}, {@code partition}; removed when the task closes or moves) and Kafka Streams' own metrics
     * ({@code kafka.*}). With a {@code PrometheusMeterRegistry}, {@link PrometheusEndpoint} serves them;
     * {@link HealthHandler} says whether the pipeline can make progress.
     *
     * @param spec the pipeline spec
     * @param props the deployment properties: {@code flow.*} keys ({@link FlowConfig}) and Kafka Streams and client
     *     properties
     * @param meters the registry for flow-kafka's metrics
     * @return a runtime, not started
     * @throws io.flowkafka.spec.InvalidSpecException listing every spec error, or every warning with
     *     {@code flow.spec.warnings=fail}
     * @throws org.apache.kafka.common.config.ConfigException for a bad {@code flow.*} property, or a
     *     {@code processing.guarantee} other than {@code exactly_once_v2}
     */
    public static FlowRuntime create(PipelineSpec spec, Properties props, MeterRegistry meters) {
        Objects.requireNonNull(spec, "spec");
        Objects.requireNonNull(props, "props");
        Objects.requireNonNull(meters, "meters");
        return new FlowRuntime(spec, props, meters);
    }

    /**
     * Changes the dynamic spec of the running pipeline without a restart (Flow's
     * {@code dynamic_spec}); tasks pick the change up at their next punctuation. Today the dynamic
     * settings are those of key visitors: {@code {"computations": {"<id>": {"key_visitor_streams":
     * {"<name>": {"period": "1h", "max_scan_rows_per_iteration": 5000, "finite": false, ...}}}}}},
     * the queue limit of at-most-once sinks, and the dynamic parameters of punctuated sources such as
     * the static-table source: {@code {"computations": {"<id>": {"source_streams": {"<stream>":
     * {"max_rows_per_second": 5000}}}}}}.
     *
     * <p>A change is a partial document: it is merged into the dynamic spec in effect (maps key by key; a
     * {@code null} value removes a setting, which then has its static value again), and the merged document is
     * checked whole against the static spec; if anything is wrong nothing changes.
     *
     * <p>Once {@link #start() started}, the change goes to every instance of the pipeline: the merged document is
     * published to the compacted topic {@link #dynamicSpecTopic()} (under a transaction that fences a concurrent
     * change from another instance, which is then merged in, not lost), applied here before this returns, and
     * applied by every other running instance within about a second (each polls the topic at most 500 ms apart). An
     * instance that starts later applies the latest document before its tasks start. Before {@link #start()}, and on
     * test drivers, which have no broker, the change applies to this instance only; at the start a shared document
     * replaces it (reported in {@link #status()} under {@code /dynamic_spec/rejected}).
     *
     * @param dynamicSpecChange the change, as nested maps in the dynamic spec's layout
     * @throws IllegalArgumentException listing every problem, each with its field; nothing is applied or published
     *     then
     * @throws FlowException if the topic cannot be read or written (the change may or may not be published then:
     *     compare the settings and try again)
     */
    public void reconfigure(Map<String, ?> dynamicSpecChange) {
        Objects.requireNonNull(dynamicSpecChange, "dynamicSpecChange");
        DynamicSpecTopic shared = sharedSpec;
        if (shared == null) {
            dynamicSpec.apply(dynamicSpecChange);
            LOG.info("pipeline '{}': dynamic spec changed on this instance: {}", spec.name(), dynamicSpecChange);
            return;
        }
        DynamicSpecDocument published = shared.publish(dynamicSpecChange);
        LOG.info("pipeline '{}': dynamic spec version {} published with the change {}", spec.name(),
                published.version(), dynamicSpecChange);
    }

    /**
     * The compacted topic through which every instance shares the dynamic spec.
     *
     * @return {@code <flow.topic.prefix><pipeline>.dynamic-spec}
     */
    public String dynamicSpecTopic() {
        return DynamicSpecTopic.name(config.getString(FlowConfig.TOPIC_PREFIX_CONFIG), spec.name());
    }

    /**
     * The dynamic spec in effect on this instance: the merge of every change so far (empty while every setting has
     * its static value).
     *
     * @return an unmodifiable copy, as nested maps in the dynamic spec's layout
     */
    public Map<String, Object> dynamicSpec() {
        return dynamicSpec.document();
    }

    /**
     * Changes the dynamic settings of one key-visitor stream; shorthand for {@link #reconfigure(Map)}.
     *
     * @param computation the id of the computation
     * @param visitorStream the id of its key-visitor stream
     * @param settings the settings to change, e.g. {@code period} or {@code max_scan_rows_per_iteration}
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
     * @param topic a topic a finite source reads
     * @param partition the partition of {@code topic}, from 0
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
        compiled.finiteSources().markDone(new TopicPartition(topic, partition));
    }

    /** Tests: the finite sources' bounds, which a real start reads from the broker before the tasks start. */
    FiniteSources finiteSources() {
        return compiled.finiteSources();
    }

    /**
     * The current dynamic settings of a key-visitor stream.
     *
     * @param computation the id of the computation
     * @param visitorStream the id of its key-visitor stream
     * @return the settings in effect
     */
    public KeyVisitorSettings keyVisitorSettings(String computation, String visitorStream) {
        return dynamicSpec.keyVisitor(computation, visitorStream);
    }

    /**
     * The errors the pipeline's tasks on this instance currently report without failing, e.g.
     * {@code /key_visitor/<stream>/scan_cap_stall}, and what a finite pipeline waits for
     * ({@link StatusError.Severity#INFO}), e.g. {@code /key_visitor/<stream>/final_pass} while a key visitor's
     * final pass, spread over its period, runs; each clears itself when its cause goes away.
     *
     * @return the current entries, errors and notes
     */
    public List<StatusError> status() {
        return statusBoard.errors();
    }

    /**
     * The registry holding flow-kafka's metrics (the one given to {@code create}, or a private one).
     *
     * @return the meter registry
     */
    public MeterRegistry meterRegistry() {
        return meterRegistry;
    }

    /**
     * A handler answering state queries on this instance: {@code GET /states?computation=<id>&key=<JSON object of the
     * key columns>} answers the key's states (and pending timers, key-visitor coverage) as JSON, read with Kafka
     * Streams' interactive queries on the instance that owns the key, to which the request is forwarded (one hop)
     * when that is another instance; {@code hash_from}, {@code hash_to} and {@code limit} instead of {@code key} read
     * a range of keys by hash, from every instance that owns a part of it; DELETE deletes what GET shows. Mount it at
     * {@code /states} on an HTTP server whose {@code host:port} is this instance's {@code application.server}, and
     * set {@code application.server} on every instance; without it only keys owned here are answered.
     *
     * <ol>
     *   <li>Reads see the state as of the owning task's last commit ({@code commit.interval.ms}).
     *   <li>A DELETE is applied by the owning task in its stream thread and transaction (exactly-once holds); it is
     *       answered once a read no longer finds the rows, within 30 s.
     *   <li>Not with {@code flow.state.stores=memory}.
     * </ol>
     *
     * @return a new handler; thread-safe; it answers 503 until this runtime runs
     */
    public HttpHandler stateQueryHandler() {
        return new StateQueryHandler(spec, userProps, () -> streams,
                streamsProps.getProperty(StreamsConfig.APPLICATION_SERVER_CONFIG), stateDeletes);
    }

    /**
     * The compiled topology of a spec, for users who embed it in their own {@link KafkaStreams}
     * or test it with {@code TopologyTestDriver}; run it with {@link #streamsProperties}.
     *
     * @param spec the pipeline spec
     * @param props the deployment properties: {@code flow.*} keys ({@link FlowConfig}) and Kafka Streams and client
     *     properties
     * @return the topology, not started
     */
    public static Topology topology(PipelineSpec spec, Properties props) {
        return create(spec, props).topology();
    }

    /**
     * The Kafka Streams properties the runtime uses for {@code spec} and {@code props}.
     *
     * @param spec the pipeline spec
     * @param props the deployment properties: {@code flow.*} keys ({@link FlowConfig}) and Kafka Streams and client
     *     properties
     * @return the properties, {@code application.id} included
     */
    public static Properties streamsProperties(PipelineSpec spec, Properties props) {
        return create(spec, props).streamsProperties();
    }

    /**
     * The compiled topology (one sub-topology per computation).
     *
     * @return the topology
     */
    public Topology topology() {
        return compiled.topology();
    }

    /** What says a silent source partition is not idle (tests). */
    SourceIdleness sourceIdleness() {
        return compiled.sourceIdleness();
    }

    /**
     * A copy of the Kafka Streams properties this runtime runs with.
     *
     * @return a new, mutable copy of the properties
     */
    public Properties streamsProperties() {
        return StreamsProperties.copy(streamsProps);
    }

    /**
     * The Kafka Streams {@code application.id}, which is also the consumer group id.
     *
     * @return the application id: {@code flow.application.id.prefix} followed by the pipeline name
     */
    public String applicationId() {
        return streamsProps.getProperty(StreamsConfig.APPLICATION_ID_CONFIG);
    }

    /**
     * The spec this runtime runs.
     *
     * @return the validated spec
     */
    public PipelineSpec spec() {
        return spec;
    }

    /**
     * The pipeline as a graph (computations, streams, sources, sinks), like Kafka Streams' {@code Topology#describe()}:
     * {@code describe().text()} for a log, {@code describe().mermaid()} for a page. The CLI's {@code describe} prints
     * the same.
     *
     * @return the graph of this runtime's spec
     */
    public PipelineGraph describe() {
        return PipelineGraph.of(spec);
    }

    /**
     * The spec's warnings, logged when this runtime was created ({@link PipelineSpec#allWarnings()});
     * empty when the spec has none.
     *
     * @return the warnings
     */
    public List<SpecProblem> specWarnings() {
        return specWarnings;
    }

    /**
     * The topic(s) carrying a stream: internal topics first, then sink topics.
     *
     * @param streamId the id of a stream of the pipeline
     * @return the topic names
     * @throws IllegalArgumentException if the stream is not materialized in a topic (source streams are read from the
     *     user's topics)
     */
    public List<String> streamTopics(String streamId) {
        List<String> t = compiled.streamTopics().get(streamId);
        if (t == null) {
            throw new IllegalArgumentException("stream '" + streamId + "' of pipeline '" + spec.name()
                    + "' has no topic of its own; materialized streams are " + compiled.streamTopics().keySet());
        }
        return t;
    }

    /**
     * The dead-letter topic, {@code <prefix><pipeline>.dlq}.
     *
     * @return the dead-letter topic name
     */
    public String deadLetterTopic() {
        return compiled.deadLetterTopic();
    }

    /**
     * The internal topics flow-kafka owns, with partition counts.
     *
     * @return the partition count of each internal topic, by topic name
     */
    public Map<String, Integer> internalTopics() {
        return compiled.internalTopics();
    }

    /**
     * Holds back (or releases) the timers of every timer-stream group that writes to
     * {@code streamId}, as if the stream's output limit were exceeded. For operations and tests;
     * measured output limits ({@code flow.output.limit.records}) do the same on their own, and do not release a stream
     * held here.
     *
     * @param streamId the id of a stream of the pipeline
     * @param blocked true to hold the timers back, false to release them
     * @throws IllegalArgumentException if the pipeline has no such stream
     */
    public void blockOutputStream(String streamId, boolean blocked) {
        if (!spec.streams().containsKey(streamId)) {
            throw new IllegalArgumentException("pipeline '" + spec.name() + "' has no stream '" + streamId + "'");
        }
        compiled.outputLimits().setBlocked(streamId, blocked);
    }

    /**
     * The current state.
     *
     * @return the current state
     */
    public State state() {
        return state.get();
    }

    /**
     * Creates (or checks) the topics, then starts processing. Returns at once; use
     * {@link #awaitState} to wait for {@link State#RUNNING}.
     *
     * @throws IllegalStateException if already started
     * @throws FlowException if no broker at {@code bootstrap.servers} answers within
     *     {@code flow.bootstrap.timeout.ms} (15 s; one sentence naming them and what to check), the principal
     *     lacks an ACL the pipeline needs (one line per resource, naming the operations), topics are
     *     missing or cannot be created, or the consumer group cannot be seeded from a source's {@code group_id},
     *     or the operations HTTP server cannot listen on {@code flow.http.host}:{@code flow.http.port}
     * @throws RuntimeException what a sink throws that cannot open (its target refuses its settings). A start that
     *     throws leaves the runtime {@link State#FAILED}, having closed what it started (unless Kafka Streams does
     *     not close within 30 s).
     */
    public synchronized void start() {
        if (!state.compareAndSet(State.CREATED, State.STARTING)) {
            throw new IllegalStateException("pipeline '" + spec.name() + "' was already started (state " + state.get() + ")");
        }
        LOG.info(GuaranteeReport.summary(spec));
        try {
            admin = ClusterReachability.createAdmin(spec.name(), ClientProperties.admin(streamsProps));
        } catch (FlowException e) {
            state.set(State.FAILED);
            throw e;
        }
        try {
            Integer httpPort = config.getInt(FlowConfig.HTTP_PORT_CONFIG);
            if (httpPort != null) { // first: a port in use fails the start before anything runs
                operationsServer = OperationsServer.start(spec.name(), config.getString(FlowConfig.HTTP_HOST_CONFIG),
                        httpPort);
                operationsServer.mount("/health", new HealthHandler(this)); // 503 while starting, not a 404
            }
            new TopicPreparation(spec, compiled, config, streamsProps).prepare(admin);
            ProducerBatchSize.fitDefault(admin, streamsProps, userProps, compiled, spec.name());
            // before the tasks start: a restarted instance comes up with the current dynamic spec
            sharedSpec = DynamicSpecTopic.start(spec.name(), dynamicSpecTopic(), streamsProps,
                    dynamicSpec, statusBoard);
            publishSpec(sharedSpec);
        } catch (RuntimeException e) {
            state.set(State.FAILED);
            admin.close(Duration.ofSeconds(5));
            stopOperations();
            throw e;
        }
        try {
            startProcessing();
        } catch (RuntimeException | Error e) {
            // a sink that cannot open (a ClickHouse table without the sharding key), a thread that cannot start:
            // nothing may keep processing without its deliveries, maintenance and health
            failStart(e);
            throw e;
        }
    }

    /** Closes what a failed start opened and leaves the runtime FAILED. */
    private void failStart(Throwable e) {
        LOG.error("pipeline '{}' failed to start: {}; closing what started", spec.name(), e.toString());
        try {
            if (streams != null) {
                stop(Duration.ofSeconds(30));
            } else {
                SinkServices sinks = sinkServices;
                if (sinks != null) {
                    sinks.close();
                }
                shutdownMaintenance();
            }
        } catch (RuntimeException | Error suppressed) {
            e.addSuppressed(suppressed); // the first error is the one thrown
        }
        state.set(State.FAILED);
    }

    /** The second half of {@link #start()}: Kafka Streams, the sinks' services, maintenance, operations. */
    private void startProcessing() {
        var drainingSources = new DrainingSources(compiled.sourceTopicsByComputation(), compiled.partitionCounts());
        var meters = new PipelineMeters(meterRegistry, spec.name(), spec.computations().keySet());
        pipelineMeters = meters;
        streamsProps.put(StateDeletes.CONFIG, stateDeletes);
        var created = FlowStreams.create(compiled, streamsProps, config, producerDecorator, meters,
                () -> drainingSources.partitions(dynamicSpec.drainingComputations()));
        var supplier = created.clients();
        clientSupplier = supplier;
        KafkaStreams ks = created.streams();
        streams = ks; // from here a failed start closes it
        ks.setUncaughtExceptionHandler(new StreamThreadFailures(spec.name(), statusBoard,
                "replace".equals(config.getString(FlowConfig.STREAM_THREAD_FAILURE_CONFIG)),
                new TopicPreparation(spec, compiled, config, streamsProps).principalAcls(), () -> admin));
        ks.setStateListener((newState, oldState) -> onStreamsState(newState));
        Map<String, Object> client = ClientProperties.admin(streamsProps);
        Map<String, org.apache.avro.Schema> streamSchemas = new java.util.HashMap<>();
        spec.streams().forEach((id, stream) -> {
            if (stream.schema() != null) {
                streamSchemas.put(id, stream.schema());
            }
        });
        var sinks = new SinkServices(spec.name(), applicationId(), compiled, userProps, client,
                ClientProperties.mainConsumer(streamsProps), statusBoard,
                meterRegistry, streamSchemas);
        sinkServices = sinks;
        java.util.Set<String> tables = new java.util.LinkedHashSet<>(compiled.tableTopics().keySet());
        tables.addAll(compiled.versionedTopics().keySet());
        tables.addAll(compiled.externalTableTopics());
        runtimeGauges.addAll(io.flowkafka.internal.external.TableLag.register(spec.name(), tables, ks::metrics,
                meterRegistry));
        sinks.installSyncWriters();
        meters.bind(ks);
        ks.start();
        DynamicControls controls = new DynamicControls(spec.name(), dynamicSpec, new DynamicControls.Target() {
            @Override
            public boolean canAct() {
                return state.get() != State.STOPPING && state.get() != State.STOPPED;
            }

            @Override
            public boolean paused() {
                KafkaStreams ks = streams; // Kafka Streams' own flag: the PAUSED state is lost to STARTING in a rebalance
                return ks != null && ks.isPaused();
            }

            @Override
            public void pause() {
                pauseStreams();
            }

            @Override
            public void resume() {
                resumeStreams();
            }

            @Override
            public void drainAndStop() {
                if (StreamsProperties.streamsGroupProtocol(streamsProps)) {
                    stop(STOP_BY_SPEC_TIMEOUT); // the streams protocol cannot drain
                } else {
                    drain(STOP_BY_SPEC_TIMEOUT);
                }
            }
        });
        this.controls = controls;
        dynamicSpec.onChange(controls::follow);
        if (StreamsProperties.streamsGroupProtocol(streamsProps)) {
            Runnable drainingCheck = this::reportDrainingWithoutEffect;
            dynamicSpec.onChange(drainingCheck);
            drainingCheck.run();
        }
        long purgeMs = config.getLong(FlowConfig.PURGE_INTERVAL_MS_CONFIG);
        var completion = new CompletionWatch(spec, compiled, applicationId(), ClientProperties.consumer(streamsProps),
                () -> state.compareAndSet(State.RUNNING, State.COMPLETED));
        var background = RuntimeMaintenance.start(spec.name(), compiled, applicationId(), admin, outputLimitMeter,
                completion, purgeMs);
        maintenance = background;
        sinks.startDeliveries(admin, purgeMs);
        startOperations(ks);
        if (compiled.alignment().active()) {
            runtimeGauges.add(AlignmentFollower.registerGauge(spec.name(), supplier, meterRegistry));
            background.followAlignment(spec.name(), compiled, applicationId(), client,
                    StreamsProperties.streamsGroupProtocol(streamsProps));
        }
        controls.follow(); // the document read at start may pause or stop the pipeline: once all of it started
    }

    /**
     * Under {@code group.protocol=streams} Kafka Streams creates its main consumer itself, so the dynamic spec's
     * {@code draining} cannot pause source topics: each draining computation that reads them is reported in the
     * status (an error under {@code /dynamic_spec/draining}) and logged, instead of being ignored unseen.
     */
    private void reportDrainingWithoutEffect() {
        for (Map.Entry<String, List<String>> e : compiled.sourceTopicsByComputation().entrySet()) {
            String c = e.getKey();
            if (!e.getValue().isEmpty() && dynamicSpec.drainingComputations().contains(c)) {
                String message = "pipeline '" + spec.name() + "': draining computation '" + c + "' does not stop it "
                        + "reading its source topics with group.protocol=streams (Kafka Streams creates its consumer "
                        + "itself); use group.protocol=classic to drain, or stop(timeout) for a fast stop";
                if (statusBoard.firstAnnouncement(message)) {
                    LOG.warn(message);
                }
                statusBoard.report(c, -1, "/dynamic_spec/draining", message, Instant.now());
            } else {
                statusBoard.clear(c, -1, "/dynamic_spec/draining");
            }
        }
    }

    /**
     * With {@code flow.http.port}: publishes this instance's status to the instances topic and serves the status
     * page on the operations server bound at the start.
     */
    private void startOperations(KafkaStreams ks) {
        OperationsServer server = operationsServer;
        if (server == null) {
            return;
        }
        int port = config.getInt(FlowConfig.HTTP_PORT_CONFIG);
        String bind = config.getString(FlowConfig.HTTP_HOST_CONFIG);
        String host = localHostName();
        String http = "http://" + ("0.0.0.0".equals(bind) || "::".equals(bind) ? host : bind) + ":"
                + server.address().getPort() + "/";
        String appServer = streamsProps.getProperty(StreamsConfig.APPLICATION_SERVER_CONFIG, "");
        String instanceId = !appServer.isEmpty() ? appServer
                : port != 0 ? host + ":" + port : host + "-" + UUID.randomUUID().toString().substring(0, 8);
        var report = new InstanceReport(spec.name(), new InstanceReport.Identity(instanceId, host, http), compiled,
                applicationId(), ks, statusBoard, meterRegistry, admin, () -> state.get().name(),
                spec.computations().keySet());
        InstanceStatusTopic topic = InstanceStatusTopic.start(spec.name(), InstanceStatusTopic.name(
                config.getString(FlowConfig.TOPIC_PREFIX_CONFIG), spec.name()), instanceId,
                config.getLong(FlowConfig.STATUS_INTERVAL_MS_CONFIG), streamsProps, report::build);
        instanceStatus = topic;
        StatusPage.mount(server, spec, topic::view);
        server.mountSlow(StateQueryHandler.PATH, stateQueryHandler(), Set.of("GET", "HEAD", "DELETE"));
        mountPrometheus(server);
    }

    /** {@code /metrics} when the runtime's registry is (or holds) a Prometheus one; the dependency is optional. */
    private void mountPrometheus(OperationsServer server) {
        try {
            Class.forName("io.micrometer.prometheusmetrics.PrometheusMeterRegistry", false,
                    FlowRuntime.class.getClassLoader());
        } catch (ClassNotFoundException | LinkageError e) {
            LOG.info("pipeline '{}': no /metrics on the operations server: add io.micrometer:"
                    + "micrometer-registry-prometheus and create the runtime with a PrometheusMeterRegistry",
                    spec.name());
            return;
        }
        try {
            server.mount("/metrics", PrometheusEndpoint.of(this));
        } catch (IllegalArgumentException e) {
            LOG.info("no /metrics on the operations server: {}", e.getMessage());
        }
    }

    private static String localHostName() {
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (IOException e) {
            return "localhost";
        }
    }

    /**
     * The address of this instance's operations HTTP server (status page at {@code /}, merged status at
     * {@code /status.json}), from {@link #start()} until the runtime stops.
     *
     * @return the bound address (the actual port when {@code flow.http.port=0}); empty without {@code flow.http.port}
     *     or when not running
     */
    public Optional<InetSocketAddress> httpAddress() {
        OperationsServer server = operationsServer;
        return server == null ? Optional.empty() : Optional.of(server.address());
    }

    /**
     * Takes this instance out of the shared status (its tombstone) and stops the operations server. Idempotent.
     */
    private void stopOperations() {
        InstanceStatusTopic topic = instanceStatus;
        instanceStatus = null;
        try {
            if (topic != null) {
                topic.close();
            }
        } catch (RuntimeException e) {
            // a status topic that fails to close must not keep Kafka Streams or the server running
            LOG.warn("pipeline '{}': closing the status topic failed: {}", spec.name(), e.toString());
        }
        OperationsServer server = operationsServer;
        operationsServer = null;
        if (server != null) {
            server.close();
        }
    }

    /**
     * Creates (or checks) the pipeline's topics, learns its source topics' partition counts and
     * end offsets (finite sources), and seeds its consumer group from the {@code group_id} of
     * sources with {@code use_consumer_group_offset}, without starting anything. {@link #start()}
     * does this itself; call it when you run {@link #topology()} in your own {@link KafkaStreams},
     * before that starts.
     *
     * @throws FlowException if no broker answers within {@code flow.bootstrap.timeout.ms}, topics are missing or
     *     cannot be created, or the consumer group cannot be seeded
     */
    public void prepareTopics() {
        try (Admin a = ClusterReachability.createAdmin(spec.name(), ClientProperties.admin(streamsProps))) {
            new TopicPreparation(spec, compiled, config, streamsProps).prepare(a);
        }
    }

    /**
     * Waits until the pipeline {@link State#COMPLETED completed}: every finite source was fully
     * processed, every event- and system-time timer fired, every computation completed.
     *
     * @param timeout how long to wait at most
     * @return true if it completed within {@code timeout}
     * @throws InterruptedException if the calling thread is interrupted while waiting
     */
    public boolean awaitCompletion(Duration timeout) throws InterruptedException {
        return awaitState(State.COMPLETED, timeout);
    }

    private void onStreamsState(KafkaStreams.State s) {
        if (s == KafkaStreams.State.RUNNING && streams != null) {
            clearStartErrorsOfTasksElsewhere(streams);
        }
        boolean paused = s == KafkaStreams.State.RUNNING && streams != null && streams.isPaused();
        boolean stopping = stopRunning;
        state.updateAndGet(current -> RuntimeStates.next(current, s, paused, stopping));
    }

    /**
     * After a rebalance, a task that could not start here and now runs on another instance leaves no error here
     * (its next failed start here reports again).
     */
    private void clearStartErrorsOfTasksElsewhere(KafkaStreams ks) {
        try {
            Map<Integer, String> computations = compiled.computationsBySubtopology();
            Set<String> here = new HashSet<>();
            for (ThreadMetadata thread : ks.metadataForLocalThreads()) {
                for (TaskMetadata task : thread.activeTasks()) {
                    here.add(computations.get(task.taskId().subtopology()) + "/" + task.taskId().partition());
                }
            }
            statusBoard.clearPathExcept(StatusBoard.TASK_START_PATH, here);
        } catch (RuntimeException e) {
            LOG.debug("pipeline '{}': could not list this instance's tasks: {}", spec.name(), e.toString());
        }
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
        requireStarted();
        DynamicControls c = controls;
        if (c != null) {
            c.applicationPause(this::pauseStreams); // lasts until resume(), whatever the dynamic spec says meanwhile
        } else {
            pauseStreams();
        }
    }

    private void pauseStreams() {
        KafkaStreams ks = requireStarted();
        synchronized (pauseLock) { // Kafka Streams and the idleness clock pause together
            compiled.sourceIdleness().pause(System.currentTimeMillis());
            ks.pause();
        }
        state.compareAndSet(State.RUNNING, State.PAUSED);
    }

    /** Publishes the spec this instance runs for {@code flow-kafka get-spec}; a failure only costs that. */
    private void publishSpec(DynamicSpecTopic topic) {
        Map<String, Object> doc = new LinkedHashMap<>();
        doc.put("pipeline", spec.name());
        doc.put("file", specFile);
        doc.put("text", specText);
        doc.put("graph", describe().text());
        doc.put(TopicOwners.FIELD, TopicOwners.of(compiled));
        doc.put(TopicOwners.SCHEMAS_FIELD, TopicOwners.streamSchemas(spec, compiled));
        try {
            topic.publishSpec(new ObjectMapper().writeValueAsBytes(doc));
        } catch (Exception e) {
            LOG.info("pipeline '{}': could not publish its spec for flow-kafka get-spec: {}", spec.name(),
                    e.toString());
        }
    }

    /**
     * Resumes after {@link #pause()}. While the dynamic spec pauses the pipeline ({@code flow-kafka pause}), the
     * instance stays paused until the spec resumes it.
     */
    public void resume() {
        requireStarted();
        DynamicControls c = controls;
        if (c == null) {
            resumeStreams();
        } else if (!c.applicationResume(this::resumeStreams)) {
            LOG.info("pipeline '{}': stays paused: its dynamic spec pauses it (flow-kafka resume ends that)",
                    spec.name());
        }
    }

    private void resumeStreams() {
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
     * @param timeout how long to wait at most for the instance to stop
     * @return true if it stopped within {@code timeout}; false leaves the runtime {@link State#FAILED}
     */
    public synchronized boolean stop(Duration timeout) {
        KafkaStreams ks = streams;
        if (ks == null || stopped) {
            state.set(State.STOPPED);
            return true;
        }
        stopRunning = true;
        boolean done;
        try {
            state.set(State.STOPPING);
            stopOperations();
            done = ks.close(CloseOptions.timeout(timeout).withGroupMembershipOperation(leavesGroupOnClose()
                    ? GroupMembershipOperation.LEAVE_GROUP : GroupMembershipOperation.REMAIN_IN_GROUP));
            if (done) {
                if (sinkServices != null) {
                    sinkServices.close();
                }
                stopped = true;
            } else {
                // stream threads may still run and write to synchronous sinks: leave the writers and services open
                // (daemon threads) rather than fail records of calls whose state already committed; close() closes them
                LOG.warn("pipeline '{}': Kafka Streams did not close within {}; its sink writers and outbox services "
                        + "are left running until close()", spec.name(), timeout);
            }
            shutdownMaintenance();
            state.set(done ? State.STOPPED : State.FAILED);
        } finally {
            stopRunning = false;
        }
        if (!done && ks.state() == KafkaStreams.State.NOT_RUNNING) {
            // Kafka Streams finished closing while this stop ran on (its state change was left to the stop)
            state.compareAndSet(State.FAILED, State.STOPPED);
        }
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
        var drained = new DrainCondition(spec, compiled, config.getString(FlowConfig.TOPIC_PREFIX_CONFIG),
                applicationId(), ClientProperties.consumer(streamsProps), StreamsProperties.commitIntervalMs(streamsProps));
        LOG.info("pipeline '{}' drains: source topics {} are no longer read; waiting up to {} until {} hold no data "
                + "record the pipeline has not consumed", spec.name(), compiled.sourceTopics(), timeout,
                drained.topics().keySet());
        long started = System.nanoTime();
        String left;
        try {
            left = drained.await(ks, supplier, admin, deadline);
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
        boolean closed = stop(remaining.compareTo(DRAIN_MIN_CLOSE) > 0 ? remaining : DRAIN_MIN_CLOSE);
        return left == null && closed;
    }

    /**
     * Waits until the runtime is in {@code expected}, or failed, or the timeout passed.
     *
     * @param expected the state to wait for
     * @param timeout how long to wait at most
     * @return true if the expected state was reached
     * @throws InterruptedException if the calling thread is interrupted while waiting
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

    /**
     * Stops (with a 30 s bound) and releases everything, also what a stop that timed out left running. Idempotent;
     * a stop or close running on another thread is waited for.
     */
    @Override
    public synchronized void close() {
        try {
            if (streams != null && !stopped) {
                stop(Duration.ofSeconds(30));
            }
        } finally {
            releaseResources();
        }
    }

    /** What {@link #close()} frees whatever the stop did: maintenance, admin client, gauges, meters. */
    private void releaseResources() {
        shutdownMaintenance();
        runtimeGauges.forEach(meterRegistry::remove);
        runtimeGauges.clear();
        PipelineMeters meters = pipelineMeters;
        if (meters != null) {
            meters.close();
        }
        if (metersSwept.compareAndSet(false, true)) {
            PipelineMeterSweep.closed(meterRegistry, spec.name()); // the sinks' and queues' meters too
        }
    }

    /**
     * Why this instance cannot make progress now, or null while it can: started, not stopping, stopped or failed,
     * Kafka Streams {@code RUNNING} or {@code REBALANCING}, and no sink stopped for good. What {@link HealthHandler}
     * answers.
     */
    @Nullable String notProgressing() {
        State s = state.get();
        KafkaStreams ks = streams;
        if (ks == null || s == State.CREATED) {
            return "pipeline '" + spec.name() + "' is " + (s == State.STARTING ? "starting" : "not started");
        }
        if (s == State.STOPPING || s == State.STOPPED || s == State.FAILED) {
            return "pipeline '" + spec.name() + "' is " + s;
        }
        KafkaStreams.State streamsState = ks.state();
        if (streamsState != KafkaStreams.State.RUNNING && streamsState != KafkaStreams.State.REBALANCING) {
            return "pipeline '" + spec.name() + "': Kafka Streams is " + streamsState;
        }
        for (StatusError e : statusBoard.errors()) {
            if (e.isError() && e.path().endsWith("/stopped")) { // a sink stopped for good (fatal delivery failure)
                return e.message();
            }
        }
        return null;
    }

    private void shutdownMaintenance() {
        stopOperations();
        DynamicSpecTopic shared = sharedSpec;
        if (shared != null) {
            shared.close(); // stops the listener; reconfigure still publishes
        }
        if (maintenance != null) {
            maintenance.shutdown();
            maintenance = null;
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
