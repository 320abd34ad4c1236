package io.flowkafka.internal.source;

import io.flowkafka.api.FlowException;
import io.flowkafka.spec.ComputationSpec;
import io.flowkafka.spec.PipelineSpec;
import io.flowkafka.spec.SourceSpec;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListConsumerGroupOffsetsSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.GroupNotEmptyException;
import org.apache.kafka.common.errors.RebalanceInProgressException;
import org.apache.kafka.common.errors.UnknownMemberIdException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Seeds a pipeline's consumer group from another group, for Kafka sources with
 * {@code use_consumer_group_offset: true} and a {@code group_id}.
 *
 * <p>Model: Flow reads a Kafka source with the consumer group its spec names. Kafka Streams reads
 * every source of an application with one consumer group, the {@code application.id}, so
 * flow-kafka cannot read with the named group; instead it copies that group's committed offsets
 * once, before Kafka Streams starts, into the pipeline's group, for each source partition the
 * pipeline's group has no committed offset for. From then on the pipeline commits its own offsets
 * (in its transactions) and never looks at the named group again; the named group's offsets are
 * read, never changed. A partition the named group has no offset for starts at the source's
 * {@code starting_position}. A partition the pipeline already committed is never moved, so a
 * restart never goes back.
 *
 * <p>The copied offsets carry empty metadata (Kafka Streams keeps its own encoding there), and the
 * named group's leader epoch. If the pipeline's group is active (another instance of the
 * pipeline is running), Kafka refuses to change its offsets: the seeding is skipped with a
 * warning, since that instance seeded the group when it started.
 *
 * <p>Threading: called once by the runtime thread before Kafka Streams starts.
 */
public final class GroupOffsetSeeder {
    private static final Logger LOG = LoggerFactory.getLogger(GroupOffsetSeeder.class);

    private GroupOffsetSeeder() {
    }

    /**
     * Copies offsets into {@code applicationId}'s group where it has none.
     *
     * @param streamsProtocol whether the pipeline runs with {@code group.protocol=streams}
     * @param described the source topics of the pipeline, described
     * @return the offsets written, by partition (empty when nothing was seeded)
     * @throws FlowException if the offsets cannot be read or written (other than the group being
     *     active), naming the groups and the cause
     */
    public static Map<TopicPartition, OffsetAndMetadata> seed(Admin admin, PipelineSpec spec, String applicationId,
            boolean streamsProtocol, Map<String, TopicDescription> described) {
        Map<String, Map<TopicPartition, String>> byGroup = new LinkedHashMap<>(); // group -> partition -> stream
        for (ComputationSpec c : spec.computations().values()) {
            for (SourceSpec source : c.sourceStreams()) {
                String group = KafkaSourceParameters.seedGroup(source);
                if (group == null) {
                    continue;
                }
                if (group.equals(applicationId)) {
                    LOG.info("pipeline '{}', source '{}': group_id '{}' is the pipeline's own consumer group; nothing "
                            + "to seed", spec.name(), source.streamId(), group);
                    continue;
                }
                for (String topic : KafkaSourceParameters.topics(source)) {
                    TopicDescription d = described.get(topic);
                    if (d == null) {
                        continue;
                    }
                    d.partitions().forEach(p -> byGroup.computeIfAbsent(group, g -> new LinkedHashMap<>())
                            .put(new TopicPartition(topic, p.partition()), source.streamId()));
                }
            }
        }
        if (byGroup.isEmpty()) {
            return Map.of();
        }
        Map<TopicPartition, OffsetAndMetadata> own = offsets(admin, applicationId, null, "the pipeline's own group");
        Map<TopicPartition, OffsetAndMetadata> seeds = new TreeMap<>(
                java.util.Comparator.comparing(TopicPartition::topic).thenComparingInt(TopicPartition::partition));
        for (Map.Entry<String, Map<TopicPartition, String>> e : byGroup.entrySet()) {
            Map<TopicPartition, String> wanted = new LinkedHashMap<>();
            e.getValue().forEach((tp, stream) -> {
                if (own.get(tp) == null) {
                    wanted.put(tp, stream);
                }
            });
            if (wanted.isEmpty()) {
                continue;
            }
            Map<TopicPartition, OffsetAndMetadata> theirs = offsets(admin, e.getKey(), wanted.keySet(),
                    "group_id '" + e.getKey() + "'");
            wanted.forEach((tp, stream) -> {
                OffsetAndMetadata om = theirs.get(tp);
                if (om != null) {
                    seeds.put(tp, new OffsetAndMetadata(om.offset(), om.leaderEpoch(), ""));
                } else {
                    LOG.info("pipeline '{}', source '{}': group '{}' has no committed offset for {}; it starts at "
                            + "its starting_position", spec.name(), stream, e.getKey(), tp);
                }
            });
        }
        if (seeds.isEmpty()) {
            return Map.of();
        }
        try {
            if (streamsProtocol) {
                admin.alterStreamsGroupOffsets(applicationId, seeds).all().get(60, TimeUnit.SECONDS);
            } else {
                admin.alterConsumerGroupOffsets(applicationId, seeds).all().get(60, TimeUnit.SECONDS);
            }
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof UnknownMemberIdException || cause instanceof GroupNotEmptyException
                    || cause instanceof RebalanceInProgressException) {
                LOG.warn("pipeline '{}': its consumer group '{}' is active (another instance runs the pipeline), so "
                        + "its offsets were not seeded from group_id; the running instance seeded them when it "
                        + "started: {}", spec.name(), applicationId, cause.toString());
                return Map.of();
            }
            throw failed(spec, applicationId, byGroup, cause);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw failed(spec, applicationId, byGroup, e);
        } catch (java.util.concurrent.TimeoutException e) {
            throw failed(spec, applicationId, byGroup, e);
        }
        LOG.info("pipeline '{}': seeded consumer group '{}' from {} for {} partition(s) it had no offset for: {}",
                spec.name(), applicationId, byGroup.keySet(), seeds.size(), seeds);
        return seeds;
    }

    private static Map<TopicPartition, OffsetAndMetadata> offsets(Admin admin, String group,
            java.util.@org.jspecify.annotations.Nullable Collection<TopicPartition> partitions, String what) {
        ListConsumerGroupOffsetsSpec request = new ListConsumerGroupOffsetsSpec();
        if (partitions != null) {
            request.topicPartitions(partitions);
        }
        try {
            Map<TopicPartition, OffsetAndMetadata> m = admin.listConsumerGroupOffsets(Map.of(group, request))
                    .partitionsToOffsetAndMetadata(group).get(60, TimeUnit.SECONDS);
            Map<TopicPartition, OffsetAndMetadata> out = new LinkedHashMap<>();
            m.forEach((tp, om) -> {
                if (om != null) {
                    out.put(tp, om);
                }
            });
            return out;
        } catch (ExecutionException e) {
            if (e.getCause() instanceof org.apache.kafka.common.errors.GroupIdNotFoundException) {
                return Map.of(); // a group that never committed
            }
            throw new FlowException("could not read the committed offsets of " + what + " ('" + group + "') to seed "
                    + "the pipeline's starting offsets: " + e.getCause() + "; check that the group exists and that the "
                    + "pipeline's principal may describe it (ACL DESCRIBE on the group)", e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new FlowException("interrupted while reading the committed offsets of " + what, e);
        } catch (java.util.concurrent.TimeoutException e) {
            throw new FlowException("timed out after 60 s reading the committed offsets of " + what + " ('" + group
                    + "')", e);
        }
    }

    private static FlowException failed(PipelineSpec spec, String applicationId,
            Map<String, Map<TopicPartition, String>> byGroup, Throwable cause) {
        return new FlowException("pipeline '" + spec.name() + "' could not seed its consumer group '" + applicationId
                + "' from " + byGroup.keySet() + " (use_consumer_group_offset): " + cause + "; check the ACLs (READ on "
                + "the group '" + applicationId + "') or remove use_consumer_group_offset", cause);
    }
}
