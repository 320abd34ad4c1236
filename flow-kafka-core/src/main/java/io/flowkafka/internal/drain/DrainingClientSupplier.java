package io.flowkafka.internal.drain;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.UnaryOperator;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.streams.KafkaClientSupplier;

/**
 * The clients Kafka Streams' default supplier creates, except that each stream thread's main
 * consumer is a {@link SourcePausingConsumer}, so that {@link #startDraining()} stops reading the
 * source topics on every stream thread of the instance, present and future (replaced threads), and
 * {@code watermark_alignment} pauses the source partitions that run ahead; each also reports which
 * of its source partitions have records waiting, so that they are not taken for idle.
 *
 * <p>With {@code group.protocol=streams}, Kafka Streams 4.4 creates its main consumer itself and
 * never asks the supplier: {@link #consumers()} then stays 0.
 *
 * <p>Thread-safe.
 */
public final class DrainingClientSupplier implements KafkaClientSupplier {
    private final Set<String> sourceTopics;
    private final List<SourcePausingConsumer> consumers = new CopyOnWriteArrayList<>();
    private volatile boolean draining;

    private final java.util.function.@org.jspecify.annotations.Nullable Supplier<Set<TopicPartition>> aligned;
    private final io.flowkafka.internal.watermarks.@org.jspecify.annotations.Nullable SourceIdleness idleness;

    /** @param sourceTopics the pipeline's source topics */
    public DrainingClientSupplier(Set<String> sourceTopics) {
        this(sourceTopics, null);
    }

    /**
     * @param sourceTopics the pipeline's source topics
     * @param aligned the source partitions {@code watermark_alignment} wants paused now, or null
     *     when no computation is aligned
     */
    public DrainingClientSupplier(Set<String> sourceTopics,
            java.util.function.@org.jspecify.annotations.Nullable Supplier<Set<TopicPartition>> aligned) {
        this(sourceTopics, aligned, null);
    }

    /**
     * @param sourceTopics the pipeline's source topics
     * @param aligned the source partitions {@code watermark_alignment} wants paused now, or null
     *     when no computation is aligned
     * @param idleness where each main consumer reports its source partitions with records waiting,
     *     or null
     */
    public DrainingClientSupplier(Set<String> sourceTopics,
            java.util.function.@org.jspecify.annotations.Nullable Supplier<Set<TopicPartition>> aligned,
            io.flowkafka.internal.watermarks.@org.jspecify.annotations.Nullable SourceIdleness idleness) {
        this.sourceTopics = Set.copyOf(sourceTopics);
        this.aligned = aligned;
        this.idleness = idleness;
    }

    private boolean stayInGroup;

    /** Main consumers created from now on close as Kafka Streams asks (flow.leave.group.on.close=false). */
    public void stayInGroupOnClose() {
        stayInGroup = true;
    }

    /** From now on, every main consumer keeps its source partitions paused (from its next poll). Not undone. */
    public void startDraining() {
        draining = true;
    }

    /** Whether {@link #startDraining()} was called. */
    public boolean draining() {
        return draining;
    }

    /** How many source partitions the open main consumers keep paused for watermark alignment now. */
    public int alignmentPaused() {
        int n = 0;
        for (SourcePausingConsumer c : consumers) {
            n += c.alignmentPausedCount();
        }
        return n;
    }

    /** How many main consumers are open. */
    public int consumers() {
        return consumers.size();
    }

    /**
     * What every open main consumer has taken from source partitions and must see committed (see
     * {@link SourcePausingConsumer#inHand()}), or empty while some consumer has not yet polled with
     * its source partitions paused (its figures could still grow).
     */
    public Optional<Map<TopicPartition, Long>> sourcesInHand() {
        Map<TopicPartition, Long> all = new HashMap<>();
        for (SourcePausingConsumer c : consumers) {
            if (c.drainPolls() == 0) {
                return Optional.empty();
            }
            c.inHand().forEach((tp, offset) -> all.merge(tp, offset, Math::max));
        }
        return Optional.of(all);
    }

    @Override
    public Admin getAdmin(Map<String, Object> config) {
        return Admin.create(config);
    }

    private volatile UnaryOperator<Producer<byte[], byte[]>> producerDecorator =
            UnaryOperator.identity();

    /** Wraps every producer created from now on (e.g. to observe how its transactions end). */
    public void decorateProducers(UnaryOperator<Producer<byte[], byte[]>> decorator) {
        this.producerDecorator = decorator;
    }

    @Override
    public Producer<byte[], byte[]> getProducer(Map<String, Object> config) {
        return producerDecorator.apply(new KafkaProducer<>(config, new ByteArraySerializer(), new ByteArraySerializer()));
    }

    @Override
    public Consumer<byte[], byte[]> getConsumer(Map<String, Object> config) {
        KafkaConsumer<byte[], byte[]> delegate = new KafkaConsumer<>(config, new ByteArrayDeserializer(),
                new ByteArrayDeserializer());
        SourcePausingConsumer[] self = new SourcePausingConsumer[1];
        self[0] = new SourcePausingConsumer(delegate, sourceTopics, () -> draining, aligned, idleness,
                () -> consumers.remove(self[0]));
        Object instanceId = config.get(org.apache.kafka.clients.consumer.ConsumerConfig.GROUP_INSTANCE_ID_CONFIG);
        if (!stayInGroup && (instanceId == null || instanceId.toString().isBlank())) {
            self[0].leaveGroupOnClose(); // a dynamic member: a replaced thread's partitions move at once
        }
        consumers.add(self[0]);
        return self[0];
    }

    @Override
    public Consumer<byte[], byte[]> getRestoreConsumer(Map<String, Object> config) {
        return new KafkaConsumer<>(config, new ByteArrayDeserializer(), new ByteArrayDeserializer());
    }

    @Override
    public Consumer<byte[], byte[]> getGlobalConsumer(Map<String, Object> config) {
        return new KafkaConsumer<>(config, new ByteArrayDeserializer(), new ByteArrayDeserializer());
    }
}
