package io.flowkafka.internal.drain;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowkafka.internal.watermarks.SourceIdleness;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.MockConsumer;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

/**
 * The main consumer reports which source partitions have records waiting (a known lag), so that a
 * partition whose records the consumer has not handed over yet is not taken for idle (over Kafka's
 * MockConsumer, whose lag is its end offset less its position).
 */
class SourcePausingConsumerIdlenessTest {
    private static final TopicPartition CLICKS0 = new TopicPartition("clicks", 0);
    private static final TopicPartition INTERNAL0 = new TopicPartition("pipeline.clicks", 0);

    private final AtomicLong now = new AtomicLong(1_000);
    private final SourceIdleness idleness = new SourceIdleness();

    @Test
    void shouldReportASourcePartitionWithRecordsAfterItsPositionUntilTheyAreTaken() {
        MockConsumer<byte[], byte[]> mock = new MockConsumer<>("earliest");
        SourcePausingConsumer consumer = consumer(mock);
        consumer.assign(List.of(CLICKS0, INTERNAL0));
        mock.updateBeginningOffsets(Map.of(CLICKS0, 0L, INTERNAL0, 0L));
        mock.updateEndOffsets(Map.of(CLICKS0, 3L, INTERNAL0, 5L));

        consumer.poll(Duration.ZERO);
        assertThat(idleness.waiting(CLICKS0)).as("3 records after position 0").isTrue();
        assertThat(idleness.waiting(INTERNAL0)).as("only source partitions are reported").isFalse();

        for (long o = 0; o < 3; o++) {
            mock.addRecord(new ConsumerRecord<>("clicks", 0, o, new byte[0], new byte[0]));
        }
        now.addAndGet(SourcePausingConsumer.WAITING_REPORT_MS);
        assertThat(consumer.poll(Duration.ZERO).count()).isEqualTo(3);
        assertThat(idleness.waiting(CLICKS0)).as("taken: caught up").isFalse();

        mock.updateEndOffsets(Map.of(CLICKS0, 4L)); // one more written, not fetched yet
        consumer.poll(Duration.ZERO);
        assertThat(idleness.waiting(CLICKS0)).as("reported at most every "
                + SourcePausingConsumer.WAITING_REPORT_MS + " ms").isFalse();
        now.addAndGet(SourcePausingConsumer.WAITING_REPORT_MS);
        consumer.poll(Duration.ZERO);
        assertThat(idleness.waiting(CLICKS0)).isTrue();
    }

    @Test
    void shouldCountAPartitionWhoseLagIsNotKnownYetAsWaitingForABoundedTime() {
        // "a source partition is quiet (its system watermark follows the clock) once it is caught up": right after
        // an assignment the consumer has not fetched yet and a backlog may wait there
        AtomicReference<OptionalLong> lag = new AtomicReference<>(OptionalLong.empty());
        MockConsumer<byte[], byte[]> mock = new MockConsumer<>("earliest") {
            @Override
            public synchronized OptionalLong currentLag(TopicPartition partition) {
                return lag.get(); // MockConsumer takes an unknown end offset for none to read
            }
        };
        SourcePausingConsumer consumer = consumer(mock);
        consumer.assign(List.of(CLICKS0));
        mock.updateBeginningOffsets(Map.of(CLICKS0, 0L));

        consumer.poll(Duration.ZERO);
        assertThat(idleness.waiting(CLICKS0)).as("lag unknown right after the assignment").isTrue();
        now.addAndGet(SourcePausingConsumer.UNKNOWN_LAG_WAIT_MS);
        consumer.poll(Duration.ZERO);
        assertThat(idleness.waiting(CLICKS0)).as("not for longer than the bound").isFalse();
        lag.set(OptionalLong.of(0));
        now.addAndGet(SourcePausingConsumer.WAITING_REPORT_MS);
        consumer.poll(Duration.ZERO);
        assertThat(idleness.waiting(CLICKS0)).as("known: caught up").isFalse();
    }

    @Test
    void shouldReportHowFarAPartitionWasReadAndForgetItWhenSoughtBack() {
        // a finite partition ends once the consumer's position passed its bound and every record it returned was
        // processed; a revived task's seek back to its last commit makes what was returned before count for nothing
        MockConsumer<byte[], byte[]> mock = new MockConsumer<>("earliest");
        SourcePausingConsumer consumer = consumer(mock);
        consumer.assign(List.of(CLICKS0));
        mock.updateBeginningOffsets(Map.of(CLICKS0, 0L));
        mock.updateEndOffsets(Map.of(CLICKS0, 3L));
        for (long o = 0; o < 3; o++) {
            mock.addRecord(new ConsumerRecord<>("clicks", 0, o, new byte[0], new byte[0]));
        }
        consumer.poll(Duration.ZERO);
        now.addAndGet(SourcePausingConsumer.WAITING_REPORT_MS);
        consumer.poll(Duration.ZERO); // the position after the records, reported
        assertThat(idleness.readPast(CLICKS0, 3, 2)).as("record 2 not processed yet").isFalse();
        assertThat(idleness.readPast(CLICKS0, 3, 3)).isTrue();

        // revived: sought to its last commit, 3, where only a transaction marker is left before the bound 4
        mock.updateEndOffsets(Map.of(CLICKS0, 4L));
        consumer.seek(CLICKS0, 4); // (MockConsumer has no markers: the position the fetch past it leaves)
        assertThat(idleness.readPast(CLICKS0, 4, -1)).as("sought: unknown until reported again").isFalse();
        now.addAndGet(SourcePausingConsumer.WAITING_REPORT_MS);
        consumer.poll(Duration.ZERO);

        assertThat(idleness.readPast(CLICKS0, 4, -1)).as("nothing returned since the seek: read past the bound")
                .isTrue();
    }

    @Test
    void shouldForgetARevokedPartition() {
        AtomicReference<ConsumerRebalanceListener> installed = new AtomicReference<>();
        MockConsumer<byte[], byte[]> mock = new MockConsumer<>("earliest") {
            @Override
            public synchronized void subscribe(Collection<String> topics, ConsumerRebalanceListener listener) {
                installed.set(listener); // what the real consumer calls on a rebalance (MockConsumer does not)
                super.subscribe(topics, listener);
            }
        };
        SourcePausingConsumer consumer = consumer(mock);
        consumer.subscribe(List.of("clicks"), new ConsumerRebalanceListener() {
            @Override
            public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
            }

            @Override
            public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
            }
        });
        mock.rebalance(List.of(CLICKS0));
        mock.updateBeginningOffsets(Map.of(CLICKS0, 0L));
        mock.updateEndOffsets(Map.of(CLICKS0, 2L));
        consumer.poll(Duration.ZERO);
        assertThat(idleness.waiting(CLICKS0)).isTrue();

        installed.get().onPartitionsRevoked(List.of(CLICKS0));

        assertThat(idleness.waiting(CLICKS0)).as("another instance reads it now").isFalse();
    }

    private SourcePausingConsumer consumer(MockConsumer<byte[], byte[]> mock) {
        SourcePausingConsumer c = new SourcePausingConsumer(mock, Set.of("clicks"), () -> false, null, idleness, () -> { });
        c.clock(now::get);
        return c;
    }
}
