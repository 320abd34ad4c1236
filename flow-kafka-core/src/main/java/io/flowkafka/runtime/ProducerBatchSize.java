package io.flowkafka.runtime;

import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.streams.TopologyDescription;

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
final class ProducerBatchSize {

    /** Kafka's default {@code batch.size}, the floor. */
    static final int KAFKA_DEFAULT = 16 * 1024;

    private ProducerBatchSize() {
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
