package io.flowkafka.connectors.http;

import io.flowkafka.spec.AtMostOnceStrategy;
import io.flowkafka.spec.Durations;
import io.flowkafka.spec.SinkSpec;
import io.flowkafka.spi.SinkProvider.Problem;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.jspecify.annotations.Nullable;

/**
 * The parameters of a {@code TAsyncHttpSink}, read and checked once at spec load: it owns the rule that every
 * accepted parameter has an effect and every mistake is rejected with the field, the problem and the fix (no
 * parameter silently ignored).
 *
 * @param url where requests go ({@code http} or {@code https})
 * @param method {@code POST} (default), {@code PUT} or {@code PATCH}
 * @param contentType the {@code Content-Type} of the bodies
 * @param headers plain headers from the spec
 * @param secretHeaders headers whose values come from environment variables or files
 * @param idempotencyKeyHeader the header carrying the message id
 * @param requestTimeout how long one request (connect included) may take
 * @param maxRetries retries of one message before the sink blocks
 * @param retryBackoff the first retry's delay (doubling, with jitter)
 * @param maxRetryBackoff the largest retry delay, and the longest {@code Retry-After} waited in place
 * @param concurrency requests in flight per outbox partition (never two of one key)
 * @param deadLetterStatuses the 4xx statuses that mean the request itself is wrong: dead-lettered
 */
record HttpSinkParameters(URI url, String method, String contentType, Map<String, String> headers,
        List<SecretHeader> secretHeaders, String idempotencyKeyHeader, Duration requestTimeout, int maxRetries,
        Duration retryBackoff, Duration maxRetryBackoff, int concurrency, Set<Integer> deadLetterStatuses) {
    /** The parameters this sink reads (the encoding ones are applied by core when the message enters the outbox). */
    static final Set<String> KNOWN = Set.of("url", "method", "format", "payload_column", "key_column",
            "message_id_header", "content_type", "headers", "secret_headers", "idempotency_key_header",
            "request_timeout", "max_retries", "retry_backoff", "max_retry_backoff", "concurrency",
            "dead_letter_statuses", "max_batch_records", "at_most_once_strategy");
    /** Statuses dead-lettered by default: the request is malformed, too large, of the wrong type or unprocessable. */
    static final Set<Integer> DEFAULT_DEAD_LETTER_STATUSES = Set.of(400, 413, 415, 422);
    /** Statuses that never mean the request itself is wrong: they are retried and block. */
    private static final Set<Integer> NEVER_DEAD_LETTERED = Set.of(401, 403, 404, 405, 407, 408, 409, 425, 429);
    /** Headers the JDK client sets itself and refuses. */
    private static final Set<String> RESTRICTED = Set.of("connection", "content-length", "expect", "host", "upgrade");
    /**
     * The longest a blocked batch may take inside one delivery call: the delivery service's consumer must poll within
     * {@code max.poll.interval.ms} (5 min by default).
     */
    static final Duration MAX_RETRY_BUDGET = Duration.ofMinutes(4);

    /**
     * Reads and checks a sink's parameters.
     *
     * @param sink a {@code TAsyncHttpSink}
     * @param problems where each problem is added (field relative to the sink, what is wrong, the fix)
     * @return the parameters, or null when there is a problem
     */
    static @Nullable HttpSinkParameters parse(SinkSpec sink, List<Problem> problems) {
        int before = problems.size();
        Map<String, Object> p = sink.parameters();
        String where = "TAsyncHttpSink '" + sink.id() + "'";
        for (String name : new TreeSet<>(p.keySet())) {
            if (!KNOWN.contains(name)) {
                String fix = switch (name) {
                    case "body_column" -> "rename it payload_column (the column whose value is the body)";
                    case "value_serde", "serde_config" -> "remove it: the body is the record as JSON (format json) or "
                            + "a payload_column";
                    case "timestamp" -> "remove it: an HTTP request carries no record timestamp";
                    case "topic" -> "remove it and set url";
                    default -> "remove it; the parameters are " + new TreeSet<>(KNOWN);
                };
                problems.add(new Problem("parameters." + name, where + " has no parameter '" + name + "'", fix));
            }
        }
        try {
            if (AtMostOnceStrategy.of(sink).enabled()) {
                problems.add(new Problem("parameters.at_most_once_strategy", where + " enables at_most_once_strategy: "
                        + "\"Enabling at_most_once_strategy makes spec loading fail\" (TAsyncHttpSink is at least once)",
                        "remove at_most_once_strategy; make the receiver idempotent on the Idempotency-Key header"));
            }
        } catch (IllegalArgumentException e) {
            problems.add(new Problem("parameters.at_most_once_strategy", e.getMessage(), "remove at_most_once_strategy"));
        }
        URI url = null;
        Object u = p.get("url");
        if (!(u instanceof String s) || s.isBlank()) {
            problems.add(new Problem("parameters.url", where + (u == null ? " has no url" : " has an invalid url " + u),
                    "set parameters.url to the endpoint, e.g. https://api.example.com/events"));
        } else {
            try {
                url = new URI(s);
                if (!"http".equals(url.getScheme()) && !"https".equals(url.getScheme()) || url.getHost() == null) {
                    throw new IllegalArgumentException("not an absolute http(s) URL");
                }
                if (url.getUserInfo() != null) {
                    problems.add(new Problem("parameters.url", where + ": the url carries credentials (user info)",
                            "remove them from the url and send them in secret_headers, e.g. Authorization from {env: X}"));
                }
            } catch (Exception e) {
                problems.add(new Problem("parameters.url", where + ": url '" + s + "' is " + (e.getMessage() == null
                        ? "invalid" : e.getMessage()), "set an absolute http or https URL"));
                url = null;
            }
        }
        String method = String.valueOf(p.getOrDefault("method", "POST")).toUpperCase(Locale.ROOT);
        if (!List.of("POST", "PUT", "PATCH").contains(method)) {
            problems.add(new Problem("parameters.method", where + ": method '" + p.get("method") + "' sends no body",
                    "set method to POST (default), PUT or PATCH"));
        }
        Object format = p.getOrDefault("format", "json");
        if (!"json".equals(String.valueOf(format))) {
            problems.add(new Problem("parameters.format", where + ": format '" + format + "' is not supported: the "
                    + "body is the record as JSON or the bytes of a payload_column", "remove format, or set it to json"));
        }
        String contentType = String.valueOf(p.getOrDefault("content_type",
                p.containsKey("payload_column") ? "application/octet-stream" : "application/json"));
        if (contentType.isBlank() || contentType.contains("\n")) {
            problems.add(new Problem("parameters.content_type", where + ": invalid content_type '" + contentType + "'",
                    "set a media type like application/json"));
        }
        String idHeader = String.valueOf(p.getOrDefault("idempotency_key_header", "Idempotency-Key"));
        checkHeaderName(idHeader, "parameters.idempotency_key_header", where, problems);
        if (p.containsKey("message_id_header")) {
            checkHeaderName(String.valueOf(p.get("message_id_header")), "parameters.message_id_header", where, problems);
        }
        Map<String, String> headers = new LinkedHashMap<>();
        Object h = p.getOrDefault("headers", Map.of());
        if (!(h instanceof Map<?, ?> hm)) {
            problems.add(new Problem("parameters.headers", where + ": headers must be a map of name to value",
                    "write headers as {\"X-Source\": \"flow\"}"));
        } else {
            hm.forEach((k, v) -> {
                String name = String.valueOf(k);
                if (checkHeaderName(name, "parameters.headers." + name, where, problems)) {
                    if (!(v instanceof String || v instanceof Number || v instanceof Boolean)) {
                        problems.add(new Problem("parameters.headers." + name, where + ": header '" + name
                                + "' must have a text value", "set it to a string"));
                    } else {
                        headers.put(name, String.valueOf(v));
                    }
                }
            });
        }
        List<SecretHeader> secrets = new ArrayList<>();
        Object sh = p.getOrDefault("secret_headers", Map.of());
        if (!(sh instanceof Map<?, ?> shm)) {
            problems.add(new Problem("parameters.secret_headers", where + ": secret_headers must be a map of name to "
                    + "{env: VARIABLE} or {file: path}", "write it as {\"Authorization\": {\"env\": \"API_TOKEN\"}}"));
        } else {
            shm.forEach((k, v) -> {
                String name = String.valueOf(k);
                String field = "parameters.secret_headers." + name;
                if (!checkHeaderName(name, field, where, problems)) {
                    return;
                }
                try {
                    SecretHeader s = SecretHeader.of(name, v);
                    s.read(); // present where the spec loads: the runtime reads it again when it opens a partition
                    secrets.add(s);
                } catch (IllegalArgumentException | IllegalStateException e) {
                    problems.add(new Problem(field, where + ": " + e.getMessage(), "set it to {\"env\": \"VARIABLE\"} "
                            + "or {\"file\": \"/run/secrets/token\"} naming a variable or readable file that holds the "
                            + "header's value"));
                }
            });
        }
        Set<String> seen = new TreeSet<>(String.CASE_INSENSITIVE_ORDER);
        seen.add(idHeader);
        for (String name : headers.keySet()) {
            if (!seen.add(name)) {
                problems.add(new Problem("parameters.headers." + name, where + ": header '" + name + "' is also "
                        + "the idempotency key header", "remove it, or set idempotency_key_header to another name"));
            }
        }
        for (SecretHeader s : secrets) {
            if (!seen.add(s.header())) {
                problems.add(new Problem("parameters.secret_headers." + s.header(), where + ": header '" + s.header()
                        + "' is set twice (headers, secret_headers or idempotency_key_header)", "keep one of them"));
            }
        }
        Duration timeout = duration(p, "request_timeout", Duration.ofSeconds(10), where, problems);
        Duration backoff = duration(p, "retry_backoff", Duration.ofMillis(200), where, problems);
        Duration maxBackoff = duration(p, "max_retry_backoff", Duration.ofSeconds(10), where, problems);
        int retries = integer(p, "max_retries", 5, 0, 100, where, problems);
        int concurrency = integer(p, "concurrency", 4, 1, 256, where, problems);
        integer(p, "max_batch_records", 500, 1, 100_000, where, problems);
        if (backoff.compareTo(maxBackoff) > 0) {
            problems.add(new Problem("parameters.retry_backoff", where + ": retry_backoff " + backoff + " exceeds "
                    + "max_retry_backoff " + maxBackoff, "set retry_backoff at most max_retry_backoff"));
        }
        Duration budget = timeout.multipliedBy(retries + 1L).plus(maxBackoff.multipliedBy(retries));
        if (budget.compareTo(MAX_RETRY_BUDGET) > 0) {
            problems.add(new Problem("parameters.max_retries", where + ": one message's retries may take " + budget
                    + " ((max_retries + 1) x request_timeout + max_retries x max_retry_backoff), more than "
                    + MAX_RETRY_BUDGET + " (the delivery service must poll its outbox within max.poll.interval.ms)",
                    "lower max_retries, request_timeout or max_retry_backoff: once the retries are used up the sink "
                            + "blocks and keeps retrying with the outbox's backoff, so fewer retries lose nothing"));
        }
        Set<Integer> deadLetter = new TreeSet<>(DEFAULT_DEAD_LETTER_STATUSES);
        if (p.containsKey("dead_letter_statuses")) {
            deadLetter.clear();
            Object d = p.get("dead_letter_statuses");
            if (!(d instanceof List<?> list)) {
                problems.add(new Problem("parameters.dead_letter_statuses", where + ": dead_letter_statuses must be a "
                        + "list of 4xx statuses", "write it as [400, 413, 415, 422]"));
            } else {
                for (Object o : list) {
                    int s;
                    try {
                        s = Integer.parseInt(String.valueOf(o));
                    } catch (NumberFormatException e) {
                        s = -1;
                    }
                    if (s < 400 || s > 499 || NEVER_DEAD_LETTERED.contains(s)) {
                        problems.add(new Problem("parameters.dead_letter_statuses", where + ": status " + o + " cannot "
                                + "be dead-lettered: only a 4xx that is the request's fault can (not "
                                + new TreeSet<>(NEVER_DEAD_LETTERED) + ", which are retried)",
                                "list 4xx statuses such as 400, 413, 415, 422"));
                    } else {
                        deadLetter.add(s);
                    }
                }
            }
        }
        if (problems.size() > before) {
            return null;
        }
        return new HttpSinkParameters(url, method, contentType, Map.copyOf(headers), List.copyOf(secrets), idHeader,
                timeout, retries, backoff, maxBackoff, concurrency, Collections.unmodifiableSet(deadLetter));
    }

    private static boolean checkHeaderName(String name, String field, String where, List<Problem> problems) {
        if (name.isEmpty() || !name.matches("[!#$%&'*+.^_`|~0-9A-Za-z-]+")) {
            problems.add(new Problem(field, where + ": '" + name + "' is not a valid HTTP header name",
                    "use letters, digits and '-'"));
            return false;
        }
        if (RESTRICTED.contains(name.toLowerCase(Locale.ROOT))) {
            problems.add(new Problem(field, where + ": header '" + name + "' is set by the HTTP client itself",
                    "remove it"));
            return false;
        }
        return true;
    }

    private static Duration duration(Map<String, Object> p, String name, Duration dflt, String where,
            List<Problem> problems) {
        if (!p.containsKey(name)) {
            return dflt;
        }
        try {
            Duration d = Durations.parse(p.get(name), name);
            if (d.isZero()) {
                throw new IllegalArgumentException(name + " must be positive");
            }
            return d;
        } catch (IllegalArgumentException e) {
            problems.add(new Problem("parameters." + name, where + ": " + e.getMessage(),
                    "set " + name + " to a positive duration like \"" + dflt.toMillis() + "ms\""));
            return dflt;
        }
    }

    private static int integer(Map<String, Object> p, String name, int dflt, int min, int max, String where,
            List<Problem> problems) {
        Object v = p.getOrDefault(name, dflt);
        try {
            int n = Integer.parseInt(String.valueOf(v));
            if (n < min || n > max) {
                throw new NumberFormatException();
            }
            return n;
        } catch (NumberFormatException e) {
            problems.add(new Problem("parameters." + name, where + ": " + name + " must be an integer from " + min
                    + " to " + max + " but was " + v, "set " + name + " to a number such as " + dflt));
            return dflt;
        }
    }
}
