package io.flowkafka.connectors.registry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flowkafka.spec.ComputationKind;
import io.flowkafka.spec.PipelineSpec;
import io.flowkafka.testing.FlowTestDriver;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.generic.GenericRecordBuilder;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.streams.errors.StreamsException;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The value_serde wiring of core's Kafka source and sinks, with {@link ConfluentAvroSerde}, on the
 * test driver: records cross the pipeline in Confluent's wire format, bad bytes go to the
 * dead-letter topic, and a registry outage fails the task instead.
 */
class SerdeWiringTest {
    private static final String SCOPE = "serde-wiring-test";
    private static final String SERDE = ConfluentAvroSerde.class.getName();

    /** The stream's view of an order. */
    static final Schema ORDER = SchemaBuilder.record("Order").namespace("flow").fields()
            .requiredString("id").requiredLong("quantity").optionalString("note").endRecord();
    /** What the producer writes: another name, another field order, an int quantity, a field the stream lacks. */
    static final Schema PLACED = SchemaBuilder.record("OrderPlaced").namespace("com.acme").fields()
            .requiredInt("quantity").requiredString("customer").requiredString("id").endRecord();

    @AfterEach
    void dropRegistry() {
        MockSchemaRegistry.dropScope(SCOPE);
    }

    static PipelineSpec spec(String name, Map<String, Object> sourceExtra, String sinkClass,
            Map<String, Object> sinkExtra) {
        Map<String, Object> source = new HashMap<>(Map.of("topics", "orders-in", "value_serde", SERDE));
        source.putAll(sourceExtra);
        Map<String, Object> sink = new HashMap<>(Map.of("topic", "orders-out", "key_column", "id", "value_serde",
                SERDE));
        sink.putAll(sinkExtra);
        return PipelineSpec.builder(name)
                .stream("raw", ORDER).stream("orders", ORDER)
                .computation("read", c -> c.kind(ComputationKind.SOURCE).source("raw", "KafkaSource", source)
                        .outputStreamIds("orders")
                        .sink("out", sinkClass, List.of("orders"), sink))
                .build();
    }

    private static Map<String, Object> registry(String url) {
        return Map.of("serde_config", Map.of("schema.registry.url", url));
    }

    private static Serde<GenericRecord> clientSerde() {
        return GenericRecordSerdes.create(SERDE, Map.of("schema.registry.url", "mock://" + SCOPE), false);
    }

    private static byte[] placed(Serde<GenericRecord> serde, String id, int quantity) {
        return serde.serializer().serialize("orders-in", new GenericRecordBuilder(PLACED).set("id", id)
                .set("quantity", quantity).set("customer", "c-" + id).build());
    }

    @Test
    void shouldReadAndWriteTheWireFormatThroughTheRegistry() {
        PipelineSpec spec = spec("wire", registry("mock://" + SCOPE), "KafkaSink", registry("mock://" + SCOPE));
        Serde<GenericRecord> serde = clientSerde();
        try (FlowTestDriver driver = FlowTestDriver.create(spec)) {
            driver.pipeSource("orders-in", "o1".getBytes(StandardCharsets.UTF_8), placed(serde, "o1", 3),
                    Instant.parse("2026-01-01T00:00:01Z"));

            List<TestRecord<byte[], byte[]>> out = driver.readTopic("orders-out");
            assertThat(out).hasSize(1);
            byte[] value = out.get(0).value();
            assertThat(value[0]).as("the magic byte of Confluent's wire format").isEqualTo((byte) 0);
            assertThat(new String(out.get(0).key(), StandardCharsets.UTF_8)).isEqualTo("o1");
            GenericRecord back = serde.deserializer().deserialize("orders-out", value);
            assertThat(back.getSchema()).as("written with the stream's schema").isEqualTo(ORDER);
            assertThat(back.get("id").toString()).isEqualTo("o1");
            assertThat(back.get("quantity")).as("the producer's int, by field name, as the stream's long").isEqualTo(3L);
            assertThat(back.get("note")).as("missing in the producer's schema: the stream's default").isNull();
            assertThat(MockSchemaRegistry.forScope(SCOPE).subjects())
                    .containsExactlyInAnyOrder("orders-in-value", "orders-out-value");
            assertThat(driver.readDeadLetters()).isEmpty();
        }
    }

    @Test
    void shouldSendBadBytesToTheDeadLetterTopicWithTheReason() {
        PipelineSpec spec = spec("bad", registry("mock://" + SCOPE), "KafkaSink", registry("mock://" + SCOPE));
        try (FlowTestDriver driver = FlowTestDriver.create(spec)) {
            driver.pipeSource("orders-in", null, "{\"id\":\"o1\"}".getBytes(StandardCharsets.UTF_8), Instant.EPOCH);
            driver.pipeSource("orders-in", null, placed(clientSerde(), "o2", 1), Instant.EPOCH);

            assertThat(driver.readDeadLetters()).singleElement().satisfies(d -> {
                assertThat(d.valueAsString()).isEqualTo("{\"id\":\"o1\"}");
                assertThat(d.errorClass()).isEqualTo("org.apache.kafka.common.errors.SerializationException");
                assertThat(d.errorMessage()).contains("topic 'orders-in'").contains("not the magic byte 0x00");
                assertThat(d.stage()).isEqualTo("decode the record of topic orders-in");
            });
            assertThat(driver.readTopic("orders-out")).as("the pipeline goes on").hasSize(1);
        }
    }

    @Test
    void shouldNameTheFieldsTheProducersSchemaLacks() {
        Schema thin = SchemaBuilder.record("Thin").namespace("com.acme").fields().requiredString("customer")
                .endRecord();
        PipelineSpec spec = spec("thin", registry("mock://" + SCOPE), "KafkaSink", registry("mock://" + SCOPE));
        try (FlowTestDriver driver = FlowTestDriver.create(spec)) {
            driver.pipeSource("orders-in", null, clientSerde().serializer().serialize("orders-in",
                    new GenericRecordBuilder(thin).set("customer", "c").build()), Instant.EPOCH);

            assertThat(driver.readDeadLetters()).singleElement().satisfies(d -> assertThat(d.errorMessage())
                    .contains("schema com.acme.Thin, which lacks fields [id, quantity] of stream 'raw'"));
        }
    }

    @Test
    void shouldTakeTheRegistryFromTheDeploymentUnlessTheSpecSaysOtherwise() {
        Properties props = new Properties();
        props.put("flow.serde.schema.registry.url", "mock://" + SCOPE);
        props.put("flow.serde.auto.register.schemas", "false"); // the sink overrides it below
        PipelineSpec spec = spec("deployed", Map.of(), "KafkaSink",
                Map.of("serde_config", Map.of("auto.register.schemas", true)));
        try (FlowTestDriver driver = FlowTestDriver.create(spec, props)) {
            driver.pipeSource("orders-in", null, placed(clientSerde(), "o1", 2), Instant.EPOCH);

            assertThat(driver.readDeadLetters()).isEmpty();
            assertThat(driver.readTopic("orders-out")).hasSize(1);
            assertThat(MockSchemaRegistry.forScope(SCOPE).subjects()).contains("orders-out-value");
        }
    }

    @Test
    void shouldRejectASerdeConfigurationBeforeAnythingRuns() {
        PipelineSpec spec = spec("unconfigured", Map.of(), "KafkaSink", Map.of());

        assertThatThrownBy(() -> FlowTestDriver.create(spec)).isInstanceOf(ConfigException.class)
                .hasMessageContaining("computation 'read', source 'raw': value_serde " + SERDE
                        + " rejected its configuration").hasMessageContaining("schema.registry.url");
    }

    @Test
    void shouldEncodeTKafkaSinkRecordsWithTheSerdeIntoTheOutbox() {
        PipelineSpec spec = spec("tks", registry("mock://" + SCOPE), "TKafkaSink", registry("mock://" + SCOPE));
        Serde<GenericRecord> serde = clientSerde();
        try (FlowTestDriver driver = FlowTestDriver.create(spec)) {
            driver.pipeSource("orders-in", null, placed(serde, "o1", 4), Instant.EPOCH);

            List<TestRecord<byte[], byte[]>> outbox = driver.readTopic("tks.outbox.out");
            assertThat(outbox).hasSize(1);
            assertThat(serde.deserializer().deserialize("orders-out", outbox.get(0).value()).get("quantity"))
                    .isEqualTo(4L);
            assertThat(MockSchemaRegistry.forScope(SCOPE).subjects()).as("subject of the target topic")
                    .contains("orders-out-value");
        }
    }

    @Test
    void shouldFailTheTaskInsteadOfDeadLetteringWhenTheRegistryIsDown() throws Exception {
        int port;
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = socket.getLocalPort();
        }
        Map<String, Object> down = Map.of("serde_config", Map.of("schema.registry.url", "http://127.0.0.1:" + port,
                "flow.schema.registry.connect.timeout.ms", 2000));
        PipelineSpec spec = spec("down", down, "KafkaSink", registry("mock://" + SCOPE));
        try (FlowTestDriver driver = FlowTestDriver.create(spec)) {
            byte[] good = placed(clientSerde(), "o1", 1); // id 1 in the mock registry; the pipeline's registry is down

            assertThatThrownBy(() -> driver.pipeSource("orders-in", null, good, Instant.EPOCH))
                    .isInstanceOf(StreamsException.class)
                    .satisfies(e -> assertThat(e).hasStackTraceContaining("SchemaRegistryUnavailableException")
                            .hasStackTraceContaining("java.net.ConnectException")
                            .hasStackTraceContaining("the registry could not be reached"));
            assertThat(driver.readDeadLetters()).as("a good record is never dead-lettered for an outage").isEmpty();
        }
    }
}
