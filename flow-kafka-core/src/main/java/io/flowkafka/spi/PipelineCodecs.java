package io.flowkafka.spi;

import io.flowkafka.api.Message;
import io.flowkafka.api.MessageId;
import io.flowkafka.internal.compiler.CompiledPipeline;
import io.flowkafka.internal.compiler.PipelineCompiler;
import io.flowkafka.internal.message.FlowHeaders;
import io.flowkafka.internal.message.FlowMessage;
import io.flowkafka.internal.serde.AvroCodec;
import io.flowkafka.internal.serde.KeyCodec;
import io.flowkafka.internal.serde.StateRowCodec;
import io.flowkafka.internal.state.KeyStates;
import io.flowkafka.runtime.FlowConfig;
import io.flowkafka.spec.ComputationSpec;
import io.flowkafka.spec.PipelineSpec;
import io.flowkafka.spec.StateSpec;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Properties;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericRecord;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.state.KeyValueStore;
import org.jspecify.annotations.Nullable;

/**
 * How a pipeline's messages, keys and states look in Kafka records and state stores: encodes
 * messages into internal-topic records, decodes records into {@link Message}s, and reads states
 * from a computation's store.
 *
 * <p>Used by {@code FlowTestDriver} and tools. Not thread-safe (codecs reuse buffers): use one
 * instance per thread. Over 700 lines because it is the one public view of every record layout the runtime writes
 * (messages, controls, keys, states, external rows, visitor progress): split, the layouts would drift apart.
 */
public final class PipelineCodecs {
    private final PipelineSpec spec;
    private final CompiledPipeline compiled;
    private final boolean singleTask;
    private final io.flowkafka.internal.external.ExternalTopics external;

    private PipelineCodecs(PipelineSpec spec, Properties props) {
        this.spec = spec.validated();
        FlowConfig config = new FlowConfig(props);
        this.singleTask = config.getBoolean(FlowConfig.TOPOLOGY_TEST_DRIVER_CONFIG);
        io.flowkafka.internal.compiler.CompileOptions d = io.flowkafka.internal.compiler.CompileOptions.defaults();
        this.compiled = PipelineCompiler.compile(this.spec, new io.flowkafka.internal.compiler.CompileOptions(
                config.getString(FlowConfig.TOPIC_PREFIX_CONFIG), false, singleTask, d.watermarks(), d.timers(),
                d.outputLimits(), d.deadLetters(), d.visitors(), true));
        this.external = io.flowkafka.internal.external.ExternalTopics.of(this.spec,
                config.getString(FlowConfig.TOPIC_PREFIX_CONFIG));
    }

    /**
     * An external table as one computation names it: a manager's, a joiner's or a state joiner's.
     *
     * @param computationId the computation declaring it
     * @param name the external state's name, e.g. {@code /reference_state}
     * @param topic the table's topic
     * @param storeName the name of the table's global store, or null when no computation of the pipeline reads
     *     it through a joiner (a managed table is then read in its manager's state store)
     * @param versioned whether the topic holds a versioned reference
     * @param schema the row schema
     * @param managed whether {@code name} is a manager of {@code computationId}
     */
    public record ExternalTable(String computationId, String name, String topic, @Nullable String storeName,
            boolean versioned, Schema schema, boolean managed) {
    }

    /**
     * The external table a computation reads or writes as {@code name}.
     *
     * @param computationId the computation declaring it
     * @param name a manager, joiner or state joiner of the computation
     * @return the table
     * @throws IllegalArgumentException if the computation declares no external state {@code name}
     */
    public ExternalTable externalTable(String computationId, String name) {
        ComputationSpec c = computation(computationId);
        io.flowkafka.internal.external.ExternalPlan plan = external.plan(c.id());
        io.flowkafka.spec.ExternalStateManagerSpec m = c.externalStateManagers().get(name);
        if (m != null) {
            String topic = plan.published().get(name).topic();
            return new ExternalTable(c.id(), name, topic, external.readTopics().containsKey(topic)
                    ? io.flowkafka.internal.external.TableStore.storeName(topic) : null, false,
                    Objects.requireNonNull(m.schema(), "manager schema"), true);
        }
        io.flowkafka.internal.external.ExternalPlan.Read r = plan.reads().get(name);
        if (r == null) {
            throw new IllegalArgumentException("computation '" + computationId + "' declares no external state '"
                    + name + "'");
        }
        return new ExternalTable(c.id(), name, r.topic(), io.flowkafka.internal.external.TableStore.storeName(r.topic()),
                r.versioned(), r.schema(), false);
    }

    /**
     * The group-by key of a computation as its records and table rows are keyed (hash first).
     *
     * @param computationId a computation of the pipeline
     * @param key a record of its key schema
     * @return the encoded key
     */
    public byte[] encodeKey(String computationId, GenericRecord key) {
        ComputationSpec c = computation(computationId);
        return KeyCodec.of(c.groupBySchema(), c.id()).encode(key);
    }

    /**
     * The record key of a row of version {@code version} in a versioned reference topic.
     *
     * @param version a version name (non-empty, no NUL)
     * @param encodedKey the encoded group-by key ({@link #encodeKey})
     * @return the record key
     */
    public static byte[] versionedRowKey(String version, byte[] encodedKey) {
        return io.flowkafka.internal.external.VersionedKeys.rowKey(
                io.flowkafka.internal.external.VersionedKeys.checkedVersion(version), encodedKey);
    }

    /** {@return the record key of a versioned reference topic's pointer (its value: the current version)} */
    public static byte[] versionedPointerKey() {
        return io.flowkafka.internal.external.VersionedKeys.pointer();
    }

    /**
     * The version of a versioned reference topic's record key.
     *
     * @param recordKey a record key of the topic
     * @return its version, or null for the pointer
     */
    public static @Nullable String versionOfRowKey(byte[] recordKey) {
        return io.flowkafka.internal.external.VersionedKeys.versionOf(recordKey);
    }

    /**
     * Encodes a row of an external table with its schema (Avro binary, as rows are stored).
     *
     * @param schema the row schema
     * @param row the row
     * @return the bytes
     */
    public static byte[] encodeRow(Schema schema, GenericRecord row) {
        return new io.flowkafka.internal.serde.AvroCodec(schema).encode(row);
    }

    /**
     * Decodes a row of an external table: plain Avro binary, or a published state's row, which carries its writer
     * schema's fingerprint first.
     *
     * @param schema the row schema
     * @param bytes the row's bytes
     * @return the row
     */
    public static GenericRecord decodeRow(Schema schema, byte[] bytes) {
        return new StateRowCodec(schema).decode(bytes);
    }

    /**
     * Codecs of a valid spec deployed with {@code props} (only {@code flow.topic.prefix} and
     * {@code flow.topology.test.driver} matter).
     *
     * @param spec the pipeline spec; validated here
     * @param props the deployment properties
     * @return the codecs
     * @throws io.flowkafka.spec.InvalidSpecException if the spec is invalid
     */
    public static PipelineCodecs of(PipelineSpec spec, Properties props) {
        return new PipelineCodecs(spec, props);
    }

    /**
     * A Kafka record as bytes; the key is null for a source record without one.
     *
     * @param topic the topic
     * @param key the key bytes, or null
     * @param value the value bytes
     * @param headers the headers
     * @param timestampMs the record timestamp, in milliseconds
     */
    public record EncodedRecord(String topic, byte @Nullable [] key, byte[] value, Headers headers, long timestampMs) {
    }

    /**
     * The topics carrying a stream (internal topics first, then sink topics); empty for source streams.
     *
     * @param streamId the id of a stream of the pipeline
     * @return the topic names
     */
    public List<String> topicsOf(String streamId) {
        return compiled.streamTopics().getOrDefault(streamId, List.of());
    }

    /**
     * The user topics read by one computation's sources.
     *
     * @param computationId a computation of the pipeline
     * @return the topic names; empty for a computation without topic sources
     */
    public List<String> sourceTopicsOf(String computationId) {
        return compiled.sourceTopicsByComputation().getOrDefault(computationId, List.of());
    }

    /**
     * The user topics read by sources.
     *
     * @return the source topic names
     */
    public List<String> sourceTopics() {
        return compiled.sourceTopics();
    }

    /**
     * The internal topics with their partition counts.
     *
     * @return the partition count of each internal topic, by topic name
     */
    public Map<String, Integer> internalTopics() {
        return compiled.internalTopics();
    }

    /**
     * The dead-letter topic.
     *
     * @return the name of the pipeline's dead-letter topic
     */
    public String deadLetterTopic() {
        return compiled.deadLetterTopic();
    }

    /**
     * Encodes a message of {@code streamId} as a record of each internal topic carrying it, keyed
     * for the computations reading that topic.
     *
     * @param streamId a stream with an internal topic
     * @param payload the message payload, a record of the stream's schema
     * @param id the message id
     * @param eventTimestampNanos the event timestamp, in nanoseconds
     * @param systemTimestampNanos the system timestamp, in nanoseconds; also the record timestamp (in milliseconds)
     * @return one record per internal topic of the stream
     * @throws IllegalArgumentException if the stream has no internal topic
     */
    public List<EncodedRecord> encode(String streamId, GenericRecord payload, MessageId id, long eventTimestampNanos,
            long systemTimestampNanos) {
        List<EncodedRecord> out = new java.util.ArrayList<>();
        Schema schema = schemaOf(streamId);
        byte[] value = new AvroCodec(schema).encode(payload);
        for (String topic : topicsOf(streamId)) {
            if (!compiled.internalTopics().containsKey(topic)) {
                continue;
            }
            ComputationSpec reader = readerOf(streamId, topic);
            KeyCodec kc = reader == null ? KeyCodec.of(List.of(), streamId) : KeyCodec.of(reader.groupBySchema(), reader.id());
            byte[] key = reader == null ? kc.encode(kc.emptyKey())
                    : kc.encode(kc.extractor(reader.groupBySchema(), schema).key(payload));
            out.add(new EncodedRecord(topic, key, value,
                    FlowHeaders.of(id, eventTimestampNanos, systemTimestampNanos, List.of()),
                    systemTimestampNanos / 1_000_000L));
        }
        if (out.isEmpty()) {
            throw new IllegalArgumentException("stream '" + streamId + "' has no internal topic: pipe source streams "
                    + "into their source topics " + compiled.sourceTopics());
        }
        return out;
    }

    /**
     * The internal topic's partition that a data record from {@link #encode} goes to: the runtime's
     * range partitioning of the key hash over the topic's partition count
     * ({@link #internalTopics()}), so a record produced there is read by the task owning its key.
     *
     * @param record a data record from {@link #encode}
     * @return the partition, from 0
     * @throws IllegalArgumentException if the record's topic is not an internal topic of the pipeline
     */
    public int partitionOf(EncodedRecord record) {
        Integer n = compiled.internalTopics().get(record.topic());
        if (n == null) {
            throw new IllegalArgumentException("topic '" + record.topic() + "' is not an internal topic of pipeline '"
                    + spec.name() + "'; its internal topics are " + compiled.internalTopics().keySet());
        }
        return io.flowkafka.internal.partition.RangePartitioner.partition(
                io.flowkafka.internal.partition.RangePartitioner.hashOf(record.key()), n);
    }

    /**
     * The computation writing a stream and the number of its tasks, which is the number of
     * producers whose control records a reader of the stream waits for.
     *
     * @param computation the writer's id
     * @param partitions its task count: 1 on TopologyTestDriver, else its
     *     {@code desired_partition_count}, or for a Source computation the largest partition count
     *     of its source topics (what {@code FlowRuntime} learns when it starts)
     */
    public record StreamWriter(String computation, int partitions) {
        /**
         * Checks the writer.
         *
         * @param computation the writer's id
         * @param partitions its task count, at least 1
         * @throws IllegalArgumentException if {@code partitions} is less than 1
         */
        public StreamWriter {
            java.util.Objects.requireNonNull(computation, "computation");
            if (partitions < 1) {
                throw new IllegalArgumentException("partitions must be >= 1 but was " + partitions);
            }
        }
    }

    /**
     * The writer of an internal stream and its task count, see {@link StreamWriter}.
     *
     * @param streamId an internal stream of the pipeline
     * @param sourceTopicPartitions the partition count of a source topic (asked only when the
     *     writer is a Source computation and the codecs are not for TopologyTestDriver)
     * @return the writer and its task count
     * @throws IllegalArgumentException if the stream is unknown, is a source stream, or has no writer
     */
    public StreamWriter writerOf(String streamId, java.util.function.ToIntFunction<String> sourceTopicPartitions) {
        java.util.Objects.requireNonNull(sourceTopicPartitions, "sourceTopicPartitions");
        schemaOf(streamId);
        ComputationSpec writer = spec.writerOf(streamId).orElseThrow(() -> new IllegalArgumentException("stream '"
                + streamId + "' of pipeline '" + spec.name() + "' is written by no computation"));
        if (internalTopicsOf(streamId).isEmpty()) {
            throw new IllegalArgumentException("stream '" + streamId + "' of pipeline '" + spec.name()
                    + "' has no internal topic (a source stream, or a stream written only to sinks)");
        }
        return new StreamWriter(writer.id(), taskCount(writer.id(), sourceTopicPartitions));
    }

    /**
     * The number of tasks of a computation, as the runtime counts them for watermarks and
     * completion: 1 on TopologyTestDriver, else its {@code desired_partition_count}, or for a
     * Source computation the largest partition count of its source topics.
     *
     * @param computationId the id of a computation of the pipeline
     * @param sourceTopicPartitions the partition count of a source topic (asked only for a Source
     *     computation when the codecs are not for TopologyTestDriver)
     * @return the computation's task count, at least 1
     * @throws IllegalArgumentException if the computation is unknown
     */
    public int taskCount(String computationId, java.util.function.ToIntFunction<String> sourceTopicPartitions) {
        ComputationSpec c = computation(computationId);
        if (singleTask) {
            return 1;
        }
        if (c.sourceStreams().isEmpty() || !io.flowkafka.internal.source.ServiceLogSource.readsTopics(c)) {
            return c.desiredPartitionCount();
        }
        int max = 0;
        for (io.flowkafka.spec.SourceSpec s : c.sourceStreams()) {
            for (String topic : PipelineCompiler.topicsOf(s)) {
                max = Math.max(max, sourceTopicPartitions.applyAsInt(topic));
            }
        }
        return Math.max(1, max);
    }

    /**
     * Encodes a control record (watermarks and completion) of producer
     * ({@code writer of streamId}, {@code producerPartition}) for each internal topic carrying the
     * stream, exactly as the writer's task sends it: same Avro value, key and {@code flow.control}
     * header. The runtime multicasts a control record to every partition of a topic; so must the
     * caller, for each partition {@code 0 .. internalTopics().get(topic) - 1}. A reader keeps, per
     * producer, the largest watermarks and the OR of {@code completed} it heard, so a control
     * record never moves a watermark back.
     *
     * @param streamId an internal stream of the pipeline
     * @param producerPartition the producer's task (partition), {@code 0 <= p <}
     *     {@link #writerOf}{@code .partitions()}
     * @param eventWatermarkNanos the event watermark; ignored (+infinity) when {@code completed}
     * @param systemWatermarkNanos the system watermark; ignored (+infinity) when {@code completed}
     * @param completed whether the producer will send no more messages of the stream
     * @param timestampMs the Kafka record timestamp (the runtime uses its wall clock)
     * @return one control record per internal topic of the stream
     * @throws IllegalArgumentException as {@link #writerOf}, or if {@code producerPartition} is negative
     */
    public List<EncodedRecord> encodeControl(String streamId, int producerPartition, long eventWatermarkNanos,
            long systemWatermarkNanos, boolean completed, long timestampMs) {
        if (producerPartition < 0) {
            throw new IllegalArgumentException("producerPartition must be >= 0 but was " + producerPartition);
        }
        ComputationSpec writer = spec.writerOf(streamId).orElseThrow(() -> new IllegalArgumentException("stream '"
                + streamId + "' of pipeline '" + spec.name() + "' is written by no computation"));
        List<String> topics = internalTopicsOf(streamId);
        if (topics.isEmpty()) {
            throw new IllegalArgumentException("stream '" + streamId + "' of pipeline '" + spec.name()
                    + "' has no internal topic (a source stream, or a stream written only to sinks)");
        }
        io.flowkafka.avro.ControlRecord r = io.flowkafka.avro.ControlRecord.newBuilder()
                .setComputation(writer.id()).setPartition(producerPartition)
                .setEventWatermark(completed ? Long.MAX_VALUE : eventWatermarkNanos)
                .setSystemWatermark(completed ? Long.MAX_VALUE : systemWatermarkNanos)
                .setCompleted(completed).setIdle(false).setMaxIdleProducers(0).setSequence(0L).build();
        byte[] value = new io.flowkafka.internal.watermarks.ControlRecords().encode(r);
        List<EncodedRecord> out = new java.util.ArrayList<>(topics.size());
        for (String topic : topics) {
            org.apache.kafka.common.header.internals.RecordHeaders h =
                    new org.apache.kafka.common.header.internals.RecordHeaders();
            h.add(FlowHeaders.CONTROL, new byte[] {1});
            out.add(new EncodedRecord(topic, new byte[8], value.clone(), h, timestampMs));
        }
        return out;
    }

    /**
     * Encodes a payload of a source stream as the record its source reads: the payload in the
     * source's {@code format} ({@code json}, the default, or {@code avro}), no key, into the first
     * topic the source reads. The source takes the event time from the record timestamp, or from
     * its {@code event_timestamp_column} when it has one.
     *
     * @param streamId a source stream of the pipeline
     * @param payload a record of the stream's schema
     * @param timestampMs the record timestamp, in milliseconds
     * @return the record to produce to the source topic
     * @throws IllegalArgumentException if the stream is not a source stream, or its source reads
     *     with a {@code value_serde} or a {@code key_column} (pipe such records with their bytes)
     */
    public EncodedRecord encodeSource(String streamId, GenericRecord payload, long timestampMs) {
        Schema schema = schemaOf(streamId);
        io.flowkafka.spec.SourceSpec source = spec.computations().values().stream()
                .flatMap(c -> c.sourceStreams().stream()).filter(s -> s.streamId().equals(streamId)).findFirst()
                .orElseThrow(() -> new IllegalArgumentException("stream '" + streamId + "' of pipeline '" + spec.name()
                        + "' is not a source stream"));
        Map<String, Object> p = source.parameters();
        if (p.containsKey("value_serde") || p.containsKey("key_column")) {
            throw new IllegalArgumentException("source stream '" + streamId + "' is read with "
                    + (p.containsKey("value_serde") ? "value_serde " + p.get("value_serde") : "key_column "
                            + p.get("key_column")) + ": pipe its records' bytes into its topic");
        }
        // the source's own topics (`topics` or `topic`), as the compiler reads them: never another source's
        String topic = PipelineCompiler.topicsOf(source).stream()
                .filter(sourceTopics()::contains).findFirst()
                .orElseThrow(() -> new IllegalArgumentException("source stream '" + streamId + "' reads no topic of "
                        + sourceTopics()));
        byte[] value = "avro".equals(String.valueOf(p.getOrDefault("format", "json")))
                ? new AvroCodec(schema).encode(payload) : io.flowkafka.internal.serde.JsonRecords.toJson(payload);
        return new EncodedRecord(topic, null, value, new org.apache.kafka.common.header.internals.RecordHeaders(),
                timestampMs);
    }

    /**
     * Whether a record of an internal topic is a control record (header {@code flow.control}), not a message.
     *
     * @param headers the headers of a record of an internal topic
     * @return true for a control record
     */
    public boolean isControl(Headers headers) {
        return FlowHeaders.isControl(headers);
    }

    /**
     * Decodes the value of a record that a {@code KafkaSink} wrote for {@code streamId} to its
     * topic, in the sink's {@code format} ({@code json}, the default, or {@code avro}).
     *
     * @param streamId the stream the sink writes
     * @param topic the sink's topic
     * @param value the record value
     * @return the payload, a record of the stream's schema
     * @throws IllegalArgumentException if no sink writes the stream to {@code topic}, the sink
     *     writes only a {@code payload_column} (not a whole record), or the value does not decode
     */
    public GenericRecord decodeSinkValue(String streamId, String topic, byte[] value) {
        java.util.Objects.requireNonNull(value, "value");
        Schema schema = schemaOf(streamId);
        ComputationSpec writer = spec.writerOf(streamId).orElse(null);
        io.flowkafka.spec.SinkSpec sink = writer == null ? null : writer.sinks().stream()
                .filter(s -> s.inputStreamIds().contains(streamId)
                        && topic.equals(String.valueOf(s.parameters().get("topic"))))
                .findFirst().orElse(null);
        if (sink == null) {
            throw new IllegalArgumentException("no sink of pipeline '" + spec.name() + "' writes stream '" + streamId
                    + "' to topic '" + topic + "'; the stream's topics are " + topicsOf(streamId));
        }
        if (sink.parameters().containsKey("payload_column")) {
            throw new IllegalArgumentException("sink '" + sink.id() + "' writes only column '"
                    + sink.parameters().get("payload_column") + "' of stream '" + streamId
                    + "', which cannot be decoded back into a record: read the topic's raw values");
        }
        return "avro".equals(String.valueOf(sink.parameters().getOrDefault("format", "json")))
                ? new AvroCodec(schema).decode(value)
                : io.flowkafka.internal.serde.JsonRecords.fromJson(value, schema);
    }

    /**
     * The changelog topic of a computation's state store under Kafka Streams
     * {@code application.id} {@code applicationId}: where a committed state value of
     * {@link #stateStoreKey} can be read back, latest record per key (a null value: cleared).
     *
     * @param applicationId the Kafka Streams {@code application.id} the pipeline runs under
     * @param computationId the id of a computation of the pipeline
     * @return the changelog topic name
     */
    public String stateChangelogTopic(String applicationId, String computationId) {
        return applicationId + "-" + stateStoreName(computationId) + "-changelog";
    }

    private List<String> internalTopicsOf(String streamId) {
        return topicsOf(streamId).stream().filter(compiled.internalTopics()::containsKey).toList();
    }

    /**
     * Decodes a record of an internal topic of {@code streamId}.
     *
     * @param streamId the stream the topic carries
     * @param topic the internal topic the record was read from
     * @param key the record key
     * @param value the record value
     * @param headers the record headers
     * @return the message, with its id, timestamps, key, payload and parents
     * @throws IllegalArgumentException if the record is not a flow message of the stream
     */
    public Message decode(String streamId, String topic, byte[] key, byte[] value, Headers headers) {
        FlowHeaders.Metadata meta = FlowHeaders.read(headers);
        ComputationSpec reader = readerOf(streamId, topic);
        KeyCodec kc = reader == null ? KeyCodec.of(List.of(), streamId) : KeyCodec.of(reader.groupBySchema(), reader.id());
        GenericRecord payload = new AvroCodec(schemaOf(streamId)).decode(value);
        GenericRecord k = kc.decode(key);
        return new io.flowkafka.internal.message.FlowMessage(meta.messageId(), meta.eventTimestamp(),
                meta.systemTimestamp(), streamId, k, payload, meta.parents());
    }

    /**
     * The state store name of a computation.
     *
     * @param computationId the id of a computation of the pipeline
     * @return the store name
     * @throws IllegalArgumentException if the computation is unknown
     */
    public String stateStoreName(String computationId) {
        computation(computationId);
        return KeyStates.storeName(computationId);
    }

    /**
     * The status topic, where each task reports its completion ({@code key = "<computation>/<partition>"}).
     *
     * @return the name of the pipeline's status topic
     */
    public String statusTopic() {
        return compiled.statusTopic();
    }

    /**
     * The names of a computation's two timer stores: {timers, holds}. The holds store exists only
     * for a computation that writes an internal stream (whose output watermark is read).
     *
     * @param computationId the id of a computation of the pipeline
     * @return the store names: timers first, then holds
     */
    public List<String> timerStoreNames(String computationId) {
        return List.of(io.flowkafka.internal.timers.TimerStore.timersStoreName(computationId),
                io.flowkafka.internal.timers.TimerStore.holdsStoreName(computationId));
    }

    /**
     * The pending timers of a computation in its timer stores, per timer stream in spec order and
     * in trigger order within a stream (the order they fire in). Reads only; {@code holds} is not
     * needed (null is fine).
     *
     * @param computationId the id of a computation of the pipeline
     * @param timers the computation's timers store
     * @param holds the computation's holds store, or null
     * @return the pending timers
     * @throws IllegalArgumentException if the computation is unknown or has no timer streams
     */
    public List<io.flowkafka.api.Timer> pendingTimers(String computationId, KeyValueStore<Bytes, byte[]> timers,
            @Nullable KeyValueStore<Bytes, byte[]> holds) {
        ComputationSpec c = spec.computations().get(computationId);
        if (c == null || c.timers().isEmpty()) {
            throw new IllegalArgumentException("computation '" + computationId + "' "
                    + (c == null ? "does not exist" : "has no timer streams"));
        }
        int n = c.timers().size();
        boolean[] dedup = new boolean[n];
        for (int i = 0; i < n; i++) {
            dedup[i] = c.timers().get(i).deduplicateEqualTimestamps();
        }
        io.flowkafka.internal.timers.TimerStore store = new io.flowkafka.internal.timers.TimerStore(timers, holds,
                c.timers().stream().map(io.flowkafka.spec.TimerStreamSpec::id).toList(), dedup);
        KeyCodec kc = KeyCodec.of(c.groupBySchema(), c.id());
        List<io.flowkafka.api.Timer> out = new java.util.ArrayList<>();
        for (int i = 0; i < n; i++) {
            String stream = c.timers().get(i).id();
            for (io.flowkafka.internal.timers.PendingTimer t : store.due(i, Long.MAX_VALUE, Integer.MAX_VALUE)) {
                out.add(new io.flowkafka.internal.processor.FlowTimer(MessageId.of(t.messageId()), stream,
                        kc.decode(t.encodedKey()), t.triggerTs(), t.eventTs(), t.systemTs()));
            }
        }
        return out;
    }

    /**
     * The name of a computation's key-visitor coverage store ({@code key_visitor_states}).
     *
     * @param computationId the id of a computation of the pipeline
     * @return the store name
     */
    public String keyVisitorStoreName(String computationId) {
        return io.flowkafka.internal.visitor.KeyVisitor.storeName(computationId);
    }

    /**
     * The coverage of a key-visitor stream in a coverage store; null before the visitor's first step.
     *
     * @param store a computation's coverage store, named by {@link #keyVisitorStoreName}
     * @param visitorStream the id of a key-visitor stream of the computation
     * @return the coverage, or null
     */
    public io.flowkafka.avro.@Nullable KeyVisitorCoverage keyVisitorCoverage(KeyValueStore<Bytes, byte[]> store,
            String visitorStream) {
        return io.flowkafka.internal.visitor.KeyVisitor.coverage(store, visitorStream);
    }

    /**
     * The key of {@code computationId} that a payload of its input {@code streamId} maps to.
     *
     * @param computationId the id of a computation of the pipeline
     * @param streamId an input stream of the computation
     * @param payload a payload of that stream
     * @return the key
     * @throws IllegalArgumentException if the computation or stream is unknown
     */
    public GenericRecord keyOf(String computationId, String streamId, GenericRecord payload) {
        ComputationSpec c = computation(computationId);
        KeyCodec kc = KeyCodec.of(c.groupBySchema(), c.id());
        return kc.extractor(c.groupBySchema(), schemaOf(streamId)).key(payload);
    }

    /**
     * The key of {@code computationId} from the values of its {@code group_by_schema} columns, by
     * column name. A computed column that is not given (the uint64 {@code farm_hash(...)} column) is
     * computed as the runtime computes it from a payload, its expression reading the given columns
     * (a column copied from a payload field stands for that field): for {@code group_by_schema}
     * {@code [hash = farm_hash(user_id), user_id]}, {@code Map.of("user_id", "alice")} is enough.
     * Integers may be given for int64 and uint64 columns, any {@link CharSequence} for strings.
     *
     * @param computationId the id of a computation of the pipeline
     * @param columns key column values by name; a computed column may be given too, then it is taken as is
     * @return the key, a record of the computation's key schema
     * @throws IllegalArgumentException if the computation is unknown, a name is not a key column, a
     *     column copied from the payload is missing, a computed column reads a field that no given
     *     column stands for, or a value has the wrong type
     */
    public GenericRecord keyOf(String computationId, Map<String, ?> columns) {
        ComputationSpec c = computation(computationId);
        Schema keySchema = KeyCodec.of(c.groupBySchema(), c.id()).schema();
        for (String name : columns.keySet()) {
            if (keySchema.getField(name) == null) {
                throw new IllegalArgumentException("computation '" + computationId + "' has no key column '" + name
                        + "'; its group_by_schema columns are " + columnNames(c));
            }
        }
        // the payload fields the given columns stand for, to evaluate computed columns on, as the runtime does
        org.apache.avro.SchemaBuilder.FieldAssembler<Schema> fields = org.apache.avro.SchemaBuilder
                .record("KeyColumns").namespace("io.flowkafka.key").fields();
        Map<String, @Nullable Object> values = new java.util.LinkedHashMap<>();
        for (io.flowkafka.spec.GroupByColumn col : c.groupBySchema()) {
            String field = copiedField(col);
            if (field != null && columns.containsKey(col.name()) && !values.containsKey(field)) {
                Schema type = nonNull(keySchema.getField(col.name()).schema());
                fields = fields.name(field).type(Schema.createUnion(Schema.create(Schema.Type.NULL), type))
                        .withDefault(null);
                values.put(field, keyValue(computationId, col, columns.get(col.name())));
            }
        }
        Schema payloadSchema = fields.endRecord();
        org.apache.avro.generic.GenericData.Record payload = new org.apache.avro.generic.GenericData.Record(payloadSchema);
        values.forEach(payload::put);
        org.apache.avro.generic.GenericData.Record key = new org.apache.avro.generic.GenericData.Record(keySchema);
        for (io.flowkafka.spec.GroupByColumn col : c.groupBySchema()) {
            if (columns.containsKey(col.name())) {
                key.put(col.name(), keyValue(computationId, col, columns.get(col.name())));
            } else if (copiedField(col) == null) {
                io.flowkafka.internal.key.KeyExpression e;
                try {
                    e = io.flowkafka.internal.key.KeyExpression.parse(Objects.requireNonNull(col.expression()),
                            payloadSchema);
                } catch (IllegalArgumentException ex) {
                    throw new IllegalArgumentException("key column '" + col.name() + "' of computation '"
                            + computationId + "' is computed as " + col.expression() + ", which reads fields that "
                            + "the given columns " + columns.keySet() + " do not stand for: give the key columns it "
                            + "reads, or '" + col.name() + "' itself (" + ex.getMessage() + ")", ex);
                }
                key.put(col.name(), e.evaluate(payload));
            } else {
                throw new IllegalArgumentException("key column '" + col.name() + "' of computation '" + computationId
                        + "' is missing from " + columns.keySet() + "; give every column of " + columnNames(c)
                        + " but the computed ones " + computedColumns(c));
            }
        }
        return key;
    }

    /**
     * The key of {@code computationId} that a payload of its input {@code streamId} with these
     * fields maps to: only the fields its {@code group_by_schema} expressions read are needed; a
     * field not given takes its default, or null.
     *
     * @param computationId the id of a computation of the pipeline
     * @param streamId an input stream of the computation
     * @param fields payload field values by name
     * @return the key, a record of the computation's key schema
     * @throws IllegalArgumentException if the computation or stream is unknown, a field is unknown,
     *     or a field the key reads is neither given nor has a default
     */
    public GenericRecord keyOfFields(String computationId, String streamId, Map<String, ?> fields) {
        ComputationSpec c = computation(computationId);
        Schema schema = schemaOf(streamId);
        for (String name : fields.keySet()) {
            if (schema.getField(name) == null) {
                throw new IllegalArgumentException("stream '" + streamId + "' has no field '" + name
                        + "'; its fields are " + schema.getFields().stream().map(Schema.Field::name).toList());
            }
        }
        java.util.Set<String> read = new java.util.LinkedHashSet<>();
        for (io.flowkafka.spec.GroupByColumn col : c.groupBySchema()) {
            read.addAll(io.flowkafka.internal.key.KeyExpression.parse(
                    col.expression() == null ? col.name() : col.expression(), schema).columns());
        }
        org.apache.avro.generic.GenericData.Record payload = new org.apache.avro.generic.GenericData.Record(schema);
        List<String> missing = new java.util.ArrayList<>();
        for (Schema.Field f : schema.getFields()) {
            if (fields.containsKey(f.name())) {
                payload.put(f.pos(), fields.get(f.name()));
            } else if (f.hasDefaultValue()) {
                payload.put(f.pos(), org.apache.avro.generic.GenericData.get().deepCopy(f.schema(),
                        org.apache.avro.generic.GenericData.get().getDefaultValue(f)));
            } else if (read.contains(f.name())) {
                missing.add(f.name());
            }
        }
        if (!missing.isEmpty()) {
            throw new IllegalArgumentException("the key of computation '" + computationId + "' reads fields "
                    + missing + " of stream '" + streamId + "', missing from " + fields.keySet());
        }
        return keyOf(computationId, streamId, payload);
    }

    /** The payload field a key column copies ({@code expression} null or a bare field name), or null if computed. */
    private static @Nullable String copiedField(io.flowkafka.spec.GroupByColumn col) {
        String e = col.expression();
        if (e == null) {
            return col.name();
        }
        String t = e.trim();
        return t.matches("[A-Za-z_][A-Za-z0-9_]*") && !t.equalsIgnoreCase("farm_hash") ? t : null;
    }

    private static Schema nonNull(Schema s) {
        if (s.getType() == Schema.Type.UNION) {
            return s.getTypes().stream().filter(t -> t.getType() != Schema.Type.NULL).findFirst().orElse(s);
        }
        return s;
    }

    /** A key column value in the type the key record holds. */
    private static @Nullable Object keyValue(String computationId, io.flowkafka.spec.GroupByColumn col,
            @Nullable Object v) {
        if (v == null) {
            return null;
        }
        Object out = switch (col.type()) {
            case UINT64, INT64 -> v instanceof Long || v instanceof Integer || v instanceof Short || v instanceof Byte
                    ? ((Number) v).longValue() : null;
            case STRING -> v instanceof CharSequence cs ? cs.toString() : null;
            // a whole number too: JSON (a state query's key) writes 5.0 as 5
            case DOUBLE -> v instanceof Double || v instanceof Float || v instanceof Long || v instanceof Integer
                    || v instanceof Short || v instanceof Byte ? ((Number) v).doubleValue() : null;
            case BOOLEAN -> v instanceof Boolean ? v : null;
        };
        if (out == null) {
            throw new IllegalArgumentException("key column '" + col.name() + "' of computation '" + computationId
                    + "' is " + col.type().specName() + " but was given " + kindOf(v) + ": " + v);
        }
        return out;
    }

    /** What a key value is, in the words of JSON where it has them. */
    private static String kindOf(Object v) {
        if (v instanceof CharSequence) {
            return "a string";
        }
        if (v instanceof Boolean) {
            return "a boolean";
        }
        if (v instanceof Long || v instanceof Integer || v instanceof Short || v instanceof Byte) {
            return "a whole number";
        }
        if (v instanceof Number) {
            return "a number";
        }
        return "a " + v.getClass().getSimpleName();
    }

    private static List<String> columnNames(ComputationSpec c) {
        return c.groupBySchema().stream().map(io.flowkafka.spec.GroupByColumn::name).toList();
    }

    private static List<String> computedColumns(ComputationSpec c) {
        return c.groupBySchema().stream().filter(col -> copiedField(col) == null)
                .map(io.flowkafka.spec.GroupByColumn::name).toList();
    }

    /**
     * The store key of state {@code stateName} of {@code key} in the computation's store.
     *
     * @param computationId the id of a computation of the pipeline
     * @param key a key of the computation
     * @param stateName a state of the computation
     * @return the key of the row in the computation's state store
     * @throws IllegalArgumentException if the computation is unknown
     */
    public Bytes stateStoreKey(String computationId, GenericRecord key, String stateName) {
        ComputationSpec c = computation(computationId);
        return KeyStates.storeKey(KeyCodec.of(c.groupBySchema(), c.id()).encode(key), stateName);
    }

    /**
     * Decodes a state value with its declared Avro schema.
     *
     * @param computationId the id of a computation of the pipeline
     * @param stateName an Avro state of the computation
     * @param value the stored value, or null
     * @return the decoded value; empty if {@code value} is null
     * @throws IllegalArgumentException if {@code value} is not null and the computation is unknown or has no such
     *     Avro state
     */
    public Optional<GenericRecord> decodeState(String computationId, String stateName, byte @Nullable [] value) {
        if (value == null) {
            return Optional.empty();
        }
        StateSpec s = computation(computationId).states().get(stateName);
        if (s == null || s.schema() == null) {
            throw new IllegalArgumentException("computation '" + computationId + "' has no Avro state '" + stateName + "'");
        }
        return Optional.of(new StateRowCodec(s.schema()).decode(value));
    }

    /**
     * The Avro schema of a stream.
     *
     * @param streamId the id of a stream of the pipeline
     * @return the stream's payload schema
     * @throws IllegalArgumentException if the pipeline has no such stream
     */
    public Schema schemaOf(String streamId) {
        var s = spec.streams().get(streamId);
        if (s == null || s.schema() == null) {
            throw new IllegalArgumentException("pipeline '" + spec.name() + "' has no stream '" + streamId + "'; streams are "
                    + spec.streams().keySet());
        }
        return s.schema();
    }

    private ComputationSpec computation(String id) {
        ComputationSpec c = spec.computations().get(id);
        if (c == null) {
            throw new IllegalArgumentException("pipeline '" + spec.name() + "' has no computation '" + id
                    + "'; computations are " + spec.computations().keySet());
        }
        return c;
    }

    private @Nullable ComputationSpec readerOf(String streamId, String topic) {
        List<ComputationSpec> readers = spec.readersOf(streamId);
        String base = PipelineCompiler.streamTopic("", spec.name(), streamId);
        for (ComputationSpec r : readers) {
            if (topic.endsWith(base + "." + r.id())) {
                return r;
            }
        }
        return readers.isEmpty() ? null : readers.get(0);
    }
}
