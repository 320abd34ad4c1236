package io.flowkafka.connectors.clickhouse;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;

/**
 * An HTTP server on loopback that answers like ClickHouse 18.16's HTTP interface: a {@code MergeTree} target for the
 * session checks, and INSERTs answered by a script of ClickHouse-shaped errors (HTTP status,
 * {@code X-ClickHouse-Exception-Code}, {@code Code: N, e.displayText() = ...} body), then 200. Records every INSERT
 * body. What the error-classification tests need that the real server cannot be made to answer on demand.
 */
final class FakeClickHouse implements AutoCloseable {
    /** A scripted answer: an error, or {@link #HANG} to never answer. */
    record Answer(int status, int code, String text) {
    }

    /** Never answers (until closed): the client's request timeout fires after the INSERT started. */
    static final Answer HANG = new Answer(0, 0, "");

    /** Answers 200 with the body's first byte, then nothing more (until closed): a body that stalls. */
    static final Answer STALL = new Answer(200, 0, "Ok.\n");

    private final HttpServer server;
    private final ConcurrentLinkedQueue<Answer> script = new ConcurrentLinkedQueue<>();
    private final List<String> inserts = Collections.synchronizedList(new ArrayList<>());
    private final CountDownLatch closed = new CountDownLatch(1);

    FakeClickHouse() throws IOException {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/", this::handle);
        server.start();
    }

    URI url() {
        return URI.create("http://127.0.0.1:" + server.getAddress().getPort());
    }

    /** Queues answers for the next INSERTs. */
    FakeClickHouse then(Answer... answers) {
        script.addAll(List.of(answers));
        return this;
    }

    /** An error answer with ClickHouse's shape. */
    static Answer error(int status, int code, String name) {
        return new Answer(status, code, "Code: " + code + ", e.displayText() = DB::Exception: " + name
                + ", e.what() = DB::Exception\n");
    }

    /** The bodies of the INSERTs received, in order. */
    List<String> inserts() {
        return List.copyOf(inserts);
    }

    private void handle(HttpExchange ex) throws IOException {
        String body = new String(ex.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
        String query = ex.getRequestURI().getRawQuery() == null ? ""
                : URLDecoder.decode(ex.getRequestURI().getRawQuery(), StandardCharsets.UTF_8);
        if (query.contains("query=INSERT")) {
            inserts.add(body);
            Answer a = script.poll();
            if (a == STALL) {
                ex.sendResponseHeaders(200, a.text().length());
                ex.getResponseBody().write(a.text().getBytes(StandardCharsets.UTF_8), 0, 1);
                ex.getResponseBody().flush();
            }
            if (a == HANG || a == STALL) {
                try {
                    closed.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                ex.close();
                return;
            }
            if (a != null) {
                if (a.code() > 0) {
                    ex.getResponseHeaders().add("X-ClickHouse-Exception-Code", String.valueOf(a.code()));
                }
                answer(ex, a.status(), a.text());
                return;
            }
            answer(ex, 200, "");
        } else if (body.contains("version()")) {
            answer(ex, 200, "18.16.1\n");
        } else if (body.contains("system.tables")) {
            answer(ex, 200, "MergeTree\tMergeTree ORDER BY tuple() SETTINGS index_granularity = 8192\n");
        } else {
            answer(ex, 200, "");
        }
    }

    private static void answer(HttpExchange ex, int status, String text) throws IOException {
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        ex.sendResponseHeaders(status, bytes.length == 0 ? -1 : bytes.length);
        if (bytes.length > 0) {
            try (OutputStream out = ex.getResponseBody()) {
                out.write(bytes);
            }
        }
        ex.close();
    }

    @Override
    public void close() {
        closed.countDown();
        server.stop(0);
    }
}
