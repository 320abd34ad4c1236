package io.flowkafka.testing;

import io.flowkafka.api.FlowException;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.LogDirDescription;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;

/** Topic creation shared by the cluster implementations. */
final class Topics {
    static final Duration BOUND = Duration.ofSeconds(30);

    private Topics() {}

    static void create(Admin admin, String name, int partitions, short replication,
            Map<String, String> config) {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(config, "config");
        if (partitions < 1) {
            throw new IllegalArgumentException("partitions must be >= 1 but was " + partitions
                    + " for topic " + name);
        }
        NewTopic topic = new NewTopic(name, partitions, replication).configs(Map.copyOf(config));
        get(admin.createTopics(List.of(topic)).all(), "create topic " + name);
        Await.poll(BOUND, "every partition of topic " + name + " has a leader",
                () -> allLeadersElected(admin, name), Boolean::booleanValue, false,
                FlowException::new);
        // A leader in the metadata is not yet a log on the broker: a produce that arrives first is refused
        // (NOT_LEADER_OR_FOLLOWER), and an idempotent producer with several requests in flight can then have a
        // later batch accepted as the partition's first and retry the first one forever (OutOfOrderSequence
        // until delivery.timeout.ms). Wait until every replica's log exists.
        Await.poll(BOUND, "every replica of topic " + name + " has its log on its broker",
                () -> allLogsCreated(admin, name), Boolean::booleanValue, false, FlowException::new);
    }

    private static boolean allLogsCreated(Admin admin, String name) {
        try {
            TopicDescription d = admin.describeTopics(List.of(name)).allTopicNames()
                    .get(BOUND.toMillis(), TimeUnit.MILLISECONDS).get(name);
            Set<Integer> brokers = new HashSet<>();
            d.partitions().forEach(p -> p.replicas().forEach(n -> brokers.add(n.id())));
            Map<Integer, Map<String, LogDirDescription>> dirs = admin.describeLogDirs(brokers).allDescriptions()
                    .get(BOUND.toMillis(), TimeUnit.MILLISECONDS);
            for (TopicPartitionInfo p : d.partitions()) {
                TopicPartition tp = new TopicPartition(name, p.partition());
                for (Node replica : p.replicas()) {
                    boolean present = dirs.getOrDefault(replica.id(), Map.of()).values().stream()
                            .anyMatch(dir -> dir.replicaInfos().containsKey(tp));
                    if (!present) {
                        return false;
                    }
                }
            }
            return true;
        } catch (ExecutionException | TimeoutException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new FlowException("interrupted while describing the log dirs of topic " + name, e);
        }
    }

    private static boolean allLeadersElected(Admin admin, String name) {
        try {
            TopicDescription d = admin.describeTopics(List.of(name)).allTopicNames()
                    .get(BOUND.toMillis(), TimeUnit.MILLISECONDS).get(name);
            return d != null && d.partitions().stream().map(TopicPartitionInfo::leader)
                    .allMatch(leader -> leader != null && !leader.isEmpty());
        } catch (ExecutionException | TimeoutException e) {
            return false; // not yet known to the broker that answered
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new FlowException("interrupted while describing topic " + name, e);
        }
    }

    /** Waits for an Admin future, rethrowing Kafka's API exceptions as they are. */
    static <T> T get(org.apache.kafka.common.KafkaFuture<T> future, String what) {
        try {
            return future.get(BOUND.toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException cause) {
                throw cause;
            }
            throw new FlowException(what + " failed: " + e.getCause(), e.getCause());
        } catch (TimeoutException e) {
            throw new FlowException(what + " did not complete within " + Await.format(BOUND)
                    + "; is the cluster up?", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new FlowException("interrupted while waiting to " + what, e);
        }
    }
}
