package io.flowkafka.internal.dlq;

import java.util.Map;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Builds the dead letters of one computation task's own inputs (timers, visits, batched messages: work the
 * processing-exception handler never sees, DESIGN "the input goes to the dead-letter topic with the reason"):
 * headers by {@link DeadLetterHeaders}, the whole fitted to what the dead-letter topic takes
 * ({@link DeadLetterFit}). A retriable failure is no dead letter: it is rethrown, the task fails and retries.
 */
public final class DeadLetterWriter {
    private static final Logger LOG = LoggerFactory.getLogger(DeadLetterWriter.class);
    private final String computation;
    private final String topic;
    private final RecordSizeLimit limit;
    private final @Nullable RejectedOutputs rejected;

    /**
     * @param computation the computation
     * @param topic the dead-letter topic
     * @param limit the largest record the producer sends
     * @param rejected records brokers rejected for good, or null outside a FlowRuntime
     */
    public DeadLetterWriter(String computation, String topic, RecordSizeLimit limit, @Nullable RejectedOutputs rejected) {
        this.computation = computation;
        this.topic = topic;
        this.limit = limit;
        this.rejected = rejected;
    }

    /**
     * The dead letter of an input whose call failed.
     *
     * @param failure the call's failure
     * @param what the input, for the log ("timer ... of stream ...")
     * @param key the input's key bytes, or null
     * @param value the input's value bytes, or null
     * @param where where the input came from, as {@code flow.dlq.*} headers
     * @param original the input's own headers
     * @throws FlowProcessingException {@code failure} itself when it is retriable
     */
    public DeadLetterFit.Letter letter(FlowProcessingException failure, String what, byte @Nullable [] key,
            byte @Nullable [] value, Map<String, String> where, Map<String, byte[]> original) {
        if (Failures.retriable(failure)) {
            throw failure; // an outage, not a bad input: fail the task and retry from the last commit (Failures)
        }
        Throwable cause = failure.getCause() == null ? failure : failure.getCause();
        Iterable<Header> own = original.entrySet().stream().map(e -> (Header) new RecordHeader(e.getKey(), e.getValue()))
                .toList();
        LOG.warn("computation '{}' failed to process {}: {}{}; sent to the dead-letter topic", computation, what,
                cause.toString(), DeadLetterHeaders.thrownAt(cause));
        return DeadLetterFit.fit(limit, rejected, topic, key, value,
                DeadLetterHeaders.of(own, cause, computation, failure.stage(), where));
    }
}
