package io.flowkafka.internal.runtime;

import io.flowkafka.api.FlowException;
import io.flowkafka.internal.compiler.CompiledPipeline;
import io.flowkafka.internal.compiler.PipelineCompiler;
import io.flowkafka.internal.compiler.TopicManager;
import io.flowkafka.internal.dynamic.DynamicSpecTopic;
import io.flowkafka.internal.state.StateSchemaTopic;
import io.flowkafka.internal.source.GroupOffsetSeeder;
import io.flowkafka.internal.source.KafkaSourceParameters;
import io.flowkafka.internal.source.PartitionFilter;
import io.flowkafka.internal.status.InstanceStatusTopic;
import io.flowkafka.runtime.FlowConfig;
import io.flowkafka.spec.ComputationSpec;
import io.flowkafka.spec.PipelineSpec;
import io.flowkafka.spec.SourceSpec;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.streams.StreamsConfig;

/**
 * The Admin work before a pipeline starts: its topics created (or checked), its source topics' partition counts
 * and the finite sources' bounds learnt, its consumer group seeded from the sources' {@code group_id}. The rule it
 * keeps: nothing of the pipeline runs before this succeeded, since the tasks read what it learns.
 *
 * <p>Threading: runs on the thread that starts the runtime.
 */
public final class TopicPreparation {
    private final PipelineSpec spec;
    private final CompiledPipeline compiled;
    private final FlowConfig config;
    private final Properties streamsProps;

    /** @param streamsProps the Kafka Streams properties the pipeline runs with */
    public TopicPreparation(PipelineSpec spec, CompiledPipeline compiled, FlowConfig config, Properties streamsProps) {
        this.spec = spec;
        this.compiled = compiled;
        this.config = config;
        this.streamsProps = streamsProps;
    }

    /**
     * The one-partition compacted topics every instance shares: the dynamic spec's, with Avro states the state
     * schemas', and with {@code flow.http.port} the instances' status topic.
     */
    private List<String> sharedTopics() {
        String prefix = config.getString(FlowConfig.TOPIC_PREFIX_CONFIG);
        List<String> shared = new ArrayList<>();
        shared.add(DynamicSpecTopic.name(prefix, spec.name()));
        if (hasAvroStates(spec)) {
            shared.add(StateSchemaTopic.name(prefix, spec.name()));
        }
        if (config.getInt(FlowConfig.HTTP_PORT_CONFIG) != null) {
            shared.add(InstanceStatusTopic.name(prefix, spec.name()));
        }
        return shared;
    }

    /** The shared topics read from their beginning, which must keep every record: the dynamic spec's, the schemas'. */
    private List<String> keptTopics() {
        String prefix = config.getString(FlowConfig.TOPIC_PREFIX_CONFIG);
        List<String> kept = new ArrayList<>(List.of(DynamicSpecTopic.name(prefix, spec.name())));
        if (hasAvroStates(spec)) {
            kept.add(StateSchemaTopic.name(prefix, spec.name()));
        }
        return kept;
    }

    /** Whether a computation of {@code spec} declares a state with an Avro schema (whose rows carry its fingerprint). */
    public static boolean hasAvroStates(PipelineSpec spec) {
        return spec.computations().values().stream()
                .anyMatch(c -> c.states().values().stream().anyMatch(s -> s.schema() != null));
    }

    /** What the pipeline's principal must be allowed, by the rows of the docs' ACL table. */
    public PrincipalAcls principalAcls() {
        return new PrincipalAcls(spec.name(), streamsProps.getProperty(StreamsConfig.APPLICATION_ID_CONFIG),
                config.getString(FlowConfig.TOPIC_PREFIX_CONFIG) + spec.name() + ".", compiled.sourceTopics(),
                compiled.sinkTopics().keySet(), "create".equals(config.getString(FlowConfig.TOPICS_MODE_CONFIG)),
                compiled.asyncSinks().stream().filter(a -> a.writer() == null && a.queue() == null)
                        .map(a -> streamsProps.getProperty(StreamsConfig.APPLICATION_ID_CONFIG) + ".outbox."
                                + a.sink().id()).toList());
    }

    /** The topics flow-kafka creates (or checks) for the pipeline, as {@code TopicManager} does. */
    private Set<String> ownedTopics() {
        Set<String> owned = new LinkedHashSet<>(compiled.internalTopics().keySet());
        owned.addAll(compiled.outboxTopics().keySet());
        owned.add(compiled.deadLetterTopic());
        owned.add(compiled.statusTopic());
        owned.addAll(sharedTopics());
        owned.addAll(compiled.tableTopics().keySet());
        owned.addAll(compiled.versionedTopics().keySet());
        return owned;
    }

    /**
     * Prepares the pipeline's topics and consumer group with {@code admin}.
     *
     * @throws FlowException if the cluster does not answer within {@code flow.bootstrap.timeout.ms}, the principal
     *     lacks an ACL the pipeline needs (one line each), topics are missing or cannot be created, key-partitioned sources are not co-partitioned, or the source topics cannot
     *     be described
     */
    public void prepare(Admin admin) {
        ClusterReachability.check(admin, spec.name(), streamsProps,
                config.getLong(FlowConfig.BOOTSTRAP_TIMEOUT_MS_CONFIG));
        boolean create = "create".equals(config.getString(FlowConfig.TOPICS_MODE_CONFIG));
        String applicationId = streamsProps.getProperty(StreamsConfig.APPLICATION_ID_CONFIG);
        PrincipalAcls acls = principalAcls();
        Set<String> owned = ownedTopics();
        Set<String> every = new LinkedHashSet<>(owned);
        every.addAll(compiled.sourceTopics());
        every.addAll(compiled.sinkTopics().keySet());
        List<String> toCreate = new ArrayList<>(create ? owned : Set.of());
        toCreate.add(applicationId + "-flow-acl-check-changelog"); // Kafka Streams creates its changelogs
        acls.checkBeforeStart(admin, every, toCreate);
        // before topics are checked: a reordered reader's partition count would be refused with the wrong fix
        TopicOwners.check(spec, compiled, DynamicSpecTopic.name(config.getString(FlowConfig.TOPIC_PREFIX_CONFIG),
                spec.name()), admin, streamsProps, "accept".equals(config.getString(FlowConfig.TOPIC_OWNER_CHANGES_CONFIG)));
        new TopicManager(admin, config.getInt(FlowConfig.REPLICATION_FACTOR_CONFIG),
                config.getInt(FlowConfig.MIN_INSYNC_REPLICAS_CONFIG))
                .prepare(spec.name(), compiled, create, sharedTopics(), keptTopics());
        acls.checkTopics(admin, owned); // now they exist: the operations the principal has on them
        if (hasAvroStates(spec)) { // before the tasks start: rows of earlier schemas are read, a bad change refused
            StateSchemaTopic.sync(spec, StateSchemaTopic.name(config.getString(FlowConfig.TOPIC_PREFIX_CONFIG),
                    spec.name()), streamsProps);
        }
        if (compiled.sourceTopicsByComputation().isEmpty()) {
            return;
        }
        try {
            Set<String> all = new HashSet<>();
            compiled.sourceTopicsByComputation().values().forEach(all::addAll);
            var described = admin.describeTopics(all).allTopicNames().get(60, TimeUnit.SECONDS);
            compiled.sourceTopicsByComputation().forEach((computation, topics) -> compiled.partitionCounts().put(
                    computation, topics.stream().mapToInt(t -> described.get(t).partitions().size()).max().orElse(1)));
            checkKeyedSourcesCoPartitioned(described);
            // use_consumer_group_offset: start where another consumer group left off, once
            GroupOffsetSeeder.seed(admin, spec, streamsProps.getProperty(StreamsConfig.APPLICATION_ID_CONFIG),
                    StreamsProperties.streamsGroupProtocol(streamsProps), described);
            boundFiniteSources(admin, described);
        } catch (FlowException e) {
            throw e;
        } catch (Exception e) {
            throw new FlowException("pipeline '" + spec.name() + "' could not describe its source topics: " + e, e);
        }
    }

    /**
     * Finite sources: bounded by the last stable offsets seen now (partitions a partition_filter excludes are done
     * without reading).
     */
    private void boundFiniteSources(Admin admin, Map<String, TopicDescription> described) throws Exception {
        Map<TopicPartition, OffsetSpec> request = new HashMap<>();
        for (ComputationSpec c : spec.computations().values()) {
            for (SourceSpec source : c.sourceStreams()) {
                if (KafkaSourceParameters.finite(source)) {
                    PartitionFilter filter = KafkaSourceParameters.partitionFilter(source);
                    for (String topic : PipelineCompiler.topicsOf(source)) {
                        for (var p : described.get(topic).partitions()) {
                            if (filter != null && !filter.accepts(p.partition())) {
                                continue;
                            }
                            request.put(new TopicPartition(topic, p.partition()), OffsetSpec.latest());
                        }
                    }
                }
            }
        }
        if (!request.isEmpty()) {
            admin.listOffsets(request, new ListOffsetsOptions(IsolationLevel.READ_COMMITTED))
                    .all().get(60, TimeUnit.SECONDS)
                    .forEach((tp, info) -> compiled.finiteSources().bound(tp, info.offset()));
        }
    }

    /**
     * The sources a keyed Transform reads must be co-partitioned: task p reads partition p of each, so
     * the records of a key meet only if every topic has the same partition count.
     */
    private void checkKeyedSourcesCoPartitioned(Map<String, TopicDescription> described) {
        for (ComputationSpec c : spec.computations().values()) {
            if (!c.readsKeyedSource() || c.sourceStreams().size() < 2) {
                continue;
            }
            Map<String, Integer> counts = new LinkedHashMap<>();
            c.sourceStreams().forEach(src -> PipelineCompiler.topicsOf(src).forEach(
                    t -> counts.put(t, described.get(t).partitions().size())));
            if (counts.values().stream().distinct().count() > 1) {
                throw new FlowException("computation '" + c.id() + "' reads key-partitioned sources whose topics have "
                        + "different partition counts " + counts + "; a key's records meet in one task only if every "
                        + "topic has the same number of partitions, partitioned by the same key: repartition the "
                        + "topics to one count, or read them in Source computations and their outputs in the Transform");
            }
        }
    }
}
