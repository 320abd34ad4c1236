package io.flowkafka.internal.dlq;

import io.flowkafka.internal.message.FlowHeaders;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.jspecify.annotations.Nullable;

/**
 * The headers of a dead letter, written one way for every input (a record the processing-exception handler
 * catches, a timer, a visit, a batched message): the input's own headers, then {@code flow.dlq.error.class},
 * {@code flow.dlq.error.message} (empty when the failure has none), {@code flow.dlq.error.at} (the line of the
 * application's code it came from, when one is on its stack), {@code flow.dlq.computation},
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
            // the watermark a test driver stamps on a message travels with it, not with its input's dead letter
            headers.remove(FlowHeaders.WATERMARK_AFTER);
        }
        put(headers, "flow.dlq.error.class", cause.getClass().getName());
        put(headers, "flow.dlq.error.message", cause.getMessage() == null ? "" : cause.getMessage());
        String at = applicationFrame(cause);
        if (at != null) {
            put(headers, "flow.dlq.error.at", at);
        } else {
            headers.remove("flow.dlq.error.at");
        }
        put(headers, "flow.dlq.computation", computation);
        put(headers, "flow.dlq.stage", stage);
        where.forEach((k, v) -> put(headers, k, v));
        return headers;
    }

    /** Packages that are not the application's: flow-kafka's own (but its examples and tests), Kafka, Avro, the JDK. */
    private static final List<String> NOT_APPLICATION = List.of("io.flowkafka.internal.", "io.flowkafka.api.",
            "io.flowkafka.runtime.", "io.flowkafka.spi.", "io.flowkafka.spec.", "io.flowkafka.connectors.",
            "io.flowkafka.avro.", "org.apache.kafka.", "org.apache.avro.", "com.fasterxml.", "java.", "javax.", "jdk.",
            "sun.", "com.sun.");
    /** The task that calls the application's functions: a frame below it is a caller (a test, a main), not one. */
    private static final String CALLER = "io.flowkafka.internal.processor.ComputationTask";

    /**
     * The top frame of the application's code on the failure's stack (or a cause's), as {@code Class.method(File:line)}:
     * which line of a process function threw, in one line instead of a stack trace; null when none is there (a
     * record that could not be decoded).
     */
    static @Nullable String applicationFrame(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
            for (StackTraceElement e : t.getStackTrace()) {
                String c = e.getClassName();
                if (c.startsWith(CALLER)) {
                    break; // down to the task: no application code threw (a record that could not be decoded)
                }
                if (NOT_APPLICATION.stream().noneMatch(c::startsWith)) {
                    return e.toString();
                }
            }
        }
        return null;
    }

    /** For a log line: {@code " (thrown at Class.method(File:line))"}, or empty when no application code threw. */
    static String thrownAt(Throwable failure) {
        String at = applicationFrame(failure);
        return at == null ? "" : " (thrown at " + at + ")";
    }

    private static void put(Headers headers, String key, String value) {
        headers.remove(key);
        headers.add(key, value.getBytes(StandardCharsets.UTF_8));
    }
}
