package io.flowkafka.connectors.registry;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowkafka.testing.SchemaRegistryReplayServer;
import java.io.IOException;
import java.io.InputStream;
import java.util.Arrays;
import java.util.Map;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericDatumReader;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.io.DecoderFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Wire-format compatibility: our bytes equal hand-written fixtures of Confluent's wire format,
 * the header is checked byte by byte, and the payload after it decodes with a plain Avro reader.
 * Fixtures: {@code src/test/resources/registry/README.md}.
 */
@Timeout(60)
class WireFormatTest {
    private static final String SCOPE = "wire-format-test";

    @AfterEach
    void drop() {
        MockSchemaRegistry.dropScope(SCOPE);
    }

    static byte[] fixture(String name) throws IOException {
        try (InputStream in = WireFormatTest.class.getResourceAsStream("/registry/wire/" + name)) {
            assertThat(in).as(name).isNotNull();
            return in.readAllBytes();
        }
    }

    static GenericRecord hello42() {
        GenericRecord record = new GenericData.Record(RestSchemaRegistryClientTest.TEST);
        record.put("field1", "hello");
        record.put("field2", 42);
        return record;
    }

    @Test
    void shouldWriteExactlyTheFixtureBytesForSchemaId1() throws IOException {
        ConfluentAvroSerde serde = new ConfluentAvroSerde();
        serde.configure(Map.of("schema.registry.url", "mock://" + SCOPE), false);

        byte[] bytes = serde.serializer().serialize("test", hello42());

        assertThat(MockSchemaRegistry.forScope(SCOPE).latest("test-value").id()).isEqualTo(1);
        assertThat(bytes).isEqualTo(fixture("test-hello-42.id-1.bin"));
    }

    @Test
    void shouldLayOutTheHeaderByteByByteWithABigEndianId() {
        SchemaRegistryClient registry = new FixedIdRegistry(0x01020304, RestSchemaRegistryClientTest.TEST);

        byte[] bytes = new ConfluentAvroSerializer(registry).serialize("test", hello42());

        assertThat(bytes[0]).as("magic byte").isEqualTo((byte) 0x00);
        assertThat(bytes[1]).as("id, most significant byte").isEqualTo((byte) 0x01);
        assertThat(bytes[2]).isEqualTo((byte) 0x02);
        assertThat(bytes[3]).isEqualTo((byte) 0x03);
        assertThat(bytes[4]).as("id, least significant byte").isEqualTo((byte) 0x04);
        assertThat(Arrays.copyOfRange(bytes, 5, bytes.length))
                .as("Avro binary: string length 5 as zig-zag varint, 'hello', int 42 as zig-zag varint")
                .containsExactly(0x0a, 'h', 'e', 'l', 'l', 'o', 0x54);
    }

    @Test
    void shouldWriteExactlyTheFixtureBytesForALargeId() throws IOException {
        SchemaRegistryClient registry = new FixedIdRegistry(16909060, RestSchemaRegistryClientTest.TEST);

        assertThat(new ConfluentAvroSerializer(registry).serialize("test", hello42()))
                .isEqualTo(fixture("test-hello-42.id-16909060.bin"));
    }

    @Test
    void shouldDecodeOurBytesWithAPlainAvroReaderAfterTheFiveByteHeader() throws IOException {
        ConfluentAvroSerde serde = new ConfluentAvroSerde();
        serde.configure(Map.of("schema.registry.url", "mock://" + SCOPE), false);
        byte[] bytes = serde.serializer().serialize("test", hello42());

        GenericDatumReader<GenericRecord> plain = new GenericDatumReader<>(RestSchemaRegistryClientTest.TEST);
        GenericRecord decoded = plain.read(null,
                DecoderFactory.get().binaryDecoder(bytes, 5, bytes.length - 5, null));

        assertThat(decoded).isEqualTo(hello42());
    }

    @Test
    void shouldReadTheFixtureWithTheWriterSchemaFetchedOverHttp() throws IOException {
        try (SchemaRegistryReplayServer server = SchemaRegistryReplayServer.startFromResources(
                "registry/exchanges/wire-format.json")) {
            ConfluentAvroSerde serde = new ConfluentAvroSerde();
            serde.configure(Map.of("schema.registry.url", server.url()), false);

            GenericRecord record = serde.deserializer().deserialize("test", fixture("test-hello-42.id-16909060.bin"));

            assertThat(record).isEqualTo(hello42());
            assertThat(server.requests()).singleElement()
                    .satisfies(r -> assertThat(r.path()).isEqualTo("/schemas/ids/16909060"));
        }
    }

    @Test
    void shouldRoundTripOverHttpWithOneRequestThroughTheSharedClientCache() throws IOException {
        try (SchemaRegistryReplayServer server = SchemaRegistryReplayServer.startFromResources(
                "registry/exchanges/serde-register.json")) {
            ConfluentAvroSerde serde = new ConfluentAvroSerde();
            serde.configure(Map.of("schema.registry.url", server.url()), false);

            byte[] first = serde.serializer().serialize("test", hello42());
            byte[] second = serde.serializer().serialize("test", hello42());
            GenericRecord read = serde.deserializer().deserialize("test", first);

            assertThat(first).isEqualTo(fixture("test-hello-42.id-1.bin")).isEqualTo(second);
            assertThat(read).isEqualTo(hello42());
            assertThat(server.requests()).as("one register; the deserializer finds id 1 in the shared cache")
                    .hasSize(1);
            server.assertNoUnexpectedRequests();
        }
    }

    /** A registry that knows one schema under one id. */
    static class FixedIdRegistry implements SchemaRegistryClient {
        private final int id;
        private final Schema schema;

        FixedIdRegistry(int id, Schema schema) {
            this.id = id;
            this.schema = schema;
        }

        @Override
        public int register(String subject, Schema s) {
            return id;
        }

        @Override
        public RegisteredSchema lookup(String subject, Schema s) {
            return new RegisteredSchema(subject, id, 1, schema);
        }

        @Override
        public Schema schemaById(int requested) {
            assertThat(requested).isEqualTo(id);
            return schema;
        }

        @Override
        public RegisteredSchema latest(String subject) {
            return new RegisteredSchema(subject, id, 1, schema);
        }

        @Override
        public CompatibilityResult testCompatibility(String subject, Schema s) {
            return new CompatibilityResult(true, java.util.List.of());
        }
    }
}
