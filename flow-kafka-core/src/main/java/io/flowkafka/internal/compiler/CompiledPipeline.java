package io.flowkafka.internal.compiler;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.TopologyDescription;

/**
 * The result of compiling a spec: the Kafka Streams topology and the topics it needs.
 *
 * @param topology the topology (one sub-topology per computation)
 * @param internalTopics topics flow-kafka creates and owns, with partition counts
 * @param sourceTopics user topics read by sources (must exist)
 * @param sinkTopics user topics written by sinks, with the writer's partition count
 * @param streamTopics for each stream, the topic(s) carrying it (internal topics first, then sink topics)
 * @param deadLetterTopic the dead-letter topic
 * @param partitionCounts partition counts per computation; source computations' are filled at start
 * @param sourceTopicsByComputation the source topics of each source computation
 * @param finiteSources bounds of finite sources, filled at start
 * @param statusTopic the topic where each task reports its completion
 * @param outputLimits output limits, measured by the runtime
 * @param outboxTopics the outbox topics of async sinks, with partition counts (created like internal
 *     topics, but purged by their delivery services, not by the internal-topic purger)
 * @param asyncSinks the async sinks, delivered from their outbox topics
 * @param alignment the watermark_alignment groups of this instance's tasks
 * @param sourceIdleness when the runtime kept its sources paused (pause, drain): source idleness does not count it
 * @param tableTopics external table topics the pipeline writes (managers, state-joined states), with the writing
 *     computation's partition count: created compacted
 * @param versionedTopics versioned reference topics the pipeline reads: created compacted with one partition, and
 *     checked to have one
 * @param externalTableTopics table topics read but written outside the pipeline: must exist
 */
public record CompiledPipeline(Topology topology, Map<String, Integer> internalTopics, List<String> sourceTopics,
        Map<String, Integer> sinkTopics, Map<String, List<String>> streamTopics, String deadLetterTopic,
        io.flowkafka.internal.watermarks.PartitionCounts partitionCounts,
        Map<String, List<String>> sourceTopicsByComputation,
        io.flowkafka.internal.watermarks.FiniteSources finiteSources, String statusTopic,
        io.flowkafka.internal.watermarks.OutputLimits outputLimits, Map<String, Integer> outboxTopics,
        List<AsyncSink> asyncSinks, io.flowkafka.internal.watermarks.WatermarkAlignment alignment,
        io.flowkafka.internal.watermarks.SourceIdleness sourceIdleness, Map<String, Integer> tableTopics,
        Map<String, Integer> versionedTopics, List<String> externalTableTopics) {

    /**
     * The computation of each sub-topology: the one whose {@code <id>.process} node it holds.
     *
     * @return sub-topology id to computation id
     */
    public Map<Integer, String> computationsBySubtopology() {
        Map<Integer, String> out = new HashMap<>();
        for (TopologyDescription.Subtopology sub : topology.describe().subtopologies()) {
            for (TopologyDescription.Node node : sub.nodes()) {
                if (node.name().endsWith(PROCESSOR_SUFFIX)) {
                    out.put(sub.id(), node.name().substring(0, node.name().length() - PROCESSOR_SUFFIX.length()));
                }
            }
        }
        return out;
    }

    /** The suffix of a computation's processor node: {@code <id>.process}. */
    private static final String PROCESSOR_SUFFIX = ".process";

    /**
     * An external sink: its spec, the computation it belongs to and its outbox topic, or, with
     * {@code at_most_once_strategy}, its in-memory queue instead, or, for a synchronous sink, its
     * writer slot.
     */
    public record AsyncSink(io.flowkafka.spec.SinkSpec sink, String computation, String outboxTopic,
            io.flowkafka.internal.outbox.@org.jspecify.annotations.Nullable AtMostOnceQueue queue,
            io.flowkafka.internal.outbox.@org.jspecify.annotations.Nullable SyncSinkSlot writer) {
    }
}
