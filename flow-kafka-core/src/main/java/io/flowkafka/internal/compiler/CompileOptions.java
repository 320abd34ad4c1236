package io.flowkafka.internal.compiler;

import io.flowkafka.internal.processor.ComputationPlan;
import io.flowkafka.internal.status.StatusBoard;
import io.flowkafka.internal.config.DynamicSpec;
import io.flowkafka.internal.watermarks.OutputLimits;
import io.flowkafka.runtime.FlowConfig;
import io.flowkafka.runtime.FlowRuntime;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Map;
import java.util.Set;

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

    /**
     * The options a deployment's {@code flow.*} properties choose for a pipeline with {@code streams}; key visitors
     * follow {@code dynamicSpec} and report to {@code status} and {@code meters}.
     */
    public static CompileOptions of(FlowConfig config, Set<String> streams, DynamicSpec dynamicSpec, StatusBoard status,
            MeterRegistry meters) {
        // FlowTestDriver's deterministic steps: bounded by count only (never by the machine's speed), run until
        // done, and watermarks sent as they change, so results depend on neither CPU load nor the test's clock
        boolean deterministic = deterministicSteps(config);
        return new CompileOptions(
                config.getString(FlowConfig.TOPIC_PREFIX_CONFIG),
                !"memory".equals(config.getString(FlowConfig.STATE_STORES_CONFIG)),
                config.getBoolean(FlowConfig.TOPOLOGY_TEST_DRIVER_CONFIG),
                new ComputationPlan.WatermarkSettings(
                        config.getLong(FlowConfig.WATERMARK_INTERVAL_MS_CONFIG),
                        config.getLong(FlowConfig.WATERMARK_HEARTBEAT_MS_CONFIG),
                        deterministic && deterministicWatermarks(config)),
                new ComputationPlan.TimerSettings(
                        config.getLong(FlowConfig.TIMERS_INTERVAL_MS_CONFIG),
                        config.getInt(FlowConfig.TIMERS_MAX_PER_STEP_CONFIG),
                        deterministic ? 0 : config.getLong(FlowConfig.TIMERS_MAX_STEP_MS_CONFIG), deterministic),
                new OutputLimits(config.outputLimits(streams)),
                config.getBoolean(FlowConfig.DEAD_LETTER_ENABLED_CONFIG),
                new ComputationPlan.VisitorRuntime(
                        config.getLong(FlowConfig.VISITOR_TICK_MS_CONFIG),
                        config.getInt(FlowConfig.VISITOR_MAX_ROWS_CONFIG),
                        deterministic ? 0 : config.getLong(FlowConfig.VISITOR_MAX_MS_CONFIG), dynamicSpec, status,
                        meters),
                config.getBoolean(FlowConfig.STORE_CHANGELOGS_CONFIG));
    }

    /** Whether {@value FlowRuntime#DETERMINISTIC_STEPS_CONFIG} is true (internal: FlowTestDriver sets it). */
    static boolean deterministicSteps(FlowConfig config) {
        return internalFlag(config, FlowRuntime.DETERMINISTIC_STEPS_CONFIG, false);
    }

    /**
     * Whether deterministic steps send watermarks as they change ({@value FlowRuntime#DETERMINISTIC_WATERMARKS_CONFIG},
     * default true) rather than paced by the watermark interval of the (test's) wall clock.
     */
    static boolean deterministicWatermarks(FlowConfig config) {
        return internalFlag(config, FlowRuntime.DETERMINISTIC_WATERMARKS_CONFIG, true);
    }

    /** An internal boolean property (not declared in FlowConfig), {@code absent} when not set. */
    private static boolean internalFlag(FlowConfig config, String key, boolean absent) {
        Object v = config.originals().get(key);
        return v == null ? absent : Boolean.parseBoolean(v.toString().trim());
    }

    /** A copy with another topic prefix and store kind. */
    public CompileOptions with(String prefix, boolean persistent) {
        return new CompileOptions(prefix, persistent, singleTask, watermarks, timers, outputLimits, deadLetters, visitors,
                changelogs);
    }
}
