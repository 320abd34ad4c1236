package io.flowkafka.connectors.http;

import io.flowkafka.spec.SinkSpec;
import io.flowkafka.spi.OutboxDeliverer;
import io.flowkafka.spi.SinkContext;
import io.flowkafka.spi.SinkProvider;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * Flow's {@code TAsyncHttpSink}: an async sink delivered from the transactional outbox as one HTTP request per
 * message, at least once (reference 002: "POST requests run outside the epoch transaction, so the receiver must make
 * the operation idempotent or deduplicate the stable message ID sent in Idempotency-Key by default").
 *
 * <p>Parameters, all checked at spec load ({@link HttpSinkParameters}):
 * <ul>
 *   <li>{@code url} (required), {@code method} ({@code POST} default, {@code PUT}, {@code PATCH});</li>
 *   <li>the body: the message as JSON ({@code format: json}, the default) or the bytes of one column
 *       ({@code payload_column}); {@code content_type} (default {@code application/json}, or
 *       {@code application/octet-stream} with a {@code payload_column});</li>
 *   <li>{@code headers} (name to value), {@code secret_headers} (name to {@code {env: VARIABLE}} or
 *       {@code {file: path}}; never logged, shown or dead-lettered), {@code idempotency_key_header} (default
 *       {@code Idempotency-Key}, the stable message id), {@code message_id_header} (the id in one more header);</li>
 *   <li>{@code request_timeout} (10s), {@code max_retries} (5), {@code retry_backoff} (200ms),
 *       {@code max_retry_backoff} (10s): retries with jittered backoff on 5xx, 429 (honouring {@code Retry-After}),
 *       other non-dead-letter 4xx, timeouts and resets; then the sink blocks with a status error until the target
 *       recovers;</li>
 *   <li>{@code dead_letter_statuses} (default {@code [400, 413, 415, 422]}): answers that mean the request itself is
 *       wrong: the message goes to the pipeline's dead-letter topic and the sink moves on;</li>
 *   <li>{@code key_column} and {@code concurrency} (4): requests in flight per outbox partition, never two of one
 *       key, so each key's messages arrive in order;</li>
 *   <li>{@code max_batch_records} (500): messages per outbox batch.</li>
 * </ul>
 * {@code at_most_once_strategy} is rejected: "Enabling at_most_once_strategy makes spec loading fail".
 */
public final class HttpSinkProvider implements SinkProvider {
    /** Flow's async HTTP sink. */
    public static final String T_ASYNC_HTTP_SINK = "TAsyncHttpSink";

    /** Creates the provider (found by {@link java.util.ServiceLoader}). */
    public HttpSinkProvider() {
    }

    @Override
    public Set<String> sinkClassNames() {
        return Set.of(T_ASYNC_HTTP_SINK);
    }

    @Override
    public List<Problem> validate(SinkSpec sink) {
        List<Problem> problems = new ArrayList<>();
        HttpSinkParameters.parse(sink, problems);
        return problems;
    }

    @Override
    public boolean supportsAtMostOnce(SinkSpec sink) {
        return false;
    }

    @Override
    public OutboxDeliverer createDeliverer(SinkContext context) {
        List<Problem> problems = new ArrayList<>();
        HttpSinkParameters params = HttpSinkParameters.parse(context.sink(), problems);
        if (params == null) {
            throw new IllegalArgumentException("TAsyncHttpSink '" + context.sink().id() + "' is invalid: " + problems);
        }
        return new HttpDeliverer(context, params);
    }
}
