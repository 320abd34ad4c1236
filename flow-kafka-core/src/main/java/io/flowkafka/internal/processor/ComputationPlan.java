package io.flowkafka.internal.processor;

import io.flowkafka.internal.outbox.SyncSinkSlot;
import io.flowkafka.spec.ComputationSpec;
import io.flowkafka.spec.GroupByColumn;
import io.flowkafka.spec.SinkSpec;
import io.flowkafka.spec.SourceSpec;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.avro.Schema;
import org.jspecify.annotations.Nullable;

/**
 * What the compiler decided for one computation: which topic carries which input, and where each
 * output stream goes. Immutable and shared by all tasks of the computation; tasks build their own
 * (non-thread-safe) codecs from it.
 *
 * @param pipeline pipeline name
 * @param spec the computation
 * @param inputs by Kafka topic
 * @param outputs by output stream id
 * @param outputSchemas payload schema of each output stream
 * @param inputSchemas payload schema of each input stream
 * @param writers for each internal input stream, the computation writing it
 * @param partitionCounts the partition counts of all computations (filled before start)
 * @param watermarks watermark settings
 * @param finiteSources bounds of finite sources
 * @param statusNode the sink node of the status topic, where the task reports its completion
 * @param timers timer firing settings
 * @param outputLimits output limits shared with the runtime
 * @param deadLetters whether failed timers go to the dead-letter topic (else the task fails)
 * @param deadLetterNode the sink node of the dead-letter topic
 * @param visitors key-visitor settings and the runtime's shared dynamic spec, status and metrics
 * @param controlTopic the control topic giving a computation without inputs its tasks; null if it has inputs
 * @param alignment the watermark_alignment groups of this instance's tasks
 * @param sourceIdleness when the runtime kept its sources paused: source idleness is measured without that time
 * @param external the external tables the computation publishes and reads
 * @param serviceLogs the computation's service-log sources (tables read cycle after cycle); empty if none
 */
public record ComputationPlan(String pipeline, ComputationSpec spec, Map<String, Input> inputs,
        Map<String, List<Route>> outputs, Map<String, Schema> outputSchemas, Map<String, Schema> inputSchemas,
        Map<String, String> writers, io.flowkafka.internal.watermarks.PartitionCounts partitionCounts,
        WatermarkSettings watermarks, io.flowkafka.internal.watermarks.FiniteSources finiteSources,
        String statusNode, TimerSettings timers, io.flowkafka.internal.watermarks.OutputLimits outputLimits,
        boolean deadLetters, String deadLetterNode, VisitorRuntime visitors, @Nullable String controlTopic,
        io.flowkafka.internal.watermarks.WatermarkAlignment alignment,
        io.flowkafka.internal.watermarks.SourceIdleness sourceIdleness,
        io.flowkafka.internal.external.ExternalPlan external,
        List<io.flowkafka.internal.source.ServiceLogScan.Table> serviceLogs) {
    /**
     * Whether the computation has a state store: it declares states, manages external tables (whose rows are
     * state rows under the manager's name) or publishes a state to a table.
     */
    public static boolean hasStateStore(ComputationSpec spec, io.flowkafka.internal.external.ExternalPlan external) {
        return !spec.states().isEmpty() || !spec.externalStateManagers().isEmpty() || !external.published().isEmpty();
    }

    /** The computation's staged sinks (see {@code StagedEpochs}), each once. */
    public List<SyncSinkSlot> stagedSinks() {
        List<SyncSinkSlot> staged = new ArrayList<>();
        for (List<Route> rs : outputs().values()) {
            for (Route r : rs) {
                if (r instanceof SinkRoute sr && sr.writer() != null && sr.writer().staged()
                        && !staged.contains(sr.writer())) {
                    staged.add(sr.writer());
                }
            }
        }
        return staged;
    }

    /**
     * Whether the computation's task has an {@code EpochBarrierStore}: it writes a synchronous
     * external sink or an at-most-once sink.
     */
    public boolean hasEpochBarrier() {
        for (List<Route> rs : outputs().values()) {
            for (Route r : rs) {
                if (r instanceof SinkRoute sr && (sr.writer() != null || sr.queue() != null)) {
                    return true;
                }
            }
        }
        return false;
    }


    /**
     * What key visitors share with the runtime.
     *
     * @param tickMs how often a task checks whether its visitors are due
     * @param maxRowsPerPunctuation about this many rows per punctuation at most
     * @param maxPunctuationMs at most this long per punctuation
     * @param dynamic the runtime's dynamic spec (current visitor settings)
     * @param status where diagnostics are reported
     * @param meters where metrics are registered
     */
    public record VisitorRuntime(long tickMs, int maxRowsPerPunctuation, long maxPunctuationMs,
            io.flowkafka.internal.config.DynamicSpec dynamic, io.flowkafka.internal.status.StatusBoard status,
            io.micrometer.core.instrument.MeterRegistry meters) {
    }

    /**
     * How timers fire.
     *
     * @param punctuationIntervalMs how often the timer punctuator runs
     * @param maxPerPunctuation at most this many timers per step
     * @param maxPunctuationMs at most this long per step; 0: no time bound, steps are bounded by count only
     * @param untilDone deterministic steps (FlowTestDriver): whenever timers fire, further steps follow at once
     *     until no due timer is left, rather than at the next punctuation, whose time a test may never advance
     */
    public record TimerSettings(long punctuationIntervalMs, int maxPerPunctuation, long maxPunctuationMs,
            boolean untilDone) {
        /** Settings of a deployment: steps bounded by count and time, the rest at the next punctuation. */
        public TimerSettings(long punctuationIntervalMs, int maxPerPunctuation, long maxPunctuationMs) {
            this(punctuationIntervalMs, maxPerPunctuation, maxPunctuationMs, false);
        }
    }

    /**
     * How often watermarks are sent.
     *
     * @param intervalMs at most this often, when they changed
     * @param heartbeatMs at least this often, even when unchanged
     * @param eachChange deterministic steps (FlowTestDriver): send whenever they changed, right after the record,
     *     timer step or punctuation that changed them, without waiting for the interval
     */
    public record WatermarkSettings(long intervalMs, long heartbeatMs, boolean eachChange) {
        /** Settings of a deployment: at most one send per interval. */
        public WatermarkSettings(long intervalMs, long heartbeatMs) {
            this(intervalMs, heartbeatMs, false);
        }
    }

    /**
     * An input topic.
     *
     * @param topic the Kafka topic
     * @param streamId the stream it carries
     * @param source the source reading it, or null for an internal stream topic
     */
    public record Input(String topic, String streamId, @Nullable SourceSpec source) {
    }

    /** Where an output stream's messages go. */
    public sealed interface Route permits InternalRoute, SinkRoute {
        /** The name of the Kafka Streams sink node. */
        String sinkNode();

        /** The topic written. */
        String topic();
    }

    /**
     * Whether any output stream goes to an internal topic, whose readers follow this computation's
     * output watermark: only then do its pending timers need the holds index (the exact watermark
     * hold; see {@code TimerStore}).
     */
    public static boolean writesInternalStreams(Map<String, List<Route>> outputs) {
        return outputs.values().stream().anyMatch(rs -> rs.stream().anyMatch(r -> r instanceof InternalRoute));
    }

    /**
     * An internal stream topic read by {@code consumers}, which share one group-by key.
     *
     * @param consumerGroupBy the consumers' {@code group_by_schema}
     * @param consumerId the first consumer, naming the key schema
     */
    public record InternalRoute(String sinkNode, String topic, List<GroupByColumn> consumerGroupBy, String consumerId)
            implements Route {
    }

    /**
     * A sink: a user topic written inside the epoch transaction (the sync {@code KafkaSink}), or,
     * for an async sink, its outbox topic, from which the sink's delivery service delivers.
     *
     * @param outbox whether {@code topic} is the sink's outbox topic
     * @param queue the in-memory queue of an at-most-once async sink (then nothing is written to
     *     Kafka inside the transaction and {@code topic} is only a name), or null
     * @param writer the writer slot of a synchronous external sink (records sent after each call,
     *     acknowledged before each commit), or null
     */
    public record SinkRoute(String sinkNode, String topic, SinkSpec sink, boolean outbox,
            io.flowkafka.internal.outbox.@Nullable AtMostOnceQueue queue,
            io.flowkafka.internal.outbox.@Nullable SyncSinkSlot writer) implements Route {
        /** A sync {@code KafkaSink} to a topic of the pipeline's cluster. */
        public static SinkRoute sync(String sinkNode, String topic, SinkSpec sink) {
            return new SinkRoute(sinkNode, topic, sink, false, null, null);
        }
    }
}
