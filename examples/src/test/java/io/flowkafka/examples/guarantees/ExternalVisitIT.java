package io.flowkafka.examples.guarantees;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowkafka.api.Message;
import io.flowkafka.api.OutputCollector;
import io.flowkafka.api.RowFunction;
import io.flowkafka.api.RuntimeContext;
import io.flowkafka.api.Visit;
import io.flowkafka.runtime.FlowRuntime;
import io.flowkafka.spec.ColumnType;
import io.flowkafka.spec.ComputationKind;
import io.flowkafka.spec.ExternalStateManagerSpec;
import io.flowkafka.spec.KeyVisitorStreamSpec;
import io.flowkafka.spec.PipelineSpec;
import io.flowkafka.testing.Await;
import io.flowkafka.testing.KafkaCluster;
import io.flowkafka.testing.TestNames;
import io.flowkafka.testing.WithKafka;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericDatumReader;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.io.DecoderFactory;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.common.utils.Bytes;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

/**
 * A key visitor over a manager's table on a real broker (reference 000: {@code external_names} "lets the visitor scan
 * the external state [...] and evict outdated records via clear() in the visit handler"): the visit's
 * {@code clear()} publishes a tombstone to the table topic in the visit's transaction, with the visit's output; read
 * read_committed, each expired lease is evicted once and tombstoned once, and no live lease is touched.
 */
@WithKafka
class ExternalVisitIT {
    /** State directories of this class's runtimes; JUnit deletes it after the class if it passed. */
    @TempDir(cleanup = CleanupMode.ON_SUCCESS)
    static Path tempRoot;

    static final Schema LEASE = SchemaBuilder.record("Lease").namespace("xv").fields().requiredString("id")
            .requiredLong("expires_ms").endRecord();
    static final Schema EVICTED = SchemaBuilder.record("Evicted").namespace("xv").fields().requiredString("id")
            .endRecord();

    /** Writes leases to the table; each visit evicts an expired lease and reports it. */
    public static final class Leases implements RowFunction {
        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
            GenericRecord row = new GenericData.Record(LEASE);
            row.put("id", message.getPayload().get("id").toString());
            row.put("expires_ms", message.getPayload().get("expires_ms"));
            context.getExternalState("/leases").set(row);
        }

        @Override
        public void onVisit(Visit visit, OutputCollector output, RuntimeContext context) {
            var lease = context.getExternalState("/leases");
            lease.get().filter(r -> (Long) r.get("expires_ms") < visit.getSystemTimestamp() / 1_000_000L)
                    .ifPresent(r -> {
                        lease.clear();
                        output.addMessage(context.createMessageBuilder("evicted").set("id", r.get("id").toString())
                                .build());
                    });
        }
    }

    @Test
    @Timeout(240)
    void shouldEvictExpiredRowsOnceWithTheirTombstonesInTheVisitsTransaction(KafkaCluster cluster, TestNames names)
            throws Exception {
        String input = names.topic("leases");
        String evictedTopic = names.topic("evicted");
        String pipeline = names.name("xv");
        cluster.createTopic(input, 2);
        PipelineSpec spec = PipelineSpec.builder(pipeline).stream("raw", LEASE).stream("leases", LEASE)
                .stream("evicted", EVICTED)
                .computation("read", c -> c.kind(ComputationKind.SOURCE).source("raw", "KafkaSource",
                        Map.of("topics", input)).outputStreamIds("leases"))
                .computation("keeper", c -> c.inputStreamIds("leases").desiredPartitionCount(2)
                        .groupBy("hash", ColumnType.UINT64, "farm_hash(id)").groupBy("id", ColumnType.STRING, null)
                        .processingFunction(Leases::new)
                        .externalStateManager(ExternalStateManagerSpec.of("/leases", LEASE))
                        .keyVisitorStream(KeyVisitorStreamSpec.builder("sweep").externalNames("/leases")
                                .period(Duration.ofSeconds(2)).finite(false).build())
                        .outputStreamIds("evicted").streamsDependency("evicted", List.of("sweep"))
                        .sink("out", "KafkaSink", List.of("evicted"), Map.of("topic", evictedTopic, "key_column", "id")))
                .build();
        Properties props = new Properties();
        props.put("bootstrap.servers", cluster.bootstrapServers());
        props.put("state.dir", Files.createTempDirectory(tempRoot, "flow-xv-it").toString());
        props.put("commit.interval.ms", "100");
        try (FlowRuntime runtime = FlowRuntime.create(spec, props)) {
            runtime.start();
            long now = System.currentTimeMillis();
            Properties p = cluster.clientProperties();
            p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
            p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
            try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
                for (int i = 0; i < 100; i++) {
                    long expires = i < 50 ? now - 60_000 : now + 3_600_000;
                    producer.send(new ProducerRecord<>(input, "l" + i, "{\"id\":\"l" + i + "\",\"expires_ms\":"
                            + expires + "}"));
                }
            }
            String table = pipeline + ".external.leases";
            Map<String, Integer> evicted = new HashMap<>();
            Map<Bytes, String> idOfKey = new HashMap<>();
            Map<String, Integer> tombstones = new HashMap<>();
            try (KafkaConsumer<byte[], byte[]> consumer = consumer(cluster, names.name("verify"))) {
                consumer.subscribe(List.of(evictedTopic, table));
                Await.until(Duration.ofMinutes(3), "50 leases evicted and tombstoned", () -> {
                    for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                        if (r.topic().equals(evictedTopic)) {
                            evicted.merge(jsonId(r.value()), 1, Integer::sum);
                        } else if (r.value() != null) {
                            idOfKey.put(Bytes.wrap(r.key()), idOf(r.value()));
                        } else {
                            tombstones.merge(idOfKey.getOrDefault(Bytes.wrap(r.key()), "?"), 1, Integer::sum);
                        }
                    }
                    return evicted.size() == 50 && tombstones.size() == 50;
                });
                // two more passes in both tasks: nothing further is evicted or tombstoned
                double base = minPass(runtime);
                Await.until(Duration.ofMinutes(1), "two more passes in both tasks", () -> {
                    consumer.poll(Duration.ofMillis(200)).forEach(r -> {
                        if (r.topic().equals(evictedTopic)) {
                            evicted.merge("late", 1, Integer::sum);
                        } else if (r.value() == null) {
                            tombstones.merge("late", 1, Integer::sum);
                        }
                    });
                    return minPass(runtime) >= base + 2;
                });
            }
            for (int i = 0; i < 50; i++) {
                assertThat(evicted).as("l%d evicted once", i).containsEntry("l" + i, 1);
                assertThat(tombstones).as("l%d tombstoned once", i).containsEntry("l" + i, 1);
            }
            assertThat(evicted).hasSize(50);
            assertThat(tombstones).hasSize(50);
        }
    }

    /** The id in a row of the table (Avro binary of {@link #LEASE}). */
    private static String idOf(byte[] row) {
        try {
            return new GenericDatumReader<GenericRecord>(LEASE).read(null, DecoderFactory.get().binaryDecoder(row,
                    null)).get("id").toString();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The id in a record of the evicted topic (JSON). */
    private static String jsonId(byte[] value) {
        try {
            return new ObjectMapper().readTree(value).get("id").asText();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The smallest pass the sweep visitor is in over the runtime's tasks (its pass gauges). */
    private static double minPass(FlowRuntime runtime) {
        return runtime.meterRegistry().find("flow.key_visitor.pass").tag("stream", "sweep").gauges().stream()
                .mapToDouble(g -> g.value()).min().orElse(-1);
    }

    private static KafkaConsumer<byte[], byte[]> consumer(KafkaCluster cluster, String group) {
        Properties c = cluster.clientProperties();
        c.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        c.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        c.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        c.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        c.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        return new KafkaConsumer<>(c);
    }
}
