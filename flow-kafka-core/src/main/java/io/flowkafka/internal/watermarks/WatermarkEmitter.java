package io.flowkafka.internal.watermarks;

import io.flowkafka.avro.ControlRecord;
import io.flowkafka.internal.message.FlowHeaders;
import io.flowkafka.internal.partition.OwnPartitioner;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.jspecify.annotations.Nullable;

/**
 * Records a task's output watermarks and completion in its watermark store and sends them in-band: a control
 * record to every partition of each internal output topic when a value changed, at most once per watermark
 * interval, and as a heartbeat (DESIGN "Watermarks and completion"). An output stream with its own
 * {@code streams_dependency} gets its own values. A completion is reported on the status topic and committed at
 * once, since readers of a completed output wait for it.
 *
 * <p>What it last sent is read from the store when the task attempt starts (DESIGN rule 1); the sequence numbers
 * only order one attempt's records. Not thread-safe.
 */
public final class WatermarkEmitter {
    /** The task's output watermarks and completion, as computed from its inputs, sources, timers and visitors. */
    public record Values(long event, long system, boolean idle, boolean completed) {
    }

    private final String computation;
    private final int partition;
    private final WatermarkTracker store;
    private final ProcessorContext<byte[], byte[]> context;
    private final ControlRecords codec = new ControlRecords();
    private final Map<String, List<String>> controlNodesByStream;
    private final Map<String, List<String>> ownDependencies = new LinkedHashMap<>();
    private final String statusNode;
    private final @Nullable String controlTopicNode;
    private final int maxIdleProducers;
    private final long intervalMs;
    private final long heartbeatMs;
    private long lastEmitWallMs = Long.MIN_VALUE;
    private long sequence;
    private WatermarkTracker.Output lastEmitted;
    private Map<String, WatermarkTracker.Output> lastEmittedOwn = Map.of();
    /**
     * Per control sink node: the values (sequence aside) it got last, from a control record or a message's stamp
     * ({@link #stamp}).
     */
    private final Map<String, ControlRecord> lastSent = new HashMap<>();

    /**
     * @param computation the computation
     * @param store the task's watermark store
     * @param context the task's context (forwarding, commit, clock)
     * @param controlNodesByStream the control sink nodes of each internal output stream
     * @param streamsDependency the computation's {@code streams_dependency}
     * @param statusNode the sink node of the status topic
     * @param controlTopicNode the sink node of the computation's control topic (its tasks' heartbeat), or null
     * @param maxIdleProducers how many of this computation's partitions readers may skip as idle
     * @param intervalMs at most one send per this interval
     * @param heartbeatMs a send at least this often
     */
    public WatermarkEmitter(String computation, WatermarkTracker store, ProcessorContext<byte[], byte[]> context,
            Map<String, List<String>> controlNodesByStream, Map<String, List<String>> streamsDependency,
            String statusNode, @Nullable String controlTopicNode, int maxIdleProducers, long intervalMs,
            long heartbeatMs) {
        this.computation = computation;
        this.partition = context.taskId().partition();
        this.store = store;
        this.context = context;
        this.controlNodesByStream = controlNodesByStream;
        controlNodesByStream.keySet().forEach(stream -> {
            List<String> deps = streamsDependency.get(stream);
            if (deps != null) {
                ownDependencies.put(stream, deps);
            }
        });
        this.statusNode = statusNode;
        this.controlTopicNode = controlTopicNode;
        this.maxIdleProducers = maxIdleProducers;
        this.intervalMs = intervalMs;
        this.heartbeatMs = heartbeatMs;
        this.lastEmitted = store.output();
    }

    /** Whether the watermark interval passed since the last send (or nothing was sent yet). */
    public boolean due(long nowMs) {
        return lastEmitWallMs == Long.MIN_VALUE || nowMs - lastEmitWallMs >= intervalMs;
    }

    /**
     * Records the task's values and those of the output streams with their own dependencies, and sends them when
     * they changed or the heartbeat is due.
     *
     * @param dependencyWatermarks an output stream's own values from its dependencies: {event, system, completed}
     */
    public void emit(long now, Values values, Function<List<String>, long[]> dependencyWatermarks) {
        boolean wasCompleted = store.output().completed();
        WatermarkTracker.Output out = store.recordOutput(values.event(), values.system(), values.completed());
        Map<String, WatermarkTracker.Output> own = ownDependencies.isEmpty() ? Map.of() : new HashMap<>();
        boolean ownCompletedNow = false;
        for (Map.Entry<String, List<String>> e : ownDependencies.entrySet()) {
            long[] w = dependencyWatermarks.apply(e.getValue());
            boolean ownWasCompleted = store.output(e.getKey()).completed();
            WatermarkTracker.Output o = store.recordOutput(e.getKey(), w[0], w[1], w[2] != 0);
            ownCompletedNow |= o.completed() && !ownWasCompleted;
            own.put(e.getKey(), o);
        }
        boolean changed = !out.equals(lastEmitted) || !own.equals(lastEmittedOwn);
        if (out.completed() && !wasCompleted) {
            String task = computation + "/" + partition;
            context.forward(new Record<>(task.getBytes(StandardCharsets.UTF_8),
                    "completed".getBytes(StandardCharsets.UTF_8), now), statusNode);
        }
        if ((out.completed() && !wasCompleted) || ownCompletedNow) {
            // Kafka Streams commits the task right after this punctuation (the control records below included),
            // not up to commit.interval.ms later: the readers of a completed output (the next computation,
            // awaitCompletion) wait for these records
            context.commit();
        }
        boolean heartbeat = lastEmitWallMs == Long.MIN_VALUE || now - lastEmitWallMs >= heartbeatMs;
        if ((changed || heartbeat) && !controlNodesByStream.isEmpty()) {
            long seq = ++sequence;
            boolean completedNow = out.completed() && !wasCompleted;
            for (Map.Entry<String, List<String>> e : controlNodesByStream.entrySet()) {
                WatermarkTracker.Output o = own.getOrDefault(e.getKey(), out);
                ControlRecord r = control(o, values.idle(), seq);
                byte[] value = null;
                for (String node : e.getValue()) {
                    if (!heartbeat && !completedNow && sameValues(lastSent.get(node), r)) {
                        continue; // the last message to this node carried these values
                    }
                    if (value == null) {
                        value = codec.encode(r);
                    }
                    RecordHeaders h = new RecordHeaders();
                    h.add(FlowHeaders.CONTROL, new byte[] {1});
                    context.forward(new Record<>(new byte[8], value, now, h), node);
                    // lastSent stays empty until the first stamp: a node without an entry is always sent to, so a
                    // pipeline that never stamps (any but a source computation on the test driver) keeps no entries
                    if (!lastSent.isEmpty()) {
                        lastSent.put(node, r);
                    }
                }
            }
        }
        if (heartbeat && controlTopicNode != null) {
            context.forward(new Record<>(OwnPartitioner.keyOf(partition), new byte[0], now), controlTopicNode);
        }
        if (changed || heartbeat) {
            lastEmitted = out;
            lastEmittedOwn = own;
            lastEmitWallMs = now;
        }
    }

    /**
     * The control record value a message to {@code node} (a sink node of internal output {@code stream}) carries as
     * {@link FlowHeaders#WATERMARK_AFTER}: what {@link #emit} with {@code values} would send now. {@link #emit} then
     * sends no control record to that node while its values stay these. Only where the control record would reach
     * the message's partition (one-partition topics: FlowTestDriver), and only with {@code values} that cannot go
     * down before the next {@link #emit} (the caller's rule). Null for a stream with its own
     * {@code streams_dependency}: its values are not {@code values}.
     */
    public byte @Nullable [] stamp(String node, String stream, Values values) {
        if (ownDependencies.containsKey(stream)) {
            return null;
        }
        WatermarkTracker.Output last = store.output();
        WatermarkTracker.Output o = new WatermarkTracker.Output(Math.max(last.eventWatermark(), values.event()),
                Math.max(last.systemWatermark(), values.system()), last.completed() || values.completed());
        ControlRecord r = control(o, values.idle(), ++sequence);
        lastSent.put(node, r);
        return codec.encode(r);
    }

    private ControlRecord control(WatermarkTracker.Output o, boolean idle, long seq) {
        return ControlRecord.newBuilder()
                .setComputation(computation).setPartition(partition)
                .setEventWatermark(o.eventWatermark()).setSystemWatermark(o.systemWatermark())
                .setCompleted(o.completed()).setIdle(idle && !o.completed())
                .setMaxIdleProducers(maxIdleProducers).setSequence(seq).build();
    }

    /** Whether two control records carry the same values (their sequence numbers aside). */
    private static boolean sameValues(@Nullable ControlRecord a, ControlRecord b) {
        return a != null && a.getEventWatermark() == b.getEventWatermark()
                && a.getSystemWatermark() == b.getSystemWatermark() && a.getCompleted() == b.getCompleted()
                && a.getIdle() == b.getIdle() && a.getMaxIdleProducers() == b.getMaxIdleProducers();
    }

    /** The output streams that have their own {@code streams_dependency}. */
    public Map<String, List<String>> ownDependencies() {
        return ownDependencies;
    }
}
