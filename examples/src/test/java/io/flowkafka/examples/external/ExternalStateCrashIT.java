package io.flowkafka.examples.external;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowkafka.testing.Await;
import io.flowkafka.testing.ChildJvm;
import io.flowkafka.testing.ExactlyOnceChecker;
import io.flowkafka.testing.KafkaCluster;
import io.flowkafka.testing.TestNames;
import io.flowkafka.testing.WithKafka;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.Set;
import org.apache.avro.generic.GenericDatumReader;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.io.DecoderFactory;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

/**
 * A manager's table writes and its call's outputs are exactly-once together, on a real broker: two instances of
 * {@link StaticTableJoin} load 20k products (each a distinct sku, so each input makes one table row and one
 * "loaded" output); one instance is killed mid-stream and restarted. Read read_committed, the table topic must
 * hold exactly one record per sku and the loaded topic exactly one output per sku: nothing lost, nothing
 * duplicated (a replayed call after the kill rewrites neither).
 */
@WithKafka
class ExternalStateCrashIT {
    @TempDir(cleanup = CleanupMode.ON_SUCCESS)
    static Path tempRoot;

    private static final int PRODUCTS = 20_000;
    private static final long SEED = Long.getLong("flow.it.seed", 20261203L);

    @Test
    @Timeout(600)
    void theTableRowsAndTheOutputsOfAManagerAreExactlyOnceWhenAnInstanceIsKilled(KafkaCluster cluster,
            TestNames names) throws Exception {
        String pipeline = names.name("pipeline");
        String products = names.topic("products");
        String orders = names.topic("orders");
        String loaded = names.topic("loaded");
        String enriched = names.topic("enriched");
        cluster.createTopic(products, 4);
        cluster.createTopic(orders, 4);
        Path stateRoot = Files.createTempDirectory(tempRoot, "flow-it-state");
        long killAt = 3_000 + new Random(SEED).nextInt(10_000);
        Set<String> skus = new LinkedHashSet<>();
        try (ChildJvm a = instance(cluster, pipeline, products, orders, loaded, enriched, stateRoot, "a");
                ChildJvm b = instance(cluster, pipeline, products, orders, loaded, enriched, stateRoot, "b")) {
            Properties p = cluster.clientProperties();
            p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
            p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
            try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
                for (int i = 0; i < PRODUCTS; i++) {
                    String sku = "s-" + i;
                    skus.add(sku);
                    producer.send(new ProducerRecord<>(products, sku, "{\"sku\":\"" + sku + "\",\"name\":\"n-" + i
                            + "\"}"));
                }
            }
            Await.until(Duration.ofMinutes(3), "the loaded topic holds " + killAt + " outputs",
                    () -> endOffsets(cluster, loaded) >= killAt);
            a.kill();
            assertThat(a.isAlive()).isFalse();
            try (ChildJvm a2 = instance(cluster, pipeline, products, orders, loaded, enriched, stateRoot, "a2")) {
                ExactlyOnceChecker.Report outputs = ExactlyOnceChecker.check(cluster, loaded, skus,
                        Duration.ofMinutes(4), r -> new String(r.key(), StandardCharsets.UTF_8));
                assertThat(outputs.isExact()).as("loaded outputs: " + outputs).isTrue();
                String table = pipeline + ".external.products";
                GenericDatumReader<GenericRecord> reader = new GenericDatumReader<>(StaticTableJoin.PRODUCT_ROW);
                ExactlyOnceChecker.Report rows = ExactlyOnceChecker.check(cluster, table, skus, Duration.ofMinutes(4),
                        r -> {
                            try {
                                return reader.read(null, DecoderFactory.get().binaryDecoder(r.value(), null))
                                        .get("sku").toString();
                            } catch (java.io.IOException e) {
                                throw new java.io.UncheckedIOException(e);
                            }
                        });
                assertThat(rows.isExact()).as("table rows: " + rows).isTrue();
            }
        }
    }

    private static ChildJvm instance(KafkaCluster cluster, String pipeline, String products, String orders,
            String loaded, String enriched, Path stateRoot, String id) throws Exception {
        return ChildJvm.builder(StaticTableJoinMain.class).maxHeap("384m")
                .args(cluster.bootstrapServers(), pipeline, products, orders, loaded, enriched,
                        stateRoot.resolve(id).toString())
                .startAndAwaitOutputLine(l -> l.contains("RUNNING"), Duration.ofMinutes(2));
    }

    /** The sum of a topic's end offsets: an upper bound of its records (transaction markers count). */
    static long endOffsets(KafkaCluster cluster, String topic) {
        try {
            var parts = cluster.admin().describeTopics(List.of(topic)).allTopicNames().get().get(topic).partitions();
            Map<org.apache.kafka.common.TopicPartition, org.apache.kafka.clients.admin.OffsetSpec> req = new HashMap<>();
            parts.forEach(tp -> req.put(new org.apache.kafka.common.TopicPartition(topic, tp.partition()),
                    org.apache.kafka.clients.admin.OffsetSpec.latest()));
            long sum = 0;
            for (var e : cluster.admin().listOffsets(req).all().get().values()) {
                sum += e.offset();
            }
            return sum;
        } catch (Exception e) {
            return 0; // not created yet
        }
    }
}
