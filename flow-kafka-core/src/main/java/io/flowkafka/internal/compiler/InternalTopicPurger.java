package io.flowkafka.internal.compiler;

import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Deletes records of internal stream topics below the application's committed offsets, as Kafka
 * Streams does for its repartition topics. Under exactly-once the committed offsets only cover
 * records whose processing committed, so nothing still needed is deleted.
 *
 * <p>Threading: run by the runtime's maintenance thread only.
 */
public final class InternalTopicPurger implements Runnable {
    private static final Logger LOG = LoggerFactory.getLogger(InternalTopicPurger.class);
    private final Admin admin;
    private final String groupId;
    private final Set<String> topics;
    private final Map<TopicPartition, Long> purged = new HashMap<>();

    public InternalTopicPurger(Admin admin, String groupId, Set<String> topics) {
        this.admin = admin;
        this.groupId = groupId;
        this.topics = Set.copyOf(topics);
    }

    @Override
    public void run() {
        try {
            Map<TopicPartition, OffsetAndMetadata> committed = admin.listConsumerGroupOffsets(groupId)
                    .partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS);
            Map<TopicPartition, RecordsToDelete> delete = new HashMap<>();
            committed.forEach((tp, om) -> {
                if (om != null && topics.contains(tp.topic()) && om.offset() > purged.getOrDefault(tp, 0L)) {
                    delete.put(tp, RecordsToDelete.beforeOffset(om.offset()));
                }
            });
            if (!delete.isEmpty()) {
                admin.deleteRecords(delete).all().get(30, TimeUnit.SECONDS);
                delete.forEach((tp, r) -> purged.put(tp, r.beforeOffset()));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Exception e) {
            LOG.debug("purging internal topics of {} failed; will retry: {}", groupId, e.toString());
        }
    }
}
