package io.flowkafka.internal.partition;

import java.nio.ByteBuffer;
import java.util.Optional;
import java.util.Set;
import org.apache.kafka.streams.processor.StreamPartitioner;

/**
 * Sends a record to the partition written in its key (4 bytes, big-endian): a task writes its
 * control heartbeat to its own partition of its control topic. Stateless and thread-safe.
 */
public final class OwnPartitioner implements StreamPartitioner<byte[], byte[]> {
    /** The shared instance. */
    public static final OwnPartitioner INSTANCE = new OwnPartitioner();

    /** The key that sends a record to {@code partition}. */
    public static byte[] keyOf(int partition) {
        return ByteBuffer.allocate(4).putInt(partition).array();
    }

    @Override
    public Optional<Set<Integer>> partitions(String topic, byte[] key, byte[] value, int numPartitions) {
        return Optional.of(Set.of(Math.floorMod(ByteBuffer.wrap(key).getInt(), numPartitions)));
    }
}
