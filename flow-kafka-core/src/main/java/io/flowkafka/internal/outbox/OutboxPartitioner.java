package io.flowkafka.internal.outbox;

import java.nio.ByteBuffer;
import java.util.Optional;
import java.util.Set;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.streams.processor.StreamPartitioner;

/**
 * Sends an outbox record to the partition of the task that wrote it (header
 * {@value OutboxService#PARTITION_HEADER}), so one outbox partition holds one task's messages in
 * the order it wrote them. Stateless and thread-safe.
 */
public final class OutboxPartitioner implements StreamPartitioner<byte[], byte[]> {
    /** The shared instance. */
    public static final OutboxPartitioner INSTANCE = new OutboxPartitioner();

    @Override
    public Optional<Set<Integer>> partitions(String topic, byte[] key, byte[] value, Headers headers, int numPartitions) {
        Header h = headers.lastHeader(OutboxService.PARTITION_HEADER);
        if (h == null) {
            throw new IllegalStateException("outbox record for " + topic + " lacks header " + OutboxService.PARTITION_HEADER);
        }
        return Optional.of(Set.of(Math.floorMod(ByteBuffer.wrap(h.value()).getInt(), numPartitions)));
    }

    @Override
    public Optional<Set<Integer>> partitions(String topic, byte[] key, byte[] value, int numPartitions) {
        throw new UnsupportedOperationException("outbox records are partitioned by their headers");
    }
}
