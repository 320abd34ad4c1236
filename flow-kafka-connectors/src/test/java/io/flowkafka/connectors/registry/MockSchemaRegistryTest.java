package io.flowkafka.connectors.registry;

import static io.flowkafka.connectors.registry.ConfluentAvroSerdeTest.ORDER_V1;
import static io.flowkafka.connectors.registry.ConfluentAvroSerdeTest.ORDER_V2;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.apache.avro.Schema;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class MockSchemaRegistryTest {
    private static final Schema INCOMPATIBLE = new Schema.Parser().parse("{\"type\":\"record\",\"name\":\"Order\","
            + "\"namespace\":\"shop\",\"fields\":[{\"name\":\"id\",\"type\":\"long\"},"
            + "{\"name\":\"customer\",\"type\":\"string\"}]}");

    @AfterEach
    void drop() {
        MockSchemaRegistry.dropScope("mock-a");
        MockSchemaRegistry.dropScope("mock-b");
    }

    @Test
    void shouldShareARegistryPerScopeAndDropIt() {
        MockSchemaRegistry a = MockSchemaRegistry.forUrl("mock://mock-a");

        assertThat(MockSchemaRegistry.forScope("mock-a")).isSameAs(a);
        assertThat(MockSchemaRegistry.forScope("mock-b")).isNotSameAs(a);
        a.register("s", ORDER_V1);
        MockSchemaRegistry.dropScope("mock-a");
        assertThat(MockSchemaRegistry.forScope("mock-a").subjects()).isEmpty();
    }

    @Test
    void shouldNumberIdsRegistryWideAndVersionsPerSubject() {
        MockSchemaRegistry registry = MockSchemaRegistry.forScope("mock-a");

        int v1 = registry.register("orders-value", ORDER_V1);
        int again = registry.register("orders-value", ORDER_V1);
        int v2 = registry.register("orders-value", ORDER_V2);
        int otherSubject = registry.register("returns-value", ORDER_V2);

        assertThat(v1).isEqualTo(1);
        assertThat(again).isEqualTo(1);
        assertThat(v2).isEqualTo(2);
        assertThat(otherSubject).as("same schema, same id").isEqualTo(2);
        assertThat(registry.latest("orders-value")).isEqualTo(new RegisteredSchema("orders-value", 2, 2, ORDER_V2));
        assertThat(registry.latest("returns-value").version()).isEqualTo(1);
        assertThat(registry.lookup("orders-value", ORDER_V1)).isEqualTo(new RegisteredSchema("orders-value", 1, 1,
                ORDER_V1));
        assertThat(registry.schemaById(2)).isEqualTo(ORDER_V2);
    }

    @Test
    void shouldCheckBackwardCompatibility() {
        MockSchemaRegistry registry = MockSchemaRegistry.forScope("mock-a");
        registry.register("orders-value", ORDER_V1);

        assertThat(registry.testCompatibility("orders-value", ORDER_V2)).isEqualTo(
                new CompatibilityResult(true, java.util.List.of()));
        CompatibilityResult result = registry.testCompatibility("orders-value", INCOMPATIBLE);
        assertThat(result.compatible()).isFalse();
        assertThat(result.messages()).singleElement().asString()
                .startsWith("READER_FIELD_MISSING_DEFAULT_VALUE at /fields/1");
        assertThatThrownBy(() -> registry.register("orders-value", INCOMPATIBLE))
                .isInstanceOfSatisfying(SchemaRegistryException.class, e -> {
                    assertThat(e.status()).isEqualTo(409);
                    assertThat(e.errorCode()).isEqualTo(SchemaRegistryException.INCOMPATIBLE_SCHEMA);
                })
                .hasMessageContaining("mock://mock-a")
                .hasMessageContaining("incompatible with an earlier schema for subject \"orders-value\"");
    }

    @Test
    void shouldAnswerWithTheRegistryErrorCodes() {
        MockSchemaRegistry registry = MockSchemaRegistry.forScope("mock-a");
        registry.register("orders-value", ORDER_V1);

        assertThatThrownBy(() -> registry.latest("missing"))
                .isInstanceOfSatisfying(SchemaRegistryException.class,
                        e -> assertThat(e.errorCode()).isEqualTo(SchemaRegistryException.SUBJECT_NOT_FOUND))
                .hasMessageContaining("Subject 'missing' not found.");
        assertThatThrownBy(() -> registry.schemaById(7))
                .isInstanceOfSatisfying(SchemaRegistryException.class,
                        e -> assertThat(e.errorCode()).isEqualTo(SchemaRegistryException.SCHEMA_NOT_FOUND))
                .hasMessageContaining("Schema 7 not found");
        assertThatThrownBy(() -> registry.lookup("orders-value", ORDER_V2))
                .isInstanceOfSatisfying(SchemaRegistryException.class,
                        e -> assertThat(e.errorCode()).isEqualTo(SchemaRegistryException.SCHEMA_NOT_FOUND));
        assertThatThrownBy(() -> registry.testCompatibility("missing", ORDER_V1))
                .hasMessageContaining("error_code 40401");
    }

    @Test
    void shouldRejectUrlsWithoutAScope() {
        assertThatThrownBy(() -> MockSchemaRegistry.forUrl("mock://"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("mock://<scope>");
        assertThatThrownBy(() -> MockSchemaRegistry.forUrl("http://x")).isInstanceOf(IllegalArgumentException.class);
    }
}
