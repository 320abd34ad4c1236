package io.flowkafka.examples.external;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.flowkafka.runtime.FlowRuntime;
import io.flowkafka.runtime.VersionedReferenceWriter;
import io.flowkafka.spec.PipelineSpec;
import io.flowkafka.testing.Await;
import io.flowkafka.testing.KafkaCluster;
import io.flowkafka.testing.TestNames;
import io.flowkafka.testing.WithKafka;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

/**
 * A versioned reference switched by a batch job on a real broker: the pipeline instance joining it sees the switch
 * within {@link #SWITCH_BOUND}, without a restart, and the orders of one key are priced v1 ... v1 then v2 ... v2
 * (never back, never mixed).
 */
@WithKafka
class VersionedSwitchIT {
    @TempDir(cleanup = CleanupMode.ON_SUCCESS)
    static Path tempRoot;

    /**
     * The stated bound: from the pointer write acknowledged to an output priced with the new version. The global
     * thread polls the topic continuously, so the lag is its fetch round trip plus the order's own trip through the
     * pipeline (commit.interval.ms 100); 15 s leaves room for a loaded CI machine.
     */
    static final Duration SWITCH_BOUND = Duration.ofSeconds(15);

    @Test
    @Timeout(300)
    void aJoinerOnAnotherInstanceSeesAPointerSwitchWithinTheBound(KafkaCluster cluster, TestNames names)
            throws Exception {
        String orders = names.topic("orders");
        String prices = names.topic("prices");
        String priced = names.topic("priced");
        cluster.createTopic(orders, 2);
        cluster.createTopic(prices, 1, Map.of("cleanup.policy", "compact"));
        PipelineSpec spec = ExternalStateJoin.spec(names.name("pipeline"), orders, prices, priced, null, 2);
        Properties props = cluster.clientProperties();
        props.put("state.dir", Files.createTempDirectory(tempRoot, "flow-it-state").toString());
        props.put("commit.interval.ms", "100");
        try (VersionedReferenceWriter writer = VersionedReferenceWriter.create(spec, "pricer", ExternalStateJoin.PRICES,
                cluster.clientProperties());
                FlowRuntime runtime = FlowRuntime.create(spec, props);
                Orders io = new Orders(cluster, orders, priced)) {
            writer.writeVersion("v1", Map.of(writer.key(Map.of("sku", "s1")), ExternalStateJoinTest.price(100, "v1")));
            writer.switchTo("v1");
            runtime.start();
            assertThat(runtime.awaitState(FlowRuntime.State.RUNNING, Duration.ofMinutes(1))).isTrue();
            Await.until(Duration.ofMinutes(2), "an order priced with v1", () -> io.orderAndRead().contains("v1"));
            writer.writeVersion("v2", Map.of(writer.key(Map.of("sku", "s1")), ExternalStateJoinTest.price(120, "v2")));
            long switchedAt = System.nanoTime();
            writer.switchTo("v2");
            Await.until(SWITCH_BOUND, "an order priced with v2 within " + SWITCH_BOUND + " of the switch",
                    () -> io.orderAndRead().contains("v2"));
            Duration seenAfter = Duration.ofNanos(System.nanoTime() - switchedAt);
            assertThat(seenAfter).isLessThan(SWITCH_BOUND);
            Await.until(Duration.ofMinutes(1), "every order sent is priced", io::allPriced);
            List<String> versions = io.versions();
            int firstV2 = versions.indexOf("v2");
            assertThat(versions.subList(0, firstV2)).containsOnly("v1");
            assertThat(versions.subList(firstV2, versions.size())).as("once switched, never back").containsOnly("v2");
            System.out.println("versioned switch seen after " + seenAfter.toMillis() + " ms");
        }
    }

    @Test
    @Timeout(120)
    void aVersionedReferenceTopicWithTwoPartitionsIsAClearError(KafkaCluster cluster, TestNames names) {
        String prices = names.topic("prices");
        cluster.createTopic(prices, 2, Map.of("cleanup.policy", "compact"));
        PipelineSpec spec = ExternalStateJoin.spec(names.name("pipeline"), names.topic("orders"), prices,
                names.topic("priced"), null, 1);
        assertThatThrownBy(() -> VersionedReferenceWriter.create(spec, "pricer", ExternalStateJoin.PRICES,
                cluster.clientProperties())).hasMessageContaining("has 2 partitions but needs exactly 1");
    }

    /** Sends orders of sku s1 and reads their priced outputs, in order. */
    private static final class Orders implements AutoCloseable {
        private final KafkaProducer<String, String> producer;
        private final KafkaConsumer<String, String> consumer;
        private final String orders;
        private final List<String> versions = new ArrayList<>();
        private final ObjectMapper json = new ObjectMapper();
        private int sent;

        Orders(KafkaCluster cluster, String orders, String priced) {
            this.orders = orders;
            Properties p = cluster.clientProperties();
            p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
            p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
            this.producer = new KafkaProducer<>(p);
            Properties c = cluster.clientProperties();
            c.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
            c.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
            c.put(ConsumerConfig.GROUP_ID_CONFIG, priced + "-verify");
            c.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
            c.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
            this.consumer = new KafkaConsumer<>(c);
            consumer.subscribe(List.of(priced));
        }

        /** Sends one order, reads what is priced so far; returns the versions read by this call. */
        List<String> orderAndRead() {
            String id = String.format("o-%06d", sent++);
            try {
                producer.send(new ProducerRecord<>(orders, "s1", "{\"order_id\":\"" + id + "\",\"sku\":\"s1\"}"))
                        .get();
            } catch (Exception e) {
                throw new IllegalStateException("sending order " + id, e);
            }
            return read();
        }

        private List<String> read() {
            List<String> read = new ArrayList<>();
            for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                try {
                    JsonNode n = json.readTree(r.value());
                    read.add(n.get("version").asText());
                } catch (java.io.IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            }
            versions.addAll(read);
            return read;
        }

        boolean allPriced() {
            read();
            return versions.size() >= sent;
        }

        List<String> versions() {
            return versions;
        }

        @Override
        public void close() {
            producer.close();
            consumer.close();
        }
    }
}
