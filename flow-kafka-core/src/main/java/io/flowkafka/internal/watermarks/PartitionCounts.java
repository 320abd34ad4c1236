package io.flowkafka.internal.watermarks;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The number of partitions (tasks) of each computation, which is the number of producers a
 * consumer of its streams waits for. Computations with inputs have their
 * {@code desired_partition_count}; a source computation has as many tasks as its source topics have
 * partitions, known only once the runtime has described them, so the runtime fills them in before
 * Kafka Streams starts. On {@code TopologyTestDriver}, which runs everything as one task, every
 * count is 1.
 *
 * <p>Thread-safe: filled by the runtime thread, read by stream threads.
 */
public final class PartitionCounts {
    private final Map<String, Integer> counts = new ConcurrentHashMap<>();
    private final boolean singleTask;

    public PartitionCounts(boolean singleTask) {
        this.singleTask = singleTask;
    }

    /** Sets a computation's partition count. */
    public void put(String computation, int partitions) {
        counts.put(computation, partitions);
    }

    /** Whether every computation runs as a single task (TopologyTestDriver). */
    public boolean singleTask() {
        return singleTask;
    }

    /**
     * The partition count of a computation.
     *
     * @throws IllegalStateException if it is not known yet
     */
    public int of(String computation) {
        if (singleTask) {
            return 1;
        }
        Integer n = counts.get(computation);
        if (n == null) {
            throw new IllegalStateException("the partition count of source computation '" + computation
                    + "' is not known yet: start the pipeline with FlowRuntime.start(), or call "
                    + "FlowRuntime.prepareTopics() before running its topology in your own KafkaStreams");
        }
        return n;
    }
}
