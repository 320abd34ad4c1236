package io.flowkafka.connectors.http;

import io.flowkafka.api.MessageId;
import io.flowkafka.spi.OutboxRecord;
import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.function.BooleanSupplier;
import org.apache.kafka.common.header.Header;
import org.jspecify.annotations.Nullable;

/**
 * Sends one outbox message as one HTTP request with bounded retries: it owns the rule that every attempt of a message
 * carries the same {@code Idempotency-Key} (the stable message id) and the same body, and the classification of
 * answers: 2xx delivered; a {@code dead_letter_statuses} 4xx (the request's fault) dead-lettered; anything else (5xx,
 * 429, other 4xx, 3xx, timeouts, resets) retried after {@link RetryDelay} until {@code max_retries} are used up.
 *
 * <p>A message's attempts count across calls (in a map its deliverer keeps per partition, across opens): one a
 * call stops (out of time) goes on from its next attempt, so a message whose retries take longer than a call is
 * still blocked, with its status error, once they are used up.
 *
 * <p>Threading: {@link #send} runs on the request threads of the sink, one message of a lane at a time.
 */
final class MessagePost {
    /** How a message's attempts ended. */
    enum Outcome {
        /** The target answered 2xx. */
        DELIVERED,
        /** The target rejected the request as its own fault: the message is in the dead-letter topic. */
        DEAD_LETTERED,
        /** The retries were used up (or the target asked to wait longer than max_retry_backoff). */
        BLOCKED,
        /** Another message blocked the batch: this one stopped before being delivered. */
        STOPPED
    }

    /**
     * The end of one message's attempts.
     *
     * @param outcome how they ended
     * @param problem for {@link Outcome#BLOCKED}, the last failure (redacted); else empty
     * @param notBeforeMs the earliest time the target asked for the next attempt (Retry-After), or 0
     */
    record Result(Outcome outcome, String problem, long notBeforeMs) {
    }

    private static final int BODY_SNIPPET = 300;
    private final HttpClient client;
    private final HttpSinkParameters params;
    private final SecretValues secrets;
    private final HttpSinkMeters meters;
    private final HttpDeadLetters deadLetters;
    private final String sinkName;

    MessagePost(HttpClient client, HttpSinkParameters params, SecretValues secrets, HttpSinkMeters meters,
            HttpDeadLetters deadLetters, String sinkName) {
        this.client = client;
        this.params = params;
        this.secrets = secrets;
        this.meters = meters;
        this.deadLetters = deadLetters;
        this.sinkName = sinkName;
    }

    /**
     * Sends one message until it is delivered, dead-lettered, its retries are used up, or {@code stop} says another
     * message blocked the batch.
     *
     * @param r the message
     * @param stop true once the batch is blocked (checked before each attempt)
     * @param attemptsMade the attempts made so far of the partition's messages a call stopped; updated
     * @return how it ended
     * @throws InterruptedException when the sink is closing
     */
    Result send(OutboxRecord r, BooleanSupplier stop, Map<MessageId, Integer> attemptsMade)
            throws InterruptedException {
        Result result = attempt(r, stop, attemptsMade);
        if (result.outcome() == Outcome.STOPPED) {
            return result;
        }
        attemptsMade.remove(r.messageId());
        return result;
    }

    private Result attempt(OutboxRecord r, BooleanSupplier stop, Map<MessageId, Integer> attemptsMade)
            throws InterruptedException {
        HttpRequest request = request(r);
        String problem = "";
        for (int attempt = attemptsMade.getOrDefault(r.messageId(), 0); attempt <= params.maxRetries(); attempt++) {
            if (stop.getAsBoolean()) {
                if (attempt > 0) {
                    attemptsMade.put(r.messageId(), attempt);
                }
                return new Result(Outcome.STOPPED, "", 0);
            }
            if (attempt > 0) {
                meters.retry();
            }
            long start = System.nanoTime();
            @Nullable Duration retryAfter = null;
            try {
                HttpResponse<byte[]> response = TimedExchange.send(client, request,
                        HttpResponse.BodyHandlers.ofByteArray(), params.requestTimeout());
                int status = response.statusCode();
                meters.request((status / 100) + "xx", System.nanoTime() - start);
                if (status >= 200 && status < 300) {
                    return new Result(Outcome.DELIVERED, "", 0);
                }
                String answer = "HTTP " + status + " " + snippet(response.body());
                if (params.deadLetterStatuses().contains(status)) {
                    String reason = sinkName + ": the target rejected message " + r.messageId() + " as the request's "
                            + "fault: " + answer;
                    try {
                        deadLetters.write(r, status, reason);
                        meters.deadLetter();
                        return new Result(Outcome.DEAD_LETTERED, "", 0);
                    } catch (InterruptedException e) {
                        throw e;
                    } catch (Exception e) {
                        problem = answer + ", and writing it to the dead-letter topic failed: "
                                + secrets.redact(e.toString());
                        continue;
                    }
                } else {
                    problem = answer;
                    retryAfter = RetryDelay.retryAfter(response.headers().firstValue("Retry-After").orElse(null),
                            System.currentTimeMillis());
                }
            } catch (HttpTimeoutException e) {
                meters.request("timeout", System.nanoTime() - start);
                problem = "no response within request_timeout " + params.requestTimeout();
            } catch (IOException e) {
                meters.request("io_error", System.nanoTime() - start);
                problem = "the request failed: " + secrets.redact(e.toString());
            }
            if (attempt == params.maxRetries()) {
                if (retryAfter != null) { // the last answer's Retry-After still holds: no request before it
                    return new Result(Outcome.BLOCKED, problem + " after " + (params.maxRetries() + 1) + " attempts "
                            + "(Retry-After " + retryAfter.toSeconds() + " s)",
                            System.currentTimeMillis() + retryAfter.toMillis());
                }
                break;
            }
            Duration delay = RetryDelay.backoff(attempt + 1, params.retryBackoff(), params.maxRetryBackoff());
            if (retryAfter != null) {
                if (retryAfter.compareTo(params.maxRetryBackoff()) > 0) {
                    // honoured across the block: the next attempt waits for it
                    return new Result(Outcome.BLOCKED, problem + " (Retry-After " + retryAfter.toSeconds() + " s, "
                            + "longer than max_retry_backoff " + params.maxRetryBackoff() + ")",
                            System.currentTimeMillis() + retryAfter.toMillis());
                }
                delay = delay.compareTo(retryAfter) < 0 ? retryAfter : delay;
            }
            Thread.sleep(delay.toMillis());
        }
        return new Result(Outcome.BLOCKED, problem + " after " + (params.maxRetries() + 1) + " attempts", 0);
    }

    /**
     * Text about this sink's requests with every secret value replaced.
     *
     * @param text any text, or null
     * @return the redacted text
     */
    String redact(@Nullable String text) {
        return secrets.redact(text);
    }

    private HttpRequest request(OutboxRecord r) {
        byte[] body = r.value() == null ? new byte[0] : r.value();
        HttpRequest.Builder b = HttpRequest.newBuilder(params.url()).timeout(params.requestTimeout())
                .method(params.method(), HttpRequest.BodyPublishers.ofByteArray(body))
                .header("Content-Type", params.contentType())
                .header(params.idempotencyKeyHeader(), r.messageId().toString());
        for (Header h : r.headers()) {
            if (h.value() != null) {
                b.header(h.key(), new String(h.value(), StandardCharsets.UTF_8));
            }
        }
        params.headers().forEach(b::header);
        secrets.headers().forEach(b::header);
        return b.build();
    }

    private String snippet(byte @Nullable [] body) {
        if (body == null || body.length == 0) {
            return "(empty body)";
        }
        // redacted whole, then cut: a cut secret would no longer match
        String s = secrets.redact(new String(body, StandardCharsets.UTF_8)).replaceAll("\\s+", " ");
        return "\"" + (s.length() > BODY_SNIPPET ? s.substring(0, BODY_SNIPPET) + "..." : s) + "\"";
    }
}
