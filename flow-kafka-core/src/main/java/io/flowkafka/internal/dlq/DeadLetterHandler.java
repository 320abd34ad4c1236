package io.flowkafka.internal.dlq;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.streams.errors.ErrorHandlerContext;
import org.apache.kafka.streams.errors.ProcessingExceptionHandler;
import org.apache.kafka.streams.processor.api.Record;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * flow-kafka's processing-exception handler (Kafka Streams' KIP-1033/KIP-1034 dead-letter
 * support): sends the failed input's original key and value bytes to {@code <pipeline>.dlq} with
 * headers naming the error and where the record came from, and lets processing go on; or fails
 * the task when dead letters are disabled. A retriable failure ({@link Failures#retriable}: a
 * {@code RetriableException} in the cause chain, e.g. a schema registry outage) is never a dead
 * letter: it fails the task, which is retried from the last commit.
 *
 * <p>Headers added: {@code flow.dlq.error.class}, {@code flow.dlq.error.message},
 * {@code flow.dlq.computation}, {@code flow.dlq.stage}, {@code flow.dlq.topic},
 * {@code flow.dlq.partition}, {@code flow.dlq.offset}, {@code flow.dlq.task}; the original
 * headers are kept. A dead letter that could not be written whole goes without the input's bytes
 * ({@link DeadLetterFit}).
 *
 * <p>Configured by Kafka Streams from its properties; thread-safe (stateless after configure).
 */
public final class DeadLetterHandler implements ProcessingExceptionHandler {
    /** Property naming the dead-letter topic (set by the compiler). */
    public static final String TOPIC_CONFIG = "flow.dead.letter.topic";
    /** Property enabling dead letters (default true); false makes a failure fail the task. */
    public static final String ENABLED_CONFIG = "flow.dead.letter.enabled";
    private static final Logger LOG = LoggerFactory.getLogger(DeadLetterHandler.class);

    private String topic = "dlq";
    private boolean enabled = true;
    private RecordSizeLimit limit = RecordSizeLimit.of(Map.of());
    private @Nullable RejectedOutputs rejected;
    private @Nullable DeadLetterCounts counts;

    @Override
    public void configure(Map<String, ?> configs) {
        Object t = configs.get(TOPIC_CONFIG);
        if (t != null) {
            topic = t.toString();
        }
        Object e = configs.get(ENABLED_CONFIG);
        if (e != null) {
            enabled = Boolean.parseBoolean(e.toString());
        }
        limit = RecordSizeLimit.of(configs);
        Object r = configs.get(RejectedOutputs.CONFIG);
        rejected = r instanceof RejectedOutputs ro ? ro : null;
        counts = configs.get(DeadLetterCounts.CONFIG) instanceof DeadLetterCounts c ? c : null;
    }

    @Override
    public Response handleError(ErrorHandlerContext context, Record<?, ?> record, Exception exception) {
        if (!(exception instanceof FlowProcessingException)) {
            // Not a failure of the input (undecodable record, exception from user code) but of the machinery,
            // e.g. a send error surfacing at the next forward. Resuming would commit this record's state without
            // its lost outputs: fail instead, so Kafka Streams aborts the transaction and the thread is replaced.
            LOG.warn("computation node '{}' hit a runtime failure at {}-{}@{}: {}; failing the task so its "
                    + "transaction aborts and it restarts from the last commit", context.processorNodeId(),
                    context.topic(), context.partition(), context.offset(), exception.toString());
            return Response.fail();
        }
        if (Failures.retriable(exception)) {
            // an outage (a schema registry that cannot answer, a timeout), not a bad input: dead-lettering would lose
            // a good record; fail, so the transaction aborts and the record is retried after the task is restored
            LOG.warn("computation node '{}' hit a retriable failure at {}-{}@{}: {}; failing the task so it retries "
                    + "from the last commit instead of dead-lettering the record", context.processorNodeId(),
                    context.topic(), context.partition(), context.offset(), exception.toString());
            return Response.fail();
        }
        Throwable cause = exception;
        String computation = context.processorNodeId();
        String stage = "process the record";
        if (exception instanceof FlowProcessingException fpe) {
            cause = fpe.getCause() == null ? fpe : fpe.getCause();
            computation = fpe.computation();
            stage = fpe.stage();
        }
        if (!enabled) {
            LOG.error("computation '{}' failed to {} at {}-{}@{} and dead letters are disabled ({}=false): failing",
                    computation, stage, context.topic(), context.partition(), context.offset(), ENABLED_CONFIG);
            return Response.fail();
        }
        LOG.warn("computation '{}' failed to {} at {}-{}@{}: {}: {}{}; sent to dead-letter topic {}", computation,
                stage, context.topic(), context.partition(), context.offset(), cause.getClass().getName(),
                cause.getMessage(), DeadLetterHeaders.thrownAt(cause), topic);
        Map<String, String> where = new LinkedHashMap<>();
        where.put("flow.dlq.topic", String.valueOf(context.topic()));
        where.put("flow.dlq.partition", String.valueOf(context.partition()));
        where.put("flow.dlq.offset", String.valueOf(context.offset()));
        where.put("flow.dlq.task", String.valueOf(context.taskId()));
        Headers headers = DeadLetterHeaders.of(context.headers(), cause, computation, stage, where);
        DeadLetterFit.Letter letter = DeadLetterFit.fit(limit, rejected, topic, context.sourceRawKey(),
                context.sourceRawValue(), headers);
        ProducerRecord<byte[], byte[]> dead = new ProducerRecord<>(topic, null, null, letter.key(), letter.value(),
                letter.headers());
        if (counts != null) {
            counts.count(computation);
        }
        return Response.resume(List.of(dead));
    }
}
