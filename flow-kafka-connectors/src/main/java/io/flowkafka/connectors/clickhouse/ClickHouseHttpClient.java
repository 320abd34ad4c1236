package io.flowkafka.connectors.clickhouse;

import io.flowkafka.connectors.http.TimedExchange;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * A client of one ClickHouse server's HTTP interface, on the JDK's {@link HttpClient}: statements that return
 * text ({@link #query}) and {@code INSERT ... FORMAT <format>} with a body of rows ({@link #insert}), each with
 * query-level settings as URL parameters. It owns the connection pool to that server and keeps one rule: a request
 * is sent exactly as built (no compression, no retries, no reordering), so the same rows give the same bytes on the
 * wire, which ClickHouse's block deduplication relies on.
 *
 * <p>Why the JDK client and not {@code com.clickhouse:client-v2}: it needs no dependency, and it works with the
 * ClickHouse 18.16 that Debian ships (client-v2 expects a newer server's HTTP protocol). Responses are requested
 * uncompressed: {@code compress=1} answers come back empty on that build.
 *
 * <p>Thread-safe.
 */
public final class ClickHouseHttpClient implements AutoCloseable {
    private final URI base;
    private final Duration timeout;
    private final String authorization;
    private final HttpClient http;

    /**
     * A client of the server at {@code base}.
     *
     * @param base the HTTP interface, e.g. {@code http://127.0.0.1:8123}
     * @param user the user, or null for ClickHouse's {@code default} without a password
     * @param password the password, or null
     * @param timeout the bound of connecting and of each request
     */
    public ClickHouseHttpClient(URI base, String user, String password, Duration timeout) {
        this.base = Objects.requireNonNull(base, "base");
        this.timeout = Objects.requireNonNull(timeout, "timeout");
        this.authorization = user == null ? null : "Basic " + Base64.getEncoder()
                .encodeToString((user + ":" + (password == null ? "" : password)).getBytes(StandardCharsets.UTF_8));
        this.http = HttpClient.newBuilder().connectTimeout(timeout).version(HttpClient.Version.HTTP_1_1).build();
    }

    /**
     * The server's HTTP interface.
     *
     * @return the base URI
     */
    public URI base() {
        return base;
    }

    /**
     * Runs a statement and returns its answer as text ({@code TabSeparated} unless the statement says otherwise).
     *
     * @param sql the statement
     * @return the response body
     * @throws ClickHouseException when the server answered with an error
     * @throws IOException when the server could not be reached or did not answer in time
     */
    public String query(String sql) throws IOException {
        return send(uri(Map.of()), HttpRequest.BodyPublishers.ofString(sql, StandardCharsets.UTF_8));
    }

    /**
     * Inserts rows: {@code INSERT INTO <table> FORMAT <format>} with {@code rows} as the body, in one request (one
     * block when the rows are fewer than the server's {@code max_insert_block_size}).
     *
     * @param table the table, qualified and quoted as it goes into the statement, e.g. {@code `db`.`events`}
     * @param format the row format, e.g. {@code JSONEachRow}
     * @param rows the rows in that format
     * @param settings query-level settings, e.g. {@code insert_deduplication_token}; sent in key order
     * @throws ClickHouseException when the server answered with an error
     * @throws IOException when the server could not be reached or did not answer in time (the insert may or may
     *     not have happened)
     */
    public void insert(String table, String format, byte[] rows, Map<String, String> settings) throws IOException {
        Map<String, String> params = new TreeMap<>(settings);
        params.put("query", "INSERT INTO " + table + " FORMAT " + format);
        send(uri(params), HttpRequest.BodyPublishers.ofByteArray(rows));
    }

    /**
     * The request an {@link #insert} sends: its URI (the statement and the settings as parameters). What a test of
     * the dedup token checks on a server without {@code insert_deduplication_token}.
     *
     * @param table the table, as for {@link #insert}
     * @param format the row format
     * @param settings the query-level settings
     * @return the URI the insert posts its rows to
     */
    public URI insertUri(String table, String format, Map<String, String> settings) {
        Map<String, String> params = new TreeMap<>(settings);
        params.put("query", "INSERT INTO " + table + " FORMAT " + format);
        return uri(params);
    }

    private URI uri(Map<String, String> params) {
        List<String> parts = new ArrayList<>();
        new TreeMap<>(params).forEach((k, v) -> parts.add(encode(k) + "=" + encode(v)));
        String path = base.getPath() == null || base.getPath().isEmpty() ? "/" : base.getPath();
        return URI.create(base.getScheme() + "://" + base.getRawAuthority() + path
                + (parts.isEmpty() ? "" : "?" + String.join("&", parts)));
    }

    private static String encode(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }

    private String send(URI uri, HttpRequest.BodyPublisher body) throws IOException {
        HttpRequest.Builder request = HttpRequest.newBuilder(uri).timeout(timeout).POST(body);
        if (authorization != null) {
            request.header("Authorization", authorization);
        }
        HttpResponse<String> response;
        try {
            response = TimedExchange.send(http, request.build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8),
                    timeout);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while waiting for ClickHouse at " + base, e);
        }
        if (response.statusCode() != 200) {
            throw ClickHouseException.of(base, response.statusCode(),
                    response.headers().firstValue("X-ClickHouse-Exception-Code").orElse(null), response.body());
        }
        return response.body();
    }

    /** Closes the connection pool (a no-op before Java 21's {@code HttpClient.close}). */
    @Override
    public void close() {
        if (http instanceof AutoCloseable closeable) {
            try {
                closeable.close();
            } catch (Exception e) {
                // nothing held that matters
            }
        }
    }
}
