package io.flowkafka.testing;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowkafka.api.MessageId;
import io.flowkafka.internal.message.FlowHeaders;
import io.flowkafka.internal.outbox.OutboxService;
import io.flowkafka.internal.outbox.OutboxWatermarks;
import io.flowkafka.internal.status.StatusBoard;
import io.flowkafka.spi.OutboxBatch;
import io.flowkafka.spi.OutboxDeliverer;
import io.flowkafka.spi.OutboxDeliveryException;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Properties;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;

/**
 * A sink whose delivery group lost its committed offsets (they expire while no instance runs, after the broker's
 * offsets.retention.minutes) resumes from its own progress marker. The outbox below its first offset was purged by the
 * delivery service itself, after delivery: records there are delivered messages or watermark records, not lost ones.
 */
@WithKafka
class OutboxExpiredGroupIT {
    private static final Duration BOUND = Duration.ofSeconds(60);

    private KafkaCluster cluster;

    @Test
    void shouldResumeAfterTheGroupsOffsetsExpiredAndTheOutboxWasPurgedPastItsMarker(TestNames names) throws Exception {
        String topic = names.topic("outbox");
        cluster.createTopic(topic, 1);
        // as a computation's epochs write them: 10 messages (offsets 0-9, commit marker 10), then watermark records
        // (11-13, marker 14); the sink's marker stays after the messages, the group commits past the watermarks
        produce(topic, 0, 10, false, names.name("tx"));
        produce(topic, 10, 3, true, names.name("tx"));
        AtomicLong marker = new AtomicLong(-1);
        ConcurrentLinkedQueue<Long> delivered = new ConcurrentLinkedQueue<>();
        OutboxDeliverer deliverer = new OutboxDeliverer() {
            @Override
            public OptionalLong open(int partition, OptionalLong committedOffset) {
                return marker.get() < 0 ? OptionalLong.empty() : OptionalLong.of(marker.get());
            }

            @Override
            public void deliver(OutboxBatch batch) {
                batch.records().forEach(r -> delivered.add(r.offset()));
                marker.set(batch.nextOffset());
            }

            @Override
            public void release(int partition) {
            }

            @Override
            public void close() {
            }
        };
        String group = names.applicationId("d");
        TopicPartition tp = new TopicPartition(topic, 0);
        try (Admin admin = Admin.create(cluster.clientProperties())) {
            try (OutboxService service = service(names, topic, deliverer, group, admin)) {
                service.start();
                Await.until(BOUND, "the messages delivered and the outbox purged past the watermark records",
                        () -> delivered.size() == 10 && earliest(admin, tp) == 15);
            }
            assertThat(marker.get()).as("the marker: after the last message").isLessThan(15);
            admin.deleteConsumerGroups(List.of(group)).all().get(); // as if its offsets expired
            produce(topic, 13, 2, false, names.name("tx")); // offsets 15 and 16
            try (OutboxService service = service(names, topic, deliverer, group, admin)) {
                service.start();
                Await.until(BOUND, "the new messages delivered, or the sink stopped",
                        () -> delivered.size() == 12 || service.fatalError() != null);
                assertThat(service.fatalError()).isNull();
            }
        }
        assertThat(List.copyOf(delivered)).containsExactly(0L, 1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L, 9L, 15L, 16L);
    }

    /** Resource audit: a deliverer's Error ended the delivery thread unseen; /health stayed green. */
    @Test
    void shouldReportTheSinkStoppedWhenADelivererThrowsAnError(TestNames names) throws Exception {
        String topic = names.topic("outbox");
        cluster.createTopic(topic, 1);
        produce(topic, 0, 3, false, names.name("tx"));
        OutboxDeliverer deliverer = new OutboxDeliverer() {
            @Override
            public OptionalLong open(int partition, OptionalLong committedOffset) {
                return OptionalLong.empty();
            }

            @Override
            public void deliver(OutboxBatch batch) {
                throw new StackOverflowError("a deeply nested row");
            }

            @Override
            public void release(int partition) {
            }

            @Override
            public void close() {
            }
        };
        try (Admin admin = Admin.create(cluster.clientProperties());
                OutboxService service = service(names, topic, deliverer, names.applicationId("d"), admin)) {
            service.start();
            Await.until(BOUND, "the sink reported stopped", () -> service.fatalError() != null);
            assertThat(service.fatalError()).contains("StackOverflowError: a deeply nested row");
        }
    }

    /**
     * Resource audit: close() gave up on a long delivery after 30 s and closed the deliverer under the thread still
     * using it (clients re-created and never closed). The thread now closes it when its delivery ends.
     */
    @Test
    void shouldLetALongDeliveryCloseItsDelivererWhenItEnds(TestNames names) throws Exception {
        String topic = names.topic("outbox");
        cluster.createTopic(topic, 1);
        produce(topic, 0, 1, false, names.name("tx"));
        CountDownLatch inDelivery = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        AtomicBoolean closedDuringDelivery = new AtomicBoolean();
        AtomicBoolean delivering = new AtomicBoolean();
        AtomicBoolean closed = new AtomicBoolean();
        AtomicBoolean interrupted = new AtomicBoolean();
        OutboxDeliverer deliverer = new OutboxDeliverer() {
            @Override
            public OptionalLong open(int partition, OptionalLong committedOffset) {
                return OptionalLong.empty();
            }

            @Override
            public void deliver(OutboxBatch batch) throws OutboxDeliveryException {
                delivering.set(true);
                inDelivery.countDown();
                while (release.getCount() > 0) { // a delivery that goes on when interrupted (a non-interruptible call)
                    try {
                        release.await();
                    } catch (InterruptedException e) {
                        interrupted.set(true);
                    }
                }
                delivering.set(false);
            }

            @Override
            public void release(int partition) {
            }

            @Override
            public void close() {
                closedDuringDelivery.compareAndSet(false, delivering.get());
                closed.set(true);
            }
        };
        try (Admin admin = Admin.create(cluster.clientProperties())) {
            OutboxService service = service(names, topic, deliverer, names.applicationId("d"), admin);
            service.closeWait(Duration.ofMillis(200));
            service.start();
            assertThat(inDelivery.await(BOUND.toSeconds(), TimeUnit.SECONDS)).as("a delivery started").isTrue();

            service.close(); // returns after 200 ms, the delivery still running

            assertThat(closed.get()).as("not closed under the running delivery").isFalse();
            Await.until(BOUND, "the delivery thread interrupted", interrupted::get);
            release.countDown();
            Await.until(BOUND, "the delivery thread closed its deliverer", closed::get);
            assertThat(closedDuringDelivery.get()).isFalse();
        }
    }

    private OutboxService service(TestNames names, String topic, OutboxDeliverer deliverer, String group, Admin admin) {
        Map<String, Object> client = new HashMap<>();
        cluster.clientProperties().forEach((k, v) -> client.put((String) k, v));
        return new OutboxService(names.name("p"), "sink", "c", topic, deliverer, client, group, 100, admin,
                new StatusBoard(), new SimpleMeterRegistry(), 1);
    }

    private static long earliest(Admin admin, TopicPartition tp) {
        try {
            return admin.listOffsets(Map.of(tp, OffsetSpec.earliest())).all().get().get(tp).offset();
        } catch (InterruptedException | ExecutionException e) {
            return -1;
        }
    }

    /** {@code n} flow messages (or watermark records) from id {@code first}, in one transaction. */
    private void produce(String topic, int first, int n, boolean watermarks, String transactionalId) throws Exception {
        Properties p = cluster.clientProperties();
        p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId);
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p)) {
            producer.initTransactions();
            producer.beginTransaction();
            for (int i = first; i < first + n; i++) {
                ProducerRecord<byte[], byte[]> r;
                if (watermarks) {
                    r = new ProducerRecord<>(topic, 0, null, null);
                    r.headers().add(OutboxWatermarks.HEADER, ByteBuffer.allocate(12).putLong(1_000L + i).putInt(1)
                            .array());
                } else {
                    byte[] id = ByteBuffer.allocate(12).putInt(0).putLong(i).array();
                    r = new ProducerRecord<>(topic, 0, id, id);
                    FlowHeaders.write(r.headers(), MessageId.of(id), 1L, 1L, List.of());
                }
                producer.send(r);
            }
            producer.commitTransaction();
        }
    }
}
