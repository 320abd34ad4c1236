package io.flowkafka.internal.drain;

import io.flowkafka.internal.message.FlowHeaders;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListConsumerGroupOffsetsOptions;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * Looks for data records between computations that the pipeline has not consumed yet: for each
 * partition of the internal stream topics, a {@code read_committed} consumer of its own (no group)
 * reads from the consumer group's committed offset up to the last stable offset and stops at the
 * first record that is not a control record ({@link FlowHeaders#isControl}). Comparing offsets
 * alone cannot tell: transaction markers and the watermark control records every task writes
 * periodically lie after the committed offset too.
 *
 * <p>Threading: one thread at a time (it owns a consumer).
 */
public final class InternalBacklog implements AutoCloseable {
    private static final Duration MAX_POLL = Duration.ofMillis(100);

    /**
     * What one look found.
     *
     * @param withData partitions holding a committed data record after the group's offset
     * @param unread partitions not read to their end within the bound (nothing known about them)
     */
    public record Look(Set<TopicPartition> withData, Set<TopicPartition> unread) {
        /** Whether every partition was read to its end and none holds a data record. */
        public boolean empty() {
            return withData.isEmpty() && unread.isEmpty();
        }
    }

    private final Admin admin;
    private final String groupId;
    private final List<TopicPartition> partitions = new ArrayList<>();
    private final KafkaConsumer<byte[], byte[]> consumer;

    /**
     * @param admin an admin client of the pipeline's cluster (not closed here)
     * @param groupId the pipeline's consumer group ({@code application.id})
     * @param topics the internal topics read by computations, with partition counts
     * @param clientConfig consumer settings of the pipeline's cluster (bootstrap servers, security);
     *     group, isolation and deserializers are set here
     */
    public InternalBacklog(Admin admin, String groupId, Map<String, Integer> topics, Map<String, Object> clientConfig) {
        this.admin = admin;
        this.groupId = groupId;
        topics.forEach((topic, n) -> {
            for (int p = 0; p < n; p++) {
                partitions.add(new TopicPartition(topic, p));
            }
        });
        Map<String, Object> config = new HashMap<>(clientConfig);
        config.remove(ConsumerConfig.GROUP_ID_CONFIG);
        config.remove(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG);
        config.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        config.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        config.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        config.put(ConsumerConfig.CLIENT_ID_CONFIG, groupId + "-drain-check");
        this.consumer = new KafkaConsumer<>(config, new ByteArrayDeserializer(), new ByteArrayDeserializer());
    }

    /**
     * The group's committed offsets, waiting for offsets of transactions still completing
     * ({@code require_stable}).
     *
     * @throws java.util.concurrent.TimeoutException if the group coordinator does not answer in time
     */
    public Map<TopicPartition, OffsetAndMetadata> committed(Duration bound)
            throws InterruptedException, ExecutionException, java.util.concurrent.TimeoutException {
        return admin.listConsumerGroupOffsets(groupId, new ListConsumerGroupOffsetsOptions().requireStable(true))
                .partitionsToOffsetAndMetadata().get(Math.max(1, bound.toMillis()), TimeUnit.MILLISECONDS);
    }

    /**
     * Reads each internal partition from {@code committed} (or its beginning if the group has no
     * offset for it) to its last stable offset, taken now, until its first data record.
     *
     * @param committed the group's offsets, read before this call (a later commit only makes the
     *     answer more cautious: a record committed after the offsets were read but before the end
     *     offsets were taken counts as pending)
     */
    public Look look(Map<TopicPartition, OffsetAndMetadata> committed, Duration bound) {
        long deadline = System.nanoTime() + bound.toNanos();
        if (partitions.isEmpty()) {
            return new Look(Set.of(), Set.of());
        }
        Map<TopicPartition, Long> end;
        try {
            end = consumer.endOffsets(partitions, bound);
        } catch (TimeoutException e) {
            return new Look(Set.of(), Set.copyOf(partitions));
        }
        Map<TopicPartition, Long> from = new HashMap<>();
        List<TopicPartition> noOffset = new ArrayList<>();
        for (TopicPartition tp : partitions) {
            OffsetAndMetadata om = committed.get(tp);
            if (om == null) {
                noOffset.add(tp);
            } else if (om.offset() < end.getOrDefault(tp, 0L)) {
                from.put(tp, om.offset());
            }
        }
        if (!noOffset.isEmpty()) {
            try {
                consumer.beginningOffsets(noOffset, remaining(deadline)).forEach((tp, start) -> {
                    if (start < end.getOrDefault(tp, 0L)) {
                        from.put(tp, start);
                    }
                });
            } catch (TimeoutException e) {
                return new Look(Set.of(), Set.copyOf(partitions));
            }
        }
        Set<TopicPartition> open = new HashSet<>(from.keySet());
        Set<TopicPartition> withData = new HashSet<>();
        consumer.assign(open);
        from.forEach(consumer::seek);
        while (!open.isEmpty() && System.nanoTime() < deadline) {
            ConsumerRecords<byte[], byte[]> records = consumer.poll(min(remaining(deadline), MAX_POLL));
            for (TopicPartition tp : records.partitions()) {
                if (!open.contains(tp)) {
                    continue;
                }
                long stop = end.get(tp);
                for (ConsumerRecord<byte[], byte[]> r : records.records(tp)) {
                    if (r.offset() >= stop) {
                        break;
                    }
                    if (!FlowHeaders.isControl(r.headers())) {
                        withData.add(tp);
                        open.remove(tp);
                        break;
                    }
                }
            }
            List<TopicPartition> done = new ArrayList<>();
            for (TopicPartition tp : open) {
                if (positionNow(tp) >= end.get(tp)) {
                    done.add(tp);
                }
            }
            open.removeAll(done);
            List<TopicPartition> finished = new ArrayList<>(consumer.assignment());
            finished.removeAll(open);
            consumer.pause(finished);
        }
        consumer.unsubscribe();
        return new Look(withData, open);
    }

    /** The consumer's position, or -1 while it is being reset (e.g. after records were purged under it). */
    private long positionNow(TopicPartition tp) {
        try {
            return consumer.position(tp, Duration.ZERO);
        } catch (TimeoutException e) {
            return -1;
        }
    }

    private static Duration remaining(long deadline) {
        return Duration.ofNanos(Math.max(0, deadline - System.nanoTime()));
    }

    private static Duration min(Duration a, Duration b) {
        return a.compareTo(b) < 0 ? a : b;
    }

    @Override
    public void close() {
        consumer.close(org.apache.kafka.clients.consumer.CloseOptions.timeout(Duration.ofSeconds(5)));
    }
}
