package io.flowkafka.spi;

import io.flowkafka.api.Message;
import io.flowkafka.api.MessageId;
import io.flowkafka.internal.compiler.CompiledPipeline;
import io.flowkafka.internal.compiler.PipelineCompiler;
import io.flowkafka.internal.message.FlowHeaders;
import io.flowkafka.internal.serde.AvroCodec;
import io.flowkafka.internal.serde.KeyCodec;
import io.flowkafka.internal.state.KeyStates;
import io.flowkafka.runtime.FlowConfig;
import io.flowkafka.spec.ComputationSpec;
import io.flowkafka.spec.PipelineSpec;
import io.flowkafka.spec.StateSpec;
import java.util.List;
import java.util.Map;
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
 * instance per thread.
 */
public final class PipelineCodecs {
    private final PipelineSpec spec;
    private final CompiledPipeline compiled;

    private PipelineCodecs(PipelineSpec spec, Properties props) {
        this.spec = spec.validated();
        FlowConfig config = new FlowConfig(props);
        this.compiled = PipelineCompiler.compile(this.spec, config.getString(FlowConfig.TOPIC_PREFIX_CONFIG), false);
    }

    /** Codecs of a valid spec deployed with {@code props} (only {@code flow.topic.prefix} matters). */
    public static PipelineCodecs of(PipelineSpec spec, Properties props) {
        return new PipelineCodecs(spec, props);
    }

    /** A Kafka record as bytes. */
    public record EncodedRecord(String topic, byte[] key, byte[] value, Headers headers, long timestampMs) {
    }

    /** The topics carrying a stream (internal topics first, then sink topics); empty for source streams. */
    public List<String> topicsOf(String streamId) {
        return compiled.streamTopics().getOrDefault(streamId, List.of());
    }

    /** The user topics read by sources. */
    public List<String> sourceTopics() {
        return compiled.sourceTopics();
    }

    /** The internal topics with their partition counts. */
    public Map<String, Integer> internalTopics() {
        return compiled.internalTopics();
    }

    /** The dead-letter topic. */
    public String deadLetterTopic() {
        return compiled.deadLetterTopic();
    }

    /**
     * Encodes a message of {@code streamId} as a record of each internal topic carrying it, keyed
     * for the computations reading that topic.
     *
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
     * Decodes a record of an internal topic of {@code streamId}.
     *
     * @throws IllegalArgumentException if the record is not a flow message of the stream
     */
    public Message decode(String streamId, String topic, byte[] key, byte[] value, Headers headers) {
        FlowHeaders.Metadata meta = FlowHeaders.read(headers);
        ComputationSpec reader = readerOf(streamId, topic);
        KeyCodec kc = reader == null ? KeyCodec.of(List.of(), streamId) : KeyCodec.of(reader.groupBySchema(), reader.id());
        GenericRecord payload = new AvroCodec(schemaOf(streamId)).decode(value);
        GenericRecord k = kc.decode(key);
        return new io.flowkafka.internal.processor.FlowMessage(meta.messageId(), meta.eventTimestamp(),
                meta.systemTimestamp(), streamId, k, payload, meta.parents());
    }

    /** The state store name of a computation. */
    public String stateStoreName(String computationId) {
        computation(computationId);
        return KeyStates.storeName(computationId);
    }

    /** The status topic, where each task reports its completion ({@code key = "<computation>/<partition>"}). */
    public String statusTopic() {
        return compiled.statusTopic();
    }

    /** The names of a computation's two timer stores: {timers, holds}. */
    public List<String> timerStoreNames(String computationId) {
        return List.of(io.flowkafka.internal.timers.TimerStore.timersStoreName(computationId),
                io.flowkafka.internal.timers.TimerStore.holdsStoreName(computationId));
    }

    /**
     * The pending timers of a computation in its timer stores, per timer stream in spec order and
     * in trigger order within a stream (the order they fire in). Reads only.
     *
     * @throws IllegalArgumentException if the computation is unknown or has no timer streams
     */
    public List<io.flowkafka.api.Timer> pendingTimers(String computationId, KeyValueStore<Bytes, byte[]> timers,
            KeyValueStore<Bytes, byte[]> holds) {
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
                out.add(new PendingTimerView(MessageId.of(t.messageId()), stream, kc.decode(t.encodedKey()),
                        t.triggerTs(), t.eventTs(), t.systemTs()));
            }
        }
        return out;
    }

    /** A pending timer as a {@link io.flowkafka.api.Timer}. */
    private record PendingTimerView(MessageId messageId, String streamId, GenericRecord key, long triggerTimestamp,
            long eventTimestamp, long systemTimestamp) implements io.flowkafka.api.Timer {
        @Override
        public MessageId getMessageId() {
            return messageId;
        }

        @Override
        public String getStreamId() {
            return streamId;
        }

        @Override
        public GenericRecord getKey() {
            return key;
        }

        @Override
        public long getTriggerTimestamp() {
            return triggerTimestamp;
        }

        @Override
        public long getEventTimestamp() {
            return eventTimestamp;
        }

        @Override
        public long getSystemTimestamp() {
            return systemTimestamp;
        }
    }

    /** The name of a computation's key-visitor coverage store ({@code key_visitor_states}). */
    public String keyVisitorStoreName(String computationId) {
        return io.flowkafka.internal.visitor.KeyVisitor.storeName(computationId);
    }

    /** The coverage of a key-visitor stream in a coverage store; null before the visitor's first step. */
    public io.flowkafka.avro.@Nullable KeyVisitorCoverage keyVisitorCoverage(KeyValueStore<Bytes, byte[]> store,
            String visitorStream) {
        return io.flowkafka.internal.visitor.KeyVisitor.coverage(store, visitorStream);
    }

    /** The key of {@code computationId} that a payload of its input {@code streamId} maps to. */
    public GenericRecord keyOf(String computationId, String streamId, GenericRecord payload) {
        ComputationSpec c = computation(computationId);
        KeyCodec kc = KeyCodec.of(c.groupBySchema(), c.id());
        return kc.extractor(c.groupBySchema(), schemaOf(streamId)).key(payload);
    }

    /** The store key of state {@code stateName} of {@code key} in the computation's store. */
    public Bytes stateStoreKey(String computationId, GenericRecord key, String stateName) {
        ComputationSpec c = computation(computationId);
        return KeyStates.storeKey(KeyCodec.of(c.groupBySchema(), c.id()).encode(key), stateName);
    }

    /** Decodes a state value with its declared Avro schema. */
    public Optional<GenericRecord> decodeState(String computationId, String stateName, byte @Nullable [] value) {
        if (value == null) {
            return Optional.empty();
        }
        StateSpec s = computation(computationId).states().get(stateName);
        if (s == null || s.schema() == null) {
            throw new IllegalArgumentException("computation '" + computationId + "' has no Avro state '" + stateName + "'");
        }
        return Optional.of(new AvroCodec(s.schema()).decode(value));
    }

    /** The Avro schema of a stream. */
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
