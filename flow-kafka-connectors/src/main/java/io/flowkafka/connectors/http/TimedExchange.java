package io.flowkafka.connectors.http;

import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One HTTP exchange bounded as a whole, body included. The JDK client's request timeout ends once the response's
 * headers arrive, so a body that stalls after them would hold a sink's thread forever; here the exchange is cancelled
 * at the bound and the caller sees an {@link HttpTimeoutException}. Used by the HTTP and ClickHouse sinks; not an API.
 */
public final class TimedExchange {
    private TimedExchange() {
    }

    /**
     * Sends {@code request} and reads the whole response within {@code bound}.
     *
     * @return the response, body read
     * @throws HttpTimeoutException if the response is not complete within {@code bound}
     * @throws IOException if the exchange fails
     * @throws InterruptedException if the caller is interrupted (the exchange is cancelled)
     */
    public static <T> HttpResponse<T> send(HttpClient client, HttpRequest request,
            HttpResponse.BodyHandler<T> handler, Duration bound) throws IOException, InterruptedException {
        CompletableFuture<HttpResponse<T>> exchange = client.sendAsync(request, handler);
        try {
            return exchange.get(bound.toNanos(), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            exchange.cancel(true);
            throw new HttpTimeoutException("no complete response within " + bound);
        } catch (InterruptedException e) {
            exchange.cancel(true);
            throw e;
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof IOException io) {
                throw io;
            }
            if (cause instanceof RuntimeException r) {
                throw r;
            }
            throw new IOException(cause);
        }
    }
}
