package io.flowkafka.connectors.registry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Map;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericDatumReader;
import org.apache.avro.generic.GenericDatumWriter;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.io.DecoderFactory;
import org.apache.avro.io.Encoder;
import org.apache.avro.io.EncoderFactory;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class GenericRecordSerdesTest {
    private static final String SCOPE = "generic-record-serdes-test";

    @AfterEach
    void drop() {
        MockSchemaRegistry.dropScope(SCOPE);
    }

    @Test
    void shouldMakeOurSerdeByClassName() {
        try (Serde<GenericRecord> serde = GenericRecordSerdes.create(GenericRecordSerdes.DEFAULT_SERDE_CLASS,
                Map.of("schema.registry.url", "mock://" + SCOPE), true)) {
            GenericRecord order = ConfluentAvroSerdeTest.order(ConfluentAvroSerdeTest.ORDER_V1, 1, "a");

            byte[] bytes = serde.serializer().serialize("orders", order);

            assertThat(serde).isInstanceOf(ConfluentAvroSerde.class);
            assertThat(bytes[0]).isEqualTo(ConfluentAvroSerde.MAGIC_BYTE);
            assertThat(serde.deserializer().deserialize("orders", bytes)).isEqualTo(order);
            assertThat(MockSchemaRegistry.forScope(SCOPE).subjects()).as("configured as a key serde")
                    .containsExactly("orders-key");
        }
    }

    @Test
    void shouldMakeAnotherSerdeByClassNameAndConfigureIt() {
        Serde<GenericRecord> serde = GenericRecordSerdes.create(AvroJsonTestSerde.class.getName(),
                Map.of(AvroJsonTestSerde.SCHEMA_CONFIG, ConfluentAvroSerdeTest.ORDER_V1.toString()), false);
        GenericRecord order = ConfluentAvroSerdeTest.order(ConfluentAvroSerdeTest.ORDER_V1, 2, "b");

        byte[] bytes = serde.serializer().serialize("orders", order);

        assertThat(new String(bytes)).startsWith("{\"id\":2,");
        assertThat(serde.deserializer().deserialize("orders", bytes)).isEqualTo(order);
    }

    @Test
    void shouldTellHowToGetConfluentsSerdeWhenItIsMissing() {
        assertThatThrownBy(() -> GenericRecordSerdes.create(GenericRecordSerdes.CONFLUENT_SERDE_CLASS, Map.of(), false))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("serde class io.confluent.kafka.streams.serdes.avro.GenericAvroSerde is not on "
                        + "the class path")
                .hasMessageContaining("kafka-streams-avro-serde")
                .hasMessageContaining(GenericRecordSerdes.DEFAULT_SERDE_CLASS);
        assertThatThrownBy(() -> GenericRecordSerdes.create("com.example.Nope", Map.of(), false))
                .hasMessageContaining("com.example.Nope is not on the class path");
    }

    @Test
    void shouldRejectClassesThatAreNotGenericRecordSerdes() {
        assertThatThrownBy(() -> GenericRecordSerdes.create("org.apache.kafka.common.serialization.Serdes$StringSerde",
                Map.of(), false))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("is a Serde<java.lang.String>, not a Serde<GenericRecord>");
        assertThatThrownBy(() -> GenericRecordSerdes.create(String.class.getName(), Map.of(), false))
                .hasMessageContaining("does not implement org.apache.kafka.common.serialization.Serde");
        assertThatThrownBy(() -> GenericRecordSerdes.create(NoDefaultConstructorSerde.class.getName(), Map.of(), false))
                .hasMessageContaining("has no public no-argument constructor");
    }

    @Test
    void shouldLetTheSerdeRejectItsConfiguration() {
        assertThatThrownBy(() -> GenericRecordSerdes.create(GenericRecordSerdes.DEFAULT_SERDE_CLASS, Map.of(), false))
                .isInstanceOf(ConfigException.class).hasMessageContaining("schema.registry.url");
    }

    /** A test-only serde of another kind: Avro JSON with a schema from the configuration. */
    public static final class AvroJsonTestSerde implements Serde<GenericRecord> {
        static final String SCHEMA_CONFIG = "test.avro.schema";
        private Schema schema;

        @Override
        public void configure(Map<String, ?> configs, boolean isKey) {
            schema = new Schema.Parser().parse((String) configs.get(SCHEMA_CONFIG));
        }

        @Override
        public Serializer<GenericRecord> serializer() {
            return (topic, record) -> {
                try {
                    ByteArrayOutputStream out = new ByteArrayOutputStream();
                    Encoder encoder = EncoderFactory.get().jsonEncoder(schema, out);
                    new GenericDatumWriter<GenericRecord>(schema).write(record, encoder);
                    encoder.flush();
                    return out.toByteArray();
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            };
        }

        @Override
        public Deserializer<GenericRecord> deserializer() {
            return (topic, bytes) -> {
                try {
                    return new GenericDatumReader<GenericRecord>(schema).read(null,
                            DecoderFactory.get().jsonDecoder(schema, new String(bytes)));
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            };
        }
    }

    /** A serde that cannot be made by class name. */
    public static final class NoDefaultConstructorSerde extends ConfluentAvroSerde {
        public NoDefaultConstructorSerde(SchemaRegistryClient client) {
            super(client, null);
        }
    }
}
