package io.flowkafka.connectors.registry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flowkafka.testing.SchemaRegistryReplayServer;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import org.apache.avro.Schema;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The REST client against golden exchanges of the Confluent Schema Registry API reference,
 * replayed over a real socket (fixtures: {@code src/test/resources/registry/README.md}).
 */
@Timeout(60)
class RestSchemaRegistryClientTest {
    /** The record schema of the API reference's examples. */
    static final Schema TEST = new Schema.Parser().parse("{\"type\":\"record\",\"name\":\"test\",\"fields\":["
            + "{\"name\":\"field1\",\"type\":\"string\"},{\"name\":\"field2\",\"type\":\"int\"}]}");
    /** {@link #TEST} with field3 without a default: not BACKWARD-compatible with it. */
    static final Schema TEST_WITH_FIELD3 = new Schema.Parser().parse("{\"type\":\"record\",\"name\":\"test\","
            + "\"fields\":[{\"name\":\"field1\",\"type\":\"string\"},{\"name\":\"field2\",\"type\":\"int\"},"
            + "{\"name\":\"field3\",\"type\":\"int\"}]}");

    private SchemaRegistryReplayServer server;

    @AfterEach
    void stop() {
        if (server != null) {
            server.close();
        }
    }

    private RestSchemaRegistryClient clientFor(String... exchangeFiles) {
        String[] resources = new String[exchangeFiles.length];
        for (int i = 0; i < exchangeFiles.length; i++) {
            resources[i] = "registry/exchanges/" + exchangeFiles[i] + ".json";
        }
        server = SchemaRegistryReplayServer.startFromResources(resources);
        return RestSchemaRegistryClient.builder(server.url()).build();
    }

    @Test
    void shouldRegisterWithTheRegistryMediaTypeAndReturnTheId() {
        RestSchemaRegistryClient client = clientFor("register");

        assertThat(client.register("test", TEST)).isEqualTo(1);

        server.assertNoUnexpectedRequests();
        assertThat(server.requests()).singleElement().satisfies(request -> {
            assertThat(request.header("Content-Type")).isEqualTo("application/vnd.schemaregistry.v1+json");
            assertThat(request.body()).doesNotContain("schemaType");
        });
    }

    @Test
    void shouldFetchASchemaById() {
        RestSchemaRegistryClient client = clientFor("schema-by-id");

        assertThat(client.schemaById(1)).isEqualTo(Schema.create(Schema.Type.STRING));
        server.assertNoUnexpectedRequests();
    }

    @Test
    void shouldFetchTheLatestVersionOfASubject() {
        RestSchemaRegistryClient client = clientFor("latest");

        assertThat(client.latest("test")).isEqualTo(new RegisteredSchema("test", 1, 3, TEST));
        server.assertNoUnexpectedRequests();
    }

    @Test
    void shouldLookUpARegisteredSchema() {
        RestSchemaRegistryClient client = clientFor("lookup");

        assertThat(client.lookup("test", TEST)).isEqualTo(new RegisteredSchema("test", 1, 3, TEST));
        server.assertNoUnexpectedRequests();
    }

    @Test
    void shouldReportCompatibleAndIncompatibleSchemasWithTheRegistryMessages() {
        RestSchemaRegistryClient client = clientFor("compatibility");

        assertThat(client.testCompatibility("test", TEST)).isEqualTo(new CompatibilityResult(true, java.util.List.of()));
        CompatibilityResult incompatible = client.testCompatibility("test", TEST_WITH_FIELD3);
        assertThat(incompatible.compatible()).isFalse();
        assertThat(incompatible.messages()).hasSize(2).first().asString()
                .contains("READER_FIELD_MISSING_DEFAULT_VALUE").contains("field3");
        server.assertNoUnexpectedRequests();
    }

    @Test
    void shouldAskTheRegistryOnlyOnceForTheSameSchemaId() {
        RestSchemaRegistryClient client = clientFor("schema-by-id");

        Schema first = client.schemaById(1);
        Schema second = client.schemaById(1);

        assertThat(second).isSameAs(first);
        assertThat(server.requestCount()).isEqualTo(1);
    }

    @Test
    void shouldAskTheRegistryOnlyOnceForTheSameSubjectAndSchema() {
        RestSchemaRegistryClient client = clientFor("register");

        client.register("test", TEST);
        client.register("test", new Schema.Parser().parse(TEST.toString()));
        Schema byId = client.schemaById(1);

        assertThat(byId).isEqualTo(TEST);
        assertThat(server.requestCount()).as("register once; the id's schema comes from the register cache").isEqualTo(1);
    }

    @Test
    void shouldKeepTheCachesBounded() {
        server = SchemaRegistryReplayServer.startFromResources("registry/exchanges/schema-by-id.json",
                "registry/exchanges/wire-format.json");
        RestSchemaRegistryClient client = RestSchemaRegistryClient.builder(server.url()).cacheCapacity(1).build();

        client.schemaById(1);
        client.schemaById(16909060);
        client.schemaById(1);

        assertThat(server.requestCount()).as("id 1 was evicted by id 16909060").isEqualTo(3);
    }

    @Test
    void shouldNameUrlSubjectAndErrorCodeWhenTheSubjectDoesNotExist() {
        RestSchemaRegistryClient client = clientFor("errors");

        assertThatThrownBy(() -> client.latest("missing"))
                .isInstanceOfSatisfying(SchemaRegistryException.class, e -> {
                    assertThat(e.status()).isEqualTo(404);
                    assertThat(e.errorCode()).isEqualTo(SchemaRegistryException.SUBJECT_NOT_FOUND);
                    assertThat(e.subject()).isEqualTo("missing");
                    assertThat(e.registry()).isEqualTo(server.url());
                    assertThat(e.retriable()).isFalse();
                    assertThat(e).as("a definite answer is no outage").hasNoCause();
                })
                .hasMessageContaining("GET " + server.url() + "/subjects/missing/versions/latest")
                .hasMessageContaining("subject 'missing'")
                .hasMessageContaining("HTTP 404, error_code 40401: Subject 'missing' not found.");
        assertThatThrownBy(() -> client.testCompatibility("missing", TEST))
                .hasMessageContaining("error_code 40401");
    }

    @Test
    void shouldNameTheErrorCodeWhenTheSchemaIdOrSchemaIsNotFound() {
        RestSchemaRegistryClient client = clientFor("errors");

        assertThatThrownBy(() -> client.schemaById(42))
                .isInstanceOfSatisfying(SchemaRegistryException.class,
                        e -> assertThat(e.errorCode()).isEqualTo(SchemaRegistryException.SCHEMA_NOT_FOUND))
                .hasMessageContaining(server.url() + "/schemas/ids/42")
                .hasMessageContaining("HTTP 404, error_code 40403: Schema 42 not found");
        assertThatThrownBy(() -> client.lookup("test", TEST_WITH_FIELD3))
                .hasMessageContaining("subject 'test'").hasMessageContaining("error_code 40403: Schema not found");
    }

    @Test
    void shouldReportIncompatibleAndInvalidSchemasOnRegister() {
        RestSchemaRegistryClient client = clientFor("errors");

        assertThatThrownBy(() -> client.register("test", TEST_WITH_FIELD3))
                .isInstanceOfSatisfying(SchemaRegistryException.class, e -> assertThat(e.status()).isEqualTo(409))
                .hasMessageContaining("POST " + server.url() + "/subjects/test/versions (subject 'test')")
                .hasMessageContaining("HTTP 409, error_code 409: Schema being registered is incompatible");
        assertThatThrownBy(() -> client.register("invalid", TEST))
                .isInstanceOfSatisfying(SchemaRegistryException.class,
                        e -> assertThat(e.errorCode()).isEqualTo(SchemaRegistryException.INVALID_SCHEMA))
                .hasMessageContaining("HTTP 422, error_code 42201: Invalid schema");
    }

    @Test
    void shouldCallABackendFailureRetriable() {
        RestSchemaRegistryClient client = clientFor("errors");

        assertThatThrownBy(() -> client.latest("busy"))
                .isInstanceOfSatisfying(SchemaRegistryException.class, e -> assertThat(e.retriable()).isTrue())
                .hasMessageContaining("HTTP 500, error_code 50001: Error in the backend datastore")
                .cause().isInstanceOf(org.apache.kafka.common.errors.RetriableException.class)
                .hasMessageContaining("HTTP 500");
    }

    @Test
    void shouldSendBasicAuthFromTheBuilderOrTheUrl() {
        server = SchemaRegistryReplayServer.startFromResources("registry/exchanges/basic-auth.json");
        String hostPort = server.url().substring("http://".length());

        RestSchemaRegistryClient withBuilder = RestSchemaRegistryClient.builder(server.url())
                .basicAuth("Aladdin:open sesame").build();
        RestSchemaRegistryClient withUrl = RestSchemaRegistryClient.builder("http://Aladdin:open%20sesame@" + hostPort)
                .build();

        assertThat(withBuilder.schemaById(1)).isEqualTo(Schema.create(Schema.Type.STRING));
        assertThat(withUrl.schemaById(1)).isEqualTo(Schema.create(Schema.Type.STRING));
        assertThat(withUrl.url()).isEqualTo(server.url()).doesNotContain("sesame");
    }

    @Test
    void shouldExplainARefusedRequestWithoutCredentials() {
        RestSchemaRegistryClient client = clientFor("basic-auth");

        assertThatThrownBy(() -> client.schemaById(1))
                .hasMessageContaining("HTTP 401, error_code 401: Unauthorized")
                .hasMessageContaining("check basic.auth.user.info");
    }

    @Test
    void shouldTimeOutAndNameTheUrl() {
        server = SchemaRegistryReplayServer.startFromResources("registry/exchanges/slow.json");
        RestSchemaRegistryClient client = RestSchemaRegistryClient.builder(server.url())
                .requestTimeout(Duration.ofMillis(200)).build();

        assertThatThrownBy(() -> client.schemaById(1))
                .isInstanceOfSatisfying(SchemaRegistryException.class, e -> assertThat(e.retriable()).isTrue())
                .hasMessageContaining("GET " + server.url() + "/schemas/ids/1 got no answer within 200 ms");
    }

    @Test
    void shouldNameTheUrlWhenTheRegistryCannotBeReached() throws Exception {
        int port;
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = socket.getLocalPort();
        }
        RestSchemaRegistryClient client = RestSchemaRegistryClient.builder("http://127.0.0.1:" + port).build();

        assertThatThrownBy(() -> client.latest("orders-value"))
                .isInstanceOfSatisfying(SchemaRegistryException.class, e -> {
                    assertThat(e.retriable()).isTrue();
                    assertThat(e.status()).isEqualTo(SchemaRegistryException.NO_RESPONSE);
                    assertThat(e.getCause()).as("the runtime's contract: a RetriableException in the chain, then the "
                            + "I/O failure").isInstanceOf(SchemaRegistryUnavailableException.class)
                            .isInstanceOf(org.apache.kafka.common.errors.RetriableException.class)
                            .hasCauseInstanceOf(java.io.IOException.class);
                })
                .hasMessageContaining("GET http://127.0.0.1:" + port + "/subjects/orders-value/versions/latest "
                        + "(subject 'orders-value') failed: the registry could not be reached");
    }

    @Test
    void shouldFailWithTheReplayServersExplanationOnAnUnexpectedRequest() {
        RestSchemaRegistryClient client = clientFor("register");

        assertThatThrownBy(() -> client.register("other", TEST))
                .hasMessageContaining("no recorded exchange for POST /subjects/other/versions");
        assertThat(server.unexpectedRequests()).hasSize(1);
    }

    @Test
    void shouldEncodeTheSubjectAsOnePathSegment() {
        RestSchemaRegistryClient client = clientFor("register");

        assertThatThrownBy(() -> client.register("a b/c", TEST)).isInstanceOf(SchemaRegistryException.class);
        assertThat(server.requests()).singleElement()
                .satisfies(r -> assertThat(r.path()).isEqualTo("/subjects/a%20b%2Fc/versions"));
    }

    @Test
    void shouldRejectUrlsItCannotUse() {
        assertThatThrownBy(() -> RestSchemaRegistryClient.builder("http://a:8081,http://b:8081"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("lists several URLs");
        assertThatThrownBy(() -> RestSchemaRegistryClient.builder("registry:8081"))
                .hasMessageContaining("must be an absolute http:// or https:// URL");
        assertThatThrownBy(() -> RestSchemaRegistryClient.builder("http://user:secret@registry:8081?x=1"))
                .hasMessageContaining("must have no query").hasMessageNotContaining("secret");
        assertThatThrownBy(() -> RestSchemaRegistryClient.builder("http://r:8081").requestTimeout(Duration.ZERO))
                .hasMessageContaining("request timeout must be positive");
        assertThatThrownBy(() -> RestSchemaRegistryClient.builder("http://r:8081").basicAuth("nocolon"))
                .hasMessageContaining("user:password");
        assertThat(RestSchemaRegistryClient.builder("https://registry:8081/base/").build().url())
                .isEqualTo("https://registry:8081/base");
    }
}
