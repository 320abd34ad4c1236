package io.flowkafka.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import picocli.CommandLine.Option;

/**
 * The options and the request of the commands that read a key's states from a running pipeline: any instance's HTTP
 * address, the computation and the key; the instance routes the request to the key's owner. Keeps the rule that the
 * CLI reads states only through a running instance (it never opens a state store itself).
 */
final class StateQueryClient {
    private static final ObjectMapper MAPPER = new ObjectMapper();

    @Option(names = {"-c", "--computation"}, required = true, paramLabel = "ID",
            description = "the computation whose states to read")
    String computation;

    @Option(names = {"-k", "--key"}, required = true, paramLabel = "JSON",
            description = "the key: a JSON object of the computation's group_by_schema columns, e.g. "
                    + "'{\"user\": \"alice\"}' (computed columns such as the hash may be left out)")
    String key;

    @Option(names = {"-i", "--instance"}, required = true, paramLabel = "HOST:PORT",
            description = "the HTTP address of any running instance (its application.server); it routes the query")
    String instance;

    /**
     * An answer of {@code GET /states}.
     *
     * @param status the HTTP status
     * @param body the JSON body
     */
    record Answer(int status, JsonNode body) {
        String error() {
            return body.path("error").asText("(no reason given)");
        }
    }

    /** Asks the instance; a failure to reach it is an {@link IllegalStateException} with a sentence. */
    Answer get() throws InterruptedException {
        URI uri = URI.create("http://" + instance + "/states?computation="
                + URLEncoder.encode(computation, StandardCharsets.UTF_8) + "&key="
                + URLEncoder.encode(key, StandardCharsets.UTF_8));
        HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        HttpResponse<byte[]> response;
        try {
            response = client.send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(20)).GET().build(),
                    HttpResponse.BodyHandlers.ofByteArray());
        } catch (ConnectException e) {
            throw new IllegalStateException("no instance answers at " + instance + " (check --instance: the "
                    + "application.server of a running instance, where its state queries are served)");
        } catch (IOException e) {
            throw new IllegalStateException("the instance at " + instance + " did not answer: " + e.getMessage());
        }
        try {
            return new Answer(response.statusCode(), MAPPER.readTree(response.body()));
        } catch (IOException e) {
            throw new IllegalStateException("the instance at " + instance + " answered " + response.statusCode()
                    + " without JSON (is " + instance + " its application.server, serving /states?): "
                    + new String(response.body(), StandardCharsets.UTF_8).strip());
        }
    }

    /** The answer as the user reads it. */
    static String pretty(JsonNode body) throws IOException {
        return MAPPER.writerWithDefaultPrettyPrinter().writeValueAsString(body);
    }
}
