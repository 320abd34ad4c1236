package io.flowkafka.connectors.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowkafka.spec.SinkSpec;
import io.flowkafka.spec.SpecProblem;
import io.flowkafka.spi.SinkProvider.Problem;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Every TAsyncHttpSink parameter is checked at spec load: a mistake names the field, the problem and the fix. */
class HttpSinkParametersTest {
    private final HttpSinkProvider provider = new HttpSinkProvider();

    @TempDir
    static Path dir;

    @Test
    void shouldAcceptAFullSpec() throws Exception {
        Path token = Files.writeString(dir.resolve("token"), "t");
        Map<String, Object> p = new HashMap<>(Map.of("url", "https://api.example.com/events", "method", "put",
                "payload_column", "body", "content_type", "text/plain", "headers", Map.of("X-Source", "flow"),
                "secret_headers", Map.of("Authorization", Map.of("file", token.toString())),
                "idempotency_key_header", "X-Request-Id", "request_timeout", "5s", "max_retries", 3,
                "retry_backoff", "100ms"));
        p.putAll(Map.of("max_retry_backoff", "5s", "concurrency", 16, "dead_letter_statuses", List.of(400, 422),
                "key_column", "user", "max_batch_records", 100, "message_id_header", "X-Flow-Id"));
        List<Problem> problems = provider.validate(sink(p));
        assertThat(problems).isEmpty();
        HttpSinkParameters parsed = HttpSinkParameters.parse(sink(p), new ArrayList<>());
        assertThat(parsed.method()).isEqualTo("PUT");
        assertThat(parsed.deadLetterStatuses()).containsExactly(400, 422);
        assertThat(parsed.concurrency()).isEqualTo(16);
    }

    static List<Arguments> mistakes() {
        return List.of(
                Arguments.of(Map.of(), "parameters.url", "has no url"),
                Arguments.of(Map.of("url", "ftp://x/y"), "parameters.url", "not an absolute http(s) URL"),
                Arguments.of(Map.of("url", "https://user:pw@x/y"), "parameters.url", "credentials"),
                Arguments.of(Map.of("method", "GET"), "parameters.method", "sends no body"),
                Arguments.of(Map.of("body_column", "b"), "parameters.body_column", "no parameter 'body_column'"),
                Arguments.of(Map.of("topic", "t"), "parameters.topic", "no parameter 'topic'"),
                Arguments.of(Map.of("format", "avro"), "parameters.format", "not supported"),
                Arguments.of(Map.of("request_timeout", "soon"), "parameters.request_timeout", "request_timeout"),
                Arguments.of(Map.of("request_timeout", "0s"), "parameters.request_timeout", "positive"),
                Arguments.of(Map.of("max_retries", -1), "parameters.max_retries", "from 0 to 100"),
                Arguments.of(Map.of("concurrency", 0), "parameters.concurrency", "from 1 to 256"),
                Arguments.of(Map.of("max_batch_records", "x"), "parameters.max_batch_records", "integer"),
                Arguments.of(Map.of("retry_backoff", "20s"), "parameters.retry_backoff", "exceeds max_retry_backoff"),
                Arguments.of(Map.of("max_retries", 50, "request_timeout", "30s"), "parameters.max_retries",
                        "max.poll.interval.ms"),
                Arguments.of(Map.of("headers", Map.of("Host", "x")), "parameters.headers.Host", "set by the HTTP client"),
                Arguments.of(Map.of("headers", Map.of("Bad Name", "x")), "parameters.headers.Bad Name",
                        "not a valid HTTP header name"),
                Arguments.of(Map.of("headers", Map.of("idempotency-key", "x")), "parameters.headers.idempotency-key",
                        "also the idempotency key header"),
                Arguments.of(Map.of("headers", "x"), "parameters.headers", "must be a map"),
                Arguments.of(Map.of("secret_headers", Map.of("Authorization", "Bearer abc")),
                        "parameters.secret_headers.Authorization", "must be a map with one key"),
                Arguments.of(Map.of("secret_headers", Map.of("Authorization", Map.of("vault", "x"))),
                        "parameters.secret_headers.Authorization", "unknown source 'vault'"),
                Arguments.of(Map.of("secret_headers", Map.of("Authorization", Map.of("env", "FLOW_NO_SUCH_VAR_42"))),
                        "parameters.secret_headers.Authorization", "environment variable FLOW_NO_SUCH_VAR_42 is not set"),
                Arguments.of(Map.of("secret_headers", Map.of("Authorization", Map.of("file", "/no/such/file"))),
                        "parameters.secret_headers.Authorization", "cannot be read"),
                Arguments.of(Map.of("dead_letter_statuses", List.of(429)), "parameters.dead_letter_statuses",
                        "cannot be dead-lettered"),
                Arguments.of(Map.of("dead_letter_statuses", List.of(500)), "parameters.dead_letter_statuses",
                        "cannot be dead-lettered"),
                Arguments.of(Map.of("dead_letter_statuses", 400), "parameters.dead_letter_statuses", "list"),
                Arguments.of(Map.of("idempotency_key_header", "Content-Length"), "parameters.idempotency_key_header",
                        "set by the HTTP client"),
                Arguments.of(Map.of("message_id_header", "a b"), "parameters.message_id_header", "not a valid"),
                Arguments.of(Map.of("at_most_once_strategy", Map.of("enabled", true)), "parameters.at_most_once_strategy",
                        "Enabling at_most_once_strategy makes spec loading fail"));
    }

    @ParameterizedTest
    @MethodSource("mistakes")
    void shouldRejectAMistakeNamingTheFieldAndTheFix(Map<String, Object> given, String field, String says) {
        Map<String, Object> p = new HashMap<>(Map.of("url", "http://127.0.0.1:8080/x"));
        p.putAll(given);
        if (given.isEmpty()) {
            p.remove("url");
        }
        List<Problem> problems = provider.validate(sink(p));
        assertThat(problems).as(problems.toString()).anySatisfy(pr -> {
            assertThat(pr.field()).isEqualTo(field);
            assertThat(pr.message()).contains(says);
            assertThat(pr.fix()).isNotBlank();
        });
    }

    @Test
    void shouldFailSpecLoadingWhenAtMostOnceStrategyIsEnabled() {
        // reference 002, HTTP: "Enabling at_most_once_strategy makes spec loading fail."
        var spec = HttpPipeline.spec("p", "in", Map.of("url", "http://127.0.0.1:1/x",
                "at_most_once_strategy", Map.of("enabled", true)));
        List<SpecProblem> errors = spec.validate().stream()
                .filter(e -> e.severity() == SpecProblem.Severity.ERROR).toList();
        assertThat(errors).anySatisfy(e -> assertThat(e.message()).contains("makes spec loading fail"));
        assertThat(HttpPipeline.spec("p", "in", Map.of("url", "http://127.0.0.1:1/x")).validate().stream()
                .filter(e -> e.severity() == SpecProblem.Severity.ERROR)).as("the same spec without it loads").isEmpty();
    }

    private static SinkSpec sink(Map<String, Object> p) {
        return new SinkSpec("web", HttpSinkProvider.T_ASYNC_HTTP_SINK, List.of("posted"), p);
    }
}
