package io.flowkafka.internal.external;

import io.flowkafka.spec.ComputationSpec;
import io.flowkafka.spec.ExternalStateJoinerSpec;
import io.flowkafka.spec.ExternalStateManagerSpec;
import io.flowkafka.spec.ExternalTables;
import io.flowkafka.spec.PipelineSpec;
import io.flowkafka.spec.StateJoinerSpec;
import io.flowkafka.spec.StateSpec;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import org.apache.avro.Schema;

/**
 * The external tables of a pipeline: which topic each table has, who writes it, who reads it, and the global
 * stores to build. Computed once from the spec by the compiler.
 *
 * <p>Rules kept: a managed table is the compacted topic {@code <prefix><pipeline>.external.<name>} (or the
 * manager's {@code topic}) with the manager computation's partition count; a state joiner reads the topic
 * {@code <prefix><pipeline>.external.state.<computation>.<state>}, which the owning computation publishes that
 * state's committed writes to, exactly as a manager does (not its changelog: the test driver runs without
 * changelogs, and a changelog carries every state of the computation, so a global store over it would read all
 * of them to keep one); one global store per distinct topic read, shared by all readers.
 */
public final class ExternalTopics {
    private final Map<String, ExternalPlan> plans = new LinkedHashMap<>();
    private final Map<String, Integer> tableTopics = new LinkedHashMap<>();
    private final Map<String, Boolean> readTopics = new LinkedHashMap<>();
    private final Map<String, Integer> versionedTopics = new LinkedHashMap<>();

    private ExternalTopics() {
    }

    /** The topic a state joiner of {@code computation}'s state {@code state} reads. */
    public static String stateTopic(String topicPrefix, String pipeline, String computation, String state) {
        return topicPrefix + pipeline + ".external.state." + computation + "." + state;
    }

    /** The topic of a manager's table. */
    public static String managerTopic(String topicPrefix, String pipeline, ExternalStateManagerSpec m) {
        return m.topic() != null ? m.topic() : topicPrefix + ExternalTables.defaultTopic(pipeline, m.name());
    }

    /** The topic a joiner reads. */
    public static String joinerTopic(String topicPrefix, String pipeline, ExternalStateJoinerSpec j) {
        return j.topic() != null ? j.topic() : topicPrefix + ExternalTables.defaultTopic(pipeline, j.name());
    }

    /**
     * The external tables of {@code spec}, which must be valid.
     *
     * @param topicPrefix the deployment's topic prefix, put before default table topic names
     * @return the tables
     */
    public static ExternalTopics of(PipelineSpec spec, String topicPrefix) {
        ExternalTopics t = new ExternalTopics();
        String pipeline = spec.name();
        Map<String, Map<String, ExternalPlan.Published>> published = new LinkedHashMap<>();
        Map<String, Map<String, ExternalPlan.Read>> reads = new LinkedHashMap<>();
        Map<String, ExternalStateManagerSpec> managerOfTopic = new LinkedHashMap<>();
        Map<String, String> managingComputation = new LinkedHashMap<>();
        for (ComputationSpec c : spec.computations().values()) {
            for (ExternalStateManagerSpec m : c.externalStateManagers().values()) {
                String topic = managerTopic(topicPrefix, pipeline, m);
                managerOfTopic.put(topic, m);
                managingComputation.put(topic, c.id());
                published.computeIfAbsent(c.id(), k -> new LinkedHashMap<>()).put(m.name(),
                        new ExternalPlan.Published(topic, sinkNode(c.id(), topic)));
                t.tableTopics.put(topic, c.desiredPartitionCount());
            }
        }
        for (ComputationSpec c : spec.computations().values()) {
            for (ExternalStateJoinerSpec j : c.externalStateJoiners().values()) {
                if (j.className().equals(ExternalStateJoinerSpec.STATIC_TABLE_KEY_VISITOR)) {
                    reads.computeIfAbsent(c.id(), k -> new LinkedHashMap<>()).put(j.name(), new ExternalPlan.Read(
                            j.name(), false, "the static table's batch writer", "", false, staticSchema(j), null,
                            true));
                    continue;
                }
                String topic = joinerTopic(topicPrefix, pipeline, j);
                ExternalStateManagerSpec m = managerOfTopic.get(topic);
                Schema schema = j.schema() != null ? j.schema() : m == null ? null : m.schema();
                if (schema == null) {
                    throw new IllegalArgumentException("external state joiner '" + j.name() + "' of computation '"
                            + c.id() + "' reads topic " + topic + ", which no manager of the pipeline writes: give "
                            + "its row schema (parameters.schema)");
                }
                String writer = m != null ? "computation '" + managingComputation.get(topic) + "' (manager '"
                        + m.name() + "')" : j.versioned() ? "a VersionedReferenceWriter" : "a writer outside the pipeline";
                reads.computeIfAbsent(c.id(), k -> new LinkedHashMap<>()).put(j.name(), new ExternalPlan.Read(j.name(),
                        false, writer, topic, j.versioned(), schema, j.cacheTtl()));
                t.read(topic, j.versioned());
                if (j.versioned() && m == null) {
                    t.versionedTopics.put(topic, 1);
                }
            }
            for (StateJoinerSpec sj : c.stateJoiners().values()) {
                ComputationSpec owner = Objects.requireNonNull(spec.computations().get(sj.computationId()),
                        () -> "state joiner '" + sj.name() + "' of computation '" + c.id() + "' reads unknown computation '"
                                + sj.computationId() + "'");
                StateSpec state = owner.states().get(sj.stateName());
                if (state == null || state.schema() == null) {
                    throw new IllegalArgumentException("state joiner '" + sj.name() + "' of computation '" + c.id()
                            + "' reads state '" + sj.stateName() + "' of computation '" + owner.id()
                            + "', which it does not declare with an Avro schema");
                }
                String topic = stateTopic(topicPrefix, pipeline, owner.id(), sj.stateName());
                published.computeIfAbsent(owner.id(), k -> new LinkedHashMap<>()).put(sj.stateName(),
                        new ExternalPlan.Published(topic, sinkNode(owner.id(), topic)));
                t.tableTopics.put(topic, owner.desiredPartitionCount());
                reads.computeIfAbsent(c.id(), k -> new LinkedHashMap<>()).put(sj.name(), new ExternalPlan.Read(sj.name(),
                        true, "computation '" + owner.id() + "' (its state '" + sj.stateName() + "')", topic, false,
                        state.schema(), null));
                t.read(topic, false);
            }
        }
        for (ComputationSpec c : spec.computations().values()) {
            Map<String, ExternalPlan.Published> p = published.getOrDefault(c.id(), Map.of());
            Map<String, ExternalPlan.Read> r = reads.getOrDefault(c.id(), Map.of());
            t.plans.put(c.id(), p.isEmpty() && r.isEmpty() ? ExternalPlan.none() : new ExternalPlan(p, r));
        }
        return t;
    }

    /** The row schema of a static table: the joiner's, else the table's now, else a record of no fields. */
    private static Schema staticSchema(ExternalStateJoinerSpec j) {
        if (j.schema() != null) {
            return j.schema();
        }
        io.flowkafka.spi.StaticTableProvider provider = io.flowkafka.spi.StaticTableProvider.findOrNull();
        if (provider != null) {
            try {
                var schema = provider.rowSchema(j.parameters());
                if (schema.isPresent()) {
                    return schema.get();
                }
            } catch (java.io.IOException | RuntimeException e) {
                // the table is checked again when the visitor reads it
            }
        }
        return Schema.createRecord("StaticTableRow", null, "io.flowkafka.external", false, java.util.List.of());
    }

    private void read(String topic, boolean versioned) {
        Boolean before = readTopics.putIfAbsent(topic, versioned);
        if (before != null && before != versioned) {
            throw new IllegalArgumentException("external table topic " + topic + " is read both as a versioned "
                    + "reference and as a plain table: make every joiner of it versioned, or none");
        }
    }

    private static String sinkNode(String computation, String topic) {
        return computation + ".sink.external." + topic;
    }

    /** {@return the plan of computation {@code id}} */
    public ExternalPlan plan(String id) {
        return plans.getOrDefault(id, ExternalPlan.none());
    }

    /** {@return the table topics written by the pipeline, with the writing computation's partition count} */
    public Map<String, Integer> tableTopics() {
        return tableTopics;
    }

    /** {@return the versioned reference topics read but not written by the pipeline (one partition each)} */
    public Map<String, Integer> versionedTopics() {
        return versionedTopics;
    }

    /** {@return every table topic read, whether versioned: one global store each} */
    public Map<String, Boolean> readTopics() {
        return readTopics;
    }
}
