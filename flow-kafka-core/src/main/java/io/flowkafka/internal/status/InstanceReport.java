package io.flowkafka.internal.status;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.flowkafka.internal.compiler.CompiledPipeline;
import io.flowkafka.internal.metrics.TaskMeters;
import io.flowkafka.internal.watermarks.OutputLimits;
import io.flowkafka.runtime.StatusError;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsResult.ListOffsetsResultInfo;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.TaskMetadata;
import org.apache.kafka.streams.ThreadMetadata;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Builds one instance's part of the status page: per task it runs (computation, partition) the input lag, output
 * watermarks, pending timers, key-visitor progress, outbox backlog and errors; for the pipeline its dead letters and
 * blocked output streams. It only reads what the runtime already measures (Kafka Streams' task metadata, the tasks'
 * {@link TaskReading}s, the key-visitor gauges, the output limits) plus two cheap Admin offset lookups; a value it
 * does not know is JSON {@code null}, which the page shows as "n/a", never a guess.
 *
 * <p>Threading: {@link #build} runs on the status publisher's thread.
 */
public final class InstanceReport {
    private static final Logger LOG = LoggerFactory.getLogger(InstanceReport.class);
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration ADMIN_TIMEOUT = Duration.ofSeconds(5);

    /** Where this instance is: its id, host and the address of its page. */
    public record Identity(String instanceId, String host, String httpAddress) {
    }

    private final String pipeline;
    private final Identity identity;
    private final CompiledPipeline compiled;
    private final String applicationId;
    private final KafkaStreams streams;
    private final StatusBoard board;
    private final MeterRegistry meters;
    private final Admin admin;
    private final Supplier<String> state;
    /** Sub-topology id to computation id: each computation is the sub-topology holding its {@code <id>.process}. */
    private final Map<Integer, String> computations = new HashMap<>();

    /**
     * @param streams the running Kafka Streams of the instance
     * @param state the runtime's state as a user sees it
     */
    public InstanceReport(String pipeline, Identity identity, CompiledPipeline compiled, String applicationId,
            KafkaStreams streams, StatusBoard board, MeterRegistry meters, Admin admin, Supplier<String> state,
            Set<String> computationIds) {
        this.pipeline = pipeline;
        this.identity = identity;
        this.compiled = compiled;
        this.applicationId = applicationId;
        this.streams = streams;
        this.board = board;
        this.meters = meters;
        this.admin = admin;
        this.state = state;
        compiled.computationsBySubtopology().forEach((sub, id) -> {
            if (computationIds.contains(id)) {
                computations.put(sub, id);
            }
        });
    }

    /** The instance's part, as JSON, stamped with {@code nowMs}. */
    public ObjectNode build(long nowMs) {
        ObjectNode out = JSON.createObjectNode();
        out.put("instance", identity.instanceId());
        out.put("host", identity.host());
        out.put("http", identity.httpAddress());
        out.put("pipeline", pipeline);
        out.put("state", state.get());
        out.put("timestamp", nowMs);
        List<TaskMetadata> tasks = new ArrayList<>();
        try {
            for (ThreadMetadata thread : streams.metadataForLocalThreads()) {
                tasks.addAll(thread.activeTasks());
            }
        } catch (RuntimeException e) {
            LOG.debug("pipeline '{}': no task metadata now ({})", pipeline, e.toString());
        }
        tasks.sort(Comparator.comparing((TaskMetadata t) -> computationOf(t)).thenComparingInt(t -> t.taskId()
                .partition()));
        Map<TopicPartition, Long> outboxBacklog = outboxBacklog(tasks);
        List<StatusError> errors = board.errors();
        ArrayNode taskNodes = out.putArray("tasks");
        Set<String> reported = new HashSet<>();
        for (TaskMetadata t : tasks) {
            String computation = computationOf(t);
            int partition = t.taskId().partition();
            reported.add(computation + "/" + partition);
            taskNodes.add(task(t, computation, partition, outboxBacklog, errors));
        }
        ArrayNode other = out.putArray("errors"); // entries of tasks not running here now, e.g. a failed thread's
        for (StatusError e : errors) {
            if (!reported.contains(e.computation() + "/" + e.partition())) {
                other.add(error(e));
            }
        }
        Long deadLetters = records(compiled.deadLetterTopic());
        if (deadLetters == null) {
            out.putNull("dead_letters");
        } else {
            out.put("dead_letters", deadLetters);
        }
        OutputLimits limits = compiled.outputLimits();
        ArrayNode outputs = out.putArray("output_limits");
        limits.limits().forEach((stream, limit) -> outputs.addObject().put("stream", stream).put("limit", limit)
                .put("backlog", limits.backlogOf(stream)).put("blocked", limits.isBlocked(stream)));
        return out;
    }

    private String computationOf(TaskMetadata t) {
        return computations.getOrDefault(t.taskId().subtopology(), "subtopology-" + t.taskId().subtopology());
    }

    ObjectNode task(TaskMetadata t, String computation, int partition, Map<TopicPartition, Long> outboxBacklog,
            List<StatusError> errors) {
        ObjectNode n = JSON.createObjectNode();
        n.put("computation", computation);
        n.put("partition", partition);
        long lag = 0;
        boolean known = !t.topicPartitions().isEmpty();
        for (TopicPartition tp : t.topicPartitions()) {
            Long end = t.endOffsets().get(tp);
            Long committed = t.committedOffsets().get(tp);
            if (end == null || end < 0 || committed == null || committed < 0) {
                known = false;
            } else {
                lag += Math.max(0, end - committed);
            }
        }
        // the task's consumer lag (last stable offset minus position) when its gauge has it: the task metadata's end
        // offsets are only what the thread last fetched, so end - committed stays about one fetch however far behind
        Gauge consumerLag = meters.find(TaskMeters.INPUT_LAG).tags("pipeline", pipeline, "computation", computation,
                "partition", Integer.toString(partition)).gauge();
        double fromConsumer = consumerLag == null ? Double.NaN : consumerLag.value();
        if (!Double.isNaN(fromConsumer)) {
            n.put("input_lag", (long) fromConsumer);
        } else if (known) {
            n.put("input_lag", lag);
        } else {
            n.putNull("input_lag");
        }
        TaskReading reading = board.readingOrNull(computation, partition);
        if (reading == null || !reading.measured()) {
            n.putNull("event_watermark_ms");
            n.putNull("system_watermark_ms");
            n.putNull("pending_timers");
        } else {
            watermark(n, "event_watermark_ms", reading.eventWatermark());
            watermark(n, "system_watermark_ms", reading.systemWatermark());
            if (reading.pendingTimers() == TaskReading.NO_TIMERS) {
                n.putNull("pending_timers");
            } else {
                n.put("pending_timers", reading.pendingTimers());
            }
        }
        ArrayNode visitors = n.putArray("visitors");
        for (Gauge g : meters.find("flow.key_visitor.pass_progress").tag("pipeline", pipeline)
                .tag("computation", computation).tag("partition", Integer.toString(partition)).gauges()) {
            double progress = g.value();
            ObjectNode v = visitors.addObject().put("stream", g.getId().getTag("stream"));
            if (Double.isNaN(progress)) {
                v.putNull("progress");
            } else {
                v.put("progress", progress);
            }
            Gauge pass = meters.find("flow.key_visitor.pass").tags(g.getId().getTags()).gauge();
            if (pass != null && pass.value() >= 0) {
                v.put("pass", (long) pass.value());
            } else {
                v.putNull("pass");
            }
        }
        Long backlog = null;
        for (CompiledPipeline.AsyncSink sink : compiled.asyncSinks()) {
            Long b = outboxBacklog.get(new TopicPartition(sink.outboxTopic(), partition));
            if (sink.computation().equals(computation) && b != null) {
                backlog = (backlog == null ? 0 : backlog) + b;
            }
        }
        if (backlog == null) {
            n.putNull("outbox_backlog");
        } else {
            n.put("outbox_backlog", backlog);
        }
        ArrayNode taskErrors = n.putArray("errors");
        for (StatusError e : errors) {
            if (e.computation().equals(computation) && e.partition() == partition) {
                taskErrors.add(error(e));
            }
        }
        return n;
    }

    /** A watermark in milliseconds; "-inf" before anything holds it, "+inf" once completed. */
    private static void watermark(ObjectNode n, String field, long nanos) {
        if (nanos == Long.MIN_VALUE) {
            n.put(field, "-inf");
        } else if (nanos == Long.MAX_VALUE) {
            n.put(field, "+inf");
        } else {
            n.put(field, nanos / 1_000_000L);
        }
    }

    private static ObjectNode error(StatusError e) {
        return JSON.createObjectNode().put("computation", e.computation()).put("partition", e.partition())
                .put("path", e.path()).put("message", e.message()).put("since", e.since().toString())
                .put("severity", e.severity().name());
    }

    /**
     * The outbox backlog of the partitions of this instance's tasks: end offset minus the delivery group's committed
     * offset; empty when the pipeline has no outbox or the lookup failed.
     */
    private Map<TopicPartition, Long> outboxBacklog(List<TaskMetadata> tasks) {
        Map<TopicPartition, Long> out = new HashMap<>();
        List<CompiledPipeline.AsyncSink> outboxes = compiled.asyncSinks().stream()
                .filter(s -> s.queue() == null && s.writer() == null).toList();
        if (outboxes.isEmpty() || tasks.isEmpty()) {
            return out;
        }
        try {
            for (CompiledPipeline.AsyncSink sink : outboxes) {
                Map<TopicPartition, OffsetSpec> request = new HashMap<>();
                for (TaskMetadata t : tasks) {
                    if (computationOf(t).equals(sink.computation())) {
                        request.put(new TopicPartition(sink.outboxTopic(), t.taskId().partition()), OffsetSpec.latest());
                    }
                }
                if (request.isEmpty()) {
                    continue;
                }
                Map<TopicPartition, ListOffsetsResultInfo> ends = admin.listOffsets(request).all()
                        .get(ADMIN_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
                Map<TopicPartition, OffsetAndMetadata> committed = admin.listConsumerGroupOffsets(applicationId
                        + ".outbox." + sink.sink().id()).partitionsToOffsetAndMetadata()
                        .get(ADMIN_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
                ends.forEach((tp, end) -> {
                    OffsetAndMetadata c = committed.get(tp);
                    out.put(tp, Math.max(0, end.offset() - (c == null ? 0 : c.offset())));
                });
            }
        } catch (Exception e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            LOG.debug("pipeline '{}': outbox backlog not measured now ({})", pipeline, e.toString());
        }
        return out;
    }

    /** About how many records a topic holds (end minus start offsets, markers included), or null if unknown. */
    private @Nullable Long records(String topic) {
        try {
            TopicPartition tp = new TopicPartition(topic, 0);
            long earliest = admin.listOffsets(Map.of(tp, OffsetSpec.earliest())).all()
                    .get(ADMIN_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS).get(tp).offset();
            long latest = admin.listOffsets(Map.of(tp, OffsetSpec.latest())).all()
                    .get(ADMIN_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS).get(tp).offset();
            return Math.max(0, latest - earliest);
        } catch (Exception e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            return null;
        }
    }
}
