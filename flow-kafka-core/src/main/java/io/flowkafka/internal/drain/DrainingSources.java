package io.flowkafka.internal.drain;

import io.flowkafka.internal.watermarks.PartitionCounts;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.common.TopicPartition;

/**
 * The source partitions the dynamic spec's per-computation {@code draining} keeps paused: every partition of every
 * source topic of each draining computation. Each main consumer pauses those it is assigned at its next poll and
 * resumes them once the computation no longer drains (through the same path as watermark alignment). Keeps the rule
 * that a poll does no more than a volatile read and a set lookup: the set is computed once per change of the
 * draining computations, not per poll.
 *
 * <p>Thread-safe: computed by whichever thread asks first after a change, read by stream threads.
 */
public final class DrainingSources {
    private final Map<String, List<String>> sourceTopicsByComputation;
    private final PartitionCounts partitionCounts;
    /** The draining computations the cached partitions are for, and those partitions. */
    private volatile Cached cached = new Cached(Set.of(), Set.of());

    private record Cached(Set<String> computations, Set<TopicPartition> partitions) {
    }

    /**
     * @param sourceTopicsByComputation each computation's source topics
     * @param partitionCounts each computation's partition count (a source computation's: its topics' largest)
     */
    public DrainingSources(Map<String, List<String>> sourceTopicsByComputation, PartitionCounts partitionCounts) {
        this.sourceTopicsByComputation = Map.copyOf(sourceTopicsByComputation);
        this.partitionCounts = partitionCounts;
    }

    /**
     * The partitions to keep paused for these draining computations.
     *
     * @param computations the computations whose {@code draining} is true now
     * @return every partition of their source topics (a topic with fewer partitions lists some that do not exist;
     *     a consumer pauses only what it is assigned)
     */
    public Set<TopicPartition> partitions(Set<String> computations) {
        Cached c = cached;
        if (c.computations() == computations || c.computations().equals(computations)) {
            return c.partitions();
        }
        Set<TopicPartition> out = new HashSet<>();
        for (String computation : computations) {
            List<String> topics = sourceTopicsByComputation.getOrDefault(computation, List.of());
            if (topics.isEmpty()) {
                continue;
            }
            int n = partitionCounts.of(computation);
            for (String topic : topics) {
                for (int p = 0; p < n; p++) {
                    out.add(new TopicPartition(topic, p));
                }
            }
        }
        Set<TopicPartition> partitions = Set.copyOf(out);
        cached = new Cached(computations, partitions);
        return partitions;
    }
}
