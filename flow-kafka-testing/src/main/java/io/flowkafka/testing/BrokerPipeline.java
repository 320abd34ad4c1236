package io.flowkafka.testing;

import io.flowkafka.api.FlowException;
import io.flowkafka.api.MessageId;
import io.flowkafka.runtime.FlowConfig;
import io.flowkafka.runtime.FlowRuntime;
import io.flowkafka.spec.ComputationSpec;
import io.flowkafka.spec.PipelineSpec;
import io.flowkafka.spec.StateSpec;
import io.flowkafka.spi.PipelineCodecs;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.StreamsConfig;
import org.jspecify.annotations.Nullable;

/**
 * {@link FlowTestLevel#BROKER}: the whole pipeline on a {@link FlowRuntime} (exactly-once) against
 * the JVM-wide in-JVM broker; see {@link FlowTestLevel#BROKER} for what runs and why.
 *
 * <p>Writes: an idempotent producer with {@code acks=all}; each call flushes and checks every
 * send before it returns, so what a call wrote is in the log, in order per partition (data, then
 * the control records behind it). Data records go to the partition the runtime's range
 * partitioning gives their key ({@link PipelineCodecs#partitionOf}); control records, as the
 * runtime multicasts them, to every partition, once per task of the writer computation.
 *
 * <p>Reads: {@code read_committed} consumers without a group, assigned every partition from the
 * beginning: one per stream topic (kept, so reads consume), and one per state store changelog,
 * read up to its last stable offset at each state lookup into a map of the last value per key.
 *
 * <p>Threading: single-threaded, like the other levels; the runtime's threads are its own.
 */
final class BrokerPipeline implements PipelineUnderTest {
    private static final AtomicInteger OPENED = new AtomicInteger();

    private final PipelineSpec spec;
    private final @Nullable String computationId;
    private final boolean follow;
    private final Duration bound;
    private final KafkaCluster cluster;
    private final @Nullable Path stateDir;
    private final FlowRuntime runtime;
    private final PipelineCodecs codecs;
    private final KafkaProducer<byte[], byte[]> producer;
    private final Map<String, Integer> partitionCounts = new HashMap<>();
    private final Map<String, KafkaConsumer<byte[], byte[]>> consumers = new HashMap<>();
    private final Map<String, List<GenericRecord>> unread = new HashMap<>();
    /** Per changelog topic read so far: store key -> last value. */
    private final Map<String, Map<Bytes, byte[]>> changelogs = new HashMap<>();
    private final Map<String, Long> sequences = new HashMap<>();
    private final Map<String, Long> explicit = new HashMap<>();
    private final Map<String, Long> followed = new HashMap<>();
    private final Set<String> completedStreams = new TreeSet<>();
    private final Set<String> completedTasks = new HashSet<>();
    private @Nullable KafkaConsumer<byte[], byte[]> statusConsumer;
    private boolean closed;

    BrokerPipeline(PipelineSpec spec, @Nullable String computationId, Properties props, long awaitBoundMs) {
        this.spec = spec;
        this.computationId = computationId;
        this.follow = DriverPipeline.follows(props);
        this.bound = Duration.ofMillis(awaitBoundMs);
        this.cluster = EmbeddedKafkaCluster.shared();
        Properties p = cluster.clientProperties();
        p.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, "100");
        props.forEach((k, v) -> {
            if (!k.toString().startsWith("flow.testing.")) {
                p.put(k, v);
            }
        });
        String prefix = "lvl" + OPENED.incrementAndGet() + "-";
        p.putIfAbsent(FlowConfig.TOPIC_PREFIX_CONFIG, prefix);
        p.putIfAbsent(FlowConfig.APPLICATION_ID_PREFIX_CONFIG, prefix);
        Path dir = null;
        if (!p.containsKey(StreamsConfig.STATE_DIR_CONFIG)) {
            try {
                dir = Files.createTempDirectory("flow-broker-level-");
            } catch (IOException e) {
                throw new UncheckedIOException("cannot create a temporary state.dir for the BROKER level", e);
            }
            p.put(StreamsConfig.STATE_DIR_CONFIG, dir.toString());
        }
        this.stateDir = dir;
        this.codecs = PipelineCodecs.of(spec, p);
        createMissingSourceTopics();
        this.runtime = FlowRuntime.create(spec, p);
        Properties pp = cluster.clientProperties();
        pp.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        pp.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        pp.put(ProducerConfig.ACKS_CONFIG, "all");
        pp.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        this.producer = new KafkaProducer<>(pp);
        try {
            runtime.start();
            if (!runtime.awaitState(FlowRuntime.State.RUNNING, bound)) {
                throw new FlowException("pipeline '" + spec.name() + "' did not reach RUNNING within " + bound
                        + " on the BROKER level (state " + runtime.state() + ")");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            close();
            throw new FlowException("interrupted while starting pipeline '" + spec.name() + "'", e);
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    private void createMissingSourceTopics() {
        try {
            Set<String> existing = cluster.admin().listTopics().names().get(30, TimeUnit.SECONDS);
            for (String topic : codecs.sourceTopics()) {
                if (!existing.contains(topic)) {
                    cluster.createTopic(topic, FlowTestLevel.BROKER_SOURCE_TOPIC_PARTITIONS);
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new FlowException("interrupted while creating the source topics of '" + spec.name() + "'", e);
        } catch (ExecutionException | TimeoutException e) {
            throw new FlowException("cannot list the topics of the broker: " + e, e);
        }
    }

    @Override
    public FlowTestLevel level() {
        return FlowTestLevel.BROKER;
    }

    @Override
    public PipelineSpec spec() {
        return spec;
    }

    @Override
    public @Nullable String computationId() {
        return computationId;
    }

    // ---------------------------------------------------------------- writes

    @Override
    public void pipe(String streamId, Map<String, ?> fields, long eventTimestampNanos) {
        checkOpen();
        Schema schema = FlowTestDriver.checkPipeable(spec, codecs, streamId,
                "pipe its records into its source topics", "there is nothing to pipe it into");
        if (completedStreams.contains(streamId)) {
            throw new IllegalStateException("stream '" + streamId + "' was completed with completeStream: its writer "
                    + "sends no more messages, so none can be piped into it");
        }
        GenericRecord payload = FlowTestDriver.record(schema, streamId, fields);
        if (!GenericData.get().validate(schema, payload)) {
            throw new IllegalArgumentException("fields " + fields + " do not make a valid record of stream '" + streamId
                    + "' (schema " + schema.getFullName() + ")");
        }
        long sequence = sequences.merge(streamId, 1L, Long::sum) - 1;
        MessageId id = FlowTestDriver.pipedId(spec.name(), streamId, sequence);
        long nowMs = System.currentTimeMillis();
        List<Future<RecordMetadata>> sent = new ArrayList<>();
        for (PipelineCodecs.EncodedRecord r : codecs.encode(streamId, payload, id, eventTimestampNanos,
                nowMs * 1_000_000L)) {
            sent.add(producer.send(new ProducerRecord<>(r.topic(), codecs.partitionOf(r), r.timestampMs(), r.key(),
                    r.value(), new RecordHeaders(r.headers().toArray()))));
        }
        if (follow && eventTimestampNanos > followed.getOrDefault(streamId, Long.MIN_VALUE)) {
            followed.put(streamId, eventTimestampNanos);
            sent.addAll(sendControl(streamId, eventTimestampNanos, false));
        }
        check(sent);
    }

    @Override
    public void advanceWatermark(String streamId, long eventWatermarkNanos) {
        checkWatermarkable(streamId);
        FlowTestDriver.checkNotBack(streamId, explicit.get(streamId), eventWatermarkNanos);
        explicit.put(streamId, eventWatermarkNanos);
        check(sendControl(streamId, eventWatermarkNanos, false));
    }

    @Override
    public void advanceWatermark(long eventWatermarkNanos) {
        if (computationId == null) {
            throw new IllegalStateException("advanceWatermark(eventWatermarkNanos) advances the inputs of the "
                    + "computation under test, but none was named: open the pipeline with open(spec, computationId)");
        }
        for (String in : spec.computations().get(computationId).inputStreamIds()) {
            if (!completedStreams.contains(in) && eventWatermarkNanos > explicit.getOrDefault(in, Long.MIN_VALUE)) {
                advanceWatermark(in, eventWatermarkNanos);
            }
        }
    }

    @Override
    public void completeStream(String streamId) {
        checkOpen();
        FlowTestDriver.checkPipeable(spec, codecs, streamId, FlowTestDriver.SOURCE_WATERMARK_FIX,
                "no watermark of it is read");
        if (completedStreams.add(streamId)) {
            check(sendControl(streamId, Long.MAX_VALUE, true));
        }
    }

    private void checkWatermarkable(String streamId) {
        checkOpen();
        FlowTestDriver.checkPipeable(spec, codecs, streamId, FlowTestDriver.SOURCE_WATERMARK_FIX,
                "no watermark of it is read");
        if (completedStreams.contains(streamId)) {
            throw new IllegalStateException("stream '" + streamId + "' was completed with completeStream: its "
                    + "watermark is +infinity and cannot move");
        }
    }

    /** A control record of every task of the stream's writer, to every partition of every internal topic of it. */
    private List<Future<RecordMetadata>> sendControl(String streamId, long eventWatermarkNanos, boolean completed) {
        long nowMs = System.currentTimeMillis();
        PipelineCodecs.StreamWriter writer = codecs.writerOf(streamId, this::partitionCount);
        List<Future<RecordMetadata>> sent = new ArrayList<>();
        for (int task = 0; task < writer.partitions(); task++) {
            for (PipelineCodecs.EncodedRecord r : codecs.encodeControl(streamId, task, eventWatermarkNanos,
                    nowMs * 1_000_000L, completed, nowMs)) {
                int partitions = codecs.internalTopics().get(r.topic());
                for (int q = 0; q < partitions; q++) {
                    sent.add(producer.send(new ProducerRecord<>(r.topic(), q, r.timestampMs(), r.key(), r.value(),
                            new RecordHeaders(r.headers().toArray()))));
                }
            }
        }
        return sent;
    }

    private void check(List<Future<RecordMetadata>> sent) {
        producer.flush();
        try {
            for (Future<RecordMetadata> f : sent) {
                f.get(bound.toMillis(), TimeUnit.MILLISECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new FlowException("interrupted while producing to pipeline '" + spec.name() + "'", e);
        } catch (ExecutionException | TimeoutException e) {
            throw new FlowException("producing to pipeline '" + spec.name() + "' failed: " + e, e);
        }
    }

    // ---------------------------------------------------------------- reads

    @Override
    public List<GenericRecord> readPayloads(String streamId) {
        checkOpen();
        String topic = readTopic(streamId);
        KafkaConsumer<byte[], byte[]> c = consumer(topic);
        Map<TopicPartition, Long> end = c.endOffsets(c.assignment());
        List<GenericRecord> out = take(streamId);
        Await.until(bound, "read stream '" + streamId + "' up to its last stable offsets " + end, () -> {
            out.addAll(decode(streamId, topic, c.poll(Duration.ofMillis(50))));
            return end.entrySet().stream().allMatch(e -> c.position(e.getKey()) >= e.getValue());
        });
        return List.copyOf(out);
    }

    @Override
    public List<GenericRecord> awaitPayloads(String streamId, int count) {
        checkOpen();
        String topic = readTopic(streamId);
        KafkaConsumer<byte[], byte[]> c = consumer(topic);
        List<GenericRecord> out = unread.computeIfAbsent(streamId, s -> new ArrayList<>());
        try {
            Await.until(bound, count + " payload(s) of stream '" + streamId + "' in topic " + topic, () -> {
                out.addAll(decode(streamId, topic, c.poll(Duration.ofMillis(100))));
                return out.size() >= count;
            });
        } catch (AssertionError e) {
            throw new AssertionError(e.getMessage() + "; got " + out.size() + ": " + out, e);
        }
        return List.copyOf(take(streamId));
    }

    private List<GenericRecord> take(String streamId) {
        List<GenericRecord> out = unread.remove(streamId);
        return out == null ? new ArrayList<>() : out;
    }

    private String readTopic(String streamId) {
        codecs.schemaOf(streamId);
        List<String> topics = codecs.topicsOf(streamId);
        if (topics.isEmpty()) {
            throw new IllegalArgumentException("stream '" + streamId + "' of pipeline '" + spec.name()
                    + "' is written to no topic (a source stream): nothing to read");
        }
        return topics.stream().filter(codecs.internalTopics()::containsKey).findFirst().orElse(topics.get(0));
    }

    private List<GenericRecord> decode(String streamId, String topic, Iterable<ConsumerRecord<byte[], byte[]>> records) {
        boolean internal = codecs.internalTopics().containsKey(topic);
        List<GenericRecord> out = new ArrayList<>();
        for (ConsumerRecord<byte[], byte[]> r : records) {
            if (!internal) {
                out.add(codecs.decodeSinkValue(streamId, topic, r.value()));
            } else if (!codecs.isControl(r.headers())) {
                out.add(codecs.decode(streamId, topic, r.key(), r.value(), r.headers()).getPayload());
            }
        }
        return out;
    }

    private KafkaConsumer<byte[], byte[]> consumer(String topic) {
        return consumers.computeIfAbsent(topic, this::newConsumer);
    }

    private KafkaConsumer<byte[], byte[]> newConsumer(String topic) {
        Properties cp = cluster.clientProperties();
        cp.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        cp.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        cp.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        cp.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        cp.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(cp);
        List<TopicPartition> partitions = new ArrayList<>();
        for (int q = 0; q < partitionCount(topic); q++) {
            partitions.add(new TopicPartition(topic, q));
        }
        c.assign(partitions);
        c.seekToBeginning(partitions);
        return c;
    }

    @Override
    public Optional<GenericRecord> stateForPayload(String computationId, String stateName, String inputStreamId,
            Map<String, ?> payloadFields) {
        checkOpen();
        ComputationSpec c = spec.computations().get(computationId);
        if (c == null) {
            throw new IllegalArgumentException("pipeline '" + spec.name() + "' has no computation '" + computationId
                    + "'; its computations are " + spec.computations().keySet());
        }
        StateSpec s = c.states().get(stateName);
        if (s == null || s.schema() == null) {
            throw new IllegalArgumentException("computation '" + computationId + "' declares no Avro state '"
                    + stateName + "'; its states are " + c.states().keySet());
        }
        if (!c.inputStreamIds().contains(inputStreamId)
                && c.sourceStreams().stream().noneMatch(x -> x.streamId().equals(inputStreamId))) {
            throw new IllegalArgumentException("stream '" + inputStreamId + "' is not an input of computation '"
                    + computationId + "'; its inputs are " + c.inputStreamIds());
        }
        GenericRecord key = codecs.keyOf(computationId, inputStreamId,
                FlowTestDriver.record(codecs.schemaOf(inputStreamId), inputStreamId, payloadFields));
        byte[] storeKey = codecs.stateStoreKey(computationId, key, stateName).get();
        String topic = codecs.stateChangelogTopic(runtime.applicationId(), computationId);
        KafkaConsumer<byte[], byte[]> consumer = consumer(topic);
        Map<Bytes, byte[]> values = changelogs.computeIfAbsent(topic, t -> new HashMap<>());
        Map<TopicPartition, Long> end = consumer.endOffsets(consumer.assignment());
        Await.until(bound, "read the changelog " + topic + " up to its last stable offsets " + end, () -> {
            for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(50))) {
                if (r.value() == null) {
                    values.remove(Bytes.wrap(r.key()));
                } else {
                    values.put(Bytes.wrap(r.key()), r.value());
                }
            }
            return end.entrySet().stream().allMatch(e -> consumer.position(e.getKey()) >= e.getValue());
        });
        byte[] value = values.get(Bytes.wrap(storeKey));
        return codecs.decodeState(computationId, stateName, value);
    }

    @Override
    public Optional<GenericRecord> externalRowForPayload(String computationId, String name, String inputStreamId,
            Map<String, ?> payloadFields) {
        checkOpen();
        PipelineCodecs.ExternalTable table = codecs.externalTable(computationId, name);
        GenericRecord key = codecs.keyOfFields(computationId, inputStreamId, payloadFields);
        byte[] encoded = codecs.encodeKey(computationId, key);
        Map<Bytes, byte[]> rows = readToEnd(table.topic());
        byte[] value;
        if (table.versioned()) {
            byte[] pointer = rows.get(Bytes.wrap(PipelineCodecs.versionedPointerKey()));
            value = pointer == null ? null : rows.get(Bytes.wrap(PipelineCodecs.versionedRowKey(
                    new String(pointer, StandardCharsets.UTF_8), encoded)));
        } else {
            value = rows.get(Bytes.wrap(encoded));
        }
        return value == null ? Optional.empty() : Optional.of(PipelineCodecs.decodeRow(table.schema(), value));
    }

    /** The latest committed record of each key of {@code topic}, read up to its last stable offsets. */
    private Map<Bytes, byte[]> readToEnd(String topic) {
        KafkaConsumer<byte[], byte[]> consumer = consumer(topic);
        Map<Bytes, byte[]> values = changelogs.computeIfAbsent(topic, t -> new HashMap<>());
        Map<TopicPartition, Long> end = consumer.endOffsets(consumer.assignment());
        Await.until(bound, "read " + topic + " up to its last stable offsets " + end, () -> {
            for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(50))) {
                if (r.value() == null) {
                    values.remove(Bytes.wrap(r.key()));
                } else {
                    values.put(Bytes.wrap(r.key()), r.value());
                }
            }
            return end.entrySet().stream().allMatch(e -> consumer.position(e.getKey()) >= e.getValue());
        });
        return values;
    }

    @Override
    public Set<String> completedComputations() {
        checkOpen();
        if (statusConsumer == null) {
            statusConsumer = newConsumer(codecs.statusTopic());
        }
        for (ConsumerRecord<byte[], byte[]> r : statusConsumer.poll(Duration.ofMillis(100))) {
            if (r.key() != null && r.value() != null
                    && "completed".equals(new String(r.value(), StandardCharsets.UTF_8))) {
                completedTasks.add(new String(r.key(), StandardCharsets.UTF_8));
            }
        }
        Set<String> out = new TreeSet<>();
        for (ComputationSpec c : spec.computations().values()) {
            int tasks = codecs.taskCount(c.id(), this::partitionCount);
            boolean all = true;
            for (int p = 0; p < tasks && all; p++) {
                all = completedTasks.contains(c.id() + "/" + p);
            }
            if (all) {
                out.add(c.id());
            }
        }
        return out;
    }

    @Override
    public void awaitCompleted(String computationId) {
        if (!spec.computations().containsKey(computationId)) {
            throw new IllegalArgumentException("pipeline '" + spec.name() + "' has no computation '" + computationId
                    + "'; its computations are " + spec.computations().keySet());
        }
        Await.until(bound, "computation '" + computationId + "' of pipeline '" + spec.name() + "' completed",
                () -> completedComputations().contains(computationId));
    }

    private int partitionCount(String topic) {
        return partitionCounts.computeIfAbsent(topic, t -> {
            try {
                return cluster.admin().describeTopics(List.of(t)).allTopicNames().get(30, TimeUnit.SECONDS).get(t)
                        .partitions().size();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new FlowException("interrupted while describing topic " + t, e);
            } catch (ExecutionException | TimeoutException e) {
                throw new FlowException("cannot describe topic " + t + " on the broker: " + e, e);
            }
        });
    }

    // ---------------------------------------------------------------- lifecycle

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            if (runtime != null) {
                runtime.close();
            }
        } finally {
            if (producer != null) {
                producer.close(Duration.ofSeconds(5));
            }
            consumers.values().forEach(c -> c.close(Duration.ofSeconds(5)));
            if (statusConsumer != null) {
                statusConsumer.close(Duration.ofSeconds(5));
            }
            deleteStateDir();
        }
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("the BROKER pipeline '" + spec.name() + "' is closed");
        }
    }

    private void deleteStateDir() {
        TempDirs.deleteRecursively(stateDir, "the BROKER level's state.dir");
    }

    @Override
    public String toString() {
        return "BROKER[" + spec.name() + " as " + (runtime == null ? "?" : runtime.applicationId()) + "]";
    }
}
