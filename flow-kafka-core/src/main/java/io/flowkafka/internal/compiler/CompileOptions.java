package io.flowkafka.internal.compiler;

import io.flowkafka.internal.processor.ComputationPlan;
import io.flowkafka.internal.watermarks.OutputLimits;
import java.util.Map;

/**
 * Deployment choices that shape the compiled topology.
 *
 * @param topicPrefix prefix of every topic name
 * @param persistentStores RocksDB stores (true) or in-memory stores (tests)
 * @param singleTask whether the topology runs as one task (TopologyTestDriver)
 * @param watermarks how often watermarks are sent
 * @param timers how timers fire
 * @param outputLimits per-stream output limits
 * @param deadLetters whether failures go to the dead-letter topic
 * @param visitors key-visitor settings, dynamic spec, status and metrics; null: defaults for the spec
 * @param changelogs whether stores have changelogs (false only on FlowTestDriver, which never restores)
 */
public record CompileOptions(String topicPrefix, boolean persistentStores, boolean singleTask,
        ComputationPlan.WatermarkSettings watermarks, ComputationPlan.TimerSettings timers, OutputLimits outputLimits,
        boolean deadLetters, ComputationPlan.@org.jspecify.annotations.Nullable VisitorRuntime visitors,
        boolean changelogs) {

    /** Defaults: no prefix, RocksDB, multi-task, 200 ms / 1 s watermarks, 50 ms / 1000 timers / 50 ms, no limits. */
    public static CompileOptions defaults() {
        return new CompileOptions("", true, false, new ComputationPlan.WatermarkSettings(200, 1000),
                new ComputationPlan.TimerSettings(50, 1000, 50), new OutputLimits(Map.of()), true, null, true);
    }

    /** A copy with another topic prefix and store kind. */
    public CompileOptions with(String prefix, boolean persistent) {
        return new CompileOptions(prefix, persistent, singleTask, watermarks, timers, outputLimits, deadLetters, visitors,
                changelogs);
    }
}
