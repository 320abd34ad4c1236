package io.flowkafka.cli;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.ListOffsetsResult.ListOffsetsResultInfo;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Spec;

/**
 * {@code flow-kafka status}: what a pipeline is doing, from the cluster alone (no instance needs to answer): its
 * running instances (the members of its group: a consumer group, or a streams group with
 * {@code group.protocol=streams}), the lag of every topic it reads (committed offset to end
 * offset, per partition), the backlog of each outbox sink's delivery group, and the records in its dead-letter topic.
 * A pipeline with neither members nor committed offsets is not found (exit 3).
 */
@Command(name = "status", description = "Show a pipeline's instances, input lag, outbox backlog and dead letters.")
final class StatusCommand implements Callable<Integer> {
    private static final Comparator<TopicPartition> BY_TOPIC_AND_PARTITION =
            Comparator.comparing(TopicPartition::topic).thenComparingInt(TopicPartition::partition);

    @Spec
    picocli.CommandLine.Model.CommandSpec command;

    @Mixin
    ClusterOptions cluster;

    @Override
    public Integer call() throws Exception {
        PrintWriter out = command.commandLine().getOut();
        String app = cluster.applicationId();
        try (Admin admin = cluster.admin()) {
            PipelineGroup group = PipelineGroup.describe(admin, app);
            Map<TopicPartition, OffsetAndMetadata> committed = group == null ? Map.of() : committed(admin, app);
            if (group == null || group.members().isEmpty() && committed.isEmpty()) {
                command.commandLine().getErr().println("flow-kafka status: no pipeline '" + cluster.pipeline
                        + "' on " + cluster.bootstrapServers + ": its group '" + app + "' has no instances "
                        + "and no committed offsets (check --pipeline and --application-id-prefix)");
                return FlowKafkaCli.NOT_FOUND;
            }
            out.println("pipeline " + cluster.pipeline + " (application.id " + app + ") on "
                    + cluster.bootstrapServers);
            out.println("instances: " + group.instances() + " (" + (group.streams() ? "streams group " : "group ")
                    + group.state() + "; " + group.members().size() + " member(s), one per stream thread)");
            for (PipelineGroup.Member m : group.members()) {
                out.println("  " + m.clientId() + " " + m.host() + "  " + m.assigned());
            }
            printLag(out, admin, "input", committed);
            for (String outbox : outboxGroups(admin, app)) {
                Map<TopicPartition, OffsetAndMetadata> sinkCommitted = committed(admin, outbox);
                long lag = lag(admin, sinkCommitted).values().stream().mapToLong(Long::longValue).sum();
                out.println("sink delivery " + outbox.substring((app + ".outbox.").length()) + ": backlog " + lag
                        + " record(s) (group " + outbox + ")");
            }
            String dlq = cluster.topicNamePrefix() + "dlq";
            if (admin.listTopics().names().get().contains(dlq)) {
                out.println("dead letters: " + records(admin, dlq) + " record(s) in " + dlq);
            } else {
                out.println("dead letters: none (" + dlq + " does not exist)");
            }
        }
        out.flush();
        return FlowKafkaCli.OK;
    }

    private static Map<TopicPartition, OffsetAndMetadata> committed(Admin admin, String group) throws Exception {
        Map<TopicPartition, OffsetAndMetadata> offsets = admin.listConsumerGroupOffsets(group)
                .partitionsToOffsetAndMetadata().get();
        Map<TopicPartition, OffsetAndMetadata> out = new TreeMap<>(BY_TOPIC_AND_PARTITION);
        offsets.forEach((tp, o) -> {
            if (o != null) {
                out.put(tp, o);
            }
        });
        return out;
    }

    private static Map<TopicPartition, Long> lag(Admin admin, Map<TopicPartition, OffsetAndMetadata> committed)
            throws Exception {
        Map<TopicPartition, ListOffsetsResultInfo> ends = admin.listOffsets(committed.keySet().stream()
                .collect(Collectors.toMap(tp -> tp, tp -> OffsetSpec.latest()))).all().get();
        Map<TopicPartition, Long> lag = new TreeMap<>(BY_TOPIC_AND_PARTITION);
        committed.forEach((tp, o) -> lag.put(tp, Math.max(0, ends.get(tp).offset() - o.offset())));
        return lag;
    }

    private static void printLag(PrintWriter out, Admin admin, String what,
            Map<TopicPartition, OffsetAndMetadata> committed) throws Exception {
        Map<TopicPartition, Long> lag = lag(admin, committed);
        out.println(what + " (committed offset, lag):");
        Map<String, List<TopicPartition>> byTopic = new TreeMap<>();
        lag.keySet().forEach(tp -> byTopic.computeIfAbsent(tp.topic(), t -> new ArrayList<>()).add(tp));
        long total = 0;
        for (Map.Entry<String, List<TopicPartition>> e : byTopic.entrySet()) {
            StringBuilder line = new StringBuilder("  " + e.getKey() + ":");
            for (TopicPartition tp : e.getValue()) {
                line.append(" p").append(tp.partition()).append(" ").append(committed.get(tp).offset()).append(" (")
                        .append(lag.get(tp)).append(")");
                total += lag.get(tp);
            }
            out.println(line);
        }
        out.println("  total lag: " + total + " record(s) over " + lag.size() + " partition(s)");
    }

    private static List<String> outboxGroups(Admin admin, String app) throws Exception {
        return PipelineGroup.list(admin, g -> g.startsWith(app + ".outbox.")).stream().map(GroupListing::groupId)
                .toList();
    }

    static long records(Admin admin, String topic) throws Exception {
        List<TopicPartition> partitions = admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic)
                .partitions().stream().map(p -> new TopicPartition(topic, p.partition())).toList();
        var earliest = admin.listOffsets(partitions.stream().collect(Collectors.toMap(tp -> tp,
                tp -> OffsetSpec.earliest()))).all().get();
        var latest = admin.listOffsets(partitions.stream().collect(Collectors.toMap(tp -> tp,
                tp -> OffsetSpec.latest()))).all().get();
        return partitions.stream().mapToLong(tp -> latest.get(tp).offset() - earliest.get(tp).offset()).sum();
    }
}
