package io.flowkafka.internal.compiler;

import io.flowkafka.api.FlowException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.TopicExistsException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Creates or checks the topics a compiled pipeline needs, with Admin, before Kafka Streams starts.
 *
 * <p>Internal stream topics keep records forever ({@code retention.ms=-1}) and are purged once
 * consumed; sink topics are created with the writer's partition count when missing; source topics
 * must exist. Not thread-safe; used once at start.
 */
public final class TopicManager {
    private static final Logger LOG = LoggerFactory.getLogger(TopicManager.class);
    private static final long TIMEOUT_SECONDS = 60;
    private final Admin admin;
    private final int replicationFactor;
    private final int minInsyncReplicas;

    public TopicManager(Admin admin, int replicationFactor, int minInsyncReplicas) {
        this.admin = admin;
        this.replicationFactor = replicationFactor;
        this.minInsyncReplicas = minInsyncReplicas;
    }

    /**
     * Creates what is missing ({@code create}) or only checks ({@code create == false}).
     *
     * @param sharedTopics the topics every instance shares (the dynamic spec, the instances' status): one partition,
     *     compacted, like the status topic
     * @param keptTopics the shared topics read from their beginning, like the tables (the dynamic spec's, the state
     *     schemas'): none may delete old records
     * @throws FlowException listing every missing topic or wrong partition count, with the fix
     */
    public void prepare(String pipeline, CompiledPipeline compiled, boolean create, List<String> sharedTopics,
            List<String> keptTopics) {
        Map<String, Integer> owned = new LinkedHashMap<>(compiled.internalTopics());
        owned.putAll(compiled.outboxTopics());
        owned.put(compiled.deadLetterTopic(), 1);
        owned.put(compiled.statusTopic(), 1);
        Set<String> compacted = new HashSet<>(sharedTopics);
        compacted.add(compiled.statusTopic());
        sharedTopics.forEach(t -> owned.put(t, 1));
        Set<String> existing = call(() -> admin.listTopics().names().get(TIMEOUT_SECONDS, TimeUnit.SECONDS));
        List<String> problems = new ArrayList<>();
        List<String> missingSources = compiled.sourceTopics().stream().filter(t -> !existing.contains(t)).toList();
        if (!missingSources.isEmpty()) {
            problems.add("source topic(s) " + missingSources + " do not exist: create them, or fix the 'topics' "
                    + "parameter of the KafkaSource in source_streams");
        }
        List<NewTopic> toCreate = new ArrayList<>();
        for (Map.Entry<String, Integer> e : owned.entrySet()) {
            if (!existing.contains(e.getKey())) {
                if (create) {
                    boolean internal = compiled.internalTopics().containsKey(e.getKey())
                            || compiled.outboxTopics().containsKey(e.getKey());
                    NewTopic t = newTopic(e.getKey(), e.getValue(), internal);
                    if (compacted.contains(e.getKey())) {
                        t.configs().put("cleanup.policy", "compact");
                    }
                    toCreate.add(t);
                } else {
                    problems.add("topic " + e.getKey() + " does not exist: create it with " + e.getValue()
                            + " partition(s)" + (compiled.internalTopics().containsKey(e.getKey())
                                    || compiled.outboxTopics().containsKey(e.getKey()) ? " and retention.ms=-1"
                                    : compacted.contains(e.getKey()) ? " and cleanup.policy=compact" : "")
                            + ", or set flow.topics.mode=create");
                }
            }
        }
        Map<String, Integer> tables = new LinkedHashMap<>(compiled.tableTopics());
        tables.putAll(compiled.versionedTopics());
        for (Map.Entry<String, Integer> e : tables.entrySet()) {
            if (!existing.contains(e.getKey())) {
                if (create) {
                    NewTopic t = newTopic(e.getKey(), e.getValue(), false);
                    t.configs().put("cleanup.policy", "compact"); // a table: the latest row per key
                    toCreate.add(t);
                } else {
                    problems.add("external table topic " + e.getKey() + " does not exist: create it compacted "
                            + "(cleanup.policy=compact) with " + e.getValue() + " partition(s), or set "
                            + "flow.topics.mode=create");
                }
            }
        }
        for (String t : compiled.externalTableTopics()) {
            if (!existing.contains(t)) {
                problems.add("external table topic " + t + " read by a joiner does not exist: create it (compacted, "
                        + "keyed by the joiner's encoded group-by key), or fix the joiner's parameters.topic");
            }
        }
        for (Map.Entry<String, Integer> e : compiled.sinkTopics().entrySet()) {
            if (!existing.contains(e.getKey())) {
                if (create) {
                    toCreate.add(newTopic(e.getKey(), e.getValue(), false));
                } else {
                    problems.add("sink topic " + e.getKey() + " does not exist: create it, or set flow.topics.mode=create");
                }
            }
        }
        // not the instances' topic: each instance rewrites its part every interval, and a retention there is harmless
        Set<String> tablesKept = new LinkedHashSet<>(List.of(compiled.statusTopic()));
        tablesKept.addAll(keptTopics);
        tablesKept.addAll(tables.keySet());
        tablesKept.addAll(compiled.externalTableTopics());
        tablesKept.retainAll(existing); // those created now are compacted
        problems.addAll(retentionProblems(tablesKept));
        if (!problems.isEmpty()) {
            throw new FlowException("pipeline '" + pipeline + "' cannot start:\n  - " + String.join("\n  - ", problems));
        }
        if (!toCreate.isEmpty()) {
            try {
                admin.createTopics(toCreate).all().get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
            } catch (ExecutionException e) {
                if (!(e.getCause() instanceof TopicExistsException)) {
                    throw new FlowException("pipeline '" + pipeline + "' could not create its topics "
                            + toCreate.stream().map(NewTopic::name).toList() + ": " + e.getCause().getMessage()
                            + " (check the CreateTopics ACL, or pre-create them and set flow.topics.mode=check)", e.getCause());
                }
            } catch (InterruptedException | TimeoutException e) {
                throw new FlowException("pipeline '" + pipeline + "' timed out creating its topics", e);
            }
        }
        java.util.Set<String> described = new java.util.LinkedHashSet<>(owned.keySet());
        described.addAll(compiled.versionedTopics().keySet());
        Map<String, TopicDescription> descriptions = describeWithRetry(described);
        for (String t : compiled.versionedTopics().keySet()) {
            int actual = descriptions.get(t).partitions().size();
            if (actual != 1) {
                problems.add("versioned reference topic " + t + " has " + actual + " partitions but needs exactly 1: "
                        + "its pointer record must be ordered after the rows of the version it names; recreate it "
                        + "with one partition");
            }
        }
        for (Map.Entry<String, Integer> e : compiled.outboxTopics().entrySet()) {
            int actual = descriptions.get(e.getKey()).partitions().size();
            if (actual != e.getValue()) {
                problems.add("outbox topic " + e.getKey() + " has " + actual + " partitions but its computation has "
                        + e.getValue() + " (desired_partition_count); an outbox partition holds one task's messages in "
                        + "order: restore the count or deploy under a new pipeline name");
            }
        }
        for (Map.Entry<String, Integer> e : compiled.internalTopics().entrySet()) {
            int actual = descriptions.get(e.getKey()).partitions().size();
            if (actual != e.getValue()) {
                problems.add("topic " + e.getKey() + " has " + actual + " partitions but the spec asks for " + e.getValue()
                        + " (desired_partition_count of its readers); partition counts are fixed for a pipeline's "
                        + "topics: restore the spec's count or deploy under a new pipeline name");
            }
        }
        if (!problems.isEmpty()) {
            throw new FlowException("pipeline '" + pipeline + "' cannot start:\n  - " + String.join("\n  - ", problems));
        }
    }

    /**
     * The existing topics among {@code topics}, which hold tables read from their beginning (external tables, the
     * dynamic spec, the instances' status), whose retention would delete records: an instance that rebuilds such a
     * table (a new instance, a lost disk) would miss the rows written longer ago than {@code retention.ms}.
     */
    private List<String> retentionProblems(Collection<String> topics) {
        if (topics.isEmpty()) {
            return List.of();
        }
        Map<ConfigResource, KafkaFuture<Config>> futures = admin.describeConfigs(topics.stream()
                .map(t -> new ConfigResource(ConfigResource.Type.TOPIC, t)).toList()).values();
        List<String> out = new ArrayList<>();
        for (Map.Entry<ConfigResource, KafkaFuture<Config>> e : futures.entrySet()) {
            String topic = e.getKey().name();
            Config c;
            try {
                c = e.getValue().get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
            } catch (ExecutionException ex) {
                // e.g. no DescribeConfigs ACL on a topic another team owns: the check is advice, not a gate
                LOG.warn("cannot check the retention of table topic {} ({}); make sure it is compacted "
                        + "(cleanup.policy=compact): an instance that rebuilds its table reads it from the beginning",
                        topic, ex.getCause().toString());
                continue;
            } catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                throw new FlowException("interrupted while describing the configs of " + topic, ex);
            } catch (TimeoutException ex) {
                throw new FlowException("timed out describing the configs of " + topic, ex);
            }
            ConfigEntry policy = c.get("cleanup.policy");
            ConfigEntry retention = c.get("retention.ms");
            if (policy == null || policy.value() == null) {
                continue; // not known: nothing to say
            }
            Set<String> policies = Set.of(policy.value().replace(" ", "").split(","));
            boolean keepsAll = retention != null && "-1".equals(retention.value());
            if (!policies.contains("compact") || (policies.contains("delete") && !keepsAll)) {
                out.add("topic " + topic + " holds a table that instances rebuild from its beginning, but its "
                        + "cleanup.policy is " + policy.value() + (policies.contains("delete") ? " with retention.ms "
                        + (retention == null ? "unknown" : retention.value()) : "") + ": rows older than the retention "
                        + "would be missing on an instance that rebuilds it; fix: kafka-configs --alter --entity-type "
                        + "topics --entity-name " + topic + " --add-config cleanup.policy=compact");
            }
        }
        return out;
    }

    /** Describes topics, retrying while just-created topics are not yet known to every broker. */
    private Map<String, TopicDescription> describeWithRetry(java.util.Collection<String> topics) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(TIMEOUT_SECONDS);
        long backoffMs = 20;
        while (true) {
            try {
                return admin.describeTopics(topics).allTopicNames().get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
            } catch (ExecutionException e) {
                if (!(e.getCause() instanceof org.apache.kafka.common.errors.UnknownTopicOrPartitionException)
                        || System.nanoTime() > deadline) {
                    throw new FlowException("Kafka admin request failed: " + e.getCause().getMessage(), e.getCause());
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new FlowException("interrupted while describing topics " + topics, e);
            } catch (TimeoutException e) {
                throw new FlowException("timed out describing topics " + topics, e);
            }
            try {
                Thread.sleep(backoffMs);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new FlowException("interrupted while describing topics " + topics, e);
            }
            backoffMs = Math.min(500, backoffMs * 2);
        }
    }

    private NewTopic newTopic(String name, int partitions, boolean internal) {
        NewTopic t = new NewTopic(name, Optional.of(partitions),
                replicationFactor > 0 ? Optional.of((short) replicationFactor) : Optional.empty());
        Map<String, String> configs = new HashMap<>();
        if (internal) {
            configs.put("retention.ms", "-1");
            configs.put("cleanup.policy", "delete");
        }
        if (minInsyncReplicas > 0) {
            configs.put("min.insync.replicas", String.valueOf(minInsyncReplicas));
        }
        return t.configs(configs);
    }

    private interface AdminCall<T> {
        T run() throws Exception;
    }

    private static <T> T call(AdminCall<T> c) {
        try {
            return c.run();
        } catch (ExecutionException e) {
            throw new FlowException("Kafka admin request failed: " + e.getCause().getMessage(), e.getCause());
        } catch (Exception e) {
            throw new FlowException("Kafka admin request failed: " + e, e);
        }
    }
}
