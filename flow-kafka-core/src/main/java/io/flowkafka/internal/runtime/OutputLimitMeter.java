package io.flowkafka.internal.runtime;

import io.flowkafka.internal.compiler.CompiledPipeline;
import io.flowkafka.internal.watermarks.OutputLimits;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Measures the backlog of every stream with an output limit ({@code flow.output.limit.records}): the offsets of its
 * topic written but not yet consumed downstream, from the end offsets and the pipeline's committed offsets; the
 * {@link OutputLimits} it feeds block a stream over its limit. Its gauges show both.
 *
 * <p>Threading: {@link #measure} runs on the runtime's slow maintenance thread; the gauges read {@link OutputLimits},
 * which is thread-safe.
 */
public final class OutputLimitMeter {
    private static final Logger LOG = LoggerFactory.getLogger(OutputLimitMeter.class);

    private final String pipeline;
    private final CompiledPipeline compiled;
    private final String applicationId;

    /** @param applicationId the consumer group whose committed offsets say what was consumed */
    public OutputLimitMeter(String pipeline, CompiledPipeline compiled, String applicationId) {
        this.pipeline = pipeline;
        this.compiled = compiled;
        this.applicationId = applicationId;
    }

    /**
     * Per stream with an output limit and a topic: {@code flow.output.backlog}, the offsets of its topic written but
     * not yet consumed downstream as last measured (records, watermark control records and transaction markers
     * alike), and {@code flow.output.blocked}, 1 while that is over the limit (the timer-stream groups writing to it
     * are held back), else 0.
     *
     * @return the gauges registered, for the caller to remove when the runtime closes
     */
    public List<Meter> registerGauges(MeterRegistry registry) {
        OutputLimits limits = compiled.outputLimits();
        List<Meter> gauges = new ArrayList<>();
        for (String stream : limits.limits().keySet()) {
            if (compiled.streamTopics().getOrDefault(stream, List.of()).isEmpty()) {
                continue; // no topic of its own (e.g. written only to sinks): nothing to measure
            }
            gauges.add(Gauge.builder("flow.output.backlog", limits, l -> l.backlogOf(stream))
                    .description("Offsets of the stream's topic written but not yet consumed downstream (its records, "
                            + "watermark control records and transaction markers), as last measured for its output "
                            + "limit")
                    .tags("pipeline", pipeline, "stream", stream).register(registry));
            gauges.add(Gauge.builder("flow.output.blocked", limits, l -> l.isBlocked(stream) ? 1.0 : 0.0)
                    .description("1 while the stream's backlog is over its output limit: the timer-stream groups "
                            + "writing to it are held back")
                    .tags("pipeline", pipeline, "stream", stream).register(registry));
        }
        return gauges;
    }

    /** Measures the backlog of streams with an output limit; a failure is logged and retried at the next call. */
    public void measure(Admin admin) {
        OutputLimits limits = compiled.outputLimits();
        if (limits.limits().isEmpty()) {
            return;
        }
        try {
            var committed = admin.listConsumerGroupOffsets(applicationId).partitionsToOffsetAndMetadata()
                    .get(30, TimeUnit.SECONDS);
            Map<TopicPartition, OffsetSpec> request = new HashMap<>();
            for (String stream : limits.limits().keySet()) {
                for (String topic : compiled.streamTopics().getOrDefault(stream, List.of())) {
                    Integer n = compiled.internalTopics().get(topic);
                    for (int p = 0; n != null && p < n; p++) {
                        request.put(new TopicPartition(topic, p), OffsetSpec.latest());
                    }
                }
            }
            var ends = admin.listOffsets(request).all().get(30, TimeUnit.SECONDS);
            for (String stream : limits.limits().keySet()) {
                long backlog = 0;
                for (var e : ends.entrySet()) {
                    if (compiled.streamTopics().getOrDefault(stream, List.of()).contains(e.getKey().topic())) {
                        var om = committed.get(e.getKey());
                        backlog += Math.max(0, e.getValue().offset() - (om == null ? 0 : om.offset()));
                    }
                }
                limits.backlog(stream, backlog);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Exception e) {
            LOG.debug("pipeline '{}': measuring output limits failed, will retry: {}", pipeline, e.toString());
        }
    }
}
