package io.flowkafka.internal.runtime;

import io.flowkafka.internal.compiler.CompiledPipeline;
import io.flowkafka.internal.drain.DrainingClientSupplier;
import io.flowkafka.internal.outbox.CommitObservingProducer;
import io.flowkafka.internal.metrics.PipelineMeters;
import io.flowkafka.internal.outbox.EpochCommits;
import io.flowkafka.runtime.FlowConfig;
import java.util.HashSet;
import java.util.Properties;
import java.util.Set;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.streams.KafkaStreams;
import org.jspecify.annotations.Nullable;

/**
 * The Kafka Streams instance a runtime runs, and the client supplier it runs on: main consumers that pause source
 * topics (drain, watermark alignment) and report records waiting (idleness), producers that tell the at-most-once
 * sinks when an epoch's transaction committed ({@link EpochCommits}). The rule it keeps: every stream thread's
 * producer observes its commits, whatever decorator a test adds.
 *
 * @param streams the instance, not started
 * @param clients its client supplier, which a drain switches to draining
 */
public record FlowStreams(KafkaStreams streams, DrainingClientSupplier clients) {

    /**
     * Creates the instance of {@code compiled}'s topology with {@code streamsProps}.
     *
     * @param producerDecorator a {@code UnaryOperator<Producer<byte[], byte[]>>} applied to each stream thread's
     *     producer (tests), or null
     * @param meters the runtime's meters: the producers time their commits, the tasks find theirs in the properties
     * @param drainingSources the source partitions the dynamic spec's {@code draining} keeps paused now
     */
    public static FlowStreams create(CompiledPipeline compiled, Properties streamsProps, FlowConfig config,
            @Nullable Object producerDecorator, PipelineMeters meters, Supplier<Set<TopicPartition>> drainingSources) {
        var alignment = compiled.alignment();
        // one "keep paused" set per poll: alignment's, and the source partitions of computations the dynamic spec
        // drains
        Supplier<Set<TopicPartition>> paused = !alignment.active() ? drainingSources : () -> {
            Set<TopicPartition> aligned = alignment.blocked();
            Set<TopicPartition> drained = drainingSources.get();
            if (drained.isEmpty()) {
                return aligned;
            }
            if (aligned.isEmpty()) {
                return drained;
            }
            Set<TopicPartition> both = new HashSet<>(aligned);
            both.addAll(drained);
            return both;
        };
        var supplier = new DrainingClientSupplier(new HashSet<>(compiled.sourceTopics()), paused,
                compiled.sourceIdleness());
        if (!config.getBoolean(FlowConfig.LEAVE_GROUP_ON_CLOSE_CONFIG)) {
            supplier.stayInGroupOnClose();
        }
        // at-most-once sinks release an epoch's messages once its transaction committed, as the producer sees it
        EpochCommits commits = new EpochCommits();
        @SuppressWarnings("unchecked")
        UnaryOperator<Producer<byte[], byte[]>> decorate = producerDecorator instanceof UnaryOperator<?> u
                ? (UnaryOperator<Producer<byte[], byte[]>>) u : UnaryOperator.identity();
        supplier.decorateProducers(p -> new CommitObservingProducer(decorate.apply(p), commits,
                meters.epochCommit()));
        Properties startProps = StreamsProperties.copy(streamsProps);
        startProps.put(EpochCommits.CONFIG, commits);
        meters.putInto(startProps);
        return new FlowStreams(new KafkaStreams(compiled.topology(), startProps, supplier), supplier);
    }
}
