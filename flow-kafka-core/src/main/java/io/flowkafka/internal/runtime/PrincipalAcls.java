package io.flowkafka.internal.runtime;

import io.flowkafka.api.FlowException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Pattern;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.CreateTopicsOptions;
import org.apache.kafka.clients.admin.DescribeConsumerGroupsOptions;
import org.apache.kafka.clients.admin.DescribeTopicsOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.errors.AuthenticationException;
import org.apache.kafka.common.errors.AuthorizationException;
import org.apache.kafka.common.errors.GroupAuthorizationException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.errors.TransactionalIdAuthorizationException;
import org.apache.kafka.common.errors.TransactionalIdNotFoundException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a pipeline's principal must be allowed on the cluster (the table "Topics and ACLs" of docs/operations.md),
 * and one sentence naming what it lacks: the resource and the operation. The rule it keeps: a principal without an
 * ACL the pipeline needs stops the pipeline with that sentence, at start where the broker can be asked
 * ({@link #checkBeforeStart}), or as the first client meets the refusal ({@link #explain}), never a retry loop or a bare
 * stack trace.
 *
 * <p>{@link #checkBeforeStart} asks the broker for the operations the principal may do on each existing topic and the consumer
 * group ({@code includeAuthorizedOperations}), whether it may create the topics flow-kafka and
 * Kafka Streams create ({@code validateOnly}), and whether it may describe its transactional ids. Writing with a
 * transactional id cannot be asked without doing it: {@link #explain} names it when the producer is refused.
 *
 * <p>Threading: immutable; the checks run on the starting thread, {@link #explain} on a dying stream thread,
 * each making bounded Admin calls.
 */
public final class PrincipalAcls {
    private static final Logger LOG = LoggerFactory.getLogger(PrincipalAcls.class);
    private static final long CALL_SECONDS = 15;
    /** Kafka Streams' message when its internal topic manager cannot create a changelog or repartition topic. */
    private static final Pattern CREATE_FAILED =
            Pattern.compile("Could not create (?:internal )?topic (\\S+?)\\.?(?:\\s|$)");
    private static final String TABLE = "grant it as the table 'Topics and ACLs' in docs/operations.md lists";

    private final String pipeline;
    private final String applicationId;
    private final String pipelineTopicPrefix;
    private final Set<String> sourceTopics;
    private final Set<String> sinkTopics;
    private final boolean createsTopics;
    private final Set<String> outboxGroups;

    /**
     * @param pipelineTopicPrefix the prefix of every topic flow-kafka names for the pipeline,
     *     {@code <flow.topic.prefix><pipeline>.}
     * @param createsTopics whether {@code flow.topics.mode=create}
     * @param outboxGroups the consumer groups of the async sinks' delivery services,
     *     {@code <application.id>.outbox.<sink>}
     */
    public PrincipalAcls(String pipeline, String applicationId, String pipelineTopicPrefix,
            Collection<String> sourceTopics, Collection<String> sinkTopics, boolean createsTopics,
            Collection<String> outboxGroups) {
        this.outboxGroups = Set.copyOf(outboxGroups);
        this.pipeline = pipeline;
        this.applicationId = applicationId;
        this.pipelineTopicPrefix = pipelineTopicPrefix;
        this.sourceTopics = Set.copyOf(sourceTopics);
        this.sinkTopics = Set.copyOf(sinkTopics);
        this.createsTopics = createsTopics;
    }

    /** A resource the principal needs, the operations it needs there, and the row of the table that grants them. */
    private record Need(String resource, Set<AclOperation> operations, String row) {
    }

    /** What the principal needs on a topic, by the row of the table the topic falls under. */
    private Need topicNeed(String topic) {
        if (sourceTopics.contains(topic)) {
            return new Need("topic '" + topic + "'", ops(AclOperation.DESCRIBE, AclOperation.READ),
                    "source topics");
        }
        if (sinkTopics.contains(topic)) {
            return new Need("topic '" + topic + "'", ops(AclOperation.DESCRIBE, AclOperation.WRITE),
                    "sink topics");
        }
        if (topic.startsWith(applicationId + "-")) {
            return new Need("topic '" + topic + "'", ops(AclOperation.CREATE, AclOperation.DESCRIBE,
                    AclOperation.READ, AclOperation.WRITE), "topics '" + applicationId + "-*'");
        }
        Set<AclOperation> ops = createsTopics ? ops(AclOperation.CREATE) : ops();
        ops.addAll(List.of(AclOperation.DESCRIBE, AclOperation.READ, AclOperation.WRITE, AclOperation.DELETE));
        return new Need("topic '" + topic + "'", ops, topic.startsWith(pipelineTopicPrefix)
                ? "topics '" + pipelineTopicPrefix + "*'" : "its topics");
    }

    private Need groupNeed(String group) {
        return new Need("consumer group '" + group + "'", ops(AclOperation.READ, AclOperation.DESCRIBE),
                "group '" + group + "'" + (group.equals(applicationId) ? "" : " (async sinks)"));
    }

    private Need transactionalIdNeed() {
        return new Need("transactional ids '" + applicationId + "-*'", ops(AclOperation.DESCRIBE,
                AclOperation.WRITE), "transactional ids '" + applicationId + "-*'");
    }

    /**
     * Asks the broker, before any topic is created, whether the principal has what the pipeline needs: its
     * operations on the topics that exist, Create for the topics the start creates, its group and its transactional
     * ids. (Nothing is needed on the cluster resource: brokers 2.8+ take Write on a topic for IdempotentWrite.)
     *
     * @param topics every topic of the pipeline (its own, sources, sinks); those missing are skipped
     * @param toCreate topics the start may create (flow-kafka's own in {@code create} mode, and a name like
     *     Kafka Streams' changelogs)
     * @throws FlowException naming every ACL the principal lacks, one line each
     */
    public void checkBeforeStart(Admin admin, Collection<String> topics, Collection<String> toCreate) {
        List<String> missing = new ArrayList<>();
        Set<String> refused = checkTopics(admin, topics, missing);
        checkCreate(admin, toCreate.stream().filter(t -> !refused.contains(t)).toList(), missing);
        checkGroup(admin, applicationId, missing);
        for (String group : outboxGroups) {
            checkGroup(admin, group, missing);
        }
        checkTransactionalIds(admin, missing);
        failIfMissing(missing);
    }

    /**
     * Asks the broker for the principal's operations on topics that now exist (the ones the start just created).
     *
     * @throws FlowException naming every ACL the principal lacks, one line each
     */
    public void checkTopics(Admin admin, Collection<String> topics) {
        List<String> missing = new ArrayList<>();
        checkTopics(admin, topics, missing);
        failIfMissing(missing);
    }

    private void failIfMissing(List<String> missing) {
        if (!missing.isEmpty()) {
            throw new FlowException("pipeline '" + pipeline + "' cannot start: its principal lacks "
                    + (missing.size() == 1 ? missing.get(0) : missing.size() + " ACLs:\n  - "
                            + String.join("\n  - ", missing) + "\n") + "; " + TABLE
                    + ", or run the pipeline as a principal that has them");
        }
    }

    /** @return the topics the principal may not even describe (already reported with every operation) */
    private Set<String> checkTopics(Admin admin, Collection<String> topics, List<String> missing) {
        Set<String> refused = new LinkedHashSet<>();
        if (topics.isEmpty()) {
            return refused;
        }
        var described = admin.describeTopics(topics, new DescribeTopicsOptions().includeAuthorizedOperations(true))
                .topicNameValues();
        for (var e : described.entrySet()) {
            Need need = topicNeed(e.getKey());
            try {
                TopicDescription d = e.getValue().get(CALL_SECONDS, TimeUnit.SECONDS);
                Set<AclOperation> allowed = d.authorizedOperations();
                if (allowed != null) {
                    lacking(need, allowed, missing);
                }
            } catch (ExecutionException ex) {
                if (ex.getCause() instanceof TopicAuthorizationException) {
                    missing.add(sentence(need, need.operations()));
                    refused.add(e.getKey());
                } else if (!(ex.getCause() instanceof UnknownTopicOrPartitionException)) {
                    throw new FlowException("pipeline '" + pipeline + "' could not describe topic '" + e.getKey()
                            + "': " + ex.getCause().getMessage(), ex.getCause());
                }
            } catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                throw new FlowException("pipeline '" + pipeline + "': interrupted while checking its ACLs", ex);
            } catch (TimeoutException ex) {
                throw new FlowException("pipeline '" + pipeline + "' timed out checking its ACLs on topic '"
                        + e.getKey() + "'", ex);
            }
        }
        return refused;
    }

    /** {@code validateOnly}: the broker answers whether the principal may create them, and creates nothing. */
    private void checkCreate(Admin admin, Collection<String> topics, List<String> missing) {
        if (topics.isEmpty()) {
            return;
        }
        List<NewTopic> newTopics = topics.stream().map(t -> new NewTopic(t, Optional.empty(),
                Optional.empty())).toList();
        var results = admin.createTopics(newTopics, new CreateTopicsOptions().validateOnly(true)).values();
        for (var e : results.entrySet()) {
            try {
                e.getValue().get(CALL_SECONDS, TimeUnit.SECONDS);
            } catch (ExecutionException ex) {
                if (ex.getCause() instanceof TopicAuthorizationException) {
                    Need need = topicNeed(e.getKey());
                    missing.add(sentence(need, ops(AclOperation.CREATE)));
                }
                // any other refusal (it exists, a bad config) is not the principal's: the creation reports it
            } catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                throw new FlowException("pipeline '" + pipeline + "': interrupted while checking its ACLs", ex);
            } catch (TimeoutException ex) {
                throw new FlowException("pipeline '" + pipeline + "' timed out checking its ACLs", ex);
            }
        }
    }

    private void checkGroup(Admin admin, String group, List<String> missing) {
        Need need = groupNeed(group);
        try {
            var d = admin.describeConsumerGroups(List.of(group),
                    new DescribeConsumerGroupsOptions().includeAuthorizedOperations(true)).all()
                    .get(CALL_SECONDS, TimeUnit.SECONDS).get(group);
            Set<AclOperation> allowed = d == null ? null : d.authorizedOperations();
            if (allowed != null) {
                lacking(need, allowed, missing);
            }
        } catch (ExecutionException ex) {
            if (ex.getCause() instanceof GroupAuthorizationException) {
                missing.add(sentence(need, need.operations()));
            } else {
                LOG.debug("pipeline '{}': cannot ask for the ACLs of group {}: {}", pipeline, group,
                        ex.getCause().toString());
            }
        } catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new FlowException("pipeline '" + pipeline + "': interrupted while checking its ACLs", ex);
        } catch (TimeoutException ex) {
            throw new FlowException("pipeline '" + pipeline + "' timed out checking its ACLs on its group", ex);
        }
    }

    /** Describe only: the broker tells whether the principal may describe an id; Write shows when it is used. */
    private void checkTransactionalIds(Admin admin, List<String> missing) {
        Need need = transactionalIdNeed();
        try {
            admin.describeTransactions(List.of(applicationId + "-acl-check")).all().get(CALL_SECONDS,
                    TimeUnit.SECONDS);
        } catch (ExecutionException ex) {
            if (ex.getCause() instanceof TransactionalIdAuthorizationException) {
                missing.add(sentence(need, need.operations()));
            } else if (!(ex.getCause() instanceof TransactionalIdNotFoundException)) {
                LOG.debug("pipeline '{}': cannot ask for the ACLs of its transactional ids: {}", pipeline,
                        ex.getCause().toString());
            }
        } catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new FlowException("pipeline '" + pipeline + "': interrupted while checking its ACLs", ex);
        } catch (TimeoutException ex) {
            throw new FlowException("pipeline '" + pipeline + "' timed out checking its transactional-id ACLs", ex);
        }
    }

    /** The operations in the table's order. */
    private static Set<AclOperation> ops(AclOperation... ops) {
        return new LinkedHashSet<>(List.of(ops));
    }

    private static void lacking(Need need, Set<AclOperation> allowed, List<String> missing) {
        if (allowed.isEmpty() || allowed.contains(AclOperation.ALL)) {
            return; // no answer (a describe that succeeded implies Describe), or everything allowed
        }
        Set<AclOperation> lacks = new LinkedHashSet<>();
        for (AclOperation op : need.operations()) {
            if (!allowed.contains(op)) {
                lacks.add(op);
            }
        }
        if (!lacks.isEmpty()) {
            missing.add(sentence(need, lacks));
        }
    }

    private static String sentence(Need need, Set<AclOperation> lacks) {
        return "ACL " + names(lacks) + " on " + need.resource() + " (row " + need.row() + ": "
                + names(need.operations()) + ")";
    }

    /**
     * The sentence for an authentication or authorization failure met by a running client, naming the resource and
     * the operations the principal needs there; null if {@code failure} is neither.
     *
     * @param admin asked which operations the principal lacks on a refused topic or the group; may be null
     */
    public @Nullable String explain(Throwable failure, @Nullable Admin admin) {
        AuthorizationException authz = find(failure, AuthorizationException.class);
        if (authz == null) {
            AuthenticationException authn = find(failure, AuthenticationException.class);
            return authn == null ? null : "pipeline '" + pipeline + "' stops: Kafka refused its credentials ("
                    + authn.getMessage() + "); check security.protocol, sasl.mechanism and sasl.jaas.config";
        }
        List<String> missing = new ArrayList<>();
        if (authz instanceof TopicAuthorizationException t) {
            Set<String> topics = t.unauthorizedTopics();
            if (admin != null && !topics.isEmpty()) {
                try {
                    checkTopics(admin, topics, missing);
                } catch (RuntimeException e) {
                    LOG.debug("pipeline '{}': cannot ask for its ACLs on {}: {}", pipeline, topics, e.toString());
                }
            }
            String created = topicNotCreated(failure);
            if (missing.isEmpty() && topics.isEmpty() && created != null) {
                missing.add(sentence(topicNeed(created), ops(AclOperation.CREATE)));
            }
            if (missing.isEmpty()) {
                Map<String, Need> needs = new LinkedHashMap<>();
                topics.forEach(topic -> needs.put(topic, topicNeed(topic)));
                needs.values().forEach(n -> missing.add(sentence(n, n.operations())));
            }
            if (missing.isEmpty()) {
                missing.add("an ACL on a topic: " + authz.getMessage());
            }
        } else if (authz instanceof GroupAuthorizationException g) {
            String group = g.groupId() != null ? g.groupId() : applicationId;
            if (admin != null) {
                try {
                    checkGroup(admin, group, missing);
                } catch (RuntimeException e) {
                    LOG.debug("pipeline '{}': cannot ask for its ACLs on group {}: {}", pipeline, group, e.toString());
                }
            }
            if (missing.isEmpty()) {
                missing.add(sentence(groupNeed(group), groupNeed(group).operations()));
            }
        } else if (authz instanceof TransactionalIdAuthorizationException) {
            missing.add(sentence(transactionalIdNeed(), transactionalIdNeed().operations()));
        } else {
            missing.add("an ACL: " + authz.getMessage());
        }
        return "pipeline '" + pipeline + "' stops: its principal lacks " + String.join("; ", missing) + "; "
                + TABLE;
    }

    /** The topic Kafka Streams could not create, named in a message of the failure's chain; null if none. */
    private static @Nullable String topicNotCreated(Throwable failure) {
        Set<Throwable> seen = new LinkedHashSet<>();
        for (Throwable t = failure; t != null && seen.add(t); t = t.getCause()) {
            var m = CREATE_FAILED.matcher(String.valueOf(t.getMessage()));
            if (m.find()) {
                return m.group(1);
            }
        }
        return null;
    }

    private static <T extends Throwable> @Nullable T find(Throwable failure, Class<T> type) {
        Set<Throwable> seen = new LinkedHashSet<>();
        for (Throwable t = failure; t != null && seen.add(t); t = t.getCause()) {
            if (type.isInstance(t)) {
                return type.cast(t);
            }
        }
        return null;
    }

    /** READ, DESCRIBE_CONFIGS to "Read, DescribeConfigs", Kafka's names in {@code kafka-acls} and the docs. */
    static String names(Set<AclOperation> ops) {
        List<String> names = new ArrayList<>();
        for (AclOperation op : ops) {
            StringBuilder b = new StringBuilder();
            for (String part : op.name().split("_")) {
                b.append(part.charAt(0)).append(part.substring(1).toLowerCase(Locale.ROOT));
            }
            names.add(b.toString());
        }
        return String.join(", ", names);
    }

}
