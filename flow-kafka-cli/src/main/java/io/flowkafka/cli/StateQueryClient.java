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

    @Option(names = {"-k", "--key"}, paramLabel = "JSON",
            description = "the key: a JSON object of the computation's group_by_schema columns, e.g. "
                    + "'{\"user\": \"alice\"}' (computed columns such as the hash may be left out)")
    String key;

    @Option(names = "--hash-from", paramLabel = "HASH",
            description = "instead of --key, a key range: the first key hash (unsigned decimal or 0x hex; default 0)")
    String hashFrom;

    @Option(names = "--hash-to", paramLabel = "HASH",
            description = "the hash after the range's last (default: the end of the hash space)")
    String hashTo;

    @Option(names = "--limit", paramLabel = "N",
            description = "at most this many keys of a range (default 100, at most 10000); the answer's "
                    + "next_hash_from starts the next page")
    Integer limit;

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

    /** Whether a key range was asked rather than one key. */
    boolean range() {
        return key == null;
    }

    /** A sentence when the options ask for neither or both of a key and a range, else null. */
    String usageError() {
        boolean rangeGiven = hashFrom != null || hashTo != null;
        if (key == null && !rangeGiven) {
            return "give a key (--key '{\"user\": \"alice\"}') or a key range (--hash-from/--hash-to; "
                    + "--hash-from 0 for every key)";
        }
        if (key != null && rangeGiven) {
            return "give either --key or --hash-from/--hash-to, not both";
        }
        if (key != null && limit != null) {
            return "--limit pages a key range; with --key there is one key: leave --limit out";
        }
        return null;
    }

    /** Reads; a failure to reach the instance is an {@link IllegalStateException} with a sentence. */
    Answer get() throws InterruptedException {
        return send("GET", Duration.ofSeconds(30));
    }

    /** Deletes what {@link #get()} shows; the instance answers once the delete is committed (within 30 s). */
    Answer delete() throws InterruptedException {
        return send("DELETE", Duration.ofSeconds(90));
    }

    private Answer send(String method, Duration timeout) throws InterruptedException {
        String what = key != null ? "&key=" + URLEncoder.encode(key, StandardCharsets.UTF_8)
                : (hashFrom == null ? "" : "&hash_from=" + URLEncoder.encode(hashFrom, StandardCharsets.UTF_8))
                        + (hashTo == null ? "" : "&hash_to=" + URLEncoder.encode(hashTo, StandardCharsets.UTF_8))
                        + "&limit=" + (limit == null ? 100 : limit);
        if (key == null && hashFrom == null) {
            what = "&hash_from=0" + what;
        }
        URI uri = URI.create("http://" + instance + "/states?computation="
                + URLEncoder.encode(computation, StandardCharsets.UTF_8) + what);
        HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        HttpResponse<byte[]> response;
        try {
            response = client.send(HttpRequest.newBuilder(uri).timeout(timeout)
                    .method(method, HttpRequest.BodyPublishers.noBody()).build(),
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
