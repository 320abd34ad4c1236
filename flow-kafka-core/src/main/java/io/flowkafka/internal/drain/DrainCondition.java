package io.flowkafka.internal.drain;

import io.flowkafka.internal.compiler.CompiledPipeline;
import io.flowkafka.internal.compiler.PipelineCompiler;
import io.flowkafka.spec.ComputationSpec;
import io.flowkafka.spec.PipelineSpec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.TopologyDescription;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * When a draining pipeline counts as drained: every source record this instance's stream threads took is processed
 * and committed, and no internal stream a computation reads holds a committed data record after the pipeline's
 * committed offset. The rule it keeps: drained only when seen twice in a row, a commit interval apart (at most 1 s),
 * so a record in flight between two computations is not missed.
 *
 * <p>Threading: runs on the thread that called the drain.
 */
public final class DrainCondition {
    private static final Logger LOG = LoggerFactory.getLogger(DrainCondition.class);

    private final String pipeline;
    private final String applicationId;
    private final Map<String, Integer> topics;
    private final Map<String, Object> client;
    private final long gapMs;

    /**
     * @param topicPrefix the pipeline's topic prefix ({@code flow.topic.prefix})
     * @param client consumer settings of the pipeline's cluster (bootstrap servers, security), without a group
     * @param commitIntervalMs the pipeline's {@code commit.interval.ms}
     */
    public DrainCondition(PipelineSpec spec, CompiledPipeline compiled, String topicPrefix, String applicationId,
            Map<String, Object> client, long commitIntervalMs) {
        this.pipeline = spec.name();
        this.applicationId = applicationId;
        this.topics = drainTopics(spec, compiled, topicPrefix);
        this.client = client;
        this.gapMs = Math.max(50, Math.min(1000, commitIntervalMs));
    }

    /** The internal topics the drain waits on, with partition counts. */
    public Map<String, Integer> topics() {
        return topics;
    }

    /**
     * Waits until drained or the deadline ({@link System#nanoTime()}).
     *
     * @return null if drained, else what was left at the last check
     */
    public @Nullable String await(KafkaStreams ks, DrainingClientSupplier supplier, Admin admin, long deadline) {
        int clean = 0;
        String left = "not checked";
        try (var backlog = new InternalBacklog(admin, applicationId, topics, client)) {
            while (true) {
                KafkaStreams.State s = ks.state();
                if (!s.isRunningOrRebalancing()) {
                    return "Kafka Streams is " + s;
                }
                left = check(supplier, backlog, deadline);
                clean = left == null ? clean + 1 : 0;
                if (clean >= 2) {
                    return null;
                }
                LOG.debug("pipeline '{}' drain check: {}", pipeline, left == null ? "drained, confirming" : left);
                long remainingMs = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
                if (remainingMs <= 0) {
                    return left == null ? "drained once, not confirmed" : left;
                }
                Thread.sleep(Math.min(gapMs, remainingMs)); // let a commit interval pass between two checks
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "interrupted; " + left;
        }
    }

    /** One check: null if drained, else what is left. */
    private static @Nullable String check(DrainingClientSupplier supplier, InternalBacklog backlog, long deadline)
            throws InterruptedException {
        var inHand = supplier.sourcesInHand();
        if (inHand.isEmpty()) {
            return "a stream thread has not yet polled with its source partitions paused";
        }
        Map<TopicPartition, OffsetAndMetadata> committed;
        try {
            committed = backlog.committed(Duration.ofNanos(Math.max(0, deadline - System.nanoTime())));
        } catch (ExecutionException | TimeoutException e) {
            return "committed offsets unknown: " + e;
        }
        List<String> behind = new ArrayList<>();
        inHand.get().forEach((tp, offset) -> {
            var om = committed.get(tp);
            if (om == null || om.offset() < offset) {
                behind.add(tp + " committed " + (om == null ? "nothing" : om.offset()) + " < " + offset);
            }
        });
        if (!behind.isEmpty()) {
            return "source records read but not yet processed and committed: " + behind;
        }
        InternalBacklog.Look look;
        try {
            look = backlog.look(committed, Duration.ofNanos(Math.max(0, deadline - System.nanoTime())));
        } catch (KafkaException e) {
            return "internal topics unreadable: " + e; // retried at the next check
        }
        if (!look.withData().isEmpty()) {
            return "data records not yet consumed in " + look.withData();
        }
        if (!look.unread().isEmpty()) {
            return "not read to their end in time: " + look.unread();
        }
        return null;
    }

    /**
     * The internal topics a drain waits on: those read by a computation, except the control topics
     * of computations without inputs (key-visitor only, or reading only service logs), whose heartbeats never stop.
     */
    private static Map<String, Integer> drainTopics(PipelineSpec spec, CompiledPipeline compiled, String prefix) {
        Set<String> read = new HashSet<>();
        for (var sub : compiled.topology().describe().subtopologies()) {
            for (var node : sub.nodes()) {
                if (node instanceof TopologyDescription.Source source && source.topicSet() != null) {
                    read.addAll(source.topicSet());
                }
            }
        }
        for (ComputationSpec c : spec.computations().values()) {
            if (c.inputStreamIds().isEmpty() && !io.flowkafka.internal.source.ServiceLogSource.readsTopics(c)) {
                read.remove(PipelineCompiler.controlTopic(prefix, spec.name(), c.id()));
            }
        }
        Map<String, Integer> topics = new LinkedHashMap<>();
        compiled.internalTopics().forEach((topic, partitions) -> {
            if (read.contains(topic)) {
                topics.put(topic, partitions);
            }
        });
        return topics;
    }
}
