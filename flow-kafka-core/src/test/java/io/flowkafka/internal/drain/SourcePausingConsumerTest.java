package io.flowkafka.internal.drain;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.MockConsumer;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The drain's main-consumer wrapper over Kafka's MockConsumer: which partitions stay paused, what is in hand. */
class SourcePausingConsumerTest {
    private static final TopicPartition SRC0 = new TopicPartition("src", 0);
    private static final TopicPartition SRC1 = new TopicPartition("src", 1);
    private static final TopicPartition SRC2 = new TopicPartition("src", 2);
    private static final TopicPartition EVENTS = new TopicPartition("p.events", 0);

    private final AtomicBoolean draining = new AtomicBoolean();
    private final AtomicInteger closed = new AtomicInteger();
    private MockConsumer<byte[], byte[]> mock;
    private SourcePausingConsumer consumer;

    @BeforeEach
    void setUp() {
        mock = new MockConsumer<>("earliest");
        consumer = new SourcePausingConsumer(mock, Set.of("src"), draining::get, closed::incrementAndGet);
        consumer.assign(List.of(SRC0, SRC1, EVENTS));
        mock.updateBeginningOffsets(Map.of(SRC0, 0L, SRC1, 0L, SRC2, 0L, EVENTS, 0L));
    }

    @Test
    void shouldPassEverythingThroughUntilDraining() {
        add(SRC0, 0, 1, 2);
        add(EVENTS, 0);
        assertThat(consumer.poll(Duration.ZERO).count()).isEqualTo(4);
        consumer.pause(List.of(SRC0));
        consumer.resume(List.of(SRC0));
        assertThat(consumer.paused()).isEmpty();
        assertThat(consumer.drainPolls()).isZero();
        assertThat(consumer.inHand()).isEmpty();
    }

    @Test
    void shouldStopReadingSourcesButKeepReadingInternalTopicsOnceDraining() {
        add(SRC0, 0, 1, 2);
        assertThat(consumer.poll(Duration.ZERO).count()).isEqualTo(3);
        draining.set(true);
        add(SRC0, 3);
        add(SRC1, 0);
        add(EVENTS, 0, 1);

        ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ZERO);

        assertThat(records.partitions()).containsExactly(EVENTS);
        assertThat(records.count()).isEqualTo(2);
        assertThat(consumer.paused()).containsExactlyInAnyOrder(SRC0, SRC1);
        assertThat(consumer.drainPolls()).isEqualTo(1);
        // Kafka Streams took src-0 up to offset 2 before the drain: offset 3 must be committed
        assertThat(consumer.inHand()).isEqualTo(Map.of(SRC0, 3L));
    }

    @Test
    void shouldIgnoreResumeOfSourcePartitionsWhileDraining() {
        draining.set(true);
        consumer.poll(Duration.ZERO);
        consumer.pause(List.of(EVENTS)); // Kafka Streams' own back-pressure
        assertThat(consumer.paused()).containsExactlyInAnyOrder(SRC0, SRC1, EVENTS);

        consumer.resume(List.of(SRC0, SRC1, EVENTS));

        assertThat(consumer.paused()).containsExactlyInAnyOrder(SRC0, SRC1);
        add(SRC0, 0);
        add(EVENTS, 0);
        assertThat(consumer.poll(Duration.ZERO).partitions()).containsExactly(EVENTS);
    }

    @Test
    void shouldPausePartitionsAssignedAfterARebalance() {
        draining.set(true);
        consumer.poll(Duration.ZERO);
        consumer.assign(List.of(SRC0, SRC1, SRC2, EVENTS)); // a rebalance brought src-2

        add(SRC2, 0, 1);
        assertThat(consumer.poll(Duration.ZERO).isEmpty()).isTrue();

        assertThat(consumer.paused()).contains(SRC2);
        assertThat(consumer.inHand()).isEmpty();
    }

    @Test
    void shouldForgetRecordsTakenFromPartitionsNoLongerAssignedOrSoughtBack() {
        add(SRC0, 0, 1, 2);
        add(SRC1, 0, 1);
        consumer.poll(Duration.ZERO);
        draining.set(true);
        consumer.poll(Duration.ZERO);
        assertThat(consumer.inHand()).isEqualTo(Map.of(SRC0, 3L, SRC1, 2L));

        consumer.assign(List.of(SRC0, EVENTS)); // src-1 revoked
        consumer.seek(SRC0, 1); // records from 1 on dropped (a task revived from its last commit)
        consumer.poll(Duration.ZERO);

        assertThat(consumer.inHand()).isEqualTo(Map.of(SRC0, 1L));
    }

    @Test
    void shouldReportCloseOnce() {
        consumer.close();
        assertThat(closed).hasValue(1);
    }

    @Test
    void shouldWaitForEveryOpenMainConsumerToPollPausedAndForgetClosedOnes() {
        DrainingClientSupplier supplier = new DrainingClientSupplier(Set.of("src"));
        var main = supplier.getConsumer(Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, "localhost:9",
                ConsumerConfig.GROUP_ID_CONFIG, "g"));
        assertThat(main).isInstanceOf(SourcePausingConsumer.class);
        assertThat(supplier.consumers()).isEqualTo(1);
        supplier.startDraining();
        assertThat(supplier.sourcesInHand()).as("the consumer has not polled with its sources paused").isEmpty();

        main.close(Duration.ZERO);

        assertThat(supplier.consumers()).isZero();
        assertThat(supplier.sourcesInHand()).contains(Map.of());
    }

    private void add(TopicPartition tp, long... offsets) {
        for (long o : offsets) {
            mock.addRecord(new ConsumerRecord<>(tp.topic(), tp.partition(), o, new byte[0], new byte[0]));
        }
    }

    /** Records how it was asked to close. */
    private static final class ClosingMock extends MockConsumer<byte[], byte[]> {
        final List<org.apache.kafka.clients.consumer.CloseOptions> closes = new java.util.ArrayList<>();

        ClosingMock() {
            super("earliest");
        }

        @Override
        public synchronized void close(org.apache.kafka.clients.consumer.CloseOptions option) {
            closes.add(option);
            super.close(option);
        }
    }

    @Test
    void shouldLeaveTheGroupWhateverKafkaStreamsAsksOnceToldTo() {
        var leave = org.apache.kafka.clients.consumer.CloseOptions.GroupMembershipOperation.LEAVE_GROUP;
        var remain = org.apache.kafka.clients.consumer.CloseOptions.GroupMembershipOperation.REMAIN_IN_GROUP;
        ClosingMock plain = new ClosingMock();
        new SourcePausingConsumer(plain, Set.of("src"), () -> false, () -> { })
                .close(org.apache.kafka.clients.consumer.CloseOptions.groupMembershipOperation(remain));
        assertThat(plain.closes).singleElement().satisfies(o -> assertThat(o.groupMembershipOperation())
                .as("a static member stays, as Kafka Streams asks").isEqualTo(remain));
        for (int way = 0; way < 3; way++) {
            ClosingMock m = new ClosingMock();
            SourcePausingConsumer c = new SourcePausingConsumer(m, Set.of("src"), () -> false, () -> { })
                    .leaveGroupOnClose();
            switch (way) {
                case 0 -> c.close(org.apache.kafka.clients.consumer.CloseOptions.groupMembershipOperation(remain)
                        .withTimeout(Duration.ofSeconds(7)));
                case 1 -> c.close(Duration.ofSeconds(7));
                default -> c.close();
            }
            boolean timed = way < 2;
            assertThat(m.closes).as("close way " + way).singleElement().satisfies(o -> {
                assertThat(o.groupMembershipOperation()).isEqualTo(leave);
                if (timed) {
                    assertThat(o.timeout()).contains(Duration.ofSeconds(7));
                }
            });
        }
    }

    @Test
    void shouldMakeDynamicMembersLeaveOnCloseUnlessToldToStay() {
        Map<String, Object> config = new java.util.HashMap<>(Map.of("bootstrap.servers", "localhost:9",
                "group.id", "g"));
        DrainingClientSupplier supplier = new DrainingClientSupplier(Set.of("src"));
        try (var dynamic = (SourcePausingConsumer) supplier.getConsumer(config)) {
            assertThat(dynamic.leavingGroupOnClose()).isTrue();
        }
        config.put("group.instance.id", "instance-1-1");
        try (var fixed = (SourcePausingConsumer) supplier.getConsumer(config)) {
            assertThat(fixed.leavingGroupOnClose()).as("a static member").isFalse();
        }
        config.remove("group.instance.id");
        supplier.stayInGroupOnClose();
        try (var staying = (SourcePausingConsumer) supplier.getConsumer(config)) {
            assertThat(staying.leavingGroupOnClose()).as("flow.leave.group.on.close=false").isFalse();
        }
    }

    @Test
    void shouldDropOnlyTheRebalanceEnforcedAfterATaskCorruption() {
        // a revived task resets its partitions only if no rebalance replaces it first (Kafka Streams 4.4)
        consumer.enforceRebalance("Active tasks corrupted");
        assertThat(mock.shouldRebalance()).isFalse();
        consumer.enforceRebalance("some other reason");
        assertThat(mock.shouldRebalance()).isTrue();
    }
}
