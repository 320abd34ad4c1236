package io.flowkafka.internal.runtime;

import io.flowkafka.internal.compiler.CompiledPipeline;
import io.flowkafka.internal.drain.DrainingClientSupplier;
import io.flowkafka.internal.watermarks.AlignmentReader;
import io.flowkafka.internal.watermarks.WatermarkAlignment;
import io.flowkafka.internal.watermarks.WatermarkTracker;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.LinkedHashMap;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Follows the other instances' members of this instance's {@code watermark_alignment} groups: reads the aligned
 * computations' watermark changelogs and ticks the alignment, every 200 ms on the runtime's fast thread (an admin
 * call of the slow one may wait up to 30 s). The rule it keeps: a failed poll is logged and retried, never ends the
 * schedule, since remote members would then freeze where they are.
 *
 * <p>Threading: started and closed by the thread that starts and stops the runtime; closed once the fast thread ended.
 */
public final class AlignmentFollower implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(AlignmentFollower.class);

    private final AlignmentReader reader;

    private AlignmentFollower(AlignmentReader reader) {
        this.reader = reader;
    }

    /**
     * The gauge {@code flow.watermark.alignment.paused}: the source partitions {@code supplier}'s consumers keep
     * paused for alignment now.
     *
     * @return the gauge, for the caller to remove when the runtime closes
     */
    public static Meter registerGauge(String pipeline, DrainingClientSupplier supplier, MeterRegistry registry) {
        return Gauge.builder("flow.watermark.alignment.paused", supplier, DrainingClientSupplier::alignmentPaused)
                .description("Source partitions this instance keeps paused for watermark_alignment now (ahead "
                        + "of their group by more than drift_bound)")
                .tag("pipeline", pipeline).register(registry);
    }

    /**
     * Activates the alignment of {@code compiled} and starts following it on {@code schedulers}' fast thread.
     *
     * @param client the pipeline cluster's client properties (bootstrap servers, security)
     * @param streamsGroupProtocol whether Kafka Streams runs {@code group.protocol=streams}, under which alignment
     *     does nothing (warned about)
     */
    public static AlignmentFollower start(String pipeline, CompiledPipeline compiled, String applicationId,
            Map<String, Object> client, boolean streamsGroupProtocol, RuntimeSchedulers schedulers) {
        WatermarkAlignment alignment = compiled.alignment();
        if (streamsGroupProtocol) {
            LOG.warn("pipeline '{}': watermark_alignment of {} does nothing with group.protocol=streams (Kafka "
                    + "Streams creates its main consumer itself, so no source partition can be paused); use "
                    + "group.protocol=classic", pipeline, alignment.computations());
        }
        Map<String, Integer> partitions = new LinkedHashMap<>();
        alignment.computations().forEach(c -> partitions.put(c, compiled.partitionCounts().of(c)));
        alignment.expect(partitions);
        alignment.activate();
        Map<String, String> changelogs = new LinkedHashMap<>();
        for (String c : alignment.computations()) {
            changelogs.put(applicationId + "-" + WatermarkTracker.storeName(c) + "-changelog", c);
        }
        var reader = new AlignmentReader(client, applicationId + "-alignment-reader", changelogs, alignment);
        schedulers.scheduleFast("watermark alignment", () -> {
            try {
                reader.poll();
                alignment.tick();
            } catch (RuntimeException e) {
                // an exception would cancel this schedule, and remote members would freeze where they are
                LOG.warn("pipeline '{}': watermark alignment: following the other instances failed, retrying: {}",
                        pipeline, e.toString());
            }
        }, 200, 200);
        return new AlignmentFollower(reader);
    }

    /** Closes the changelog reader; call once the thread that polled it has stopped. */
    @Override
    public void close() {
        reader.close();
    }
}
