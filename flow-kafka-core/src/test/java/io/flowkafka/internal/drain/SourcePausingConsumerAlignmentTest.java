package io.flowkafka.internal.drain;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.MockConsumer;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * watermark_alignment's half in the main consumer (over Kafka's MockConsumer): blocked source
 * partitions stay paused whatever Kafka Streams resumes, and come back once unblocked unless Kafka
 * Streams paused them itself.
 */
class SourcePausingConsumerAlignmentTest {
    private static final TopicPartition CLICKS0 = new TopicPartition("clicks", 0);
    private static final TopicPartition VIEWS0 = new TopicPartition("views", 0);

    private final AtomicReference<Set<TopicPartition>> blocked = new AtomicReference<>(Set.of());
    private final AtomicBoolean draining = new AtomicBoolean();
    private MockConsumer<byte[], byte[]> mock;
    private SourcePausingConsumer consumer;

    @BeforeEach
    void setUp() {
        mock = new MockConsumer<>("earliest");
        consumer = new SourcePausingConsumer(mock, Set.of("clicks", "views"), draining::get, blocked::get, () -> { });
        consumer.assign(List.of(CLICKS0, VIEWS0));
        mock.updateBeginningOffsets(Map.of(CLICKS0, 0L, VIEWS0, 0L));
    }

    @Test
    void shouldNotReadABlockedPartitionUntilItIsUnblocked() {
        blocked.set(Set.of(CLICKS0));
        add(CLICKS0, 0, 1);
        add(VIEWS0, 0);

        assertThat(consumer.poll(Duration.ZERO).partitions()).containsExactly(VIEWS0);
        assertThat(consumer.paused()).containsExactly(CLICKS0);

        blocked.set(Set.of());
        assertThat(consumer.poll(Duration.ZERO).records(CLICKS0)).hasSize(2);
        assertThat(consumer.paused()).isEmpty();
    }

    @Test
    void shouldIgnoreKafkaStreamsResumingABlockedPartition() {
        blocked.set(Set.of(CLICKS0));
        consumer.poll(Duration.ZERO);

        consumer.resume(List.of(CLICKS0, VIEWS0)); // e.g. its buffer has room again

        assertThat(consumer.paused()).containsExactly(CLICKS0);
        add(CLICKS0, 0);
        assertThat(consumer.poll(Duration.ZERO).isEmpty()).isTrue();
    }

    @Test
    void shouldLeaveAPartitionKafkaStreamsPausedPausedWhenAlignmentLetsItGo() {
        blocked.set(Set.of(CLICKS0));
        consumer.poll(Duration.ZERO);
        consumer.pause(List.of(CLICKS0)); // Kafka Streams' back-pressure, while alignment blocks it too

        blocked.set(Set.of());
        consumer.poll(Duration.ZERO);
        assertThat(consumer.paused()).containsExactly(CLICKS0);

        consumer.resume(List.of(CLICKS0)); // Kafka Streams lets it go: nothing holds it any more
        assertThat(consumer.paused()).isEmpty();
    }

    @Test
    void shouldKeepAPartitionPausedWhenKafkaStreamsResumesItsOwnPauseWhileAlignmentBlocksIt() {
        consumer.pause(List.of(CLICKS0)); // Kafka Streams' back-pressure first
        blocked.set(Set.of(CLICKS0));
        consumer.poll(Duration.ZERO);

        consumer.resume(List.of(CLICKS0)); // its buffer has room again, but alignment still blocks it
        assertThat(consumer.paused()).containsExactly(CLICKS0);
        assertThat(consumer.alignmentPausedCount()).isEqualTo(1);

        blocked.set(Set.of());
        consumer.poll(Duration.ZERO);
        assertThat(consumer.paused()).isEmpty();
        assertThat(consumer.alignmentPausedCount()).isZero();
    }

    @Test
    void shouldKeepSourcesPausedWhenAlignmentUnblocksDuringADrain() {
        blocked.set(Set.of(CLICKS0));
        consumer.poll(Duration.ZERO);
        draining.set(true);
        blocked.set(Set.of());

        consumer.poll(Duration.ZERO);

        assertThat(consumer.paused()).containsExactlyInAnyOrder(CLICKS0, VIEWS0);
    }

    @Test
    void shouldForgetAKafkaStreamsPauseOfAPartitionRevokedMeanwhile() {
        AtomicReference<ConsumerRebalanceListener> installed = new AtomicReference<>();
        MockConsumer<byte[], byte[]> m = new MockConsumer<>("earliest") {
            @Override
            public synchronized void subscribe(Collection<String> topics, ConsumerRebalanceListener listener) {
                installed.set(listener); // what the real consumer calls on a rebalance (MockConsumer does not)
                super.subscribe(topics, listener);
            }
        };
        SourcePausingConsumer c = new SourcePausingConsumer(m, Set.of("clicks"), draining::get, blocked::get, () -> { });
        c.subscribe(List.of("clicks"), new ConsumerRebalanceListener() {
            @Override
            public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
            }

            @Override
            public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
            }
        });
        m.rebalance(List.of(CLICKS0));
        m.updateBeginningOffsets(Map.of(CLICKS0, 0L));
        c.pause(List.of(CLICKS0)); // Kafka Streams' back-pressure; then the partition goes and comes back unpaused
        m.resume(List.of(CLICKS0)); // a real consumer forgets a revoked partition's pause; MockConsumer does not
        installed.get().onPartitionsRevoked(List.of(CLICKS0));
        m.rebalance(List.of());
        m.rebalance(List.of(CLICKS0));
        installed.get().onPartitionsAssigned(List.of(CLICKS0));

        blocked.set(Set.of(CLICKS0));
        c.poll(Duration.ZERO);
        assertThat(m.paused()).containsExactly(CLICKS0);
        blocked.set(Set.of());
        c.poll(Duration.ZERO);

        assertThat(m.paused()).isEmpty(); // a stale Kafka Streams pause would keep it paused for good
    }

    private void add(TopicPartition tp, long... offsets) {
        for (long o : offsets) {
            mock.addRecord(new ConsumerRecord<>(tp.topic(), tp.partition(), o, new byte[0], new byte[0]));
        }
    }
}
