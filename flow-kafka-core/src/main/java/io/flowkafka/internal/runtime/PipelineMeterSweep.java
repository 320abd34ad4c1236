package io.flowkafka.internal.runtime;

import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.WeakHashMap;

/**
 * Keeps the rule that a closed runtime leaves none of its meters behind: Micrometer hands an existing gauge back to
 * a later registration, so a gauge left by a closed runtime would read that runtime's dead objects for the next one
 * on the same registry (an application that creates a new runtime after a failure). Sinks, queues and reports
 * register meters in many places; at the close of the last live runtime of a pipeline on a registry, every
 * {@code flow.*} meter tagged with that pipeline goes.
 */
public final class PipelineMeterSweep {
    /** Live runtimes per registry and pipeline name. */
    private static final Map<MeterRegistry, Map<String, Integer>> LIVE = new WeakHashMap<>();

    private PipelineMeterSweep() {
    }

    /** A runtime of {@code pipeline} now registers on {@code registry}. */
    public static synchronized void opened(MeterRegistry registry, String pipeline) {
        LIVE.computeIfAbsent(registry, r -> new HashMap<>()).merge(pipeline, 1, Integer::sum);
    }

    /** A runtime of {@code pipeline} closed: the last one's close removes the pipeline's meters. */
    public static synchronized void closed(MeterRegistry registry, String pipeline) {
        Map<String, Integer> live = LIVE.get(registry);
        Integer left = live == null ? null : live.merge(pipeline, -1, Integer::sum);
        if (left == null || left > 0) {
            return;
        }
        live.remove(pipeline);
        List<Meter> meters = registry.getMeters().stream()
                .filter(m -> m.getId().getName().startsWith("flow.") && pipeline.equals(m.getId().getTag("pipeline")))
                .toList();
        meters.forEach(registry::remove);
    }
}
