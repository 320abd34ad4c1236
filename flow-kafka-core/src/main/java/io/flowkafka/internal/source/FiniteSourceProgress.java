package io.flowkafka.internal.source;

import io.flowkafka.internal.compiler.PipelineCompiler;
import io.flowkafka.internal.watermarks.FiniteSources;
import io.flowkafka.internal.watermarks.SourceIdleness;
import io.flowkafka.internal.watermarks.WatermarkTracker;
import io.flowkafka.spec.SourceSpec;
import org.jspecify.annotations.Nullable;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.streams.processor.api.RecordMetadata;

/**
 * How far one task read its finite source partitions: each partition's bound (the last stable offset first used,
 * kept in the task's watermark store so a restart keeps the finite range) and whether it is read to it ("done",
 * kept there too). A partition a partition_filter excludes counts as done; one of an infinite source never is.
 *
 * <p>Every answer derives from the task's changelogged store: the bounds and done marks are read from it when the
 * task attempt starts, and a partition is marked done in it with the record that finishes it. The in-memory sets
 * mirror the store for this attempt only: built fresh at init, dropped with the attempt (DESIGN rule 1), so a
 * replay after an aborted transaction reads the partition again.
 *
 * <p>A partition is done once the task processed the record just before its bound, or any record at or after it;
 * or once the consumer's position passed the bound and the task processed every record the consumer returned below
 * it: the offsets before the bound may hold no record a task sees (the commit marker after the last record, aborted
 * records, records deleted by retention).
 */
public final class FiniteSourceProgress {
    private final WatermarkTracker store;
    private final FiniteSources runtime;
    private final Map<TopicPartition, Long> bounds = new HashMap<>();
    private final Set<TopicPartition> done = new HashSet<>();
    private final List<TopicPartition> partitions = new ArrayList<>();
    private final Set<TopicPartition> filtered = new HashSet<>();
    /** Per finite partition: the offset after the last record this attempt processed. */
    private final Map<TopicPartition, Long> processedTo = new HashMap<>();
    private final @Nullable SourceIdleness consumers;

    /** Whether the task's table sources are done; null without table sources. */
    private java.util.function.@Nullable BooleanSupplier tables;

    /**
     * @param sources the computation's source streams
     * @param partition the task's partition
     * @param store the task's watermark store, where bounds and done marks are kept
     * @param runtime the bounds the runtime saw at start, and the partitions it saw done from committed offsets
     * @param singleTask whether the topology runs as one task (a test driver: bounds unknown, a source ends when
     *     the test says so)
     * @param consumers what the consumers report of their positions, or null (nothing reports)
     */
    public FiniteSourceProgress(List<SourceSpec> sources, int partition, WatermarkTracker store, FiniteSources runtime,
            boolean singleTask, @Nullable SourceIdleness consumers) {
        this.consumers = consumers;
        this.store = store;
        this.runtime = runtime;
        for (SourceSpec source : sources) {
            PartitionFilter filter = KafkaSourceParameters.partitionFilter(source);
            boolean finite = KafkaSourceParameters.finite(source);
            for (String topic : PipelineCompiler.topicsOf(source)) {
                TopicPartition tp = new TopicPartition(topic, partition);
                partitions.add(tp);
                if (filter != null && !filter.accepts(partition)) {
                    // a filtered partition is never processed: like a finished finite one, it holds nothing back
                    filtered.add(tp);
                    continue;
                }
                if (!finite) {
                    continue;
                }
                String key = "bound|" + topic + "|" + partition;
                Long bound = store.getLong(key);
                if (bound == null) {
                    bound = runtime.boundOf(tp);
                    if (bound == null) {
                        // no such partition of this topic (or bounds unknown, e.g. on TopologyTestDriver): nothing to read
                        bound = singleTask ? Long.MAX_VALUE : 0L;
                    }
                    store.putLong(key, bound);
                }
                bounds.put(tp, bound);
                if (bound == 0L || Long.valueOf(1L).equals(store.getLong(doneKey(tp)))) {
                    done.add(tp);
                }
            }
        }
    }

    private static String doneKey(TopicPartition tp) {
        return "done|" + tp.topic() + "|" + tp.partition();
    }

    /** Whether any of the task's source partitions is finite. */
    public boolean anyFinite() {
        return !bounds.isEmpty();
    }

    /** The task's source partitions. */
    public List<TopicPartition> partitions() {
        return partitions;
    }

    /** Whether a partition_filter excludes this source partition. */
    public boolean filtered(TopicPartition tp) {
        return filtered.contains(tp);
    }

    /** Whether a source record lies at or above its partition's finite bound; marks the partition done at bound - 1. */
    public boolean beyondFiniteRange(RecordMetadata md) {
        TopicPartition tp = new TopicPartition(md.topic(), md.partition());
        Long bound = bounds.get(tp);
        if (bound == null) {
            return false;
        }
        if (readToEnd(tp)) {
            return true; // every record up to the bound was processed (or a test driver ended the source)
        }
        if (md.offset() >= bound) {
            markDone(tp);
            return true;
        }
        if (md.offset() == bound - 1) {
            markDone(tp);
        }
        processedTo.put(tp, md.offset() + 1); // processed next, before the task asks again
        return false;
    }

    /**
     * Whether a finite source partition is read to its bound: by this task, or as the runtime saw from the
     * committed offsets (or a test driver ended the source), which this then records.
     */
    public boolean readToEnd(TopicPartition tp) {
        if (done.contains(tp)) {
            return true;
        }
        if (bounds.containsKey(tp) && runtime.isDone(tp) && coversTaskBound(tp)) {
            markDone(tp);
            return true;
        }
        Long bound = bounds.get(tp);
        if (bound != null && bound != Long.MAX_VALUE && consumers != null
                && consumers.readPast(tp, bound, processedTo.getOrDefault(tp, -1L))) {
            markDone(tp); // what lies before the bound is no record the task sees
            return true;
        }
        return false;
    }

    /**
     * Whether the runtime's "done" (the committed offset reached the bound this instance saw at start) says the task
     * read to its own bound: not when the task's bound is later, first set on an instance that started later (the
     * records between the two bounds are still to be read). A runtime without a bound (a test driver ending the
     * source) speaks for the task.
     */
    private boolean coversTaskBound(TopicPartition tp) {
        Long instance = runtime.boundOf(tp);
        return instance == null || instance >= bounds.get(tp);
    }

    private void markDone(TopicPartition tp) {
        if (done.add(tp)) {
            store.putLong(doneKey(tp), 1L);
        }
    }

    /**
     * Makes {@link #allDone()} also wait for the task's table sources (service logs), which read no topic partition.
     *
     * @param done whether every table source of the task is done (a finite one read its cycle; an infinite one never)
     */
    public void alsoWaitFor(java.util.function.BooleanSupplier done) {
        this.tables = done;
    }

    /**
     * Whether every source partition of this task is done: read up to its finite bound, or excluded by a
     * partition_filter. A partition of an infinite source is never done.
     */
    public boolean allDone() {
        if (tables != null && !tables.getAsBoolean()) {
            return false;
        }
        if (partitions.isEmpty()) {
            return tables != null;
        }
        for (TopicPartition tp : partitions) {
            if (filtered.contains(tp)) {
                continue;
            }
            if (!bounds.containsKey(tp) || !readToEnd(tp)) {
                return false;
            }
        }
        return true;
    }
}
