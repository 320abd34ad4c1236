package io.flowkafka.testing;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowkafka.api.MessageId;
import io.flowkafka.internal.message.FlowHeaders;
import io.flowkafka.internal.outbox.OutboxService;
import io.flowkafka.internal.status.StatusBoard;
import io.flowkafka.spi.OutboxBatch;
import io.flowkafka.spi.OutboxDeliverer;
import io.flowkafka.spi.OutboxDeliveryException;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Properties;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The outbox delivery loop against a real broker, with a deliverer of the test's own: a partition that always has a
 * batch ready does not keep the others waiting, and a target slower than the input leaves the backlog in the outbox
 * topic instead of the service's heap.
 */
@WithKafka
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class OutboxDeliveryFairnessIT {
    private static final Duration BOUND = Duration.ofSeconds(60);

    private KafkaCluster cluster;

    @Test
    void aPartitionAlwaysReadyDoesNotKeepTheOthersWaiting(TestNames names) throws Exception {
        String topic = names.topic("outbox");
        cluster.createTopic(topic, 2);
        // the slow partition is the one a consumer's assignment set lists first (the order the old loop kept)
        int slow = new HashSet<>(List.of(new TopicPartition(topic, 0), new TopicPartition(topic, 1))).iterator().next()
                .partition();
        produce(topic, slow, 300);
        produce(topic, 1 - slow, 1);
        ConcurrentLinkedQueue<Long> delivered = new ConcurrentLinkedQueue<>();
        AtomicInteger slowDelivered = new AtomicInteger();
        AtomicInteger slowDeliveredWhenOtherWas = new AtomicInteger(-1);
        // every batch of the slow partition takes 40 ms: its 300 one-record batches outlast a 5 s delivery budget
        OutboxDeliverer deliverer = new TestDeliverer() {
            @Override
            public void deliver(OutboxBatch batch) throws OutboxDeliveryException {
                if (batch.partition() == slow) {
                    pause(40);
                    slowDelivered.incrementAndGet();
                } else {
                    slowDeliveredWhenOtherWas.set(slowDelivered.get());
                }
                batch.records().forEach(r -> delivered.add(r.offset() * 10 + batch.partition()));
            }
        };
        try (OutboxService service = service(names, topic, deliverer, 1)) {
            service.start();
            Await.until(BOUND, "the other partition's record delivered", () -> slowDeliveredWhenOtherWas.get() >= 0);
            assertThat(slowDeliveredWhenOtherWas.get()).as("the slow partition's batches delivered before the other's")
                    .isLessThan(300);
            Await.until(BOUND, "every record delivered", () -> delivered.size() == 301);
        }
        assertThat(delivered).doesNotHaveDuplicates();
    }

    @Test
    void aSlowTargetLeavesTheBacklogInTheOutbox(TestNames names) throws Exception {
        String topic = names.topic("outbox");
        cluster.createTopic(topic, 1);
        produce(topic, 0, 5000);
        AtomicReference<OutboxService> ref = new AtomicReference<>();
        AtomicInteger calls = new AtomicInteger();
        AtomicInteger mostBuffered = new AtomicInteger();
        ConcurrentLinkedQueue<Long> delivered = new ConcurrentLinkedQueue<>();
        // the target takes nothing for a while (each call: "unfinished, go on after a poll"), then everything
        OutboxDeliverer deliverer = new TestDeliverer() {
            volatile boolean slow = true;

            @Override
            public void deliver(OutboxBatch batch) throws OutboxDeliveryException {
                mostBuffered.accumulateAndGet(ref.get().buffered(batch.partition()), Math::max);
                if (slow && calls.incrementAndGet() < 40) {
                    throw OutboxDeliveryException.unfinished("the target is slow");
                }
                slow = false;
                batch.records().forEach(r -> delivered.add(r.offset()));
            }
        };
        try (OutboxService service = service(names, topic, deliverer, 10)) {
            ref.set(service);
            service.start();
            Await.until(BOUND, "every record delivered", () -> delivered.size() == 5000);
        }
        // 10-record batches: polls of 500 records; a partition pauses at twice that, one poll may come on top
        assertThat(mostBuffered.get()).as("records buffered at most").isBetween(1, 1500);
        assertThat(List.copyOf(delivered)).doesNotHaveDuplicates().isSorted();
    }

    private OutboxService service(TestNames names, String topic, OutboxDeliverer deliverer, int maxBatchRecords) {
        Map<String, Object> client = new HashMap<>();
        cluster.clientProperties().forEach((k, v) -> client.put((String) k, v));
        return new OutboxService(names.name("p"), "sink", "c", topic, deliverer, client, names.applicationId("d"),
                maxBatchRecords, null, new StatusBoard(), new SimpleMeterRegistry(), 0);
    }

    /** {@code n} flow messages to one partition, outside transactions (read_committed reads them all). */
    private void produce(String topic, int partition, int n) throws Exception {
        Properties p = cluster.clientProperties();
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p)) {
            for (int i = 0; i < n; i++) {
                byte[] id = ByteBuffer.allocate(12).putInt(partition).putLong(i).array();
                ProducerRecord<byte[], byte[]> r = new ProducerRecord<>(topic, partition, id, id);
                FlowHeaders.write(r.headers(), MessageId.of(id), 1L, 1L, List.of());
                producer.send(r);
            }
            producer.flush();
        }
    }

    private static void pause(long ms) {
        try {
            Thread.sleep(ms); // the target's latency, not a test waiting
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** A deliverer without progress of its own: it resumes where the delivery group's offset is. */
    private abstract static class TestDeliverer implements OutboxDeliverer {
        @Override
        public OptionalLong open(int partition, OptionalLong committedOffset) {
            return OptionalLong.empty();
        }

        @Override
        public void release(int partition) {
        }

        @Override
        public void close() {
        }
    }
}
