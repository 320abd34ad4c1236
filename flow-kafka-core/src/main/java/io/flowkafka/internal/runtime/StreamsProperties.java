package io.flowkafka.internal.runtime;

import io.flowkafka.internal.dlq.DeadLetterHandler;
import io.flowkafka.internal.dlq.RejectedOutputHandler;
import io.flowkafka.internal.dlq.RejectedOutputs;
import io.flowkafka.internal.source.PunctuatedSources;
import io.flowkafka.internal.source.RecordTimestampExtractor;
import io.flowkafka.runtime.FlowConfig;
import io.flowkafka.spec.PipelineSpec;
import java.util.List;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.StreamsConfig;

/**
 * The Kafka Streams properties of a pipeline: the user's, with flow-kafka's defaults and its own settings added,
 * and what the runtime reads back from them. The rule it keeps: a default never replaces a setting the user gave,
 * plain or with a client prefix; only {@code exactly_once_v2} runs.
 *
 * <p>Thread-safe: holds no state.
 */
public final class StreamsProperties {
    /**
     * {@code restore.consumer.fetch.max.wait.ms} unless the user sets {@code fetch.max.wait.ms} for the consumers
     * (with or without a prefix): how long the restore consumer's fetch of a caught-up changelog waits for data.
     */
    public static final String RESTORE_FETCH_MAX_WAIT_MS = "50";

    /**
     * {@code producer.batch.size} unless the user sets {@code batch.size} (plain or with the {@code producer.}
     * prefix): 256 KiB instead of Kafka's 16 KiB. At each commit the stores' write-back caches hand their
     * changed rows to the producer at once, thousands per changelog partition; in 16 KiB batches the broker's
     * per-batch work dominated (benchmarks/RESULTS.md). At start, {@link ProducerBatchSize} halves it (not below
     * Kafka's 16 KiB) until two batches of every partition a stream thread may write fit in {@code buffer.memory}.
     */
    public static final String PRODUCER_BATCH_SIZE = "262144";

    /**
     * {@code producer.compression.type} unless the user sets {@code compression.type} (plain or with the
     * {@code producer.} prefix): changelog rows are small and alike, so lz4 batches are several times smaller,
     * for less broker work and less to read back on restore; any Kafka client reads them.
     */
    public static final String PRODUCER_COMPRESSION_TYPE = "lz4";

    /**
     * {@code poll.ms} unless the user sets it, when a computation reads a punctuated source (such as static tables):
     * how long the stream thread's poll waits for input that such a source never brings. At Kafka's 100 ms the thread
     * idled up to 100 ms per loop between the source's punctuations; a poll of input that comes returns at once either
     * way, and an idle thread wakes up to 100 times a second.
     */
    public static final String PUNCTUATED_SOURCE_POLL_MS = "10";

    private StreamsProperties() {
    }

    /** The properties the runtime runs {@code spec} with: {@code user}'s, with the defaults and {@code dlq} added. */
    public static Properties of(PipelineSpec spec, Properties user, String dlq, FlowConfig config) {
        Properties p = copy(user);
        p.putIfAbsent(StreamsConfig.APPLICATION_ID_CONFIG,
                config.getString(FlowConfig.APPLICATION_ID_PREFIX_CONFIG) + spec.name());
        p.putIfAbsent(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
        p.putIfAbsent(StreamsConfig.DEFAULT_KEY_SERDE_CLASS_CONFIG, Serdes.ByteArraySerde.class.getName());
        p.putIfAbsent(StreamsConfig.DEFAULT_VALUE_SERDE_CLASS_CONFIG, Serdes.ByteArraySerde.class.getName());
        p.putIfAbsent(StreamsConfig.PROCESSING_EXCEPTION_HANDLER_CLASS_CONFIG, DeadLetterHandler.class.getName());
        p.putIfAbsent("processing.exception.handler.global.enabled", "true");
        // a record without a valid timestamp becomes a dead letter instead of failing the stream thread
        p.putIfAbsent(StreamsConfig.DEFAULT_TIMESTAMP_EXTRACTOR_CLASS_CONFIG, RecordTimestampExtractor.class.getName());
        // an output its topic rejects for good: remembered, so the replayed input that produces it is a dead letter
        if (!p.containsKey(StreamsConfig.PRODUCTION_EXCEPTION_HANDLER_CLASS_CONFIG)
                && !p.containsKey(StreamsConfig.DEFAULT_PRODUCTION_EXCEPTION_HANDLER_CLASS_CONFIG)) {
            p.put(StreamsConfig.PRODUCTION_EXCEPTION_HANDLER_CLASS_CONFIG, RejectedOutputHandler.class.getName());
        }
        p.put(RejectedOutputs.CONFIG, new RejectedOutputs());
        String fetchWait = ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG;
        if (!p.containsKey(fetchWait) && !p.containsKey(StreamsConfig.consumerPrefix(fetchWait))
                && !p.containsKey(StreamsConfig.restoreConsumerPrefix(fetchWait))) {
            // The restore consumer's fetch of a caught-up (e.g. empty) changelog long-polls the broker for
            // fetch.max.wait.ms (500 ms), and the broker answers the next request on that connection (the offset
            // lookup of the next tasks' changelogs at start or after a rebalance) only after it: a start of
            // 4 tasks waited ~0.4 s for nothing. Restore fetches with data return at once either way.
            p.put(StreamsConfig.restoreConsumerPrefix(fetchWait), RESTORE_FETCH_MAX_WAIT_MS);
        }
        if (readsPunctuatedSource(spec)) {
            p.putIfAbsent(StreamsConfig.POLL_MS_CONFIG, PUNCTUATED_SOURCE_POLL_MS);
        }
        // Kafka Streams keeps state in changelog topics: its producers' defaults are set for that traffic
        putProducerDefault(p, ProducerConfig.BATCH_SIZE_CONFIG, PRODUCER_BATCH_SIZE);
        putProducerDefault(p, ProducerConfig.COMPRESSION_TYPE_CONFIG, PRODUCER_COMPRESSION_TYPE);
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

    private static boolean readsPunctuatedSource(PipelineSpec spec) {
        return spec.computations().values().stream()
                .anyMatch(c -> c.sourceStreams().stream().anyMatch(PunctuatedSources::is));
    }

    /**
     * Rejects a {@code processing.guarantee} other than {@code exactly_once_v2}.
     *
     * @throws ConfigException naming the setting and the fix
     */
    public static void requireExactlyOnce(Properties p) {
        Object guarantee = p.get(StreamsConfig.PROCESSING_GUARANTEE_CONFIG);
        if (!StreamsConfig.EXACTLY_ONCE_V2.equals(String.valueOf(guarantee).trim())) {
            throw new ConfigException(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, guarantee,
                    "flow-kafka runs every computation on " + StreamsConfig.EXACTLY_ONCE_V2 + ", whatever its "
                            + "processing_mode: Kafka Streams' at_least_once would let state writes run ahead of "
                            + "committed offsets. Remove processing.guarantee from the properties, and choose "
                            + "processing_mode per Transform computation in the spec");
        }
    }

    /**
     * Whether Kafka Streams runs the streams group protocol, under which it creates its main consumer
     * itself (no source partition can be paused: no drain, no watermark alignment).
     */
    public static boolean streamsGroupProtocol(Properties p) {
        return "streams".equalsIgnoreCase(String.valueOf(p.get(StreamsConfig.GROUP_PROTOCOL_CONFIG)).trim());
    }

    /**
     * Whether a close may leave the consumer group as far as {@code p} says: yes, unless it configures static
     * membership ({@code group.instance.id}, plain or with a consumer prefix, not blank).
     */
    public static boolean leavesGroupOnClose(Properties p) {
        String key = ConsumerConfig.GROUP_INSTANCE_ID_CONFIG;
        for (String k : List.of(key, StreamsConfig.consumerPrefix(key), StreamsConfig.mainConsumerPrefix(key))) {
            Object v = p.get(k);
            if (v != null && !v.toString().isBlank()) {
                return false;
            }
        }
        return true;
    }

    /** {@code commit.interval.ms}, or 100 (Kafka Streams' exactly-once default) if unset or not a number. */
    public static long commitIntervalMs(Properties p) {
        Object v = p.get(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG);
        try {
            return v == null ? 100 : Long.parseLong(v.toString().trim());
        } catch (NumberFormatException e) {
            return 100;
        }
    }

    /** A copy of {@code p}, entries only (no defaults). */
    public static Properties copy(Properties p) {
        Properties c = new Properties();
        c.putAll(p);
        return c;
    }

    /** Sets {@code producer.<key>} unless the user gives {@code key} plain or with the {@code producer.} prefix. */
    private static void putProducerDefault(Properties p, String key, String value) {
        if (!p.containsKey(key) && !p.containsKey(StreamsConfig.producerPrefix(key))) {
            p.put(StreamsConfig.producerPrefix(key), value);
        }
    }
}
