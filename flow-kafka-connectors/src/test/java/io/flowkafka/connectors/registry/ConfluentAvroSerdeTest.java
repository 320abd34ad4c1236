package io.flowkafka.connectors.registry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class ConfluentAvroSerdeTest {
    private static final String SCOPE = "confluent-avro-serde-test";
    private static final String URL = "mock://" + SCOPE;

    static final Schema ORDER_V1 = new Schema.Parser().parse("{\"type\":\"record\",\"name\":\"Order\","
            + "\"namespace\":\"shop\",\"fields\":[{\"name\":\"id\",\"type\":\"long\"},"
            + "{\"name\":\"item\",\"type\":\"string\"},"
            + "{\"name\":\"kind\",\"type\":{\"type\":\"enum\",\"name\":\"Kind\",\"symbols\":[\"BUY\",\"SELL\"]}},"
            + "{\"name\":\"note\",\"type\":[\"null\",\"string\"],\"default\":null}]}");
    /** V1 plus a defaulted field: BACKWARD-compatible. */
    static final Schema ORDER_V2 = new Schema.Parser().parse("{\"type\":\"record\",\"name\":\"Order\","
            + "\"namespace\":\"shop\",\"fields\":[{\"name\":\"id\",\"type\":\"long\"},"
            + "{\"name\":\"item\",\"type\":\"string\"},"
            + "{\"name\":\"kind\",\"type\":{\"type\":\"enum\",\"name\":\"Kind\",\"symbols\":[\"BUY\",\"SELL\"]}},"
            + "{\"name\":\"note\",\"type\":[\"null\",\"string\"],\"default\":null},"
            + "{\"name\":\"quantity\",\"type\":\"int\",\"default\":1}]}");

    @AfterEach
    void drop() {
        MockSchemaRegistry.dropScope(SCOPE);
    }

    static GenericRecord order(Schema schema, long id, String item) {
        GenericRecord record = new GenericData.Record(schema);
        record.put("id", id);
        record.put("item", item);
        record.put("kind", new GenericData.EnumSymbol(schema.getField("kind").schema(), "SELL"));
        record.put("note", id % 2 == 0 ? null : "odd");
        if (schema.getField("quantity") != null) {
            record.put("quantity", 7);
        }
        return record;
    }

    private static Serde<GenericRecord> serde(Map<String, Object> extra, boolean isKey) {
        Map<String, Object> config = new HashMap<>(extra);
        config.put("schema.registry.url", URL);
        ConfluentAvroSerde serde = new ConfluentAvroSerde();
        serde.configure(config, isKey);
        return serde;
    }

    @Test
    void shouldRoundTripThroughAMockRegistry() {
        Serde<GenericRecord> serde = serde(Map.of(), false);

        for (long id = 1; id <= 3; id++) {
            GenericRecord order = order(ORDER_V1, id, "book-" + id);
            byte[] bytes = serde.serializer().serialize("orders", order);
            assertThat(serde.deserializer().deserialize("orders", bytes)).isEqualTo(order);
        }
    }

    @Test
    void shouldShareAMockScopeBetweenInstancesAndForgetItWhenDropped() {
        byte[] bytes = serde(Map.of(), false).serializer().serialize("orders", order(ORDER_V1, 1, "a"));

        assertThat(serde(Map.of(), false).deserializer().deserialize("orders", bytes)).isNotNull();
        MockSchemaRegistry.dropScope(SCOPE);
        assertThatThrownBy(() -> serde(Map.of(), false).deserializer().deserialize("orders", bytes))
                .isInstanceOf(SerializationException.class)
                .hasMessageContaining("schema id 1 could not be fetched")
                .hasMessageContaining("40403");
    }

    @Test
    void shouldNameSubjectsAfterTheTopicForKeysAndValues() {
        serde(Map.of(), false).serializer().serialize("orders", order(ORDER_V1, 1, "a"));
        serde(Map.of(), true).serializer().serialize("orders", order(ORDER_V1, 1, "a"));

        assertThat(MockSchemaRegistry.forScope(SCOPE).subjects()).containsExactly("orders-key", "orders-value");
    }

    @Test
    void shouldPassNullsThrough() {
        Serde<GenericRecord> serde = serde(Map.of(), false);

        assertThat(serde.serializer().serialize("orders", null)).isNull();
        assertThat(serde.deserializer().deserialize("orders", null)).isNull();
    }

    @Test
    void shouldResolveToAReaderSchemaWithAnAddedDefaultedField() {
        byte[] v1 = serde(Map.of(), false).serializer().serialize("orders", order(ORDER_V1, 1, "a"));
        Serde<GenericRecord> reader = serde(Map.of("flow.avro.reader.schema", ORDER_V2.toString()), false);

        GenericRecord read = reader.deserializer().deserialize("orders", v1);

        assertThat(read.getSchema()).isEqualTo(ORDER_V2);
        assertThat(read.get("quantity")).isEqualTo(1);
        assertThat(read.get("item").toString()).isEqualTo("a");
    }

    @Test
    void shouldRegisterACompatibleNewVersionAndKeepReadingOldRecords() {
        Serde<GenericRecord> serde = serde(Map.of(), false);
        byte[] v1 = serde.serializer().serialize("orders", order(ORDER_V1, 1, "a"));
        byte[] v2 = serde.serializer().serialize("orders", order(ORDER_V2, 2, "b"));

        assertThat(MockSchemaRegistry.forScope(SCOPE).latest("orders-value").version()).isEqualTo(2);
        assertThat(serde.deserializer().deserialize("orders", v1).getSchema()).isEqualTo(ORDER_V1);
        assertThat(serde.deserializer().deserialize("orders", v2).get("quantity")).isEqualTo(7);
    }

    @Test
    void shouldRefuseAnIncompatibleSchemaNamingTopicAndSubject() {
        Serde<GenericRecord> serde = serde(Map.of(), false);
        serde.serializer().serialize("orders", order(ORDER_V2, 1, "a"));
        Schema incompatible = new Schema.Parser().parse("{\"type\":\"record\",\"name\":\"Order\",\"namespace\":"
                + "\"shop\",\"fields\":[{\"name\":\"id\",\"type\":\"string\"}]}");
        GenericRecord record = new GenericData.Record(incompatible);
        record.put("id", "x");

        assertThatThrownBy(() -> serde.serializer().serialize("orders", record))
                .isInstanceOf(SerializationException.class)
                .hasMessageContaining("topic 'orders' (subject 'orders-value', schema shop.Order)")
                .hasMessageContaining("HTTP 409, error_code 40901");
    }

    @Test
    void shouldFailAnUnregisteredSchemaWithoutAutoRegistration() {
        Serde<GenericRecord> serde = serde(Map.of("auto.register.schemas", false), false);

        assertThatThrownBy(() -> serde.serializer().serialize("orders", order(ORDER_V1, 1, "a")))
                .isInstanceOf(SerializationException.class)
                .hasMessageContaining("topic 'orders'")
                .hasMessageContaining("Subject 'orders-value' not found.");
        MockSchemaRegistry.forScope(SCOPE).register("orders-value", ORDER_V1);
        byte[] bytes = serde.serializer().serialize("orders", order(ORDER_V1, 1, "a"));
        assertThat(serde.deserializer().deserialize("orders", bytes).get("id")).isEqualTo(1L);
    }

    @Test
    void shouldWriteWithTheLatestVersionTakingFieldsByName() {
        MockSchemaRegistry registry = MockSchemaRegistry.forScope(SCOPE);
        registry.register("orders-value", ORDER_V1);
        int latestId = registry.register("orders-value", ORDER_V2);
        // the same fields as V2 in another order: written with V2 itself, fields taken by name
        Schema shuffled = new Schema.Parser().parse("{\"type\":\"record\",\"name\":\"Order\",\"namespace\":"
                + "\"shop\",\"fields\":[{\"name\":\"quantity\",\"type\":\"int\"},"
                + "{\"name\":\"note\",\"type\":[\"null\",\"string\"]},"
                + "{\"name\":\"kind\",\"type\":{\"type\":\"enum\",\"name\":\"Kind\",\"symbols\":[\"SELL\",\"BUY\"]}},"
                + "{\"name\":\"item\",\"type\":\"string\"},{\"name\":\"id\",\"type\":\"long\"}]}");
        GenericRecord record = new GenericData.Record(shuffled);
        record.put("quantity", 3);
        record.put("note", "n");
        record.put("kind", new GenericData.EnumSymbol(shuffled.getField("kind").schema(), "BUY"));
        record.put("item", "pen");
        record.put("id", 9L);
        Serde<GenericRecord> serde = serde(Map.of("auto.register.schemas", false, "use.latest.version", true), false);

        byte[] bytes = serde.serializer().serialize("orders", record);
        GenericRecord read = serde.deserializer().deserialize("orders", bytes);

        assertThat(bytes[4]).isEqualTo((byte) latestId);
        assertThat(read.getSchema()).isEqualTo(ORDER_V2);
        assertThat(read.toString()).isEqualTo(
                "{\"id\": 9, \"item\": \"pen\", \"kind\": \"BUY\", \"note\": \"n\", \"quantity\": 3}");
        assertThat(registry.latest("orders-value").version()).as("nothing registered").isEqualTo(2);
    }

    @Test
    void shouldNameTheMissingFieldWhenARecordDoesNotFitTheLatestVersion() {
        MockSchemaRegistry.forScope(SCOPE).register("orders-value", ORDER_V2);
        Serde<GenericRecord> serde = serde(Map.of("auto.register.schemas", false, "use.latest.version", true), false);

        assertThatThrownBy(() -> serde.serializer().serialize("orders", order(ORDER_V1, 1, "a")))
                .isInstanceOf(SerializationException.class)
                .hasMessageContaining("topic 'orders'")
                .hasMessageContaining("the subject's latest version")
                .hasMessageContaining("has no field 'quantity'");
    }

    @Test
    void shouldRejectBytesWithAWrongMagicByte() {
        Deserializer<GenericRecord> deserializer = serde(Map.of(), false).deserializer();

        assertThatThrownBy(() -> deserializer.deserialize("orders", "{\"id\":1}".getBytes()))
                .isInstanceOf(SerializationException.class)
                .hasMessage("Could not deserialize the value of a record of topic 'orders': byte 0 is 0x7b, not the "
                        + "magic byte 0x00 of Confluent's wire format (was it written without a schema registry?)");
    }

    @Test
    void shouldRejectBytesShorterThanTheHeader() {
        Deserializer<GenericRecord> deserializer = serde(Map.of(), true).deserializer();

        assertThatThrownBy(() -> deserializer.deserialize("orders", new byte[] {0, 0, 1}))
                .isInstanceOf(SerializationException.class)
                .hasMessageContaining("the key of a record of topic 'orders': 3 bytes are fewer than the 5-byte header");
    }

    @Test
    void shouldRejectAnUnknownSchemaId() {
        Deserializer<GenericRecord> deserializer = serde(Map.of(), false).deserializer();

        assertThatThrownBy(() -> deserializer.deserialize("orders", new byte[] {0, 0, 0, 0, 99, 2}))
                .isInstanceOf(SerializationException.class)
                .hasMessageContaining("topic 'orders': schema id 99 could not be fetched")
                .hasMessageContaining("error_code 40403: Schema 99 not found")
                .cause().isInstanceOf(SchemaRegistryException.class);
    }

    @Test
    void shouldRejectATruncatedPayload() {
        Serde<GenericRecord> serde = serde(Map.of(), false);
        byte[] bytes = serde.serializer().serialize("orders", order(ORDER_V1, 1, "a longer item name"));

        assertThatThrownBy(() -> serde.deserializer().deserialize("orders", Arrays.copyOf(bytes, bytes.length - 6)))
                .isInstanceOf(SerializationException.class)
                .hasMessageContaining("topic 'orders' with schema id 1")
                .hasMessageContaining("EOFException");
    }

    @Test
    void shouldRejectBytesLeftOverAfterTheRecord() {
        Serde<GenericRecord> serde = serde(Map.of(), false);
        byte[] bytes = serde.serializer().serialize("orders", order(ORDER_V1, 2, "a"));

        assertThatThrownBy(() -> serde.deserializer().deserialize("orders", Arrays.copyOf(bytes, bytes.length + 2)))
                .isInstanceOf(SerializationException.class)
                .hasMessageContaining("topic 'orders': bytes are left over after the record of schema id 1");
    }

    @Test
    void shouldRejectAReaderSchemaThatCannotReadTheWriters() {
        byte[] v1 = serde(Map.of(), false).serializer().serialize("orders", order(ORDER_V1, 1, "a"));
        Schema needsField = new Schema.Parser().parse("{\"type\":\"record\",\"name\":\"Order\",\"namespace\":"
                + "\"shop\",\"fields\":[{\"name\":\"customer\",\"type\":\"string\"}]}");
        Serde<GenericRecord> reader = serde(Map.of("flow.avro.reader.schema", needsField.toString()), false);

        assertThatThrownBy(() -> reader.deserializer().deserialize("orders", v1))
                .isInstanceOf(SerializationException.class)
                .hasMessageContaining("topic 'orders' with schema id 1 read as shop.Order")
                .hasMessageContaining("READER_FIELD_MISSING_DEFAULT_VALUE");
    }

    @Test
    void shouldRejectAWriterSchemaThatIsNotARecord() {
        int id = MockSchemaRegistry.forScope(SCOPE).register("strings-value", Schema.create(Schema.Type.STRING));

        assertThatThrownBy(() -> serde(Map.of(), false).deserializer().deserialize("strings",
                new byte[] {0, 0, 0, 0, (byte) id, 2, 'x'}))
                .isInstanceOf(SerializationException.class)
                .hasMessageContaining("schema id " + id + " is a STRING, not a record");
    }

    @Test
    void shouldLetARetriableRegistryFailurePassUnwrapped() {
        SchemaRegistryException outage = new SchemaRegistryException("registry down", "http://r:8081", null,
                SchemaRegistryException.NO_RESPONSE, SchemaRegistryException.NO_ERROR_CODE, null);
        SchemaRegistryClient down = new WireFormatTest.FixedIdRegistry(1, ORDER_V1) {
            @Override
            public Schema schemaById(int id) {
                throw outage;
            }

            @Override
            public int register(String subject, Schema schema) {
                throw outage;
            }
        };
        Serializer<GenericRecord> serializer = new ConfluentAvroSerializer(down);
        Deserializer<GenericRecord> deserializer = new ConfluentAvroDeserializer(down, null);

        assertThat(outage).as("what the runtime looks for in the cause chain of an outage")
                .hasCauseInstanceOf(org.apache.kafka.common.errors.RetriableException.class);
        assertThatThrownBy(() -> serializer.serialize("orders", order(ORDER_V1, 1, "a"))).isSameAs(outage);
        assertThatThrownBy(() -> deserializer.deserialize("orders", new byte[] {0, 0, 0, 0, 1, 2})).isSameAs(outage);
    }

    @Test
    void shouldUseAGivenClientWithoutConfiguration() {
        MockSchemaRegistry registry = new MockSchemaRegistry("standalone");
        ConfluentAvroSerde serde = new ConfluentAvroSerde(registry, ORDER_V2);

        byte[] bytes = serde.serializer().serialize("orders", order(ORDER_V1, 1, "a"));

        assertThat(registry.subjects()).containsExactly("orders-value");
        assertThat(serde.deserializer().deserialize("orders", bytes).get("quantity")).isEqualTo(1);
    }

    @Test
    void shouldRequireARegistryUrl() {
        assertThatThrownBy(() -> new ConfluentAvroSerde().configure(Map.of(), false))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("schema.registry.url")
                .hasMessageContaining("mock://<scope>");
        assertThatThrownBy(() -> new ConfluentAvroSerializer().serialize("orders", order(ORDER_V1, 1, "a")))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("not configured");
    }
}
