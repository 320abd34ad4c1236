package io.flowkafka.cli;

import io.flowkafka.internal.dynamic.DynamicSpecTopic;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.Callable;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.common.GroupType;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code flow-kafka reset}: the analog of {@code kafka-streams-application-reset} for a pipeline, so it reprocesses
 * its sources from the start: deletes its consumer groups (the application's and its outbox delivery groups) and its
 * internal topics (Kafka Streams' {@code <application.id>-...-changelog/-repartition}, flow-kafka's
 * {@code <topic prefix><pipeline>.*} and {@code <application.id>.*}). Keeps the rules: a dry run unless
 * {@code --execute}; refuses (exit 4) while any instance runs; keeps the topics of a pipeline whose name extends
 * this one's; never deletes the dead-letter topic (unless {@code --include-dead-letters}) or the dynamic spec.
 * Without the spec it cannot tell a sink topic named under the pipeline's prefix from an internal stream's: the
 * dry run lists it.
 * Local state directories are the instances' own: start them with a fresh {@code state.dir} or call
 * {@code KafkaStreams#cleanUp} (the docs say how).
 */
@Command(name = "reset", description = "Delete a stopped pipeline's progress and internal topics (dry run unless "
        + "--execute).")
final class ResetCommand implements Callable<Integer> {
    @Spec
    picocli.CommandLine.Model.CommandSpec command;

    @Mixin
    ClusterOptions cluster;

    @Option(names = "--execute", description = "delete; without it, only list what would be deleted")
    boolean execute;

    @Option(names = "--include-dead-letters", description = "delete the dead-letter topic too")
    boolean includeDeadLetters;

    @Override
    public Integer call() throws Exception {
        PrintWriter out = command.commandLine().getOut();
        PrintWriter err = command.commandLine().getErr();
        String app = cluster.applicationId();
        try (Admin admin = cluster.admin()) {
            List<GroupListing> listed = PipelineGroup.list(admin, g -> g.equals(app) || g.startsWith(app + ".outbox."));
            List<String> groups = listed.stream().map(GroupListing::groupId).toList();
            Map<String, Integer> members = PipelineGroup.memberCounts(admin, listed);
            int running = members.values().stream().mapToInt(Integer::intValue).sum();
            if (running > 0) {
                err.println("flow-kafka reset: refused: pipeline '" + cluster.pipeline + "' has " + running
                        + " running consumer(s) in " + members.entrySet().stream().filter(e -> e.getValue() > 0)
                        .map(Map.Entry::getKey).toList() + "; stop every instance first");
                return FlowKafkaCli.REFUSED;
            }
            Set<String> topics = new TreeSet<>();
            List<String> kept = new ArrayList<>();
            String dlq = cluster.topicNamePrefix() + "dlq";
            String dynamicSpec = DynamicSpecTopic.name(cluster.topicPrefix, cluster.pipeline);
            Set<String> all = admin.listTopics().names().get();
            List<String> longer = longerPipelines(all);
            for (String t : all) {
                boolean streamsInternal = t.startsWith(app + "-")
                        && (t.endsWith("-changelog") || t.endsWith("-repartition"));
                boolean flowInternal = t.startsWith(cluster.topicNamePrefix()) || t.startsWith(app + ".");
                if (!streamsInternal && !flowInternal) {
                    continue;
                }
                String owner = longer.stream().filter(p -> ownedBy(t, p)).findFirst().orElse(null);
                if (owner != null) {
                    kept.add(t + " (pipeline " + owner + "'s)");
                } else if (t.equals(dynamicSpec) || (t.equals(dlq) && !includeDeadLetters)) {
                    kept.add(t);
                } else {
                    topics.add(t);
                }
            }
            // a pipeline running under another application id (flow.application.id.prefix) is not in `groups`:
            // its groups are named <prefix><pipeline> and <prefix><pipeline>.outbox.<sink>
            List<GroupListing> prefixed = PipelineGroup.list(admin, g -> !groups.contains(g) && runsElsewhere(g, all));
            Set<String> readers = new TreeSet<>();
            PipelineGroup.memberCounts(admin, prefixed).forEach((g, n) -> {
                if (n > 0) {
                    readers.add(g);
                }
            });
            if (!readers.isEmpty()) {
                err.println("flow-kafka reset: refused: running group(s) " + readers + " look like pipeline '"
                        + cluster.pipeline + "' run with another flow.application.id.prefix than --application-id-prefix "
                        + "gives ('" + cluster.applicationIdPrefix + "'); stop every instance first, or give the prefix "
                        + "it runs with");
                return FlowKafkaCli.REFUSED;
            }
            if (groups.isEmpty() && topics.isEmpty()) {
                err.println("flow-kafka reset: nothing of pipeline '" + cluster.pipeline + "' on "
                        + cluster.bootstrapServers + " (no consumer group '" + app + "', no internal topics)");
                return FlowKafkaCli.NOT_FOUND;
            }
            out.println((execute ? "deleting" : "would delete (dry run; add --execute)") + " for pipeline "
                    + cluster.pipeline + ":");
            listed.forEach(g -> out.println("  " + (g.type().orElse(GroupType.CLASSIC) == GroupType.STREAMS ? "streams"
                    : "consumer") + " group " + g.groupId()));
            topics.forEach(t -> out.println("  topic " + t));
            kept.forEach(t -> out.println("  keeping topic " + t));
            if (execute) {
                PipelineGroup.delete(admin, listed);
                if (!topics.isEmpty()) {
                    admin.deleteTopics(topics).all().get();
                }
                out.println("reset done: " + groups.size() + " consumer group(s), " + topics.size() + " topic(s) "
                        + "deleted; start the instances with an empty state.dir");
            }
        }
        out.flush();
        return FlowKafkaCli.OK;
    }

    /**
     * Whether group {@code g} may be this pipeline's, run with another application id prefix than the one given: its
     * id (before {@code .outbox.}) ends with the pipeline's name, and it is not the application id of another pipeline
     * whose name ends with this one's ({@code eu-orders} for {@code orders}: known by its status topic).
     */
    private boolean runsElsewhere(String g, Set<String> topics) {
        int outbox = g.indexOf(".outbox.");
        String base = outbox >= 0 ? g.substring(0, outbox) : g;
        return base.endsWith(cluster.pipeline) && !base.equals(cluster.applicationId())
                && !topics.contains(cluster.topicPrefix + base + ".status");
    }

    /**
     * The other pipelines on the cluster whose names begin with this one's ({@code orders-eu}, {@code orders.v2} for
     * {@code orders}): their topics match this pipeline's prefixes too. A pipeline is known by its status topic.
     */
    private List<String> longerPipelines(Set<String> topics) {
        String status = ".status";
        List<String> out = new ArrayList<>();
        for (String t : topics) {
            if (t.startsWith(cluster.topicPrefix + cluster.pipeline) && t.endsWith(status)) {
                String name = t.substring(cluster.topicPrefix.length(), t.length() - status.length());
                if (name.length() > cluster.pipeline.length()) {
                    out.add(name);
                }
            }
        }
        return out;
    }

    /** Whether topic {@code t} is named like one of {@code pipeline}'s (flow-kafka's or Kafka Streams'). */
    private boolean ownedBy(String t, String pipeline) {
        String app = cluster.applicationIdPrefix + pipeline;
        return t.startsWith(cluster.topicPrefix + pipeline + ".") || t.startsWith(app + ".") || t.startsWith(app + "-");
    }
}
