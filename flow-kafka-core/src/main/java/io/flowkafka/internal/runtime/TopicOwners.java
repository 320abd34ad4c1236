package io.flowkafka.internal.runtime;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.flowkafka.api.FlowException;
import io.flowkafka.internal.compiler.CompiledPipeline;
import io.flowkafka.internal.dynamic.DynamicSpecTopic;
import io.flowkafka.spec.PipelineSpec;
import io.flowkafka.spec.StreamSpec;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.avro.SchemaNormalization;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.streams.TopologyDescription;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Which computation reads each internal topic, and which sink delivers each outbox topic, and the rule that a new
 * version of a pipeline does not silently hand one's topic to another. Topics are named by order: a stream's first
 * reader reads {@code <prefix><pipeline>.<stream>}, each other reader {@code <prefix><pipeline>.<stream>.<reader>};
 * the first async sink of an id owns {@code <prefix><pipeline>.outbox.<sink>}. Moving, removing or inserting a reader
 * before another would give that other its topic: records keyed and partitioned for the first, and its committed
 * offsets. The owners are published with the spec an instance runs ({@code topic_owners}); at start the next version
 * compares its own with them and refuses a change unless {@code flow.topics.owner.changes} is {@code accept}.
 */
public final class TopicOwners {
    /** The field of the published spec document holding the owners. */
    public static final String FIELD = "topic_owners";
    /** The field of the published spec document holding the schema fingerprints of streams with internal topics. */
    public static final String SCHEMAS_FIELD = "stream_schemas";
    private static final Logger LOG = LoggerFactory.getLogger(TopicOwners.class);

    private TopicOwners() {
    }

    /**
     * The owners of a compiled pipeline's internal and outbox topics.
     *
     * @return topic to owner ({@code computation 'c'} or {@code sink 's' of computation 'c'}), sorted by topic
     */
    public static Map<String, String> of(CompiledPipeline compiled) {
        Map<String, String> owners = new TreeMap<>();
        Set<String> streamTopics = new HashSet<>(); // a reader's control topic carries no records of its own
        compiled.streamTopics().values().forEach(streamTopics::addAll);
        for (TopologyDescription.Subtopology sub : compiled.topology().describe().subtopologies()) {
            for (TopologyDescription.Node node : sub.nodes()) {
                if (!(node instanceof TopologyDescription.Source source) || source.topicSet() == null) {
                    continue;
                }
                for (String topic : source.topicSet()) {
                    String suffix = ".source." + topic; // the compiler names a reader's source node <id>.source.<topic>
                    if (compiled.internalTopics().containsKey(topic) && streamTopics.contains(topic)
                            && source.name().endsWith(suffix)) {
                        owners.put(topic, "computation '"
                                + source.name().substring(0, source.name().length() - suffix.length()) + "'");
                    }
                }
            }
        }
        for (CompiledPipeline.AsyncSink a : compiled.asyncSinks()) {
            if (!a.outboxTopic().isEmpty()) {
                owners.put(a.outboxTopic(), "sink '" + a.sink().id() + "' of computation '" + a.computation() + "'");
            }
        }
        return owners;
    }

    /**
     * The schema fingerprints (Avro's CRC-64 of the parsing canonical form, hex) of the streams carried by internal
     * topics, whose records a new version reads with its own schema.
     */
    public static Map<String, String> streamSchemas(PipelineSpec spec, CompiledPipeline compiled) {
        Map<String, String> schemas = new TreeMap<>();
        compiled.streamTopics().forEach((stream, topics) -> {
            StreamSpec s = spec.streams().get(stream);
            if (s != null && s.schema() != null && topics.stream().anyMatch(compiled.internalTopics()::containsKey)) {
                schemas.put(stream, Long.toHexString(SchemaNormalization.parsingFingerprint64(s.schema())));
            }
        });
        return schemas;
    }

    /**
     * Compares the owners with those the pipeline's last started instance published.
     *
     * @param accept whether {@code flow.topics.owner.changes} is {@code accept}: log the changes instead
     * @throws FlowException if a topic changed owner and {@code accept} is false
     */
    public static void check(PipelineSpec spec, CompiledPipeline compiled, String dynamicSpecTopic, Admin admin,
            Map<?, ?> clientProps, boolean accept) {
        String pipeline = spec.name();
        if (!exists(admin, dynamicSpecTopic)) {
            return; // the pipeline's first start
        }
        JsonNode doc = publishedDoc(pipeline, dynamicSpecTopic, clientProps);
        for (String changed : schemaChanges(fields(doc, SCHEMAS_FIELD), streamSchemas(spec, compiled))) {
            LOG.warn("pipeline '{}': {}", pipeline, changed);
        }
        Map<String, String> before = fields(doc, FIELD);
        Map<String, String> now = of(compiled);
        for (String dropped : dropped(before, now)) {
            LOG.warn("pipeline '{}': {}", pipeline, dropped);
        }
        List<String> changes = changes(before, now);
        if (changes.isEmpty()) {
            return;
        }
        String message = "pipeline '" + pipeline + "': this version gives topics to other readers than the version "
                + "that last ran: " + String.join("; ", changes) + ". A stream's first reader in the spec reads "
                + "<prefix><pipeline>.<stream> and each other reader <prefix><pipeline>.<stream>.<reader> (an outbox "
                + "topic belongs to the first sink of its id), so moving, removing or inserting one before another "
                + "hands over its topic with the records still unread, keyed and partitioned for the old reader, and "
                + "its committed offsets.";
        if (accept) {
            LOG.warn("{} Accepted (flow.topics.owner.changes=accept)", message);
            return;
        }
        throw new FlowException(message + " Fix: keep each stream's readers (and sinks of one id) in their old order "
                + "and declare new ones after them; to change them anyway, drain the running version first "
                + "(flow-kafka drain, until its internal topics and outboxes are empty), then start this one once "
                + "with flow.topics.owner.changes=accept");
    }

    /** One sentence per topic whose owner differs; topics only one side has are not changes. */
    static List<String> changes(Map<String, String> before, Map<String, String> now) {
        List<String> changes = new ArrayList<>();
        now.forEach((topic, owner) -> {
            String was = before.get(topic);
            if (was != null && !was.equals(owner)) {
                changes.add(topic + " was read by " + was + " and would now be read by " + owner);
            }
        });
        return changes;
    }

    /**
     * One warning per topic the last version read or delivered and this one does not: what is still in it stays
     * there (a removed async sink's undelivered records are never delivered).
     */
    static List<String> dropped(Map<String, String> before, Map<String, String> now) {
        List<String> dropped = new ArrayList<>();
        before.forEach((topic, owner) -> {
            if (!now.containsKey(topic)) {
                dropped.add("topic " + topic + " was " + (owner.startsWith("sink") ? "delivered" : "read") + " by "
                        + owner + " in the version that last ran, and by nothing in this one: records still in it "
                        + "are not " + (owner.startsWith("sink") ? "delivered" : "processed") + ". Remove the "
                        + "topic once that is intended, or keep the " + (owner.startsWith("sink") ? "sink" : "reader")
                        + " until it is empty");
            }
        });
        return dropped;
    }

    private static boolean exists(Admin admin, String topic) {
        try {
            return admin.listTopics().names().get(60, TimeUnit.SECONDS).contains(topic);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new FlowException("interrupted while listing topics", e);
        } catch (ExecutionException | TimeoutException e) {
            throw new FlowException("could not list topics to find " + topic + ": " + e.getMessage(), e);
        }
    }

    /**
     * One warning per stream whose schema changed: records of the old schema still in its internal topics are read
     * with the new one (most go to the dead-letter topic; a layout that happens to match is read wrongly).
     */
    static List<String> schemaChanges(Map<String, String> before, Map<String, String> now) {
        List<String> changed = new ArrayList<>();
        now.forEach((stream, fingerprint) -> {
            String was = before.get(stream);
            if (was != null && !was.equals(fingerprint)) {
                changed.add("stream '" + stream + "' has another schema than in the version that last ran: records "
                        + "of the old schema still in its internal topics are read with the new one (those it cannot "
                        + "read go to the dead-letter topic; a layout that happens to match is read wrongly). Drain "
                        + "the old version before changing an internal stream's schema");
            }
        });
        return changed;
    }

    /** The last published spec document; null when none was published or it is not JSON. */
    private static @Nullable JsonNode publishedDoc(String pipeline, String topic, Map<?, ?> clientProps) {
        byte[] doc = DynamicSpecTopic.readSpec(pipeline, topic, clientProps);
        if (doc == null) {
            return null;
        }
        try {
            return new ObjectMapper().readTree(doc);
        } catch (IOException e) {
            LOG.warn("pipeline '{}': the spec published in {} is not JSON; its topics are not compared: {}",
                    pipeline, topic, e.toString());
            return null;
        }
    }

    /** A string-to-string object field of the document; empty when absent. */
    private static Map<String, String> fields(@Nullable JsonNode doc, String name) {
        Map<String, String> out = new LinkedHashMap<>();
        JsonNode field = doc == null ? null : doc.get(name);
        if (field != null && field.isObject()) {
            for (Iterator<Map.Entry<String, JsonNode>> it = field.fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> e = it.next();
                out.put(e.getKey(), e.getValue().asText());
            }
        }
        return out;
    }
}
