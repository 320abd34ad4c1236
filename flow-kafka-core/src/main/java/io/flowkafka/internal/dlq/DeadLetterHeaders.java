package io.flowkafka.internal.dlq;

import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.jspecify.annotations.Nullable;

/**
 * The headers of a dead letter, written one way for every input (a record the processing-exception handler
 * catches, a timer, a visit, a batched message): the input's own headers, then {@code flow.dlq.error.class},
 * {@code flow.dlq.error.message} (empty when the failure has none), {@code flow.dlq.computation},
 * {@code flow.dlq.stage}, and where the input came from ({@code flow.dlq.topic/partition/offset/task}, or
 * {@code flow.dlq.timer.*}, {@code flow.dlq.visit.*}). A {@code flow.dlq.*} header of the input is replaced.
 */
public final class DeadLetterHeaders {
    private DeadLetterHeaders() {
    }

    /**
     * @param original the input's headers, or null
     * @param cause what failed (the cause of a {@link FlowProcessingException})
     * @param computation the computation that failed
     * @param stage what it was doing ({@link FlowProcessingException#stage()})
     * @param where where the input came from, as {@code flow.dlq.*} headers, in order
     */
    public static Headers of(@Nullable Iterable<Header> original, Throwable cause, String computation, String stage,
            Map<String, String> where) {
        Headers headers = new RecordHeaders();
        if (original != null) {
            original.forEach(headers::add);
        }
        put(headers, "flow.dlq.error.class", cause.getClass().getName());
        put(headers, "flow.dlq.error.message", cause.getMessage() == null ? "" : cause.getMessage());
        put(headers, "flow.dlq.computation", computation);
        put(headers, "flow.dlq.stage", stage);
        where.forEach((k, v) -> put(headers, k, v));
        return headers;
    }

    private static void put(Headers headers, String key, String value) {
        headers.remove(key);
        headers.add(key, value.getBytes(StandardCharsets.UTF_8));
    }
}
