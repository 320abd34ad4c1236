package io.flowkafka.runtime;

import io.flowkafka.internal.config.NearestName;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeSet;
import org.apache.kafka.common.config.AbstractConfig;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigDef.Importance;
import org.apache.kafka.common.config.ConfigDef.Type;
import org.apache.kafka.common.config.ConfigException;

/**
 * Deployment settings of a pipeline: the {@code flow.*} keys. Every other property (bootstrap
 * servers, security, {@code state.dir}, producer and consumer overrides...) passes through to
 * Kafka Streams unchanged.
 *
 * <p>Semantics live in the spec; deployment lives here. Immutable and thread-safe.
 */
public final class FlowConfig extends AbstractConfig {
    /**
     * Property {@value}: prefix of the Kafka Streams {@code application.id} (and consumer group), followed
     * by the pipeline name.
     */
    public static final String APPLICATION_ID_PREFIX_CONFIG = "flow.application.id.prefix";

    /**
     * Prefix of an async sink's deployment properties: {@code flow.sink.<sink id>.<client property>},
     * e.g. {@code flow.sink.results.bootstrap.servers} for a {@code TKafkaSink} writing to another
     * cluster. Without them a sink uses the pipeline's own cluster.
     */
    public static final String SINK_PREFIX = "flow.sink.";

    /** Documentation of {@link #SINK_PREFIX}, for the generated configuration reference. */
    public static final String SINK_PREFIX_DOC = "Client properties of one external sink (TKafkaSink, "
            + "TAtLeastOnceKafkaSink), prefix stripped: flow.sink.results.bootstrap.servers=other:9092 makes the sink "
            + "results write to another cluster. Without its own bootstrap.servers a sink uses the pipeline's cluster. "
            + "A key whose sink id names no such sink of the spec fails FlowRuntime.create, with the nearest id.";

    /**
     * Prefix of the settings every pluggable serde receives (a source's or sink's
     * {@code value_serde}), prefix stripped: {@code flow.serde.schema.registry.url=http://registry:8081}
     * configures {@code schema.registry.url}. A source's or sink's own {@code serde_config} entries
     * override them.
     */
    public static final String SERDE_PREFIX = "flow.serde.";

    /** Documentation of {@link #SERDE_PREFIX}, for the generated configuration reference. */
    public static final String SERDE_PREFIX_DOC = "Settings every pluggable serde (a source's or sink's value_serde) "
            + "receives, prefix stripped: flow.serde.schema.registry.url=http://registry:8081 configures "
            + "schema.registry.url. A source's or sink's own serde_config entries override them.";

    /**
     * Keys under these prefixes are read by name elsewhere, so no unknown-key check applies to them: a sink's
     * client properties, serde settings, per-stream output limits, tests and internals.
     */
    private static final List<String> OPEN_PREFIXES = List.of(SINK_PREFIX, SERDE_PREFIX,
            "flow.output.limit.records.", "flow.testing.", "flow.internal.");
    /** Documentation of {@link #APPLICATION_ID_PREFIX_CONFIG}, for the generated configuration reference. */
    public static final String APPLICATION_ID_PREFIX_DOC = "Prefix of the Kafka Streams application.id, which "
            + "is also the consumer group: the application.id is this prefix followed by the pipeline name. Instances "
            + "with the same application.id share the pipeline's partitions; use a prefix to run the same pipeline "
            + "twice on one cluster (e.g. per environment).";
    /** Default of {@link #APPLICATION_ID_PREFIX_CONFIG}: {@value}. */
    public static final String APPLICATION_ID_PREFIX_DEFAULT = "";

    /**
     * Property {@value}: prefix of every topic flow-kafka names (internal streams, dead letters, status,
     * outboxes).
     */
    public static final String TOPIC_PREFIX_CONFIG = "flow.topic.prefix";
    /** Documentation of {@link #TOPIC_PREFIX_CONFIG}, for the generated configuration reference. */
    public static final String TOPIC_PREFIX_DOC = "Prefix of every topic flow-kafka names: "
            + "<prefix><pipeline>.<stream> for internal streams, <prefix><pipeline>.dlq for dead letters, "
            + "<prefix><pipeline>.status, <prefix><pipeline>.dynamic-spec and <prefix><pipeline>.outbox.<sink>. Sink "
            + "and source topics named in the "
            + "spec are used as they are.";
    /** Default of {@link #TOPIC_PREFIX_CONFIG}: {@value}. */
    public static final String TOPIC_PREFIX_DEFAULT = "";

    /**
     * Property {@value}: {@code create} missing topics before start, or only {@code check} that they exist.
     */
    public static final String TOPICS_MODE_CONFIG = "flow.topics.mode";
    /** Documentation of {@link #TOPICS_MODE_CONFIG}, for the generated configuration reference. */
    public static final String TOPICS_MODE_DOC = "create: create missing internal, dead-letter and sink topics with "
            + "Admin before start; check: only check that they exist with the expected partition counts (for clusters "
            + "where the application may not create topics).";
    /** Default of {@link #TOPICS_MODE_CONFIG}: {@value}. */
    public static final String TOPICS_MODE_DEFAULT = "create";

    /** Property {@value}: replication factor of the topics flow-kafka creates; -1 for the broker default. */
    public static final String REPLICATION_FACTOR_CONFIG = "flow.topics.replication.factor";
    /** Documentation of {@link #REPLICATION_FACTOR_CONFIG}, for the generated configuration reference. */
    public static final String REPLICATION_FACTOR_DOC = "Replication factor of the topics flow-kafka creates; -1 uses "
            + "the broker default, otherwise at least 1. Also applied to Kafka Streams' changelog topics "
            + "(replication.factor).";
    /** Default of {@link #REPLICATION_FACTOR_CONFIG}: {@value}. */
    public static final int REPLICATION_FACTOR_DEFAULT = -1;

    /**
     * Property {@value}: {@code min.insync.replicas} of the topics flow-kafka creates; -1 for the broker
     * default.
     */
    public static final String MIN_INSYNC_REPLICAS_CONFIG = "flow.topics.min.insync.replicas";
    /** Documentation of {@link #MIN_INSYNC_REPLICAS_CONFIG}, for the generated configuration reference. */
    public static final String MIN_INSYNC_REPLICAS_DOC = "min.insync.replicas of the topics flow-kafka creates; -1 "
            + "uses the broker default. Must not exceed flow.topics.replication.factor, or no write could succeed.";
    /** Default of {@link #MIN_INSYNC_REPLICAS_CONFIG}: {@value}. */
    public static final int MIN_INSYNC_REPLICAS_DEFAULT = -1;

    /**
     * Property {@value}: whether a record that fails to decode or process goes to the dead-letter topic
     * instead of stopping the stream thread.
     */
    public static final String DEAD_LETTER_ENABLED_CONFIG = "flow.dead.letter.enabled";
    /** Documentation of {@link #DEAD_LETTER_ENABLED_CONFIG}, for the generated configuration reference. */
    public static final String DEAD_LETTER_ENABLED_DOC = "true: a record that cannot be decoded or whose process-"
            + "function call throws goes to <pipeline>.dlq with the reason in headers and processing goes on; false: "
            + "such a failure stops the stream thread (see flow.stream.thread.failure).";
    /** Default of {@link #DEAD_LETTER_ENABLED_CONFIG}: {@value}. */
    public static final boolean DEAD_LETTER_ENABLED_DEFAULT = true;

    /**
     * Property {@value}: whether a stopping instance or replaced stream thread leaves the consumer group at
     * once.
     */
    public static final String LEAVE_GROUP_ON_CLOSE_CONFIG = "flow.leave.group.on.close";
    /** Documentation of {@link #LEAVE_GROUP_ON_CLOSE_CONFIG}, for the generated configuration reference. */
    public static final String LEAVE_GROUP_ON_CLOSE_DOC = "true: an instance that stops, and a stream thread replaced "
            + "after a failure, leave the consumer group, so their partitions move at once and a restart does not wait "
            + "for session.timeout.ms; false: they stay in the group until their session times out, as in Kafka "
            + "Streams, so that an instance back within the session keeps its tasks instead of moving them (with their "
            + "state) to the others and back. Static members (group.instance.id) always stay.";
    /** Default of {@link #LEAVE_GROUP_ON_CLOSE_CONFIG}: {@value}. */
    public static final boolean LEAVE_GROUP_ON_CLOSE_DEFAULT = true;

    /**
     * Property {@value}: {@code replace} or {@code shutdown} when a stream thread dies of an input failure
     * with dead letters disabled.
     */
    public static final String STREAM_THREAD_FAILURE_CONFIG = "flow.stream.thread.failure";
    /** Documentation of {@link #STREAM_THREAD_FAILURE_CONFIG}, for the generated configuration reference. */
    public static final String STREAM_THREAD_FAILURE_DOC = "What to do when a stream thread dies because an input "
            + "failed with dead letters disabled: replace (start a new thread; its tasks resume from the last commit "
            + "and retry the input) or shutdown (stop this instance; the runtime state becomes FAILED). A thread that "
            + "dies of a runtime failure (a send error, a broker problem) is always replaced: its transaction was "
            + "aborted and the new thread replays from the last commit.";
    /** Default of {@link #STREAM_THREAD_FAILURE_CONFIG}: {@value}. */
    public static final String STREAM_THREAD_FAILURE_DEFAULT = "shutdown";

    /** Property {@value}: kind of state and timer stores: {@code rocksdb} or {@code memory}. */
    public static final String STATE_STORES_CONFIG = "flow.state.stores";
    /** Documentation of {@link #STATE_STORES_CONFIG}, for the generated configuration reference. */
    public static final String STATE_STORES_DOC = "The state and timer stores of computations. rocksdb: "
            + "persistent stores with changelogs (production); memory: in-memory stores with changelogs (tests, "
            + "small state: everything is restored from the changelogs at each start).";
    /** Default of {@link #STATE_STORES_CONFIG}: {@value}. */
    public static final String STATE_STORES_DEFAULT = "rocksdb";

    /**
     * Property {@value}: how long, in milliseconds, start and topic preparation wait for the cluster to
     * answer.
     */
    public static final String BOOTSTRAP_TIMEOUT_MS_CONFIG = "flow.bootstrap.timeout.ms";
    /** Documentation of {@link #BOOTSTRAP_TIMEOUT_MS_CONFIG}, for the generated configuration reference. */
    public static final String BOOTSTRAP_TIMEOUT_MS_DOC = "How long, in milliseconds, FlowRuntime.start() and "
            + "prepareTopics() wait for the Kafka cluster at bootstrap.servers to answer before they fail with a "
            + "FlowException that names those servers and what to check (the address, that the brokers run and are "
            + "reachable from this host, the security settings).";
    /** Default of {@link #BOOTSTRAP_TIMEOUT_MS_CONFIG}: {@value}. */
    public static final long BOOTSTRAP_TIMEOUT_MS_DEFAULT = 15_000L;

    /**
     * Property {@value}: how often, in milliseconds, consumed records of internal topics are deleted; 0
     * disables.
     */
    public static final String PURGE_INTERVAL_MS_CONFIG = "flow.internal.topics.purge.interval.ms";
    /** Documentation of {@link #PURGE_INTERVAL_MS_CONFIG}, for the generated configuration reference. */
    public static final String PURGE_INTERVAL_MS_DOC = "How often, in milliseconds, the runtime deletes records of "
            + "internal stream topics below the committed offsets (internal topics keep records forever, "
            + "retention.ms=-1, and are purged once consumed, as Kafka Streams does with repartition topics); 0 disables.";
    /** Default of {@link #PURGE_INTERVAL_MS_CONFIG}: {@value}. */
    public static final long PURGE_INTERVAL_MS_DEFAULT = 30_000L;

    /** Property {@value}: at most how often, in milliseconds, a task sends changed watermarks downstream. */
    public static final String WATERMARK_INTERVAL_MS_CONFIG = "flow.watermark.interval.ms";
    /** Documentation of {@link #WATERMARK_INTERVAL_MS_CONFIG}, for the generated configuration reference. */
    public static final String WATERMARK_INTERVAL_MS_DOC = "At most how often, in milliseconds, a task sends its "
            + "watermarks downstream when they changed (each send writes a control record to every partition of each "
            + "output topic, and each partition then gets a transaction marker).";
    /** Default of {@link #WATERMARK_INTERVAL_MS_CONFIG}: {@value}. */
    public static final long WATERMARK_INTERVAL_MS_DEFAULT = 200L;

    /** Property {@value}: at least how often, in milliseconds, a task re-sends unchanged watermarks. */
    public static final String WATERMARK_HEARTBEAT_MS_CONFIG = "flow.watermark.heartbeat.ms";
    /** Documentation of {@link #WATERMARK_HEARTBEAT_MS_CONFIG}, for the generated configuration reference. */
    public static final String WATERMARK_HEARTBEAT_MS_DOC = "At least how often, in milliseconds, a task re-sends its "
            + "watermarks even when unchanged, so consumers keep consuming (which keeps zombie fencing on).";
    /** Default of {@link #WATERMARK_HEARTBEAT_MS_CONFIG}: {@value}. */
    public static final long WATERMARK_HEARTBEAT_MS_DEFAULT = 2_000L;

    /** Property {@value}: whether the topology runs on Kafka Streams' {@code TopologyTestDriver}. */
    public static final String TOPOLOGY_TEST_DRIVER_CONFIG = "flow.topology.test.driver";
    /** Documentation of {@link #TOPOLOGY_TEST_DRIVER_CONFIG}, for the generated configuration reference. */
    public static final String TOPOLOGY_TEST_DRIVER_DOC = "true when the topology runs on Kafka Streams' "
            + "TopologyTestDriver, which runs the whole topology as one task with one partition per topic: watermarks "
            + "then expect one producer per computation. FlowTestDriver sets it; set it when you use "
            + "FlowRuntime.topology() with a plain TopologyTestDriver.";
    /** Default of {@link #TOPOLOGY_TEST_DRIVER_CONFIG}: {@value}. */
    public static final boolean TOPOLOGY_TEST_DRIVER_DEFAULT = false;

    /** Property {@value}: whether state stores get changelog topics; {@code false} only in tests. */
    public static final String STORE_CHANGELOGS_CONFIG = "flow.testing.store.changelogs";
    /** Documentation of {@link #STORE_CHANGELOGS_CONFIG}, for the generated configuration reference. */
    public static final String STORE_CHANGELOGS_DOC = "false compiles every state store without a changelog topic. "
            + "FlowTestDriver sets it: TopologyTestDriver never restores a store, and producing and routing each "
            + "change costs it a third of its time. Never set it on a real deployment: state would not survive "
            + "an instance's loss.";
    /** Default of {@link #STORE_CHANGELOGS_CONFIG}: {@value}. */
    public static final boolean STORE_CHANGELOGS_DEFAULT = true;

    /**
     * Property {@value}: how often, in milliseconds, a task looks for due timers besides on watermark moves.
     */
    public static final String TIMERS_INTERVAL_MS_CONFIG = "flow.timers.punctuation.interval.ms";
    /** Documentation of {@link #TIMERS_INTERVAL_MS_CONFIG}, for the generated configuration reference. */
    public static final String TIMERS_INTERVAL_MS_DOC = "How often, in milliseconds, a task looks for due timers "
            + "besides when a watermark moves (the resolution of real_time timers).";
    /** Default of {@link #TIMERS_INTERVAL_MS_CONFIG}: {@value}. */
    public static final long TIMERS_INTERVAL_MS_DEFAULT = 50L;

    /** Property {@value}: at most how many timers fire in one punctuation of a task. */
    public static final String TIMERS_MAX_PER_STEP_CONFIG = "flow.timers.max.per.punctuation";
    /** Documentation of {@link #TIMERS_MAX_PER_STEP_CONFIG}, for the generated configuration reference. */
    public static final String TIMERS_MAX_PER_STEP_DOC = "At most this many timers fire in one step (one "
            + "punctuation of a task); the rest wait for the next step, so a large backlog never starves the stream "
            + "thread.";
    /** Default of {@link #TIMERS_MAX_PER_STEP_CONFIG}: {@value}. */
    public static final int TIMERS_MAX_PER_STEP_DEFAULT = 1000;

    /** Property {@value}: at most how many milliseconds of timer firing per punctuation. */
    public static final String TIMERS_MAX_STEP_MS_CONFIG = "flow.timers.max.punctuation.ms";
    /** Documentation of {@link #TIMERS_MAX_STEP_MS_CONFIG}, for the generated configuration reference. */
    public static final String TIMERS_MAX_STEP_MS_DOC = "At most this many milliseconds of timer firing per step, far "
            + "inside the transaction timeout, so the stream thread keeps polling and committing.";
    /** Default of {@link #TIMERS_MAX_STEP_MS_CONFIG}: {@value}. */
    public static final long TIMERS_MAX_STEP_MS_DEFAULT = 50L;

    /** Property {@value}: how often, in milliseconds, a task checks whether its key visitors are due. */
    public static final String VISITOR_TICK_MS_CONFIG = "flow.key.visitor.tick.ms";
    /** Documentation of {@link #VISITOR_TICK_MS_CONFIG}, for the generated configuration reference. */
    public static final String VISITOR_TICK_MS_DOC = "How often, in milliseconds, a task checks whether its key "
            + "visitors are due to read (every background_fill_period, or at once after a capped read).";
    /** Default of {@link #VISITOR_TICK_MS_CONFIG}: {@value}. */
    public static final long VISITOR_TICK_MS_DEFAULT = 100L;

    /**
     * Property {@value}: about how many state rows the key visitors of a task read at most in one
     * punctuation.
     */
    public static final String VISITOR_MAX_ROWS_CONFIG = "flow.key.visitor.max.rows.per.punctuation";
    /** Documentation of {@link #VISITOR_MAX_ROWS_CONFIG}, for the generated configuration reference. */
    public static final String VISITOR_MAX_ROWS_DOC = "At most about this many state rows are read by the key "
            + "visitors of a task in one punctuation; the rest waits for the next one.";
    /** Default of {@link #VISITOR_MAX_ROWS_CONFIG}: {@value}. */
    public static final int VISITOR_MAX_ROWS_DEFAULT = 10_000;

    /** Property {@value}: at most how many milliseconds of key visiting per punctuation. */
    public static final String VISITOR_MAX_MS_CONFIG = "flow.key.visitor.max.punctuation.ms";
    /** Documentation of {@link #VISITOR_MAX_MS_CONFIG}, for the generated configuration reference. */
    public static final String VISITOR_MAX_MS_DOC = "At most this many milliseconds of visiting per punctuation, far "
            + "inside the transaction timeout, so the stream thread keeps polling and committing.";
    /** Default of {@link #VISITOR_MAX_MS_CONFIG}: {@value}. */
    public static final long VISITOR_MAX_MS_DEFAULT = 50L;

    /**
     * Property {@value}: default output limit, in records written but not yet consumed, of every internal
     * stream; 0 means none.
     */
    public static final String OUTPUT_LIMIT_RECORDS_CONFIG = "flow.output.limit.records";
    /** Documentation of {@link #OUTPUT_LIMIT_RECORDS_CONFIG}, for the generated configuration reference. */
    public static final String OUTPUT_LIMIT_RECORDS_DOC = "Output limit of every internal stream: the number of records "
            + "written but not yet consumed downstream above which the stream counts as blocked, holding back every "
            + "timer-stream group that writes to it; 0 means no limit. Override per stream with "
            + "flow.output.limit.records.<stream>.";
    /** Default of {@link #OUTPUT_LIMIT_RECORDS_CONFIG}: {@value}. */
    public static final long OUTPUT_LIMIT_RECORDS_DEFAULT = 0L;

    /** Property {@value}: the port of the operations HTTP server (status page); unset, no server runs. */
    public static final String HTTP_PORT_CONFIG = "flow.http.port";
    /** Documentation of {@link #HTTP_PORT_CONFIG}, for the generated configuration reference. */
    public static final String HTTP_PORT_DOC = "The TCP port of the instance's operations HTTP server, which serves "
            + "the status page (/), the merged status of every instance of the pipeline (/status.json) and the "
            + "pipeline graph (/graph.json); 0 picks any free port (FlowRuntime.httpAddress() tells which). Unset: no "
            + "server runs. Setting it also makes the instance publish its status to the compacted topic "
            + "<prefix><pipeline>.instances, from which every instance's page shows all of them.";

    /** Property {@value}: the address the operations HTTP server binds to. */
    public static final String HTTP_HOST_CONFIG = "flow.http.host";
    /** Documentation of {@link #HTTP_HOST_CONFIG}, for the generated configuration reference. */
    public static final String HTTP_HOST_DOC = "The address the operations HTTP server (flow.http.port) binds to: "
            + "127.0.0.1 serves this host only; 0.0.0.0 every interface. The server has no authentication: expose it "
            + "only on a trusted network.";
    /** Default of {@link #HTTP_HOST_CONFIG}: {@value}. */
    public static final String HTTP_HOST_DEFAULT = "127.0.0.1";

    /** Property {@value}: how often, in milliseconds, an instance publishes its status. */
    public static final String STATUS_INTERVAL_MS_CONFIG = "flow.status.interval.ms";
    /** Documentation of {@link #STATUS_INTERVAL_MS_CONFIG}, for the generated configuration reference. */
    public static final String STATUS_INTERVAL_MS_DOC = "How often, in milliseconds, an instance with flow.http.port "
            + "publishes its status (tasks, lag, watermarks, timers, errors) to <prefix><pipeline>.instances; an "
            + "instance whose last status is older than three intervals is shown as gone.";
    /** Default of {@link #STATUS_INTERVAL_MS_CONFIG}: {@value}. */
    public static final long STATUS_INTERVAL_MS_DEFAULT = 2_000L;

    /** Property {@value}: what to do with the spec's warnings: {@code log} or {@code fail}. */
    public static final String SPEC_WARNINGS_CONFIG = "flow.spec.warnings";
    /** Value {@value} of {@link #SPEC_WARNINGS_CONFIG}: log each spec warning at WARN and start. */
    public static final String SPEC_WARNINGS_LOG = "log";
    /**
     * Value {@value} of {@link #SPEC_WARNINGS_CONFIG}: throw {@code InvalidSpecException} listing every spec
     * warning.
     */
    public static final String SPEC_WARNINGS_FAIL = "fail";
    /** Documentation of {@link #SPEC_WARNINGS_CONFIG}, for the generated configuration reference. */
    public static final String SPEC_WARNINGS_DOC = "What to do with the spec's warnings when the runtime (or "
            + "FlowTestDriver) is created. A warning names something in the spec that the pipeline ignores: an unknown "
            + "or unsupported field, an unknown source, timer or key-visitor parameter that resembles no known one (a "
            + "misspelt one is an error), a declared stream nobody uses. It often hides a mistake that changes "
            + "behaviour silently: a misplaced out_of_orderness_bound leaves the default 1m. "
            + "log: log each warning at WARN (naming the computation, the field and the fix) and start; fail: throw "
            + "InvalidSpecException listing every warning, so nothing starts (recommended in CI and for production "
            + "deployments).";
    /** Default of {@link #SPEC_WARNINGS_CONFIG}: {@value}. */
    public static final String SPEC_WARNINGS_DEFAULT = SPEC_WARNINGS_LOG;

    /**
     * Property {@value}: what a start does when this version gives an internal or outbox topic to another reader than
     * the version that last ran: {@code refuse} or {@code accept}.
     */
    public static final String TOPIC_OWNER_CHANGES_CONFIG = "flow.topics.owner.changes";
    /** Documentation of {@link #TOPIC_OWNER_CHANGES_CONFIG}, for the generated configuration reference. */
    public static final String TOPIC_OWNER_CHANGES_DOC = "What a start does when this version of the pipeline gives "
            + "an internal topic to another computation (or an outbox topic to another sink) than the version that "
            + "last ran, as moving, removing or inserting a reader of a stream before another does. refuse: the start "
            + "fails naming each topic, its old and its new reader; accept: log them and start (after draining the "
            + "old version, so no unread record is handed over).";
    /** Default of {@link #TOPIC_OWNER_CHANGES_CONFIG}: {@value}. */
    public static final String TOPIC_OWNER_CHANGES_DEFAULT = "refuse";

    private static final ConfigDef CONFIG = new ConfigDef()
            .define(APPLICATION_ID_PREFIX_CONFIG, Type.STRING, APPLICATION_ID_PREFIX_DEFAULT, Importance.HIGH,
                    APPLICATION_ID_PREFIX_DOC)
            .define(TOPIC_PREFIX_CONFIG, Type.STRING, TOPIC_PREFIX_DEFAULT, Importance.HIGH, TOPIC_PREFIX_DOC)
            .define(TOPICS_MODE_CONFIG, Type.STRING, TOPICS_MODE_DEFAULT, ConfigDef.ValidString.in("create", "check"),
                    Importance.HIGH, TOPICS_MODE_DOC)
            .define(TOPIC_OWNER_CHANGES_CONFIG, Type.STRING, TOPIC_OWNER_CHANGES_DEFAULT,
                    ConfigDef.ValidString.in("refuse", "accept"), Importance.MEDIUM, TOPIC_OWNER_CHANGES_DOC)
            .define(REPLICATION_FACTOR_CONFIG, Type.INT, REPLICATION_FACTOR_DEFAULT, Importance.HIGH,
                    REPLICATION_FACTOR_DOC)
            .define(MIN_INSYNC_REPLICAS_CONFIG, Type.INT, MIN_INSYNC_REPLICAS_DEFAULT, Importance.MEDIUM,
                    MIN_INSYNC_REPLICAS_DOC)
            .define(DEAD_LETTER_ENABLED_CONFIG, Type.BOOLEAN, DEAD_LETTER_ENABLED_DEFAULT, Importance.MEDIUM,
                    DEAD_LETTER_ENABLED_DOC)
            .define(LEAVE_GROUP_ON_CLOSE_CONFIG, Type.BOOLEAN, LEAVE_GROUP_ON_CLOSE_DEFAULT, Importance.LOW,
                    LEAVE_GROUP_ON_CLOSE_DOC)
            .define(STREAM_THREAD_FAILURE_CONFIG, Type.STRING, STREAM_THREAD_FAILURE_DEFAULT,
                    ConfigDef.ValidString.in("replace", "shutdown"), Importance.MEDIUM, STREAM_THREAD_FAILURE_DOC)
            .define(STATE_STORES_CONFIG, Type.STRING, STATE_STORES_DEFAULT, ConfigDef.ValidString.in("rocksdb", "memory"),
                    Importance.LOW, STATE_STORES_DOC)
            .define(BOOTSTRAP_TIMEOUT_MS_CONFIG, Type.LONG, BOOTSTRAP_TIMEOUT_MS_DEFAULT, ConfigDef.Range.atLeast(1),
                    Importance.MEDIUM, BOOTSTRAP_TIMEOUT_MS_DOC)
            .define(WATERMARK_INTERVAL_MS_CONFIG, Type.LONG, WATERMARK_INTERVAL_MS_DEFAULT, ConfigDef.Range.atLeast(1),
                    Importance.MEDIUM, WATERMARK_INTERVAL_MS_DOC)
            .define(WATERMARK_HEARTBEAT_MS_CONFIG, Type.LONG, WATERMARK_HEARTBEAT_MS_DEFAULT, ConfigDef.Range.atLeast(1),
                    Importance.LOW, WATERMARK_HEARTBEAT_MS_DOC)
            .define(TOPOLOGY_TEST_DRIVER_CONFIG, Type.BOOLEAN, TOPOLOGY_TEST_DRIVER_DEFAULT, Importance.LOW,
                    TOPOLOGY_TEST_DRIVER_DOC)
            .define(STORE_CHANGELOGS_CONFIG, Type.BOOLEAN, STORE_CHANGELOGS_DEFAULT, Importance.LOW,
                    STORE_CHANGELOGS_DOC)
            .define(TIMERS_INTERVAL_MS_CONFIG, Type.LONG, TIMERS_INTERVAL_MS_DEFAULT, ConfigDef.Range.atLeast(1),
                    Importance.LOW, TIMERS_INTERVAL_MS_DOC)
            .define(TIMERS_MAX_PER_STEP_CONFIG, Type.INT, TIMERS_MAX_PER_STEP_DEFAULT, ConfigDef.Range.atLeast(1),
                    Importance.LOW, TIMERS_MAX_PER_STEP_DOC)
            .define(TIMERS_MAX_STEP_MS_CONFIG, Type.LONG, TIMERS_MAX_STEP_MS_DEFAULT, ConfigDef.Range.atLeast(1),
                    Importance.LOW, TIMERS_MAX_STEP_MS_DOC)
            .define(VISITOR_TICK_MS_CONFIG, Type.LONG, VISITOR_TICK_MS_DEFAULT, ConfigDef.Range.atLeast(1),
                    Importance.LOW, VISITOR_TICK_MS_DOC)
            .define(VISITOR_MAX_ROWS_CONFIG, Type.INT, VISITOR_MAX_ROWS_DEFAULT, ConfigDef.Range.atLeast(1),
                    Importance.LOW, VISITOR_MAX_ROWS_DOC)
            .define(VISITOR_MAX_MS_CONFIG, Type.LONG, VISITOR_MAX_MS_DEFAULT, ConfigDef.Range.atLeast(1),
                    Importance.LOW, VISITOR_MAX_MS_DOC)
            .define(OUTPUT_LIMIT_RECORDS_CONFIG, Type.LONG, OUTPUT_LIMIT_RECORDS_DEFAULT, ConfigDef.Range.atLeast(0),
                    Importance.MEDIUM, OUTPUT_LIMIT_RECORDS_DOC)
            .define(SPEC_WARNINGS_CONFIG, Type.STRING, SPEC_WARNINGS_DEFAULT,
                    ConfigDef.ValidString.in(SPEC_WARNINGS_LOG, SPEC_WARNINGS_FAIL), Importance.MEDIUM, SPEC_WARNINGS_DOC)
            .define(PURGE_INTERVAL_MS_CONFIG, Type.LONG, PURGE_INTERVAL_MS_DEFAULT, ConfigDef.Range.atLeast(0),
                    Importance.LOW, PURGE_INTERVAL_MS_DOC)
            .define(HTTP_PORT_CONFIG, Type.INT, null, ConfigDef.LambdaValidator.with((name, value) -> {
                if (value != null && ((Integer) value < 0 || (Integer) value > 65535)) {
                    throw new ConfigException(name, value, "must be a TCP port, 0 to 65535 (0: any free port)");
                }
            }, () -> "0 to 65535, or unset"), Importance.MEDIUM, HTTP_PORT_DOC)
            .define(HTTP_HOST_CONFIG, Type.STRING, HTTP_HOST_DEFAULT, new ConfigDef.NonEmptyString(),
                    Importance.MEDIUM, HTTP_HOST_DOC)
            .define(STATUS_INTERVAL_MS_CONFIG, Type.LONG, STATUS_INTERVAL_MS_DEFAULT, ConfigDef.Range.atLeast(100),
                    Importance.LOW, STATUS_INTERVAL_MS_DOC);

    /**
     * Parses the {@code flow.*} keys of {@code props}.
     *
     * @param props the pipeline's properties; keys not starting with {@code flow.} are ignored
     * @throws ConfigException naming the key, the value and the expectation
     */
    public FlowConfig(Map<?, ?> props) {
        super(CONFIG, flowOnly(props), false);
        rejectUnknownKeys(originals().keySet());
        int rf = getInt(REPLICATION_FACTOR_CONFIG);
        if (rf == 0 || rf < -1) {
            throw new ConfigException(REPLICATION_FACTOR_CONFIG, rf, "must be -1 (broker default) or >= 1");
        }
        int isr = getInt(MIN_INSYNC_REPLICAS_CONFIG);
        if (isr == 0 || isr < -1) {
            throw new ConfigException(MIN_INSYNC_REPLICAS_CONFIG, isr, "must be -1 (broker default) or >= 1");
        }
        if (rf > 0 && isr > rf) {
            throw new ConfigException(MIN_INSYNC_REPLICAS_CONFIG, isr,
                    "must not exceed " + REPLICATION_FACTOR_CONFIG + "=" + rf + ", or no write could succeed");
        }
    }

    /**
     * The output limit of each stream: {@code flow.output.limit.records.<stream>} or the default
     * {@code flow.output.limit.records}; streams with limit 0 are left out.
     *
     * @param streams the names of the internal streams
     * @return the limit, in records, of each stream that has one
     * @throws ConfigException if a per-stream limit is not a number
     */
    public Map<String, Long> outputLimits(java.util.Collection<String> streams) {
        Map<String, Long> out = new HashMap<>();
        long def = getLong(OUTPUT_LIMIT_RECORDS_CONFIG);
        for (String s : streams) {
            Object v = originals().get(OUTPUT_LIMIT_RECORDS_CONFIG + "." + s);
            long limit;
            try {
                limit = v == null ? def : Long.parseLong(v.toString().trim());
            } catch (NumberFormatException e) {
                throw new ConfigException(OUTPUT_LIMIT_RECORDS_CONFIG + "." + s, v, "must be a number of records");
            }
            if (limit > 0) {
                out.put(s, limit);
            }
        }
        return out;
    }

    /**
     * Parses the {@code flow.*} keys of {@code props}.
     *
     * @param props the pipeline's properties; keys not starting with {@code flow.} are ignored
     * @throws ConfigException naming the key, the value and the expectation
     */
    public FlowConfig(Properties props) {
        this((Map<?, ?>) props);
    }

    /**
     * The definitions, for documentation ({@code configDef().toHtml()}).
     *
     * @return a copy of the definitions of every {@code flow.*} key
     */
    public static ConfigDef configDef() {
        return new ConfigDef(CONFIG);
    }

    /** A misspelt {@code flow.*} key would be ignored and its setting silently left at the default. */
    private static void rejectUnknownKeys(Collection<String> keys) {
        for (String key : keys) {
            if (CONFIG.names().contains(key) || OPEN_PREFIXES.stream().anyMatch(key::startsWith)) {
                continue;
            }
            String near = NearestName.closest(key, new TreeSet<>(CONFIG.names())); // the same hint every run
            throw new ConfigException(key + " is not a flow-kafka setting" + (near == null ? "" : "; did you mean '"
                    + near + "'?") + " (every flow.* key is listed in docs/configuration.md)");
        }
    }

    /**
     * Rejects a {@code flow.sink.<id>.*} key whose id names no sink that reads such keys, and a
     * {@code flow.output.limit.records.<stream>} key whose stream the spec does not declare: a misspelt id would leave
     * the sink on the pipeline's own cluster, or the stream without its limit, and nothing would say so.
     *
     * @param externalSinks the ids of the sinks that read {@code flow.sink.<id>.*} (those with a delivery of their own)
     * @param otherSinks the ids of the spec's other sinks (which write in the pipeline's transaction)
     * @param streams the spec's streams
     * @throws ConfigException naming the key and the nearest id
     */
    public void rejectUnknownTargets(Collection<String> externalSinks, Collection<String> otherSinks,
            Collection<String> streams) {
        TreeSet<String> external = new TreeSet<>(externalSinks);
        for (String key : new TreeSet<>(originals().keySet())) {
            if (key.startsWith(SINK_PREFIX)) {
                String rest = key.substring(SINK_PREFIX.length());
                if (external.stream().anyMatch(id -> rest.startsWith(id + ".") && rest.length() > id.length() + 1)) {
                    continue;
                }
                String other = otherSinks.stream().filter(id -> rest.startsWith(id + ".")).findFirst().orElse(null);
                if (other != null) {
                    throw new ConfigException(key + ": sink '" + other + "' writes in the pipeline's transaction to "
                            + "the pipeline's cluster and reads no " + SINK_PREFIX + other + ".* setting; to write "
                            + "elsewhere, make it a TKafkaSink (see docs/sources-and-sinks.md)");
                }
                if (external.contains(rest)) {
                    throw new ConfigException(key + ": names sink '" + rest + "' but no setting; e.g. " + key
                            + ".bootstrap.servers");
                }
                String id = rest.contains(".") ? rest.substring(0, rest.indexOf('.')) : rest;
                String near = NearestName.closest(id, external);
                throw new ConfigException(key + ": no sink '" + id + "' reads " + SINK_PREFIX + "<sink id>.* settings"
                        + (near != null ? "; did you mean '" + SINK_PREFIX + near + ".'?" : external.isEmpty()
                                ? " (the spec has no external sink)" : " (external sinks: " + external + ")"));
            }
            String limitPrefix = OUTPUT_LIMIT_RECORDS_CONFIG + ".";
            if (key.startsWith(limitPrefix) && !streams.contains(key.substring(limitPrefix.length()))) {
                String stream = key.substring(limitPrefix.length());
                String near = NearestName.closest(stream, new TreeSet<>(streams));
                throw new ConfigException(key + ": the spec declares no stream '" + stream + "'"
                        + (near != null ? "; did you mean '" + limitPrefix + near + "'?" : ""));
            }
        }
    }

    private static Map<String, Object> flowOnly(Map<?, ?> props) {
        Map<String, Object> out = new HashMap<>();
        props.forEach((k, v) -> {
            if (k.toString().startsWith("flow.")) {
                out.put(k.toString(), v);
            }
        });
        return out;
    }

    /**
     * Prints the configuration reference as Markdown, as in {@code docs/configuration.md}.
     *
     * @param args ignored
     */
    public static void main(String[] args) {
        System.out.print(io.flowkafka.internal.config.ConfigDocs.markdown());
    }
}
