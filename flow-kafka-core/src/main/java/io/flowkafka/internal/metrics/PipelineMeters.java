package io.flowkafka.internal.metrics;

import io.flowkafka.internal.dlq.DeadLetterCounts;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.kafka.KafkaStreamsMetrics;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Properties;
import org.apache.kafka.streams.KafkaStreams;
import org.jspecify.annotations.Nullable;

/**
 * The meters of one runtime that are not a task's: the epoch-commit timer ({@value #EPOCH_COMMIT}), the dead-letter
 * counters ({@link DeadLetterCounts}), the consumer lag the tasks' input-lag gauges read ({@link InputLag}), and
 * Kafka Streams' own metrics bound with Micrometer's {@link KafkaStreamsMetrics} (names {@code kafka.*}, tagged
 * {@code pipeline} besides Kafka's own tags). Rule kept: everything it registers is removed by {@link #close()}, so
 * a later runtime in the same process registers its own.
 *
 * <p>Threading: built and closed by the runtime's lifecycle methods; the meters themselves are thread-safe.
 */
public final class PipelineMeters implements AutoCloseable {
    /** Duration of each stream thread's transaction commit ({@code commitTransaction}: the epoch commit). */
    public static final String EPOCH_COMMIT = "flow.epoch.commit";

    private final MeterRegistry registry;
    private final String pipeline;
    private final Timer epochCommit;
    private final DeadLetterCounts deadLetters;
    private final InputLag inputLag = new InputLag();
    private @Nullable KafkaStreamsMetrics streamsMetrics;

    public PipelineMeters(MeterRegistry registry, String pipeline, Collection<String> computations) {
        this.registry = registry;
        this.pipeline = pipeline;
        this.epochCommit = Timer.builder(EPOCH_COMMIT)
                .description("Duration of a stream thread's transaction commit: outputs, changelog writes and "
                        + "consumed offsets of every task of the thread, made visible together")
                .tags("pipeline", pipeline).publishPercentiles(0.5, 0.99).register(registry);
        this.deadLetters = new DeadLetterCounts(registry, pipeline, computations);
    }

    /** The epoch-commit timer, for the stream threads' producers. */
    public Timer epochCommit() {
        return epochCommit;
    }

    /** Puts what the tasks and the dead-letter handler read into the Kafka Streams properties. */
    public void putInto(Properties streamsProps) {
        streamsProps.put(DeadLetterCounts.CONFIG, deadLetters);
        streamsProps.put(InputLag.CONFIG, inputLag);
    }

    /** Binds Kafka Streams' metrics of {@code streams}, and reads its consumers' lag from them. */
    public synchronized void bind(KafkaStreams streams) {
        inputLag.bind(streams::metrics);
        KafkaStreamsMetrics bound = new KafkaStreamsMetrics(streams, Tags.of("pipeline", pipeline));
        bound.bindTo(registry);
        streamsMetrics = bound;
    }

    /** Removes every meter registered here and stops following Kafka Streams' metrics. Idempotent. */
    @Override
    public synchronized void close() {
        if (streamsMetrics != null) {
            streamsMetrics.close();
            streamsMetrics = null;
        }
        List<Meter> own = new ArrayList<>(deadLetters.meters());
        own.add(epochCommit);
        own.forEach(registry::remove);
    }
}
