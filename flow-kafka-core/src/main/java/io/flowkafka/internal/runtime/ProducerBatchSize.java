package io.flowkafka.internal.runtime;

import io.flowkafka.internal.compiler.CompiledPipeline;
import io.flowkafka.internal.dlq.RecordSizeLimit;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TopologyDescription;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Fits flow-kafka's default {@code producer.batch.size} to the topology it runs.
 *
 * <p>A Kafka producer takes a whole {@code batch.size} of its {@code buffer.memory} for every batch it opens, one per
 * partition it writes, and gives it back only when the broker acknowledges the batch. At each commit a stream
 * thread's producer writes to every changelog partition of its tasks (their stores' changed rows) and to every
 * partition of its output streams (data, and the control records that carry watermarks to each partition). When
 * those partitions' open and in-flight batches do not fit in {@code buffer.memory}, {@code send()} blocks the
 * stream thread until acknowledgements free memory. So the default shrinks, in powers of two and not below
 * Kafka's own 16 KiB, until two batches (one open, one in flight) of each such partition fit.
 *
 * <p>The count is an estimate for one instance that runs all tasks: the changelog partitions of all its tasks
 * (every store counted, logged or not) spread evenly over its {@code num.stream.threads} (Kafka Streams balances
 * task counts, not stores), plus every partition of every topic its sub-topologies write. More instances leave
 * each thread fewer partitions. Two batches per partition is a floor, not a bound: the producer may have up to
 * {@code max.in.flight.requests.per.connection} requests in flight per broker.
 */
public final class ProducerBatchSize {
    private static final Logger LOG = LoggerFactory.getLogger(ProducerBatchSize.class);

    /** Kafka's default {@code batch.size}, the floor. */
    static final int KAFKA_DEFAULT = 16 * 1024;

    private ProducerBatchSize() {
    }

    /**
     * Lowers flow-kafka's default {@code producer.batch.size} in {@code streamsProps} (not a user's) so that the
     * batches of every partition a stream thread may write at once fit in its producer's {@code buffer.memory};
     * describes the topics the topology reads and writes that are not its own with {@code admin}.
     */
    public static void fitDefault(Admin admin, Properties streamsProps, Properties userProps, CompiledPipeline compiled,
            String pipeline) {
        String key = StreamsConfig.producerPrefix(ProducerConfig.BATCH_SIZE_CONFIG);
        String preferred = StreamsProperties.PRODUCER_BATCH_SIZE;
        if (!preferred.equals(streamsProps.get(key)) || userProps.containsKey(key)) {
            // the user chose it (plain batch.size leaves no prefixed default)
            return;
        }
        var description = compiled.topology().describe();
        Map<String, Integer> partitions = new HashMap<>(compiled.internalTopics());
        Set<String> external = new HashSet<>();
        for (var sub : description.subtopologies()) {
            for (var node : sub.nodes()) {
                if (node instanceof TopologyDescription.Source source && source.topicSet() != null) {
                    external.addAll(source.topicSet());
                } else if (node instanceof TopologyDescription.Sink sink && sink.topic() != null) {
                    external.add(sink.topic());
                }
            }
        }
        external.removeAll(partitions.keySet());
        if (!external.isEmpty()) {
            try {
                admin.describeTopics(external).topicNameValues().forEach((topic, future) -> {
                    try {
                        partitions.put(topic, future.get(60, TimeUnit.SECONDS).partitions().size());
                    } catch (Exception e) {
                        // a topic that cannot be described (a sink topic created later) counts as one partition
                    }
                });
            } catch (RuntimeException e) {
                LOG.debug("pipeline '{}': topics not described for the producer batch size: {}", pipeline, e.toString());
            }
        }
        int threads = Integer.parseInt(String.valueOf(streamsProps.getOrDefault(StreamsConfig.NUM_STREAM_THREADS_CONFIG,
                "1")).trim());
        long bufferMemory = RecordSizeLimit.producerSetting(streamsProps, ProducerConfig.BUFFER_MEMORY_CONFIG,
                32L * 1024 * 1024);
        int perThread = partitionsPerThread(description, partitions, threads);
        int size = fit(Integer.parseInt(preferred), perThread, bufferMemory);
        if (size < Integer.parseInt(preferred)) {
            streamsProps.put(key, String.valueOf(size));
            LOG.info("pipeline '{}': producer.batch.size {} instead of {}: a stream thread may write {} partitions at "
                    + "once (changelogs and output streams), and two batches of each must fit in buffer.memory ({} "
                    + "bytes); set producer.batch.size or producer.buffer.memory to choose", pipeline, size,
                    preferred, perThread, bufferMemory);
        }
    }

    /**
     * The partitions one stream thread's producer may write to at once.
     *
     * @param partitions partition count of each topic, by name; topics not in it (and pattern sources) count as
     *     one partition
     */
    static int partitionsPerThread(TopologyDescription topology, Map<String, Integer> partitions, int threads) {
        long changelogPartitions = 0;
        Set<String> written = new HashSet<>();
        for (TopologyDescription.Subtopology sub : topology.subtopologies()) {
            int tasks = 1;
            Set<String> stores = new HashSet<>();
            for (TopologyDescription.Node node : sub.nodes()) {
                if (node instanceof TopologyDescription.Source source && source.topicSet() != null) {
                    for (String topic : source.topicSet()) {
                        tasks = Math.max(tasks, partitions.getOrDefault(topic, 1));
                    }
                } else if (node instanceof TopologyDescription.Processor processor) {
                    stores.addAll(processor.stores());
                } else if (node instanceof TopologyDescription.Sink sink && sink.topic() != null) {
                    written.add(sink.topic());
                }
            }
            changelogPartitions += (long) tasks * stores.size();
        }
        long perThread = (changelogPartitions + Math.max(1, threads) - 1) / Math.max(1, threads);
        for (String topic : written) {
            perThread += partitions.getOrDefault(topic, 1);
        }
        return (int) Math.min(Integer.MAX_VALUE, perThread);
    }

    /**
     * The largest power of two at most {@code preferred} (and at least {@link #KAFKA_DEFAULT}) such that two batches
     * of each of {@code partitions} partitions fit in {@code bufferMemory}.
     */
    static int fit(int preferred, int partitions, long bufferMemory) {
        long size = Integer.highestOneBit(Math.max(preferred, KAFKA_DEFAULT));
        while (size > KAFKA_DEFAULT && 2L * partitions * size > bufferMemory) {
            size /= 2;
        }
        return (int) size;
    }
}
