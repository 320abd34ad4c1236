package io.flowkafka.internal.watermarks;

import io.flowkafka.internal.message.FlowHeaders;
import io.flowkafka.internal.partition.RangePartitioner;
import java.util.HashSet;
import java.util.Optional;
import java.util.Set;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.streams.processor.StreamPartitioner;

/**
 * Range partitioning for data records and multicast for control records (KIP-837): a record with
 * the {@code flow.control} header goes to every partition of the topic. Stateless, thread-safe.
 */
public final class MulticastRangePartitioner implements StreamPartitioner<byte[], byte[]> {
    /** The shared instance. */
    public static final MulticastRangePartitioner INSTANCE = new MulticastRangePartitioner();

    @Override
    public Optional<Set<Integer>> partitions(String topic, byte[] key, byte[] value, int numPartitions) {
        return Optional.of(Set.of(RangePartitioner.partition(RangePartitioner.hashOf(key), numPartitions)));
    }

    @Override
    public Optional<Set<Integer>> partitions(String topic, byte[] key, byte[] value, Headers headers, int numPartitions) {
        if (headers != null && FlowHeaders.isControl(headers)) {
            Set<Integer> all = new HashSet<>(numPartitions * 2);
            for (int i = 0; i < numPartitions; i++) {
                all.add(i);
            }
            return Optional.of(all);
        }
        return partitions(topic, key, value, numPartitions);
    }
}
