package io.flowkafka.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(30)
class SchemaRegistryReplayServerTest {
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    private SchemaRegistryReplayServer server;

    @BeforeEach
    void start() {
        server = SchemaRegistryReplayServer.startFromResources("replay/sample.json");
    }

    @AfterEach
    void stop() {
        server.close();
    }

    private HttpResponse<String> send(String method, String path, String body, String contentType) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(server.url() + path));
        if (body == null) {
            request.GET();
        } else {
            request.method(method, HttpRequest.BodyPublishers.ofString(body)).header("Content-Type", contentType);
        }
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void shouldListenOnLoopback() {
        assertThat(server.url()).matches("http://127\\.0\\.0\\.1:\\d+");
    }

    @Test
    void shouldReplayWhenBodyDiffersOnlyInKeyOrderWhitespaceAndEmbeddedJsonFormatting() throws Exception {
        String compact = "{\"schema\":\"{\\\"type\\\":\\\"record\\\",\\\"name\\\":\\\"test\\\","
                + "\\\"fields\\\":[{\\\"name\\\":\\\"field1\\\",\\\"type\\\":\\\"string\\\"}]}\"}";
        HttpResponse<String> response = send("POST", "/subjects/test/versions", compact,
                SchemaRegistryReplayServer.MEDIA_TYPE);

        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(new ObjectMapper().readTree(response.body()).get("id").asInt()).isEqualTo(1);
        assertThat(response.headers().firstValue("Content-Type")).hasValue(SchemaRegistryReplayServer.MEDIA_TYPE);
        assertThat(server.requests()).hasSize(1);
        assertThat(server.requests().get(0).header("content-type")).isEqualTo(SchemaRegistryReplayServer.MEDIA_TYPE);
        server.assertNoUnexpectedRequests();
    }

    @Test
    void shouldAnswer500AndRememberWhenNoExchangeMatches() throws Exception {
        HttpResponse<String> wrongField = send("POST", "/subjects/test/versions",
                "{\"schema\":\"{\\\"type\\\":\\\"record\\\",\\\"name\\\":\\\"test\\\",\\\"fields\\\":[]}\"}",
                SchemaRegistryReplayServer.MEDIA_TYPE);
        HttpResponse<String> wrongHeader = send("POST", "/subjects/test/versions",
                "{\"schema\":\"{\\\"type\\\":\\\"record\\\",\\\"name\\\":\\\"test\\\",\\\"fields\\\":"
                        + "[{\\\"name\\\":\\\"field1\\\",\\\"type\\\":\\\"string\\\"}]}\"}",
                "application/json");
        HttpResponse<String> unknownPath = send("GET", "/subjects", null, null);

        assertThat(List.of(wrongField.statusCode(), wrongHeader.statusCode(), unknownPath.statusCode()))
                .containsOnly(500);
        assertThat(unknownPath.body()).contains("no recorded exchange for GET /subjects")
                .contains("POST /subjects/test/versions");
        assertThat(server.unexpectedRequests()).hasSize(3);
        assertThatThrownBy(server::assertNoUnexpectedRequests).isInstanceOf(AssertionError.class)
                .hasMessageContaining("3 request(s) matching no recorded exchange");
    }

    @Test
    void shouldReplayAnExchangeAnyNumberOfTimes() throws Exception {
        assertThat(send("GET", "/schemas/ids/1", null, null).body()).contains("string");
        assertThat(send("GET", "/schemas/ids/1", null, null).statusCode()).isEqualTo(200);
        assertThat(server.requestCount()).isEqualTo(2);
    }

    @Test
    void shouldDelayTheAnswerWhenAsked() throws Exception {
        long start = System.nanoTime();
        assertThat(send("GET", "/schemas/ids/2", null, null).statusCode()).isEqualTo(200);
        assertThat((System.nanoTime() - start) / 1_000_000).isGreaterThanOrEqualTo(300);
    }

    @Test
    void shouldNameTheResourceWhenAnExchangeFileIsMissingOrInvalid() {
        assertThatThrownBy(() -> SchemaRegistryReplayServer.loadResource("replay/none.json"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("replay/none.json");
        assertThatThrownBy(() -> new SchemaRegistryReplayServer.Exchange("x", "GET", "nope", Map.of(), null, 200,
                null, 0)).hasMessageContaining("path must start with /");
    }
}
