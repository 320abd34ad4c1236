package io.flowkafka.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flowkafka.testing.ExactlyOnceChecker.Report;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@WithKafka
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class EmbeddedKafkaClusterIT {
    private static final Duration BOUND = Duration.ofSeconds(30);

    private KafkaCluster cluster;

    @Test
    void shouldInjectTheSharedClusterIntoFieldAndParameter(KafkaCluster fromParameter) {
        assertThat(cluster).isSameAs(fromParameter).isSameAs(EmbeddedKafkaCluster.shared());
        assertThat(fromParameter.clientProperties().getProperty("bootstrap.servers"))
                .isEqualTo(fromParameter.bootstrapServers())
                .startsWith("localhost:");
    }

    @Test
    void shouldReadBackTransactionalRecordsExactlyOnce(TestNames names) throws Exception {
        String topic = names.topic("input");
        cluster.createTopic(topic, 4);

        Set<String> expected = produceTransactionally(cluster, topic, names.name("tx"), 1000);

        List<ConsumerRecord<byte[], byte[]>> read = readCommitted(topic, names.applicationId("reader"), 1000);
        assertThat(read).hasSize(1000);
        assertThat(read).extracting(ConsumerRecord::partition).containsOnly(0, 1, 2, 3);
        Report report = ExactlyOnceChecker.check(cluster, topic, expected, BOUND);
        assertThat(report.isExact()).as(report.toString()).isTrue();
        assertThat(report.total()).isEqualTo(1000);
    }

    @Test
    void shouldReportADuplicateWrittenToTheBroker(TestNames names) throws Exception {
        String topic = names.topic("output");
        cluster.createTopic(topic, 2);
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(
                cluster.clientProperties(), new ByteArraySerializer(), new ByteArraySerializer())) {
            for (String key : List.of("a", "b", "b")) {
                producer.send(new ProducerRecord<>(topic, key.getBytes(StandardCharsets.UTF_8),
                        new byte[0])).get();
            }
        }

        // "c" never comes: the checker reads until its bound, so a short one (it assigns the partitions: no group join)
        Report report = ExactlyOnceChecker.check(cluster, topic, Set.of("a", "b", "c"), Duration.ofSeconds(6));

        assertThat(report.lost()).containsExactly("c");
        assertThat(report.duplicated()).containsEntry("b", 2).hasSize(1);
        assertThat(report.total()).isEqualTo(3);
    }

    @Test
    void shouldRejectAnExistingTopicAndABadPartitionCount(TestNames names) {
        String topic = names.topic("twice");
        cluster.createTopic(topic, 1);

        assertThatThrownBy(() -> cluster.createTopic(topic, 1))
                .isInstanceOf(TopicExistsException.class);
        assertThatThrownBy(() -> cluster.createTopic(names.topic("none"), 0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("partitions must be >= 1 but was 0");
    }

    @Test
    void shouldStartThreeBrokersWithReplicatedTopics(TestNames names) throws Exception {
        try (EmbeddedKafkaCluster three = EmbeddedKafkaCluster.start(3)) {
            Admin admin = three.admin();
            assertThat(admin.describeCluster().nodes().get()).hasSize(3);
            String topic = names.topic("replicated");
            three.createTopic(topic, 3);
            TopicDescription description =
                    admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic);
            assertThat(description.partitions())
                    .allSatisfy(p -> assertThat(p.replicas()).hasSize(3));

            Set<String> expected = produceTransactionally(three, topic, names.name("tx"), 100);

            Report report = ExactlyOnceChecker.check(three, topic, expected, BOUND);
            assertThat(report.isExact()).as(report.toString()).isTrue();
        }
    }

    @Test
    void shouldKeepPortAndDataWhenTheOnlyBrokerRestarts(TestNames names) throws Exception {
        try (EmbeddedKafkaCluster one = EmbeddedKafkaCluster.start()) {
            String topic = names.topic("restarted");
            one.createTopic(topic, 2);
            Set<String> before = produceTransactionally(one, topic, names.name("tx-before"), 100);
            String bootstrap = one.bootstrapServers();

            one.stopBroker(1);
            assertThat(one.isBrokerRunning(1)).isFalse();
            assertThatThrownBy(() -> one.stopBroker(1)).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("broker 1 of").hasMessageContaining("already stopped");
            one.startBroker(1);

            assertThat(one.isBrokerRunning(1)).isTrue();
            assertThat(one.bootstrapServers()).isEqualTo(bootstrap);
            Set<String> after = produceTransactionally(one, topic, names.name("tx-after"), 100, 100);
            Set<String> expected = new HashSet<>(before);
            expected.addAll(after);
            Report report = ExactlyOnceChecker.check(one, topic, expected, BOUND);
            assertThat(report.isExact()).as(report.toString()).isTrue();
            assertThat(report.total()).isEqualTo(200);
        }
    }

    @Test
    void shouldKeepWritingWithMinIsrTwoWhileOneOfThreeBrokersIsStopped(TestNames names) throws Exception {
        try (EmbeddedKafkaCluster three = EmbeddedKafkaCluster.start(3)) {
            String topic = names.topic("degraded");
            three.createTopic(topic, 3, Map.of("min.insync.replicas", "2"));

            three.stopBroker(2);
            Set<String> whileDown = produceTransactionally(three, topic, names.name("tx-down"), 100);
            assertThat(three.admin().describeCluster().nodes().get()).extracting(Node::id)
                    .containsExactlyInAnyOrder(1, 3);
            three.startBroker(2);

            // the controller registers the restarted broker, then the metadata reaches the broker asked
            Await.until(BOUND, "broker 2 registered again", () -> liveBrokers(three) == 3);
            Await.until(BOUND, "broker 2 back in the ISR of every partition of " + topic,
                    () -> smallestIsr(three, topic) == 3);
            Report report = ExactlyOnceChecker.check(three, topic, whileDown, BOUND);
            assertThat(report.isExact()).as(report.toString()).isTrue();
        }
    }

    @Test
    void shouldRejectAnUnknownBrokerIdAndStartingARunningBroker() {
        EmbeddedKafkaCluster shared = EmbeddedKafkaCluster.shared();
        assertThatThrownBy(() -> shared.stopBroker(0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("no broker with node id 0").hasMessageContaining("broker node ids are 1..1");
        assertThatThrownBy(() -> shared.startBroker(1)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("already running");
    }

    @Test
    void shouldRejectZeroBrokers() {
        assertThatThrownBy(() -> EmbeddedKafkaCluster.start(0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("brokers must be >= 1 but was 0");
    }

    @Test
    void shouldServeFromMainInAChildJvm() throws Exception {
        try (ChildJvm broker = ChildJvm.builder(EmbeddedKafkaCluster.class).maxHeap("512m").start()) {
            String line = broker.awaitOutputLine(l -> l.startsWith("bootstrap.servers="), BOUND);
            Properties props = new Properties();
            props.put("bootstrap.servers", line.substring("bootstrap.servers=".length()));

            try (Admin admin = Admin.create(props)) {
                assertThat(admin.describeCluster().nodes().get()).hasSize(1);
            }
            // 143 if SIGTERM wins, 0 if the main thread sees its standard input close first
            assertThat(broker.stop()).isIn(0, 143);
        }
    }

    private static int liveBrokers(KafkaCluster cluster) {
        try {
            return cluster.admin().describeCluster().nodes().get().size();
        } catch (ExecutionException e) {
            return 0;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private static int smallestIsr(KafkaCluster cluster, String topic) {
        try {
            return cluster.admin().describeTopics(List.of(topic)).allTopicNames().get().get(topic).partitions()
                    .stream().mapToInt(p -> p.isr().size()).min().orElse(0);
        } catch (ExecutionException e) {
            return 0;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private static Set<String> produceTransactionally(KafkaCluster cluster, String topic,
            String transactionalId, int count) {
        return produceTransactionally(cluster, topic, transactionalId, 0, count);
    }

    /** Writes {@code count} records with ids from {@code firstId} in transactions of 100, plus an aborted one. */
    private static Set<String> produceTransactionally(KafkaCluster cluster, String topic,
            String transactionalId, int firstId, int count) {
        Properties props = cluster.clientProperties();
        props.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId);
        Set<String> expected = new HashSet<>();
        try (KafkaProducer<byte[], byte[]> producer =
                new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer())) {
            producer.initTransactions();
            for (int i = 0; i < count; i++) {
                if (i % 100 == 0) {
                    producer.beginTransaction();
                }
                expected.add(send(producer, topic, firstId + i));
                if (i % 100 == 99 || i == count - 1) {
                    producer.commitTransaction();
                }
            }
            producer.beginTransaction();
            for (int i = 0; i < 10; i++) {
                send(producer, topic, 1_000_000 + i);
            }
            producer.flush();
            producer.abortTransaction();
        }
        return expected;
    }

    private static String send(KafkaProducer<byte[], byte[]> producer, String topic, long id) {
        byte[] idBytes = ByteBuffer.allocate(Long.BYTES).putLong(id).array();
        ProducerRecord<byte[], byte[]> record = new ProducerRecord<>(
                topic, ("key-" + id).getBytes(StandardCharsets.UTF_8), new byte[100]);
        record.headers().add(ExactlyOnceChecker.ID_HEADER, idBytes);
        producer.send(record);
        return HexFormat.of().formatHex(idBytes);
    }

    private List<ConsumerRecord<byte[], byte[]>> readCommitted(String topic, String groupId, int count) {
        Properties props = cluster.clientProperties();
        props.put(ConsumerConfig.GROUP_ID_CONFIG, groupId);
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        List<ConsumerRecord<byte[], byte[]>> records = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(
                props, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            consumer.subscribe(List.of(topic));
            Await.until(BOUND, count + " committed records read from " + topic, () -> {
                consumer.poll(Duration.ofMillis(100)).forEach(records::add);
                return records.size() >= count;
            });
            consumer.poll(Duration.ofMillis(200)).forEach(records::add);
        }
        return records;
    }
}
