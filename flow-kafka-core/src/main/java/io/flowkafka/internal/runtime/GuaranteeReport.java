package io.flowkafka.internal.runtime;

import io.flowkafka.runtime.FlowRuntime;
import io.flowkafka.spec.ComputationKind;
import io.flowkafka.spec.ComputationSpec;
import io.flowkafka.spec.PipelineSpec;
import io.flowkafka.spec.ProcessingMode;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.apache.kafka.streams.StreamsConfig;

/**
 * Says what each computation of a pipeline runs with, in a log line and in gauges: the Kafka Streams guarantee
 * (always {@code exactly_once_v2}), its {@code processing_mode}, and SwiftMap batching with relaxed guarantees.
 *
 * <p>Thread-safe: holds no state.
 */
public final class GuaranteeReport {
    private GuaranteeReport() {
    }

    /**
     * One gauge {@value FlowRuntime#GUARANTEE_METRIC} (value 1) per computation, tagged with what the computation
     * runs with: its {@code processing_mode}, Kafka Streams' {@code processing.guarantee} and whether SwiftMap
     * batching with relaxed guarantees is on.
     */
    public static void registerGauges(PipelineSpec spec, MeterRegistry registry) {
        for (ComputationSpec c : spec.computations().values()) {
            Gauge.builder(FlowRuntime.GUARANTEE_METRIC, () -> 1.0)
                    .description("What a computation runs with (tags); processing_mode at_least_once_consistent runs "
                            + "on exactly_once_v2 like exactly_once")
                    .tags("pipeline", spec.name(), "computation", c.id(), "kind", c.kind().shortName(),
                            "processing_mode", c.processingMode().specName(),
                            "processing_guarantee", StreamsConfig.EXACTLY_ONCE_V2,
                            "relaxed_batching", Boolean.toString(relaxedBatching(c)))
                    .register(registry);
        }
    }

    /**
     * One line saying what each computation of {@code spec} runs with, as the runtime logs it at start:
     * the Kafka Streams guarantee, the computations by {@code processing_mode}, and the SwiftMap
     * computations that batch with relaxed guarantees.
     */
    public static String summary(PipelineSpec spec) {
        Map<String, List<String>> byMode = new LinkedHashMap<>();
        List<String> batching = new ArrayList<>();
        for (ComputationSpec c : spec.computations().values()) {
            byMode.computeIfAbsent(c.processingMode().specName(), k -> new ArrayList<>()).add(c.id());
            if (relaxedBatching(c)) {
                batching.add(c.id() + " (max_batch_size " + c.maxBatchSize() + ", max_batch_delay "
                        + c.maxBatchDelay().toMillis() + "ms)");
            }
        }
        StringBuilder b = new StringBuilder("pipeline '").append(spec.name())
                .append("' runs every computation on Kafka Streams ").append(StreamsConfig.EXACTLY_ONCE_V2)
                .append("; processing_mode ");
        b.append(byMode.entrySet().stream().map(e -> e.getKey() + ": " + e.getValue())
                .collect(Collectors.joining(", ")));
        if (byMode.containsKey(ProcessingMode.AT_LEAST_ONCE_CONSISTENT.specName())) {
            b.append(" (at_least_once_consistent behaves as exactly_once here: on Kafka the input dedup it would skip "
                    + "is the transactional offset commit, which costs nothing extra)");
        }
        if (!batching.isEmpty()) {
            b.append("; SwiftMap batching with relaxed guarantees (outputs with several parents, ids from the parent "
                    + "set, no id order per key downstream): ").append(batching);
        }
        return b.toString();
    }

    private static boolean relaxedBatching(ComputationSpec c) {
        return c.kind() == ComputationKind.SWIFT_MAP && c.allowBatchingWithRelaxedGuarantees();
    }
}
