package io.flowkafka.connectors.http;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

/**
 * A real HTTP server on loopback (the JDK's {@code com.sun.net.httpserver}) for the HTTP sink's tests: it records every
 * request it receives (idempotency key, body, headers, arrival, per-attempt number) and answers by a fault plan that
 * may inject statuses, {@code Retry-After}, slow answers (longer than the client's timeout) and connections closed
 * without an answer.
 */
final class LoopbackHttpServer implements AutoCloseable {
    /** One received request. */
    record Received(String key, byte[] body, Map<String, List<String>> headers, long arrivedNanos, int attempt) {
        String bodyText() {
            return new String(body, StandardCharsets.UTF_8);
        }

        String header(String name) {
            List<String> v = headers.get(name);
            return v == null || v.isEmpty() ? null : v.get(0);
        }
    }

    /** How to answer one request. */
    record Answer(int status, Map<String, String> headers, String body, long delayMs, boolean reset,
            boolean stallBody) {
        static Answer ok() {
            return new Answer(200, Map.of(), "ok", 0, false, false);
        }

        static Answer status(int status, String body) {
            return new Answer(status, Map.of(), body, 0, false, false);
        }

        static Answer retryAfter(int status, String seconds) {
            return new Answer(status, Map.of("Retry-After", seconds), "slow down", 0, false, false);
        }

        static Answer slow(long delayMs) {
            return new Answer(200, Map.of(), "late", delayMs, false, false);
        }

        /** A 200 whose headers and first body byte go out at once and the rest of the body after {@code delayMs}. */
        static Answer stalledBody(long delayMs) {
            return new Answer(200, Map.of(), "stalled", delayMs, false, true);
        }

        static Answer closeWithoutAnswer() {
            return new Answer(0, Map.of(), "", 0, true, false);
        }
    }

    private final HttpServer server;
    private final ExecutorService executor = Executors.newFixedThreadPool(32);
    private final List<Received> received = new CopyOnWriteArrayList<>();
    private final Map<String, AtomicInteger> attempts = new ConcurrentHashMap<>();
    private final String keyHeader;
    private volatile Function<Received, Answer> plan = r -> Answer.ok();

    LoopbackHttpServer(String keyHeader) throws IOException {
        this.keyHeader = keyHeader;
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 64);
        server.createContext("/", this::handle);
        server.setExecutor(executor);
        server.start();
    }

    LoopbackHttpServer() throws IOException {
        this("Idempotency-Key");
    }

    URI uri() {
        return URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/events");
    }

    /** Answers every following request by {@code plan}. */
    void plan(Function<Received, Answer> plan) {
        this.plan = plan;
    }

    List<Received> received() {
        return new ArrayList<>(received);
    }

    /** The requests answered 2xx, by key (a key may be taken more than once). */
    List<String> deliveredKeys() {
        return received.stream().filter(r -> delivered.containsKey(r)).map(Received::key).toList();
    }

    private final Map<Received, Boolean> delivered = new ConcurrentHashMap<>();
    private final Map<Received, Long> answeredNanos = new ConcurrentHashMap<>();

    /** When the answer to {@code r} was about to be sent (after any injected delay), or null if none was. */
    Long answeredNanos(Received r) {
        return answeredNanos.get(r);
    }

    private void handle(HttpExchange exchange) throws IOException {
        try (exchange) {
            byte[] body = exchange.getRequestBody().readAllBytes();
            String key = String.valueOf(exchange.getRequestHeaders().getFirst(keyHeader));
            Received r = new Received(key, body, Map.copyOf(exchange.getRequestHeaders()), System.nanoTime(),
                    attempts.computeIfAbsent(key, k -> new AtomicInteger()).incrementAndGet());
            received.add(r);
            Answer a = plan.apply(r);
            if (a.reset()) {
                return; // closed before any response: the client sees the connection end without an answer
            }
            if (a.stallBody()) {
                stallBody(exchange, a);
                return;
            }
            if (a.delayMs() > 0) {
                try {
                    Thread.sleep(a.delayMs()); // the injected slowness itself
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
            answeredNanos.put(r, System.nanoTime());
            // recorded before the answer goes out: the client may return as soon as it reads it. An answer slower
            // than the tests' request timeouts (>= 300 ms) reaches no client.
            if (a.status() >= 200 && a.status() < 300 && a.delayMs() < 100) {
                delivered.put(r, true);
            }
            a.headers().forEach((k, v) -> exchange.getResponseHeaders().add(k, v));
            byte[] out = a.body().getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(a.status(), out.length == 0 ? -1 : out.length);
            if (out.length > 0) {
                exchange.getResponseBody().write(out);
            }
        }
    }

    /** Sends the headers and the body's first byte, waits {@code delayMs}, then sends the rest. */
    private static void stallBody(HttpExchange exchange, Answer a) throws IOException {
        byte[] out = a.body().getBytes(StandardCharsets.UTF_8);
        exchange.sendResponseHeaders(a.status(), out.length);
        exchange.getResponseBody().write(out, 0, 1);
        exchange.getResponseBody().flush();
        try {
            Thread.sleep(a.delayMs()); // the injected stall itself
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
        }
        exchange.getResponseBody().write(out, 1, out.length - 1);
    }

    @Override
    public void close() {
        server.stop(0);
        executor.shutdownNow();
    }
}
