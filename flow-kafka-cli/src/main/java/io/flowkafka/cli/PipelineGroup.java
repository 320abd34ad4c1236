package io.flowkafka.cli;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.MemberDescription;
import org.apache.kafka.clients.admin.StreamsGroupDescription;
import org.apache.kafka.clients.admin.StreamsGroupMemberAssignment;
import org.apache.kafka.clients.admin.StreamsGroupMemberDescription;
import org.apache.kafka.common.GroupType;
import org.apache.kafka.common.errors.GroupIdNotFoundException;
import org.jspecify.annotations.Nullable;

/**
 * A group of a pipeline as the CLI reads it, whichever protocol it runs: a classic or consumer group, or a streams
 * group ({@code group.protocol=streams}, KIP-1071), which the consumer-group calls of {@code Admin} neither list nor
 * describe. Keeps {@code status}, {@code stop} and {@code reset} seeing the running instances of either: missing them,
 * {@code reset} would delete the topics of a running pipeline.
 *
 * @param id the group id
 * @param streams whether it is a streams group
 * @param state the group's state, as the broker names it
 * @param members its members, each with what it is assigned
 */
record PipelineGroup(String id, boolean streams, String state, List<Member> members) {

    /**
     * A member of the group.
     *
     * @param clientId its client id
     * @param host its host
     * @param assigned what it is assigned: topic partitions (consumer groups) or active tasks (streams groups)
     */
    record Member(String clientId, String host, String assigned) {
    }

    /**
     * A stream thread's client id: {@code <application.id>-<process UUID>-StreamThread-<n>...}, or
     * {@code <client.id>-StreamThread-<n>...} when the user set {@code client.id}.
     */
    private static final Pattern STREAM_THREAD = Pattern.compile("^(.*?)-StreamThread-\\d+");

    /**
     * The running instances: Kafka Streams puts one member per stream thread in the group, so members are counted
     * by their client id without the thread's suffix (which holds the process id, unless {@code client.id} was set)
     * and by host; a member that is no stream thread counts alone.
     */
    int instances() {
        Set<String> processes = new HashSet<>();
        for (Member m : members) {
            Matcher matcher = STREAM_THREAD.matcher(m.clientId());
            processes.add((matcher.find() ? matcher.group(1) : m.clientId()) + "@" + m.host());
        }
        return processes.size();
    }

    /** The groups whose id {@code select} accepts, of every type but share groups, sorted by id. */
    static List<GroupListing> list(Admin admin, Predicate<String> select) throws Exception {
        Collection<GroupListing> all = admin.listGroups().all().get();
        return all.stream().filter(g -> select.test(g.groupId()))
                .filter(g -> g.type().orElse(GroupType.CLASSIC) != GroupType.SHARE)
                .sorted(Comparator.comparing(GroupListing::groupId)).toList();
    }

    /** The group {@code id}, or null when the cluster has no such group. */
    static @Nullable PipelineGroup describe(Admin admin, String id) throws Exception {
        List<GroupListing> listed = list(admin, id::equals);
        return listed.isEmpty() ? describe(admin, id, false) : describe(admin, listed.get(0));
    }

    /** The group {@code list} returned, described by the call of its type; null when it is gone meanwhile. */
    static @Nullable PipelineGroup describe(Admin admin, GroupListing listed) throws Exception {
        return describe(admin, listed.groupId(), listed.type().orElse(GroupType.CLASSIC) == GroupType.STREAMS);
    }

    private static @Nullable PipelineGroup describe(Admin admin, String id, boolean streams) throws Exception {
        try {
            return streams ? ofStreams(admin.describeStreamsGroups(List.of(id)).all().get().get(id))
                    : ofConsumer(admin.describeConsumerGroups(List.of(id)).all().get().get(id));
        } catch (ExecutionException e) {
            if (e.getCause() instanceof GroupIdNotFoundException) {
                return null;
            }
            throw e;
        }
    }

    /** Deletes the groups {@code listed} returned, each by the call of its type. */
    static void delete(Admin admin, List<GroupListing> listed) throws Exception {
        List<String> streams = new ArrayList<>();
        List<String> consumer = new ArrayList<>();
        for (GroupListing g : listed) {
            (g.type().orElse(GroupType.CLASSIC) == GroupType.STREAMS ? streams : consumer).add(g.groupId());
        }
        if (!consumer.isEmpty()) {
            admin.deleteConsumerGroups(consumer).all().get();
        }
        if (!streams.isEmpty()) {
            admin.deleteStreamsGroups(streams).all().get();
        }
    }

    private static PipelineGroup ofConsumer(ConsumerGroupDescription d) {
        List<Member> members = new ArrayList<>();
        for (MemberDescription m : d.members()) {
            members.add(new Member(m.clientId(), m.host(), m.assignment().topicPartitions().size() + " partition(s)"));
        }
        return new PipelineGroup(d.groupId(), false, String.valueOf(d.groupState()), members);
    }

    private static PipelineGroup ofStreams(StreamsGroupDescription d) {
        List<Member> members = new ArrayList<>();
        for (StreamsGroupMemberDescription m : d.members()) {
            int tasks = 0;
            for (StreamsGroupMemberAssignment.TaskIds t : m.assignment().activeTasks()) {
                tasks += t.partitions().size();
            }
            members.add(new Member(m.clientId(), m.clientHost(), tasks + " task(s)"));
        }
        return new PipelineGroup(d.groupId(), true, String.valueOf(d.groupState()), members);
    }

    /** The number of members of each group {@code listed} returned. */
    static Map<String, Integer> memberCounts(Admin admin, List<GroupListing> listed) throws Exception {
        Map<String, Integer> counts = new TreeMap<>();
        for (GroupListing g : listed) {
            PipelineGroup d = describe(admin, g); // the listing gives the type: no second listing per group
            counts.put(g.groupId(), d == null ? 0 : d.members().size()); // members: reset refuses on any
        }
        return counts;
    }
}
