package io.flowkafka.internal.http;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import com.sun.net.httpserver.HttpServer;
import io.flowkafka.api.FlowException;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The operations HTTP server of one runtime ({@code flow.http.port}): a JDK {@link HttpServer} on a small fixed pool
 * of daemon threads, on which the runtime mounts handlers by exact path (status page, health, metrics, state
 * queries). It keeps the rule that serving never touches the stream threads: handlers only read what others measured.
 *
 * <p>Handlers that may wait (a state query forwarded to another instance) are mounted with {@link #mountSlow}: they
 * run on a pool of their own with a bounded queue, and past it answer 503 at once, so that {@code /health} and
 * {@code /metrics} always have a thread; a liveness probe that times out would restart a healthy instance.
 *
 * <p>Threading: {@link #mount} and {@link #close} from any thread; handlers run on the server's pools.
 */
public final class OperationsServer implements AutoCloseable {
    /** Threads serving requests: a page polls every 2 s, so a handful of operators never wait. */
    static final int THREADS = 2;
    /** Threads of the handlers that may wait ({@link #mountSlow}). */
    static final int SLOW_THREADS = 4;
    /** Requests of those handlers that wait for a thread; past them, 503. */
    static final int SLOW_QUEUE = 16;

    private static final Logger LOG = LoggerFactory.getLogger(OperationsServer.class);

    private final String pipeline;
    private final HttpServer server;
    private final ExecutorService executor;
    private final ThreadPoolExecutor slowExecutor;

    private OperationsServer(String pipeline, HttpServer server, ExecutorService executor) {
        this.pipeline = pipeline;
        this.server = server;
        this.executor = executor;
        AtomicInteger n = new AtomicInteger();
        this.slowExecutor = new ThreadPoolExecutor(SLOW_THREADS, SLOW_THREADS, 0, TimeUnit.MILLISECONDS,
                new ArrayBlockingQueue<>(SLOW_QUEUE), r -> {
                    Thread t = new Thread(r, "flow-" + pipeline + "-http-slow-" + n.incrementAndGet());
                    t.setDaemon(true);
                    return t;
                });
    }

    /**
     * Binds and starts the server; nothing is mounted yet (every path answers 404).
     *
     * @param host the address to bind, e.g. {@code 127.0.0.1}
     * @param port the port, 0 for any free one
     * @throws FlowException naming the address and the property to change if it cannot bind
     */
    public static OperationsServer start(String pipeline, String host, int port) {
        HttpServer server;
        try {
            server = HttpServer.create(new InetSocketAddress(host, port), 16);
        } catch (IOException | RuntimeException e) {
            throw new FlowException("pipeline '" + pipeline + "': the operations HTTP server cannot listen on " + host
                    + ":" + port + " (" + e.getMessage() + "); choose a free port with flow.http.port (0: any free "
                    + "port) or another address with flow.http.host", e);
        }
        AtomicInteger n = new AtomicInteger();
        ExecutorService executor = Executors.newFixedThreadPool(THREADS, r -> {
            Thread t = new Thread(r, "flow-" + pipeline + "-http-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        server.setExecutor(executor);
        server.start();
        OperationsServer s = new OperationsServer(pipeline, server, executor);
        LOG.info("pipeline '{}': operations HTTP server on http://{}", pipeline, s.hostAndPort());
        return s;
    }

    /** The address the server is bound to (the actual port when 0 was asked for). */
    public InetSocketAddress address() {
        return server.getAddress();
    }

    /** {@code host:port} of {@link #address()}, for a URL. */
    public String hostAndPort() {
        InetSocketAddress a = address();
        return a.getHostString() + ":" + a.getPort();
    }

    /**
     * Serves {@code path} (exactly; other paths below it answer 404) with {@code handler}.
     *
     * @param path an absolute path, e.g. {@code /metrics}
     * @param handler answers GET (and HEAD) requests; it must send a response
     * @throws IllegalArgumentException if the path does not start with {@code /} or is already mounted
     */
    public void mount(String path, HttpHandler handler) {
        mount(path, handler, Set.of("GET", "HEAD"));
    }

    /**
     * Serves {@code path} (exactly) with {@code handler} for the request methods {@code methods}; others answer 405.
     *
     * @param handler answers the requests of {@code methods}; it must send a response
     * @throws IllegalArgumentException if the path does not start with {@code /} or is already mounted
     */
    public void mount(String path, HttpHandler handler, Set<String> methods) {
        mount(path, handler, methods, false);
    }

    /**
     * As {@link #mount(String, HttpHandler, Set)}, for a handler that may wait (on another instance, a store): it
     * runs on the slow pool; when its {@value #SLOW_THREADS} threads are busy and {@value #SLOW_QUEUE} requests
     * wait, the next answers 503 with {@code Retry-After} at once.
     */
    public void mountSlow(String path, HttpHandler handler, Set<String> methods) {
        mount(path, handler, methods, true);
    }

    private void mount(String path, HttpHandler handler, Set<String> methods, boolean slow) {
        Objects.requireNonNull(handler, "handler");
        String allowed = String.join(", ", new TreeSet<>(methods));
        if (!path.startsWith("/")) {
            throw new IllegalArgumentException("path '" + path + "' must start with '/'");
        }
        server.createContext(path, exchange -> {
            boolean handedOver = false;
            try {
                if (!exchange.getRequestURI().getPath().equals(path)) {
                    respond(exchange, 404, "text/plain; charset=utf-8", ("no page at " + exchange.getRequestURI()
                            .getPath() + "\n").getBytes(StandardCharsets.UTF_8));
                } else if (!methods.contains(exchange.getRequestMethod())) {
                    exchange.getResponseHeaders().set("Allow", allowed);
                    respond(exchange, 405, "text/plain; charset=utf-8", (allowed + " only\n")
                            .getBytes(StandardCharsets.UTF_8));
                } else if (!slow) {
                    handler.handle(exchange);
                } else {
                    handedOver = handOver(path, handler, exchange);
                }
            } catch (IOException | RuntimeException e) {
                LOG.debug("pipeline '{}': request for {} failed: {}", pipeline, path, e.toString());
            } finally {
                if (!handedOver) {
                    exchange.close();
                }
            }
        });
    }

    /** Runs {@code handler} on the slow pool, which then closes the exchange; false after answering 503 instead. */
    private boolean handOver(String path, HttpHandler handler, HttpExchange exchange) {
        try {
            slowExecutor.execute(() -> {
                try (exchange) {
                    handler.handle(exchange);
                } catch (IOException | RuntimeException e) {
                    LOG.debug("pipeline '{}': request for {} failed: {}", pipeline, path, e.toString());
                }
            });
            return true;
        } catch (RejectedExecutionException e) {
            exchange.getResponseHeaders().set("Retry-After", "1");
            respond(exchange, 503, "text/plain; charset=utf-8", (path + " is busy: " + SLOW_THREADS
                    + " requests are being served and " + SLOW_QUEUE + " wait; retry\n").getBytes(StandardCharsets.UTF_8));
            return false;
        }
    }

    /**
     * Serves {@code path} with the bytes {@code body} gives at each request (200), or 500 with the failure's message.
     *
     * @param contentType e.g. {@code application/json}
     */
    public void mount(String path, String contentType, Supplier<byte[]> body) {
        mount(path, exchange -> {
            byte[] bytes;
            try {
                bytes = body.get();
            } catch (RuntimeException e) {
                respond(exchange, 500, "text/plain; charset=utf-8", (e.getMessage() + "\n")
                        .getBytes(StandardCharsets.UTF_8));
                return;
            }
            respond(exchange, 200, contentType, bytes);
        });
    }

    /** Sends a whole response. */
    public static void respond(HttpExchange exchange, int status, String contentType, byte[] body) {
        try {
            exchange.getResponseHeaders().set("Content-Type", contentType);
            exchange.getResponseHeaders().set("Cache-Control", "no-store");
            boolean head = "HEAD".equals(exchange.getRequestMethod());
            exchange.sendResponseHeaders(status, head ? -1 : body.length == 0 ? -1 : body.length);
            if (!head && body.length > 0) {
                try (OutputStream out = exchange.getResponseBody()) {
                    out.write(body);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Requests of the slow handlers waiting for a thread. */
    int slowRequestsWaiting() {
        return slowExecutor.getQueue().size();
    }

    /** Stops serving at once and releases the port. Idempotent. */
    @Override
    public void close() {
        server.stop(0);
        executor.shutdownNow();
        slowExecutor.shutdownNow();
    }
}
