package io.flowkafka.examples.external;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.flowkafka.connectors.statictable.LocalTablesDirectory;
import io.flowkafka.connectors.statictable.StaticTableWriter;
import io.flowkafka.runtime.FlowRuntime;
import io.flowkafka.spec.PipelineSpec;
import io.flowkafka.testing.Await;
import io.flowkafka.testing.KafkaCluster;
import io.flowkafka.testing.TestNames;
import io.flowkafka.testing.WithKafka;
import io.micrometer.core.instrument.Gauge;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
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
 * The versioned reload of {@link StaticTableJoin#specFromTables} on a real broker, two partitions. Reference 001:
 * "Each new version of a static table is a full reload of the entire reference dataset into state. This scheme
 * doesn't automatically clean up deleted rows." Version 1 holds a, b, c; version 2 holds a and c (20 fillers
 * between), read at one row a second: while it is half loaded, cleanup passes run and delete nothing of version 1;
 * once it is fully loaded, b is deleted from the manager's table topic and from joiner lookups, and a and c carry
 * version 2.
 */
@WithKafka
class VersionedReloadIT {
    @TempDir(cleanup = CleanupMode.ON_SUCCESS)
    static Path tempRoot;

    private static final String V1 = "2026-01-01T00:00:00Z";
    private static final String V2 = "2026-01-02T00:00:00Z";

    @Test
    @Timeout(300)
    void shouldDeleteRowsMissingFromANewVersionOnceItIsFullyLoaded(KafkaCluster cluster, TestNames names)
            throws Exception {
        String pipeline = names.name("pipeline");
        String orders = names.topic("orders");
        String enriched = names.topic("enriched");
        cluster.createTopic(orders, 2);
        Path tables = Files.createTempDirectory(tempRoot, "tables");
        table(tables, V1, "a", "b", "c");
        PipelineSpec spec = StaticTableJoin.specFromTables(pipeline, tables.toString(), orders, names.topic("loaded"),
                enriched, 2, new StaticTableJoin.Reload(Duration.ofSeconds(1), Map.of("max_rows_per_second", 1)));
        Properties props = cluster.clientProperties();
        props.put("state.dir", Files.createTempDirectory(tempRoot, "flow-it-state").toString());
        props.put("commit.interval.ms", "100");
        long started = System.nanoTime();
        try (FlowRuntime runtime = FlowRuntime.create(spec, props);
                Orders io = new Orders(cluster, orders, enriched)) {
            runtime.start();
            assertThat(runtime.awaitState(FlowRuntime.State.RUNNING, Duration.ofMinutes(1))).isTrue();
            try (TableTopicReader products = new TableTopicReader(cluster, pipeline + ".external.products",
                    StaticTableJoin.VERSIONED_ROW, "sku");
                    TableTopicReader versions = new TableTopicReader(cluster, pipeline + ".external.versions",
                            VersionLedger.LOADED, "sku")) {
                reload(runtime, tables, products, versions, io, started);
            }
        }
    }

    private static void reload(FlowRuntime runtime, Path tables, TableTopicReader products,
            TableTopicReader versions, Orders io, long started) throws IOException {
        Await.until(Duration.ofMinutes(1), "version 1 fully loaded", () -> version(versions, "") == ms(V1));
        // the ledger commits after the rows it counted: every row of version 1 is committed
        products.rowsToEnd(Duration.ofSeconds(30));
        assertThat(versionsOf(products, "a", "b", "c")).containsOnly(ms(V1));
        long loadedV1 = System.nanoTime();

        // "A new table appearing in the directory automatically triggers a new run": version 2 lacks b
        List<String> v2 = new ArrayList<>(List.of("a"));
        for (int i = 1; i <= 20; i++) {
            v2.add("f" + i); // at one row a second, c comes 21 s after a: well after the checks below
        }
        v2.add("c");
        table(tables, V2, v2.toArray(String[]::new));
        Await.until(Duration.ofMinutes(1), "a reloaded from version 2", () -> version(products, "a") == ms(V2));
        long passes = passes(runtime);
        Await.until(Duration.ofSeconds(30), "two cleanup passes while version 2 is half loaded",
                () -> passes(runtime) >= passes + 2 * 2); // two partitions, two passes each
        // what is committed now: the ledger, then the table (a version is published after its rows commit)
        versions.rowsToEnd(Duration.ofSeconds(30));
        products.rowsToEnd(Duration.ofSeconds(30));
        assertThat(version(products, "c")).as("c is not reloaded yet").isEqualTo(ms(V1));
        assertThat(version(versions, "")).as("version 2 is not fully loaded").isEqualTo(ms(V1));
        assertThat(version(products, "b")).as("nothing of version 1 is deleted while version 2 is half loaded")
                .isEqualTo(ms(V1));
        assertThat(io.join("b")).isEqualTo("b@" + V1);

        runtime.reconfigure(Map.of("computations", Map.of("read_products", Map.of("source_streams",
                Map.of("raw_products", Map.of("max_rows_per_second", 1000))))));
        Await.until(Duration.ofMinutes(1), "version 2 fully loaded", () -> version(versions, "") == ms(V2));
        long loadedV2 = System.nanoTime();
        Await.until(Duration.ofMinutes(1), "b deleted from the manager's table",
                () -> !products.rows().containsKey("b"));
        long deleted = System.nanoTime();
        products.rowsToEnd(Duration.ofSeconds(30));
        assertThat(versionsOf(products, "a", "c", "f20")).containsOnly(ms(V2));
        Await.until(Duration.ofMinutes(1), "b deleted from joiner lookups", () -> io.join("b").equals("unknown"));
        assertThat(io.join("c")).isEqualTo("c@" + V2);
        System.out.printf("versioned reload: version 1 loaded after %d ms; b deleted %d ms after version 2 was "
                + "fully loaded%n", (loadedV1 - started) / 1_000_000, (deleted - loadedV2) / 1_000_000);
    }

    private static void table(Path tables, String name, String... skus) throws IOException {
        List<GenericRecord> rows = new ArrayList<>();
        for (String sku : skus) {
            GenericRecord r = new GenericData.Record(StaticTableJoin.PRODUCT);
            r.put("sku", sku);
            r.put("name", sku + "@" + name);
            rows.add(r);
        }
        StaticTableWriter.write(LocalTablesDirectory.open(tables), name, StaticTableJoin.PRODUCT, null, rows);
    }

    private static long ms(String table) {
        return Instant.parse(table).toEpochMilli();
    }

    /** The version of a row, -1 when there is none. */
    private static long version(TableTopicReader table, String sku) {
        GenericRecord r = table.rows().get(sku);
        return r == null ? -1 : (Long) r.get("version");
    }

    private static List<Long> versionsOf(TableTopicReader table, String... skus) {
        List<Long> out = new ArrayList<>();
        for (String sku : skus) {
            out.add(version(table, sku));
        }
        return out;
    }

    /** The cleanup passes begun, summed over the loader's partitions. */
    private static long passes(FlowRuntime runtime) {
        long sum = 0;
        for (Gauge g : runtime.meterRegistry().find("flow.key_visitor.pass").tag("computation", "loader").gauges()) {
            sum += (long) g.value();
        }
        return sum;
    }

    /** Sends orders and reads their enriched outputs. */
    private static final class Orders implements AutoCloseable {
        private final KafkaProducer<String, String> producer;
        private final KafkaConsumer<String, String> consumer;
        private final String orders;
        private final Map<String, String> names = new HashMap<>();
        private final ObjectMapper json = new ObjectMapper();
        private int sent;

        Orders(KafkaCluster cluster, String orders, String enriched) {
            this.orders = orders;
            Properties p = cluster.clientProperties();
            p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
            p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
            this.producer = new KafkaProducer<>(p);
            Properties c = cluster.clientProperties();
            c.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
            c.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
            c.put(ConsumerConfig.GROUP_ID_CONFIG, enriched + "-verify");
            c.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
            c.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
            this.consumer = new KafkaConsumer<>(c);
            consumer.subscribe(List.of(enriched));
        }

        /** Sends an order of {@code sku} and awaits its enriched output: the name joined. */
        String join(String sku) {
            String id = "o-" + sent++;
            try {
                producer.send(new ProducerRecord<>(orders, sku, "{\"order_id\":\"" + id + "\",\"sku\":\"" + sku
                        + "\"}")).get();
            } catch (Exception e) {
                throw new IllegalStateException("sending order " + id, e);
            }
            Await.until(Duration.ofMinutes(1), "order " + id + " enriched", () -> {
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                    try {
                        JsonNode n = json.readTree(r.value());
                        names.put(n.get("order_id").asText(), n.get("name").asText());
                    } catch (IOException e) {
                        throw new UncheckedIOException(e);
                    }
                }
                return names.containsKey(id);
            });
            return names.get(id);
        }

        @Override
        public void close() {
            producer.close();
            consumer.close();
        }
    }
}
