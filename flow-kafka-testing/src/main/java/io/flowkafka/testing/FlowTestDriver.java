package io.flowkafka.testing;

import io.flowkafka.api.Message;
import io.flowkafka.api.MessageId;
import io.flowkafka.runtime.FlowConfig;
import io.flowkafka.runtime.FlowRuntime;
import io.flowkafka.spec.ComputationSpec;
import io.flowkafka.spec.PipelineSpec;
import io.flowkafka.spec.StateSpec;
import io.flowkafka.spi.OutboxDeliverer;
import io.flowkafka.spi.PipelineCodecs;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.test.TestRecord;
import org.jspecify.annotations.Nullable;

/**
 * Runs a pipeline on Kafka Streams' {@link TopologyTestDriver}: pipe records into its source
 * topics or internal streams, then read decoded messages, sink records, dead letters and per-key
 * state. No broker, no threads, milliseconds per test.
 *
 * <p>Example, with the activity pipeline of the examples module
 * ({@code io.flowkafka.examples.activity.ActivityPipeline}: source topic {@code user-events}
 * &rarr; computation {@code count} with state {@code totals} &rarr; sink topic
 * {@code user-activity-counts}; the code below is compiled and run as
 * {@code io.flowkafka.examples.activity.ActivityPipelineTest}):
 *
 * <pre>{@code
 * PipelineSpec spec = ActivityPipeline.spec("activity", "user-events", "user-activity-counts", 4);
 * try (FlowTestDriver driver = FlowTestDriver.create(spec)) {
 *     driver.pipeSource("user-events", "alice", "{\"user\":\"alice\",\"action\":\"click\",\"ts\":1000}");
 *     driver.pipeSource("user-events", "alice", "{\"user\":\"alice\",\"action\":\"view\",\"ts\":1002}");
 *     driver.pipeSource("user-events", "bob", "not json");
 *
 *     assertThat(driver.readSinkJson("user-activity-counts"))
 *             .containsExactly("{\"user\":\"alice\",\"count\":1}", "{\"user\":\"alice\",\"count\":2}");
 *     assertThat(driver.stateForPayload("count", "totals", "events",
 *             Map.of("user", "alice", "action", "view", "ts", 1002L)))
 *             .hasValueSatisfying(totals -> assertThat(totals.get("count")).isEqualTo(2L));
 *     assertThat(driver.readDeadLetters()).singleElement()
 *             .satisfies(dead -> assertThat(dead.computation()).isEqualTo("read"));
 * }
 * }</pre>
 *
 * <p>Contract:
 * <ul>
 *   <li><b>Deterministic.</b> The wall clock starts at {@link #DEFAULT_WALL_CLOCK_START} (or
 *       {@value #WALL_CLOCK_START_CONFIG}) and moves only by {@link #advanceWallClockTime}; message
 *       ids of {@link #pipe piped} messages come from a per-stream counter. The same calls give
 *       the same outputs, ids included, in every run, at any CPU load: timers fire and key visitors
 *       read in steps bounded by count only ({@code flow.timers.max.punctuation.ms} and
 *       {@code flow.key.visitor.max.punctuation.ms} do not apply on the driver), and once timers
 *       fire, steps follow until none is due.</li>
 *   <li><b>Synchronous: pipe, then assert.</b> Every {@code pipe...} call returns after the record
 *       and everything it caused downstream (through every internal topic) was processed and
 *       committed: the watermarks it moved went out at once (not every
 *       {@code flow.watermark.interval.ms}; {@value #WATERMARK_SENDS_CONFIG}{@code =}{@value
 *       #WATERMARK_SENDS_INTERVAL} paces them as on a broker), through every computation downstream,
 *       and every event- and system-time timer they made due fired. Only real time needs the test:
 *       {@link #advanceWallClockTime} moves it (real_time timers, idleness, key visitors, batch
 *       delays, completion of a finite source). The driver starts no thread.</li>
 *   <li><b>Watermarks.</b> Source computations derive theirs from the data piped with
 *       {@link #pipeSource} (their watermark strategy) and {@link #completeSource}. A message
 *       {@link #pipe piped} into an internal stream carries none: the stream's watermark moves
 *       only by {@link #advanceWatermark(String, long)} and {@link #completeStream}, which send
 *       the control records the stream's writer would send; or, with
 *       {@value #PIPE_WATERMARKS_CONFIG}{@code =}{@value #PIPE_WATERMARKS_FOLLOW}, with each pipe,
 *       to the largest event timestamp piped into the stream so far. A timer fires when its
 *       watermark <em>exceeds</em> its trigger, as in Flow and in {@link ComputationHarness}.</li>
 *   <li><b>Consuming reads.</b> {@code read...} methods return what was written since the last
 *       read of the same topic, and forget it. Records of topics that no read method names (state
 *       changelogs) are forgotten as the driver goes.</li>
 *   <li><b>Properties.</b> Those of {@link FlowRuntime#create}; the driver defaults
 *       {@code flow.state.stores} to {@code memory}, {@code state.dir} to a temporary
 *       directory that {@link #close()} deletes, and, for speed only (the outputs are the same),
 *       {@code max.task.idle.ms} to -1 and {@code statestore.cache.max.bytes} to 0 (it commits after
 *       every record, and no partition ever lags); plus the driver's own
 *       {@value #WALL_CLOCK_START_CONFIG}, {@value #PIPE_WATERMARKS_CONFIG} and
 *       {@value #WATERMARK_SENDS_CONFIG}.</li>
 * </ul>
 *
 * <p>Limitations (those of {@link TopologyTestDriver}):
 * <ol>
 *   <li>the whole pipeline runs as one task, every topic as a single partition: range
 *       partitioning, the watermark minimum over producers, rebalances, restores and fencing are
 *       not exercised; test those on a real broker ({@link EmbeddedKafkaCluster});</li>
 *   <li>{@link io.flowkafka.api.RuntimeContext#getPartition()} is 0 for every key;</li>
 *   <li>a failed record with {@code flow.dead.letter.enabled=false} leaves the driver unusable:
 *       close it.</li>
 * </ol>
 *
 * <p>Not thread-safe: use an instance from one thread. The caller closes it.
 *
 * <p>Why one class of over 1,000 lines: it is the testing API users call, and most of it is that API's Javadoc; the
 * work behind it lives elsewhere ({@link DriverExternalTable}, {@link KeyVisitorCoverage}, the runtime's codecs).
 */
public final class FlowTestDriver implements AutoCloseable {
    /**
     * Driver property: the initial wall-clock time, as an ISO-8601 instant
     * ({@code 2026-01-01T00:00:00Z}), epoch milliseconds, or an {@link Instant}. Not passed on to
     * the pipeline.
     */
    public static final String WALL_CLOCK_START_CONFIG = "flow.testing.wall.clock.start";

    /** The initial wall-clock time unless {@value #WALL_CLOCK_START_CONFIG} says otherwise. */
    public static final Instant DEFAULT_WALL_CLOCK_START = Instant.parse("2026-01-01T00:00:00Z");

    /**
     * Driver property: how the watermarks of internal streams that a test {@link #pipe pipes} into
     * move. Not passed on to the pipeline.
     */
    public static final String PIPE_WATERMARKS_CONFIG = "flow.testing.pipe.watermarks";
    /** A plain-text description of {@value #PIPE_WATERMARKS_CONFIG} and its values. */
    public static final String PIPE_WATERMARKS_DOC = "How the watermark of an internal stream that a test pipes "
            + "messages into moves: 'explicit' (the default): only by advanceWatermark and completeStream; 'follow': "
            + "each pipe also advances the stream's event watermark to the largest event timestamp piped into it so "
            + "far, as if its writer had no out-of-order messages.";
    /** {@value #PIPE_WATERMARKS_CONFIG} value: watermarks move only by {@link #advanceWatermark} and {@link #completeStream}. */
    public static final String PIPE_WATERMARKS_EXPLICIT = "explicit";
    /** {@value #PIPE_WATERMARKS_CONFIG} value: a pipe also advances the stream's watermark to its largest event timestamp so far. */
    public static final String PIPE_WATERMARKS_FOLLOW = "follow";
    /** The default of {@value #PIPE_WATERMARKS_CONFIG}: {@value #PIPE_WATERMARKS_EXPLICIT}. */
    public static final String PIPE_WATERMARKS_DEFAULT = PIPE_WATERMARKS_EXPLICIT;

    /**
     * Driver property: when computations send their watermarks downstream. Not passed on to the pipeline.
     */
    public static final String WATERMARK_SENDS_CONFIG = "flow.testing.watermark.sends";
    /** A plain-text description of {@value #WATERMARK_SENDS_CONFIG} and its values. */
    public static final String WATERMARK_SENDS_DOC = "When a computation sends its watermarks downstream: "
            + "'each-change' (the default): as soon as they change, so a piped record's watermark reaches the "
            + "computations downstream before the pipe returns; 'interval': as on a broker, at most once per "
            + "flow.watermark.interval.ms of the driver's wall clock, so downstream event-time results come when the "
            + "test advances the clock; faster for a test that pipes many records through internal streams.";
    /** {@value #WATERMARK_SENDS_CONFIG} value: watermarks go downstream as soon as they change. */
    public static final String WATERMARK_SENDS_EACH_CHANGE = "each-change";
    /** {@value #WATERMARK_SENDS_CONFIG} value: watermarks go downstream at most once per watermark interval. */
    public static final String WATERMARK_SENDS_INTERVAL = "interval";

    /** Header marking control records (watermarks, completion) on internal topics; they are not messages. */
    private static final String CONTROL_HEADER = "flow.control";

    private final PipelineSpec spec;
    private final FlowRuntime runtime;
    private final PipelineCodecs codecs;
    private final HeldSourceRecords heldRecords;
    private final TopologyTestDriver driver;
    private final @Nullable Path ownedStateDir;
    private final Set<String> readableTopics;
    private final Set<String> completed = new java.util.TreeSet<>();
    private final Map<String, Long> sequences = new HashMap<>();
    private final Map<String, TestInputTopic<byte[], byte[]>> inputTopics = new HashMap<>();
    private final Map<String, TestOutputTopic<byte[], byte[]>> outputTopics = new HashMap<>();
    private final boolean followWatermarks;
    /** Per stream: the last watermark set by advanceWatermark, and by the data in follow mode. */
    private final Map<String, Long> explicitWatermarks = new HashMap<>();
    private final Map<String, Long> followedWatermarks = new HashMap<>();
    private final Set<String> completedStreams = new java.util.TreeSet<>();
    private Instant wallClock;
    private boolean closed;
    /** Driver calls that produced records since the unreadable topics were last emptied. */
    private int callsSinceDrop;

    private FlowTestDriver(PipelineSpec spec, Properties props) {
        Properties p = new Properties();
        p.putAll(props);
        Object start = p.remove(WALL_CLOCK_START_CONFIG);
        this.wallClock = start == null ? DEFAULT_WALL_CLOCK_START : parseInstant(start);
        this.followWatermarks = parsePipeWatermarks(p.remove(PIPE_WATERMARKS_CONFIG));
        p.putIfAbsent(FlowConfig.STATE_STORES_CONFIG, "memory");
        p.putIfAbsent(FlowConfig.STORE_CHANGELOGS_CONFIG, "false"); // never restored on the driver
        p.put(FlowConfig.TOPOLOGY_TEST_DRIVER_CONFIG, "true");
        // pipe, then assert: watermarks go out as they change, timers fire until none is due, in steps bounded by
        // count only (never by the machine's speed): no test has to move the wall clock to see event-time results
        p.put(FlowRuntime.DETERMINISTIC_STEPS_CONFIG, "true");
        p.put(FlowRuntime.DETERMINISTIC_WATERMARKS_CONFIG, String.valueOf(!parseWatermarkSends(
                p.remove(WATERMARK_SENDS_CONFIG))));
        // the driver has no fetch lag (a piped record is in its partition's queue at once), so with any
        // max.task.idle.ms every empty partition is ready; but >= 0 formats a log line per empty partition
        // before each record the task processes, ~10% of the driver's time with a few input topics
        p.putIfAbsent(StreamsConfig.MAX_TASK_IDLE_MS_CONFIG, "-1");
        // the driver commits after every record, so Kafka Streams' record cache saves no store or changelog write,
        // while each commit flushes it; 0 disables caching (reads and committed values are the same)
        p.putIfAbsent(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, "0");
        p.putIfAbsent(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "flow-test-driver:9092");
        Path stateDir = null;
        if (!p.containsKey(StreamsConfig.STATE_DIR_CONFIG)) {
            try {
                stateDir = Files.createTempDirectory("flow-test-driver-");
            } catch (IOException e) {
                throw new UncheckedIOException("cannot create a temporary state.dir for FlowTestDriver", e);
            }
            p.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.toString());
        }
        this.ownedStateDir = stateDir;
        try {
            this.runtime = FlowRuntime.create(spec, p);
            this.spec = runtime.spec();
            this.codecs = PipelineCodecs.of(this.spec, p);
            this.heldRecords = new HeldSourceRecords(codecs, List.copyOf(this.spec.computations().keySet()),
                    runtime::dynamicSpec);
            this.driver = new TopologyTestDriver(runtime.topology(), runtime.streamsProperties(), wallClock);
        } catch (RuntimeException e) {
            deleteOwnedStateDir();
            throw e;
        }
        Set<String> topics = new LinkedHashSet<>(codecs.internalTopics().keySet());
        for (String stream : this.spec.streams().keySet()) {
            topics.addAll(codecs.topicsOf(stream));
        }
        topics.add(codecs.deadLetterTopic());
        this.readableTopics = Set.copyOf(topics);
    }

    /**
     * A driver for {@code spec} with default properties.
     *
     * @param spec the pipeline to run; process functions come from its suppliers or classes
     * @return a new driver, which the test should close
     * @throws io.flowkafka.spec.InvalidSpecException listing every error of the spec
     */
    public static FlowTestDriver create(PipelineSpec spec) {
        return create(spec, new Properties());
    }

    /**
     * A driver for {@code spec} deployed with {@code props} ({@code flow.*} keys, Kafka Streams
     * keys, and {@value #WALL_CLOCK_START_CONFIG}); {@code props} is copied, not kept.
     *
     * @param spec the pipeline to run
     * @param props the driver and pipeline properties
     * @return a new driver, which the test should close
     * @throws io.flowkafka.spec.InvalidSpecException listing every error of the spec
     * @throws org.apache.kafka.common.config.ConfigException for a bad {@code flow.*} property
     * @throws IllegalArgumentException if {@value #WALL_CLOCK_START_CONFIG} is not an instant
     */
    public static FlowTestDriver create(PipelineSpec spec, Properties props) {
        Objects.requireNonNull(spec, "spec");
        Objects.requireNonNull(props, "props");
        return new FlowTestDriver(spec, props);
    }

    /**
     * A driver for the spec in a JSON or YAML file ({@link io.flowkafka.spec.PipelineSpecLoader#fromFile}:
     * YAML if its name ends in {@code .yaml} or {@code .yml}), with default properties. Process
     * functions are the classes its {@code processing_function} fields name.
     *
     * @param specFile a {@code .json}, {@code .yaml} or {@code .yml} spec file
     * @return a new driver, which the test should close
     * @throws io.flowkafka.spec.InvalidSpecException listing every error of the spec (a syntax error
     *     with the file, line and column)
     * @throws java.io.UncheckedIOException if the file cannot be read
     */
    public static FlowTestDriver create(Path specFile) {
        return create(specFile, new Properties());
    }

    /**
     * A driver for the spec in a JSON or YAML file, deployed with {@code props}; as
     * {@link #create(Path)} and {@link #create(PipelineSpec, Properties)}.
     *
     * @param specFile a {@code .json}, {@code .yaml} or {@code .yml} spec file
     * @param props the driver and pipeline properties; copied, not kept
     * @return a new driver, which the test should close
     * @throws io.flowkafka.spec.InvalidSpecException listing every error of the spec, or every
     *     warning with {@code flow.spec.warnings=fail}
     * @throws java.io.UncheckedIOException if the file cannot be read
     */
    public static FlowTestDriver create(Path specFile, Properties props) {
        Objects.requireNonNull(specFile, "specFile");
        Objects.requireNonNull(props, "props");
        return new FlowTestDriver(io.flowkafka.spec.PipelineSpecLoader.fromFile(specFile), props);
    }

    /**
     * The spec's warnings, logged at WARN when the driver was created (with
     * {@code flow.spec.warnings=fail} they would have failed {@code create}).
     *
     * @return the spec's warnings, empty if none
     */
    public List<io.flowkafka.spec.SpecProblem> specWarnings() {
        return runtime.specWarnings();
    }

    // ---------------------------------------------------------------- input

    /**
     * Pipes a JSON record into a source topic, timestamped with the current wall-clock time.
     *
     * @param topic a topic read by a {@code KafkaSource} of the pipeline
     * @param key the record key (UTF-8), or null
     * @param jsonValue the record value (UTF-8); need not be valid JSON, to test dead letters
     * @throws IllegalArgumentException if {@code topic} is not a source topic of the pipeline
     * @throws org.apache.kafka.streams.errors.StreamsException if processing fails and dead
     *     letters are disabled
     */
    public void pipeSource(String topic, @Nullable String key, String jsonValue) {
        Objects.requireNonNull(jsonValue, "jsonValue");
        pipeSource(topic, key == null ? null : key.getBytes(StandardCharsets.UTF_8),
                jsonValue.getBytes(StandardCharsets.UTF_8), wallClock);
    }

    /**
     * Pipes a raw record into a source topic.
     *
     * @param topic a topic read by a {@code KafkaSource} of the pipeline
     * @param key the key bytes, or null
     * @param value the value bytes, or null (a tombstone, which a source sends to dead letters)
     * @param timestamp the record timestamp (the event time unless the source names an
     *     {@code event_timestamp_column})
     * @throws IllegalArgumentException if {@code topic} is not a source topic of the pipeline
     * @throws org.apache.kafka.streams.errors.StreamsException if processing fails and dead
     *     letters are disabled
     */
    public void pipeSource(String topic, byte @Nullable [] key, byte @Nullable [] value, Instant timestamp) {
        Objects.requireNonNull(topic, "topic");
        Objects.requireNonNull(timestamp, "timestamp");
        checkOpen();
        if (!codecs.sourceTopics().contains(topic)) {
            throw new IllegalArgumentException("topic '" + topic + "' is not read by a source of pipeline '"
                    + spec.name() + "'; its source topics are " + codecs.sourceTopics()
                    + " (pipe internal streams with pipe(streamId, ...))");
        }
        heldRecords.offer(topic, new TestRecord<>(key, value, null, timestamp), this::pipeNow);
        maybeDropUnreadable();
    }

    private void pipeNow(String topic, TestRecord<byte[], byte[]> record) {
        inputTopic(topic).pipeInput(record);
    }

    /**
     * Pipes a message into an internal stream, as if its writer had produced it: into every
     * internal topic carrying the stream, keyed for the computations reading each.
     *
     * <p>The message id is 12 bytes: the big-endian {@link String#hashCode()} of
     * {@code "<pipeline>.<stream>"}, then a per-stream counter from 0 (8 bytes big-endian), so ids
     * of one stream sort in piping order, like the ids of one source partition. The system
     * timestamp is the current wall-clock time. The message has no parents.
     *
     * @param streamId an internal stream that some computation reads
     * @param payload a record of the stream's schema
     * @param eventTimestampNanos the event timestamp, nanoseconds since the epoch
     * @return the id given to the message
     * @throws IllegalArgumentException if the stream is unknown, is a source stream, is read by no
     *     computation, or {@code payload} is not a valid record of its schema
     * @throws org.apache.kafka.streams.errors.StreamsException if processing fails and dead
     *     letters are disabled
     */
    public MessageId pipe(String streamId, GenericRecord payload, long eventTimestampNanos) {
        Objects.requireNonNull(streamId, "streamId");
        Objects.requireNonNull(payload, "payload");
        checkOpen();
        Schema schema = checkPipeable(streamId, "pipe its records into its source topics with pipeSource",
                "there is nothing to pipe it into");
        if (completedStreams.contains(streamId)) {
            throw new IllegalStateException("stream '" + streamId + "' was completed with completeStream: its writer "
                    + "sends no more messages, so none can be piped into it");
        }
        if (!GenericData.get().validate(schema, payload)) {
            throw new IllegalArgumentException("payload " + payload + " is not a valid record of stream '" + streamId
                    + "' (schema " + schema.getFullName() + " with fields " + fieldNames(schema) + ")");
        }
        long sequence = sequences.merge(streamId, 1L, Long::sum) - 1;
        MessageId id = pipedId(spec.name(), streamId, sequence);
        long nowNanos = Math.multiplyExact(wallClock.toEpochMilli(), 1_000_000L);
        List<PipelineCodecs.EncodedRecord> records = codecs.encode(streamId, payload, id, eventTimestampNanos, nowNanos);
        for (PipelineCodecs.EncodedRecord r : records) {
            inputTopic(r.topic()).pipeInput(new TestRecord<>(r.key(), r.value(), r.headers(),
                    Instant.ofEpochMilli(r.timestampMs())));
        }
        if (followWatermarks) {
            Long before = followedWatermarks.get(streamId);
            if (before == null || eventTimestampNanos > before) {
                followedWatermarks.put(streamId, eventTimestampNanos);
                sendControl(streamId, eventTimestampNanos, false);
            }
        }
        maybeDropUnreadable();
        return id;
    }

    /**
     * Pipes a message into an internal stream, its payload built from {@code fields}; see
     * {@link #pipe(String, GenericRecord, long)}.
     *
     * @param streamId an internal stream that some computation reads
     * @param fields payload fields by name; a missing field takes its default, or null if nullable
     * @param eventTimestampNanos the event timestamp, nanoseconds since the epoch
     * @return the id given to the message
     * @throws IllegalArgumentException as {@link #pipe(String, GenericRecord, long)}, and if a
     *     field is unknown or a required field is missing
     */
    public MessageId pipe(String streamId, Map<String, ?> fields, long eventTimestampNanos) {
        Objects.requireNonNull(streamId, "streamId");
        Objects.requireNonNull(fields, "fields");
        return pipe(streamId, record(streamId, fields), eventTimestampNanos);
    }

    /**
     * Pipes a message into any stream of the pipeline that a computation reads, without a writer
     * computation: an internal stream as {@link #pipe(String, Map, long)} does (its watermark then
     * moves as that method describes), a source stream as the record its source reads: the payload
     * in the source's {@code format} ({@code json} or {@code avro}), without a key, into the first
     * topic the source reads, timestamped {@code eventTime} (the event time, unless the source has
     * an {@code event_timestamp_column}, then that field is). A source stream's watermark follows
     * the data, as with {@link #pipeSource}.
     *
     * @param streamId a stream that some computation reads: internal or source
     * @param fields payload fields by name; a missing field takes its default, or null if nullable
     * @param eventTime the message's event time (and, for a source stream, the record's timestamp)
     * @throws IllegalArgumentException if the stream is unknown or read by no computation, a field
     *     is unknown or a required one missing, or a source stream's source reads with a
     *     {@code value_serde} or {@code key_column} (pipe its records' bytes with {@link #pipeSource})
     * @throws org.apache.kafka.streams.errors.StreamsException if processing fails and dead
     *     letters are disabled
     */
    public void pipeStream(String streamId, Map<String, ?> fields, Instant eventTime) {
        Objects.requireNonNull(streamId, "streamId");
        Objects.requireNonNull(fields, "fields");
        Objects.requireNonNull(eventTime, "eventTime");
        checkOpen();
        boolean sourceStream = spec.computations().values().stream()
                .anyMatch(c -> c.sourceStreams().stream().anyMatch(s -> s.streamId().equals(streamId)));
        if (!sourceStream) {
            pipe(streamId, fields, nanosOf(eventTime));
            return;
        }
        PipelineCodecs.EncodedRecord r = codecs.encodeSource(streamId, record(streamId, fields), eventTime.toEpochMilli());
        pipeSource(r.topic(), r.key(), r.value(), eventTime);
    }

    /**
     * Advances the event watermark of an internal stream, as if its writer had sent it: a control
     * record of the writer computation's task (on the driver each computation has one) goes into
     * every internal topic carrying the stream, with this event watermark and the wall clock as
     * system watermark. Everything it causes runs before the call returns: the readers of the
     * stream take the new input watermark (what {@link io.flowkafka.api.RuntimeContext#getInputWatermark}
     * returns) and fire every event-time timer whose trigger the timer stream's watermark now
     * <em>exceeds</em> ({@code trigger < watermark}; a watermark equal to a trigger does not fire
     * it), and the messages those timers send are processed downstream.
     *
     * <p>Semantics are the runtime's. A reader's watermark of a stream is the minimum over the
     * stream's producers, and a timer stream's watermark the minimum over the streams it waits on
     * (by default every input of the computation): a computation reading two streams fires its
     * timers once both advanced. Per producer a reader keeps the largest watermark it heard, so an
     * explicit watermark below what the writer itself already sent (a Source computation's
     * watermark from its data) changes nothing. What a reader then sends on (its own output
     * watermark, its completion) goes out at once too, so it reaches computations further
     * downstream before the call returns.
     *
     * @param streamId an internal stream that some computation reads
     * @param eventWatermarkNanos the new event watermark, nanoseconds since the epoch
     * @throws IllegalArgumentException if the stream is unknown, is a source stream, is read by no
     *     computation, or {@code eventWatermarkNanos} is below a watermark this driver already set
     *     for the stream with this method (watermarks never go back)
     * @throws IllegalStateException if the stream was completed ({@link #completeStream})
     * @throws org.apache.kafka.streams.errors.StreamsException if a fired timer fails and dead
     *     letters are disabled
     */
    public void advanceWatermark(String streamId, long eventWatermarkNanos) {
        Objects.requireNonNull(streamId, "streamId");
        checkOpen();
        checkWatermarkable(streamId);
        Long before = explicitWatermarks.get(streamId);
        checkNotBack(streamId, before, eventWatermarkNanos);
        explicitWatermarks.put(streamId, eventWatermarkNanos);
        sendControl(streamId, eventWatermarkNanos, false);
    }

    /**
     * Advances the event watermark of an internal stream to an instant; see
     * {@link #advanceWatermark(String, long)}.
     *
     * @param streamId an internal stream that some computation reads
     * @param eventWatermark the new event watermark
     * @throws ArithmeticException if the instant does not fit in nanoseconds since the epoch
     */
    public void advanceWatermark(String streamId, Instant eventWatermark) {
        Objects.requireNonNull(eventWatermark, "eventWatermark");
        advanceWatermark(streamId, nanosOf(eventWatermark));
    }

    /**
     * Completes an internal stream, as its writer does when it will send no more messages: a
     * control record of the writer's task with {@code completed} and both watermarks at +infinity.
     * The stream's readers fire every event- and system-time timer (their watermark of the stream
     * is now +infinity) and, once all their inputs completed and their timers fired, complete:
     * they report it (see {@link #completedComputations()}) and pass completion on downstream
     * before the call returns. Piping into the stream
     * afterwards is rejected. Idempotent.
     *
     * @param streamId the internal stream to complete
     * @throws IllegalArgumentException if the stream is unknown, is a source stream (use
     *     {@link #completeSource}), or is read by no computation
     */
    public void completeStream(String streamId) {
        Objects.requireNonNull(streamId, "streamId");
        checkOpen();
        checkPipeable(streamId, SOURCE_WATERMARK_FIX, "no watermark of it is read");
        if (completedStreams.add(streamId)) {
            sendControl(streamId, Long.MAX_VALUE, true);
        }
    }

    /** Pipes the writer's control record into every internal topic of the stream (one partition each on the driver). */
    private void sendControl(String streamId, long eventWatermarkNanos, boolean completed) {
        long nowNanos = Math.multiplyExact(wallClock.toEpochMilli(), 1_000_000L);
        for (PipelineCodecs.EncodedRecord r : codecs.encodeControl(streamId, 0, eventWatermarkNanos, nowNanos, completed,
                wallClock.toEpochMilli())) {
            inputTopic(r.topic()).pipeInput(new TestRecord<>(r.key(), r.value(), r.headers(),
                    Instant.ofEpochMilli(r.timestampMs())));
        }
        maybeDropUnreadable();
    }

    static final String SOURCE_WATERMARK_FIX = "its watermark comes from the source's watermark strategy "
            + "and the data piped with pipeSource; end a finite source with completeSource";

    private void checkWatermarkable(String streamId) {
        checkPipeable(streamId, SOURCE_WATERMARK_FIX, "no watermark of it is read");
        if (completedStreams.contains(streamId)) {
            throw new IllegalStateException("stream '" + streamId + "' was completed with completeStream: its "
                    + "watermark is +infinity and cannot move");
        }
    }

    /** The id of the {@code sequence}-th message piped into a stream (see {@link #pipe(String, GenericRecord, long)}). */
    static MessageId pipedId(String pipeline, String streamId, long sequence) {
        return MessageId.of(ByteBuffer.allocate(12).putInt((pipeline + "." + streamId).hashCode()).putLong(sequence)
                .array());
    }

    private Schema checkPipeable(String streamId, String sourceFix, String noReaderConsequence) {
        return checkPipeable(spec, codecs, streamId, sourceFix, noReaderConsequence);
    }

    /** Checks that a test may write into the stream as its writer; returns its schema. */
    static Schema checkPipeable(PipelineSpec spec, PipelineCodecs codecs, String streamId, String sourceFix,
            String noReaderConsequence) {
        Schema schema = codecs.schemaOf(streamId);
        spec.writerOf(streamId).ifPresent(writer -> writer.sourceStreams().stream()
                .filter(s -> s.streamId().equals(streamId)).findFirst().ifPresent(s -> {
                    throw new IllegalArgumentException("stream '" + streamId + "' is a source stream of computation '"
                            + writer.id() + "': " + sourceFix + " (its source topics: " + codecs.sourceTopics() + ")");
                }));
        if (spec.readersOf(streamId).isEmpty()) {
            throw new IllegalArgumentException("stream '" + streamId + "' of pipeline '" + spec.name()
                    + "' is read by no computation, so " + noReaderConsequence);
        }
        return schema;
    }

    /** Rejects an explicit watermark below the last one set for the stream. */
    static void checkNotBack(String streamId, @Nullable Long before, long eventWatermarkNanos) {
        if (before != null && eventWatermarkNanos < before) {
            throw new IllegalArgumentException("watermarks never go back: stream '" + streamId
                    + "' already has the watermark " + before + " (" + instantOf(before) + "), so "
                    + eventWatermarkNanos + " (" + instantOf(eventWatermarkNanos) + ") is rejected; pass a value >= "
                    + before);
        }
    }

    static long nanosOf(Instant instant) {
        return Math.addExact(Math.multiplyExact(instant.getEpochSecond(), 1_000_000_000L), instant.getNano());
    }

    private static String instantOf(long nanos) {
        return Instant.ofEpochSecond(Math.floorDiv(nanos, 1_000_000_000L), Math.floorMod(nanos, 1_000_000_000L))
                .toString();
    }

    /**
     * Holds back (or releases) the timers of every timer-stream group writing to {@code streamId},
     * as an exceeded output limit would.
     *
     * @param streamId a stream of the pipeline
     * @param blocked true to hold the timers back, false to release them
     * @throws IllegalArgumentException if the pipeline has no such stream
     */
    public void blockOutputStream(String streamId, boolean blocked) {
        checkOpen();
        runtime.blockOutputStream(streamId, blocked);
    }

    /**
     * Advances the wall clock (the system time of new messages and of
     * {@link io.flowkafka.api.RuntimeContext#currentTimeNanos()}) and runs what became due.
     *
     * @param advance how far to move the wall clock, not negative
     * @throws IllegalArgumentException if {@code advance} is negative
     */
    public void advanceWallClockTime(Duration advance) {
        Objects.requireNonNull(advance, "advance");
        checkOpen();
        if (advance.isNegative()) {
            throw new IllegalArgumentException("the wall clock only moves forward, but advance was " + advance);
        }
        driver.advanceWallClockTime(advance);
        wallClock = wallClock.plus(advance);
        maybeDropUnreadable();
    }

    /**
     * Advances the wall clock by {@code advance} in steps of at most {@code step}, running what
     * became due after each step (Kafka Streams runs a wall-clock punctuator at most once per
     * advance, so key visitors and real-time timers need small steps to see time pass evenly).
     *
     * @param advance how far to move the wall clock in total
     * @param step the largest single move; the last step may be shorter
     * @throws IllegalArgumentException if {@code advance} is negative or {@code step} not positive
     */
    public void advanceWallClockTime(Duration advance, Duration step) {
        Objects.requireNonNull(step, "step");
        if (step.isNegative() || step.isZero()) {
            throw new IllegalArgumentException("step must be positive but was " + step);
        }
        Duration left = Objects.requireNonNull(advance, "advance");
        if (left.isNegative()) {
            throw new IllegalArgumentException("the wall clock only moves forward, but advance was " + advance);
        }
        while (!left.isZero()) {
            Duration d = left.compareTo(step) < 0 ? left : step;
            advanceWallClockTime(d);
            left = left.minus(d);
        }
    }

    /**
     * Closes and initialises again every processor of the driver's task on the same objects, as Kafka
     * Streams does when it revives a task under exactly_once_v2 (after a {@code TaskCorruptedException},
     * e.g. a commit that timed out). A process function, a state or a timer must come out of it as it
     * would on a fresh instance: nothing kept in memory by the first attempt may change what happens next.
     * The driver's stores are kept as they are (on a broker they are restored from their changelogs to
     * the last commit, which the driver has after every record anyway).
     *
     * @throws IllegalStateException if the driver's Kafka Streams version hides the task it runs
     */
    public void reviveTask() {
        checkOpen();
        TaskRevival.revive(driver);
    }

    /**
     * Ends a finite source ({@code "finite": true}): the driver has no end offsets, so a test says
     * when a source topic has no more input. The source computation then completes at its next
     * watermark step (advance the wall clock by {@code flow.watermark.interval.ms}, 200 ms by
     * default), and completion flows downstream at once; records piped to the topic later are
     * ignored, as records beyond a finite source's bound are.
     *
     * @param topic a topic that a finite source reads
     * @throws IllegalArgumentException if no finite source reads {@code topic}
     * @throws IllegalStateException if records piped into it wait while the dynamic spec holds its reader
     */
    public void completeSource(String topic) {
        checkOpen();
        heldRecords.release(this::pipeNow);
        if (heldRecords.keeps(topic)) {
            throw new IllegalStateException("records piped into source topic '" + topic + "' wait while the dynamic "
                    + "spec holds its reader (paused, stopped or draining): release it with reconfigure before "
                    + "completing the source, or they would come after its end");
        }
        runtime.completeFiniteSource(topic, 0);
    }

    // ---------------------------------------------------------------- key visitors, status, dynamic spec

    /**
     * The committed coverage of a key-visitor stream (pass, pass start, per-bucket progress,
     * final-pass flags), or empty before the visitor's first step.
     *
     * @param computationId the computation declaring the key-visitor stream
     * @param visitorStream the key-visitor stream's id
     * @return the committed coverage, or empty before the visitor's first step
     * @throws IllegalArgumentException if the computation has no such key-visitor stream
     */
    public Optional<KeyVisitorCoverage> keyVisitorCoverage(String computationId, String visitorStream) {
        checkOpen();
        ComputationSpec c = computation(computationId);
        if (!c.keyVisitorStreams().containsKey(visitorStream)) {
            throw new IllegalArgumentException("computation '" + computationId + "' has no key-visitor stream '"
                    + visitorStream + "'; it has " + c.keyVisitorStreams().keySet());
        }
        KeyValueStore<Bytes, byte[]> store = driver.getKeyValueStore(codecs.keyVisitorStoreName(computationId));
        return Optional.ofNullable(codecs.keyVisitorCoverage(store, visitorStream)).map(KeyVisitorCoverage::of);
    }

    /**
     * The committed pending timers of a computation, per timer stream in spec order and in the order
     * they will fire within a stream.
     *
     * @param computationId the computation
     * @return the pending timers, empty if none
     * @throws IllegalArgumentException if the computation is unknown or declares no timer streams
     */
    public List<io.flowkafka.api.Timer> pendingTimers(String computationId) {
        checkOpen();
        computation(computationId);
        List<String> names = codecs.timerStoreNames(computationId);
        if (spec.computations().get(computationId).timers().isEmpty()) {
            throw new IllegalArgumentException("computation '" + computationId + "' declares no timer streams");
        }
        KeyValueStore<Bytes, byte[]> timers = driver.getKeyValueStore(names.get(0));
        return codecs.pendingTimers(computationId, timers, null);
    }

    /**
     * The committed pending timers of one key of a computation, in firing order.
     *
     * @param computationId the computation
     * @param key a record with the computation's {@code group_by_schema} columns, by name, the
     *     uint64 hash column included; {@link #pendingTimers(String, Map)} computes that one
     * @return the key's pending timers, empty if none
     */
    public List<io.flowkafka.api.Timer> pendingTimers(String computationId, GenericRecord key) {
        Objects.requireNonNull(key, "key");
        return pendingTimers(computationId).stream().filter(t -> sameKey(t.getKey(), key)).toList();
    }

    /**
     * The committed pending timers of one key of a computation, in firing order, the key given by
     * its columns: for {@code group_by_schema} {@code [hash = farm_hash(user_id), user_id]},
     * {@code pendingTimers("sessions", Map.of("user_id", "alice"))}. See {@link #key(String, Map)}.
     *
     * @param computationId the computation
     * @param keyColumns the key's {@code group_by_schema} columns by name; a computed column may be left out
     * @return the key's pending timers, empty if none
     * @throws IllegalArgumentException as {@link #pendingTimers(String)} and {@link #key(String, Map)}
     */
    public List<io.flowkafka.api.Timer> pendingTimers(String computationId, Map<String, ?> keyColumns) {
        return pendingTimers(computationId, key(computationId, keyColumns));
    }

    /**
     * The key record of a computation from its {@code group_by_schema} columns, by name: the
     * uint64 column computed by an expression ({@code farm_hash(...)}) need not be given, it is
     * computed as the runtime computes it from a payload (YTsaurus' farm_hash), from the columns
     * the expression reads (a column copied from a payload field stands for that field). Integers
     * may be given for int64 columns, any {@link CharSequence} for strings.
     *
     * @param computationId the computation whose key to build
     * @param keyColumns the key's columns; a computed one, if given, is taken as is
     * @return a record of the computation's key schema
     * @throws IllegalArgumentException if the computation is unknown, a name is not one of its key
     *     columns, a column copied from the payload is missing, the hash expression reads a field
     *     no given column stands for, or a value has the wrong type
     */
    public GenericRecord key(String computationId, Map<String, ?> keyColumns) {
        Objects.requireNonNull(computationId, "computationId");
        Objects.requireNonNull(keyColumns, "keyColumns");
        computation(computationId);
        return codecs.keyOf(computationId, keyColumns);
    }

    private static boolean sameKey(GenericRecord a, GenericRecord b) {
        for (org.apache.avro.Schema.Field f : a.getSchema().getFields()) {
            if (b.getSchema().getField(f.name()) == null
                    || !String.valueOf(a.get(f.name())).equals(String.valueOf(b.get(f.name())))) {
                return false;
            }
        }
        return true;
    }

    /**
     * Changes the dynamic spec, as {@link FlowRuntime#reconfigure(Map)} does on a running pipeline.
     *
     * @param dynamicSpecChange the dynamic spec settings to change, by name
     */
    public void reconfigure(Map<String, ?> dynamicSpecChange) {
        checkOpen();
        runtime.reconfigure(dynamicSpecChange);
        heldRecords.refresh();
        heldRecords.release(this::pipeNow);
        maybeDropUnreadable();
    }

    /**
     * Changes one key-visitor stream's dynamic settings, as {@link FlowRuntime#reconfigureKeyVisitor} does.
     *
     * @param computationId the computation declaring the key-visitor stream
     * @param visitorStream the key-visitor stream's id
     * @param settings the dynamic settings to change, by name
     */
    public void reconfigureKeyVisitor(String computationId, String visitorStream, Map<String, ?> settings) {
        checkOpen();
        runtime.reconfigureKeyVisitor(computationId, visitorStream, settings);
    }

    /**
     * The errors the pipeline currently reports without failing, as {@link FlowRuntime#status()}.
     *
     * @return the current errors, empty if none
     */
    public List<io.flowkafka.runtime.StatusError> status() {
        return runtime.status();
    }

    /**
     * The computations whose task reported completion so far (on the driver each computation has
     * one task): every input and finite source completed, every event- and system-time timer fired,
     * every finite key visitor finished.
     *
     * @return the ids of the completed computations
     */
    public Set<String> completedComputations() {
        checkOpen();
        TestOutputTopic<byte[], byte[]> status = outputTopics.computeIfAbsent(codecs.statusTopic(),
                t -> driver.createOutputTopic(t, new org.apache.kafka.common.serialization.ByteArrayDeserializer(),
                        new org.apache.kafka.common.serialization.ByteArrayDeserializer()));
        for (TestRecord<byte[], byte[]> r : status.readRecordsToList()) {
            String task = new String(r.key(), java.nio.charset.StandardCharsets.UTF_8);
            completed.add(task.substring(0, task.lastIndexOf('/')));
        }
        return Set.copyOf(completed);
    }

    /**
     * Whether every computation of the pipeline completed (a finite pipeline ran to its end).
     *
     * @return true once every computation completed
     */
    public boolean isCompleted() {
        return completedComputations().containsAll(spec.computations().keySet());
    }

    /**
     * The registry with flow-kafka's metrics of this driver's pipeline.
     *
     * @return the driver's meter registry
     */
    public io.micrometer.core.instrument.MeterRegistry meterRegistry() {
        return runtime.meterRegistry();
    }

    /**
     * The current wall-clock time of the driver.
     *
     * @return the driver's wall-clock time
     */
    public Instant wallClockTime() {
        return wallClock;
    }

    // ---------------------------------------------------------------- output

    /**
     * Reads and consumes the messages written to an internal stream since the last read, decoded,
     * in write order; control records are skipped. A stream carried by several internal topics
     * (readers with different keys) is read from the first, {@code <pipeline>.<stream>}; each
     * message's {@link Message#getKey() key} is that topic's reader's key.
     *
     * @param streamId an internal stream of the pipeline
     * @return the messages written since the last read, empty if none
     * @throws IllegalArgumentException if the stream is unknown or has no internal topic (a source
     *     stream, or a stream only written to sinks: read those with {@link #readTopic})
     */
    public List<Message> readStream(String streamId) {
        Objects.requireNonNull(streamId, "streamId");
        checkOpen();
        codecs.schemaOf(streamId);
        String topic = codecs.topicsOf(streamId).stream().filter(codecs.internalTopics()::containsKey).findFirst()
                .orElseThrow(() -> new IllegalArgumentException("stream '" + streamId + "' of pipeline '" + spec.name()
                        + "' has no internal topic; read its sink topics " + codecs.topicsOf(streamId)
                        + " with readTopic or readSinkJson"));
        List<Message> out = new ArrayList<>();
        for (TestRecord<byte[], byte[]> r : readTopic(topic)) {
            if (r.headers().lastHeader(CONTROL_HEADER) != null) {
                continue;
            }
            out.add(codecs.decode(streamId, topic, r.key(), r.value(), r.headers()));
        }
        return out;
    }

    /**
     * Reads and consumes the payloads written to any stream of the pipeline since the last read, in
     * write order: those of an internal stream (see {@link #readStream}); those of a stream
     * written only to sinks (no computation reads it), decoded from its first sink topic (a read
     * of that topic with {@link #readTopic} or {@link #readSinkJson} consumes the same records).
     *
     * @param streamId a stream of the pipeline written by a computation
     * @return the payloads written since the last read, empty if none
     * @throws IllegalArgumentException if the stream is unknown, is a source stream, or is written
     *     only by sinks that write a {@code payload_column} or a {@code value_serde} format
     */
    public List<GenericRecord> readPayloads(String streamId) {
        Objects.requireNonNull(streamId, "streamId");
        checkOpen();
        codecs.schemaOf(streamId);
        List<String> topics = codecs.topicsOf(streamId);
        boolean internal = topics.stream().anyMatch(codecs.internalTopics()::containsKey);
        if (internal || topics.isEmpty() || codecs.sourceTopics().containsAll(topics)) {
            return readStream(streamId).stream().map(Message::getPayload).toList();
        }
        String sinkTopic = topics.get(0);
        return readTopic(sinkTopic).stream().filter(r -> r.value() != null)
                .map(r -> codecs.decodeSinkValue(streamId, sinkTopic, r.value())).toList();
    }

    /**
     * Reads and consumes the raw records written to a topic of the pipeline (a sink topic, an
     * internal topic or the dead-letter topic) since the last read.
     *
     * @param topic a topic the pipeline writes
     * @return the records written since the last read, empty if none
     * @throws IllegalArgumentException if the pipeline writes no such topic
     */
    public List<TestRecord<byte[], byte[]>> readTopic(String topic) {
        Objects.requireNonNull(topic, "topic");
        checkOpen();
        if (!readableTopics.contains(topic)) {
            throw new IllegalArgumentException("pipeline '" + spec.name() + "' writes no topic '" + topic
                    + "'; it writes " + new java.util.TreeSet<>(readableTopics));
        }
        if (!driver.producedTopicNames().contains(topic)) {
            return List.of();
        }
        // an async sink's outbox also carries its computation's watermark records: they are no messages
        return outputTopic(topic).readRecordsToList().stream()
                .filter(r -> r.headers().lastHeader(OutboxDeliverer.WATERMARK_HEADER) == null).toList();
    }

    /**
     * Reads and consumes the values written to a sink topic, as UTF-8 strings (a null value reads
     * as {@code "null"}).
     *
     * @param topic a sink topic of the pipeline
     * @return the values written since the last read, empty if none
     * @throws IllegalArgumentException if the pipeline writes no such topic
     */
    public List<String> readSinkJson(String topic) {
        return readTopic(topic).stream()
                .map(r -> r.value() == null ? "null" : new String(r.value(), StandardCharsets.UTF_8))
                .toList();
    }

    /**
     * Reads and consumes the records sent to the dead-letter topic {@code <pipeline>.dlq}.
     *
     * @return the dead letters sent since the last read, empty if none
     */
    public List<DeadLetter> readDeadLetters() {
        return readTopic(codecs.deadLetterTopic()).stream().map(DeadLetter::of).toList();
    }

    /**
     * The committed value of state {@code stateName} of {@code key} in a computation.
     *
     * @param computationId the computation holding the state
     * @param stateName the Avro state's name
     * @param key a record with the computation's {@code group_by_schema} columns, by name
     * @return the value, or empty when the key has no such state (never set, or cleared)
     * @throws IllegalArgumentException if the computation is unknown or declares no Avro state
     *     {@code stateName}
     */
    public Optional<GenericRecord> state(String computationId, String stateName, GenericRecord key) {
        Objects.requireNonNull(computationId, "computationId");
        Objects.requireNonNull(stateName, "stateName");
        Objects.requireNonNull(key, "key");
        checkOpen();
        ComputationSpec c = computation(computationId);
        StateSpec s = c.states().get(stateName);
        if (s == null || s.schema() == null) {
            throw new IllegalArgumentException("computation '" + computationId + "' declares no Avro state '"
                    + stateName + "'; its states are " + c.states().keySet());
        }
        KeyValueStore<Bytes, byte[]> store = driver.getKeyValueStore(codecs.stateStoreName(computationId));
        if (store == null) {
            throw new IllegalStateException("computation '" + computationId + "' has no state store in the topology");
        }
        return codecs.decodeState(computationId, stateName, store.get(codecs.stateStoreKey(computationId, key, stateName)));
    }

    /**
     * The committed value of state {@code stateName} of a key given by its {@code group_by_schema}
     * columns, as {@link #key(String, Map)} takes them: for {@code [hash = farm_hash(user), user]},
     * {@code state("count", "totals", Map.of("user", "alice"))}.
     *
     * @param computationId the computation holding the state
     * @param stateName the Avro state's name
     * @param keyColumns the key's {@code group_by_schema} columns by name; a computed column may be left out
     * @return the value, or empty when the key has no such state (never set, or cleared)
     * @throws IllegalArgumentException as {@link #key(String, Map)}, and if the computation
     *     declares no Avro state {@code stateName}
     */
    public Optional<GenericRecord> state(String computationId, String stateName, Map<String, ?> keyColumns) {
        return state(computationId, stateName, key(computationId, keyColumns));
    }

    /**
     * The committed value of state {@code stateName} for the key that a payload of
     * {@code inputStreamId} maps to, computed like the computation does
     * ({@code group_by_schema} expressions).
     *
     * @param computationId the computation holding the state
     * @param stateName the Avro state's name
     * @param inputStreamId an input or source stream of the computation
     * @param payloadFields payload fields by name: only those the key reads are needed (others,
     *     if given, are ignored); a field not given takes its default
     * @return the value, or empty when the key has no such state (never set, or cleared)
     * @throws IllegalArgumentException if the computation or stream is unknown, the stream is not
     *     an input or source of the computation, a field is unknown, a field the key reads is
     *     missing, or the computation declares no Avro state {@code stateName}
     */
    public Optional<GenericRecord> stateForPayload(String computationId, String stateName, String inputStreamId,
            Map<String, ?> payloadFields) {
        Objects.requireNonNull(inputStreamId, "inputStreamId");
        Objects.requireNonNull(payloadFields, "payloadFields");
        ComputationSpec c = computation(computationId);
        boolean input = c.inputStreamIds().contains(inputStreamId)
                || c.sourceStreams().stream().anyMatch(s -> s.streamId().equals(inputStreamId));
        if (!input) {
            throw new IllegalArgumentException("stream '" + inputStreamId + "' is not an input of computation '"
                    + computationId + "'; its inputs are " + c.inputStreamIds());
        }
        checkOpen();
        GenericRecord key = codecs.keyOfFields(computationId, inputStreamId, payloadFields);
        return state(computationId, stateName, key);
    }

    /**
     * The compiled topology the driver runs.
     *
     * @return the topology
     */
    public Topology topology() {
        return runtime.topology();
    }

    /** Closes the Kafka Streams test driver and deletes the temporary state directory. Idempotent. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            driver.close();
        } finally {
            deleteOwnedStateDir();
        }
    }

    // ---------------------------------------------------------------- dead letters

    /**
     * A record of the dead-letter topic: the failed input's original key and value, and the
     * {@code flow.dlq.*} headers naming the failure and where the input came from.
     *
     * <p>Immutable: the arrays are copied in and out.
     *
     * @param key the original key bytes, or null
     * @param value the original value bytes, or null
     * @param errorClass the class of the exception that failed the record ({@code flow.dlq.error.class})
     * @param errorMessage its message, empty if none ({@code flow.dlq.error.message})
     * @param computation the computation that failed ({@code flow.dlq.computation})
     * @param stage what it was doing, e.g. {@code process message ...} ({@code flow.dlq.stage})
     * @param sourceTopic the topic of the failed input ({@code flow.dlq.topic})
     * @param sourcePartition its partition, -1 if unknown ({@code flow.dlq.partition})
     * @param sourceOffset its offset, -1 if unknown ({@code flow.dlq.offset})
     * @param errorAt the line of application code that threw, as {@code Class.method(File:line)}, empty if none
     *     ({@code flow.dlq.error.at})
     */
    public record DeadLetter(byte @Nullable [] key, byte @Nullable [] value, String errorClass, String errorMessage,
            String computation, String stage, String sourceTopic, int sourcePartition, long sourceOffset,
            String errorAt) {

        /**
         * A dead letter without {@code errorAt} (the constructor before it existed).
         *
         * @param key the original key bytes, or null
         * @param value the original value bytes, or null
         * @param errorClass the class of the exception that failed the record
         * @param errorMessage its message, empty if none
         * @param computation the computation that failed
         * @param stage what it was doing
         * @param sourceTopic the topic of the failed input
         * @param sourcePartition its partition, -1 if unknown
         * @param sourceOffset its offset, -1 if unknown
         */
        public DeadLetter(byte @Nullable [] key, byte @Nullable [] value, String errorClass, String errorMessage,
                String computation, String stage, String sourceTopic, int sourcePartition, long sourceOffset) {
            this(key, value, errorClass, errorMessage, computation, stage, sourceTopic, sourcePartition, sourceOffset,
                    "");
        }

        /**
         * Copies the arrays; every string must be non-null.
         *
         * @param key the original key bytes, or null
         * @param value the original value bytes, or null
         * @param errorClass the class of the exception that failed the record
         * @param errorMessage its message, empty if none
         * @param computation the computation that failed
         * @param stage what it was doing
         * @param sourceTopic the topic of the failed input
         * @param sourcePartition its partition, -1 if unknown
         * @param sourceOffset its offset, -1 if unknown
         * @param errorAt the line of application code that threw, empty if none
         */
        public DeadLetter {
            Objects.requireNonNull(errorAt, "errorAt");
            Objects.requireNonNull(errorClass, "errorClass");
            Objects.requireNonNull(errorMessage, "errorMessage");
            Objects.requireNonNull(computation, "computation");
            Objects.requireNonNull(stage, "stage");
            Objects.requireNonNull(sourceTopic, "sourceTopic");
            key = key == null ? null : key.clone();
            value = value == null ? null : value.clone();
        }

        static DeadLetter of(TestRecord<byte[], byte[]> r) {
            Headers h = r.headers();
            return new DeadLetter(r.key(), r.value(), header(h, "flow.dlq.error.class"),
                    header(h, "flow.dlq.error.message"), header(h, "flow.dlq.computation"), header(h, "flow.dlq.stage"),
                    header(h, "flow.dlq.topic"), (int) number(h, "flow.dlq.partition"), number(h, "flow.dlq.offset"),
                    header(h, "flow.dlq.error.at"));
        }

        private static String header(Headers headers, String name) {
            Header h = headers.lastHeader(name);
            return h == null || h.value() == null ? "" : new String(h.value(), StandardCharsets.UTF_8);
        }

        private static long number(Headers headers, String name) {
            try {
                return Long.parseLong(header(headers, name));
            } catch (NumberFormatException e) {
                return -1L;
            }
        }

        /**
         * A copy of the original key, or null.
         *
         * @return a copy of the original key, or null
         */
        @Override
        public byte @Nullable [] key() {
            return key == null ? null : key.clone();
        }

        /**
         * A copy of the original value, or null.
         *
         * @return a copy of the original value, or null
         */
        @Override
        public byte @Nullable [] value() {
            return value == null ? null : value.clone();
        }

        /**
         * The original key as UTF-8, or null.
         *
         * @return the original key as UTF-8, or null
         */
        public @Nullable String keyAsString() {
            return key == null ? null : new String(key, StandardCharsets.UTF_8);
        }

        /**
         * The original value as UTF-8, or null.
         *
         * @return the original value as UTF-8, or null
         */
        public @Nullable String valueAsString() {
            return value == null ? null : new String(value, StandardCharsets.UTF_8);
        }

        @Override
        public boolean equals(@Nullable Object o) {
            return o instanceof DeadLetter d && Arrays.equals(key, d.key) && Arrays.equals(value, d.value)
                    && errorClass.equals(d.errorClass) && errorMessage.equals(d.errorMessage)
                    && computation.equals(d.computation) && stage.equals(d.stage) && sourceTopic.equals(d.sourceTopic)
                    && sourcePartition == d.sourcePartition && sourceOffset == d.sourceOffset;
        }

        @Override
        public int hashCode() {
            return Objects.hash(Arrays.hashCode(key), Arrays.hashCode(value), errorClass, errorMessage, computation,
                    stage, sourceTopic, sourcePartition, sourceOffset);
        }

        @Override
        public String toString() {
            return "DeadLetter[computation=" + computation + ", stage=" + stage + ", error=" + errorClass + ": "
                    + errorMessage + ", source=" + sourceTopic + "-" + sourcePartition + "@" + sourceOffset + "]";
        }
    }

    // ---------------------------------------------------------------- helpers

    private GenericRecord record(String streamId, Map<String, ?> fields) {
        return record(codecs.schemaOf(streamId), streamId, fields);
    }

    /** A payload of the stream's schema from fields, as {@link #pipe(String, Map, long)} builds it. */
    static GenericRecord record(Schema schema, String streamId, Map<String, ?> fields) {
        for (String name : fields.keySet()) {
            if (schema.getField(name) == null) {
                throw new IllegalArgumentException("stream '" + streamId + "' has no field '" + name + "'; its fields are "
                        + fieldNames(schema));
            }
        }
        GenericData.Record r = new GenericData.Record(schema);
        for (Schema.Field f : schema.getFields()) {
            if (fields.containsKey(f.name())) {
                r.put(f.pos(), ComputationHarness.coerce(fields.get(f.name()), f.schema())); // as the harness: 1000 for a long
            } else if (f.hasDefaultValue()) {
                r.put(f.pos(), GenericData.get().deepCopy(f.schema(), GenericData.get().getDefaultValue(f)));
            } else if (!nullable(f.schema())) {
                throw new IllegalArgumentException("stream '" + streamId + "': field '" + f.name()
                        + "' is required (no default, not nullable) but missing from " + fields.keySet());
            }
        }
        return r;
    }

    private static boolean nullable(Schema s) {
        return s.getType() == Schema.Type.NULL || (s.getType() == Schema.Type.UNION
                && s.getTypes().stream().anyMatch(t -> t.getType() == Schema.Type.NULL));
    }

    private static List<String> fieldNames(Schema schema) {
        return schema.getFields().stream().map(Schema.Field::name).toList();
    }

    /**
     * An external table as computation {@code computationId} names it (a manager, joiner or state joiner): seed
     * rows, read a row, write and switch the versions of a versioned reference.
     *
     * @param computationId the computation declaring the external state
     * @param name its name, e.g. {@code /reference_state}
     * @return the table
     * @throws IllegalArgumentException if the computation declares no external state {@code name}
     */
    public DriverExternalTable externalTable(String computationId, String name) {
        checkOpen();
        computation(computationId);
        return new DriverExternalTable(codecs.externalTable(computationId, name), codecs, driver,
                cols -> key(computationId, cols), () -> wallClock, this::maybeDropUnreadable);
    }

    /**
     * A {@link io.flowkafka.runtime.VersionedReferenceWriter} of the versioned reference that {@code joinerName}
     * of {@code computationId} reads, writing on this driver (joiners see a switch in their next call).
     *
     * @param computationId the computation declaring the versioned joiner
     * @param joinerName its name, e.g. {@code /catalog}
     * @return the writer
     * @throws IllegalArgumentException if the joiner is unknown or not versioned
     */
    public io.flowkafka.runtime.VersionedReferenceWriter versionedReferenceWriter(String computationId,
            String joinerName) {
        return io.flowkafka.runtime.VersionedReferenceWriter.create(codecs, computationId, joinerName,
                externalTable(computationId, joinerName).transport());
    }

    /**
     * An external table by name, as the first computation declaring {@code name} names it.
     *
     * @param name a manager, joiner or state joiner name, e.g. {@code /reference_state}
     * @return the table
     * @throws IllegalArgumentException if no computation declares external state {@code name}
     */
    public DriverExternalTable externalTable(String name) {
        for (ComputationSpec c : spec.computations().values()) {
            if (c.externalStateManagers().containsKey(name) || c.externalStateJoiners().containsKey(name)
                    || c.stateJoiners().containsKey(name)) {
                return externalTable(c.id(), name);
            }
        }
        throw new IllegalArgumentException("no computation of pipeline '" + spec.name() + "' declares external state '"
                + name + "'");
    }

    private ComputationSpec computation(String id) {
        ComputationSpec c = spec.computations().get(id);
        if (c == null) {
            throw new IllegalArgumentException("pipeline '" + spec.name() + "' has no computation '" + id
                    + "'; its computations are " + spec.computations().keySet());
        }
        return c;
    }

    /** How many producing calls may pass before the records of unreadable topics are dropped. */
    private static final int DROP_EVERY = 16;

    /**
     * Every {@value #DROP_EVERY} calls, drops the records written to topics that no read method
     * names (state changelogs, the control topic): {@link TopologyTestDriver} keeps every record a
     * task writes until a test reads it, so a test kept several changelog records per input in
     * memory (3 to 4 per input in the wait-click join; in its benchmark, GC pauses fell from 5.6 s to
     * 3.3 s of a 40 s run). Often enough that the records are still in the CPU's caches.
     */
    private void maybeDropUnreadable() {
        if (++callsSinceDrop < DROP_EVERY) {
            return;
        }
        callsSinceDrop = 0;
        for (String topic : List.copyOf(driver.producedTopicNames())) {
            if (!readableTopics.contains(topic) && !topic.equals(codecs.statusTopic())) {
                TestOutputTopic<byte[], byte[]> out = outputTopic(topic);
                while (!out.isEmpty()) {
                    out.readRecord();
                }
            }
        }
    }

    private TestInputTopic<byte[], byte[]> inputTopic(String topic) {
        return inputTopics.computeIfAbsent(topic,
                t -> driver.createInputTopic(t, new ByteArraySerializer(), new ByteArraySerializer()));
    }

    private TestOutputTopic<byte[], byte[]> outputTopic(String topic) {
        return outputTopics.computeIfAbsent(topic,
                t -> driver.createOutputTopic(t, new ByteArrayDeserializer(), new ByteArrayDeserializer()));
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("the FlowTestDriver of pipeline '" + spec.name() + "' is closed");
        }
    }

    /** Whether {@value #WATERMARK_SENDS_CONFIG} asks for sends paced by the interval. */
    private static boolean parseWatermarkSends(@Nullable Object value) {
        return parseChoice(WATERMARK_SENDS_CONFIG, value, WATERMARK_SENDS_EACH_CHANGE, WATERMARK_SENDS_INTERVAL);
    }

    /** Whether {@value #PIPE_WATERMARKS_CONFIG} asks piped watermarks to follow the data. */
    private static boolean parsePipeWatermarks(@Nullable Object value) {
        return parseChoice(PIPE_WATERMARKS_CONFIG, value, PIPE_WATERMARKS_EXPLICIT, PIPE_WATERMARKS_FOLLOW);
    }

    /** A two-valued driver property: false for {@code usual} (also when absent), true for {@code other}. */
    private static boolean parseChoice(String name, @Nullable Object value, String usual, String other) {
        String v = value == null ? usual : value.toString().trim();
        if (v.equals(usual) || v.equals(other)) {
            return v.equals(other);
        }
        throw new IllegalArgumentException(name + " must be '" + usual + "' or '" + other + "' but was '" + value + "'");
    }

    private static Instant parseInstant(Object value) {
        if (value instanceof Instant i) {
            return i;
        }
        if (value instanceof Number n) {
            return Instant.ofEpochMilli(n.longValue());
        }
        String s = value.toString().trim();
        try {
            return s.chars().allMatch(Character::isDigit) && !s.isEmpty()
                    ? Instant.ofEpochMilli(Long.parseLong(s)) : Instant.parse(s);
        } catch (DateTimeParseException | NumberFormatException e) {
            throw new IllegalArgumentException(WALL_CLOCK_START_CONFIG + " must be an ISO-8601 instant such as "
                    + "2026-01-01T00:00:00Z or epoch milliseconds, but was '" + value + "'", e);
        }
    }

    private void deleteOwnedStateDir() {
        TempDirs.deleteRecursively(ownedStateDir, "FlowTestDriver's state.dir");
    }
}
