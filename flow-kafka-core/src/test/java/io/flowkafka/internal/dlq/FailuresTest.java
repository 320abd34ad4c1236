package io.flowkafka.internal.dlq;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.ConnectException;
import java.util.Map;
import org.apache.kafka.common.errors.RetriableException;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.streams.errors.ErrorHandlerContext;
import org.apache.kafka.streams.errors.ProcessingExceptionHandler;
import org.apache.kafka.streams.errors.StreamsException;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.api.Record;
import org.junit.jupiter.api.Test;

/** The contract between pluggable serdes and the dead-letter path: an outage is never a dead letter. */
class FailuresTest {
    /** What a schema-registry serde throws when the registry cannot answer: retriable somewhere in the chain. */
    static final class RegistryDown extends RuntimeException {
        RegistryDown(Throwable cause) {
            super("GET http://registry:8081/schemas/ids/1 failed: HTTP 503", cause);
        }
    }

    @Test
    void shouldClassifyARetriableExceptionAnywhereInTheChainAsNotAnInputFailure() {
        Throwable outage = new StreamsException(new FlowProcessingException("read", "decode the record of topic t",
                new RegistryDown(new RetriableException("registry unavailable") { })));

        assertThat(Failures.retriable(outage)).isTrue();
        assertThat(Failures.causedByInput(outage)).as("the thread is replaced, whatever flow.stream.thread.failure")
                .isFalse();
    }

    @Test
    void shouldClassifyANetworkFailureAsRetriable() {
        assertThat(Failures.retriable(new SerializationException("Error retrieving Avro schema",
                new ConnectException("Connection refused")))).isTrue();
        assertThat(Failures.retriable(new TimeoutException("no answer"))).isTrue();
    }

    @Test
    void shouldClassifyABadRecordAsAnInputFailure() {
        Throwable bad = new StreamsException(new FlowProcessingException("read", "decode the record of topic t",
                new SerializationException("byte 0 is 0x7b, not the magic byte 0x00")));

        assertThat(Failures.retriable(bad)).isFalse();
        assertThat(Failures.causedByInput(bad)).isTrue();
        assertThat(Failures.causedByInput(new IllegalStateException("a send failed"))).isFalse();
    }

    @Test
    void shouldSurviveACycleInTheCauseChain() {
        RuntimeException a = new RuntimeException("a");
        RuntimeException b = new RuntimeException("b", a);
        a.initCause(b);

        assertThat(Failures.retriable(a)).isFalse();
        assertThat(Failures.causedByInput(a)).isFalse();
    }

    @Test
    void shouldFailTheTaskInsteadOfDeadLetteringAnOutage() {
        DeadLetterHandler handler = new DeadLetterHandler();
        handler.configure(Map.of(DeadLetterHandler.TOPIC_CONFIG, "p.dlq"));
        FlowProcessingException outage = new FlowProcessingException("read", "decode the record of topic t",
                new RegistryDown(new RetriableException("registry unavailable") { }));
        FlowProcessingException bad = new FlowProcessingException("read", "decode the record of topic t",
                new SerializationException("bad bytes"));

        ProcessingExceptionHandler.Response onOutage = handler.handleError(context(), new Record<>(null, null, 0L), outage);
        ProcessingExceptionHandler.Response onBad = handler.handleError(context(), new Record<>(null, null, 0L), bad);

        assertThat(onOutage.result()).isEqualTo(ProcessingExceptionHandler.Result.FAIL);
        assertThat(onOutage.deadLetterQueueRecords()).isEmpty();
        assertThat(onBad.result()).isEqualTo(ProcessingExceptionHandler.Result.RESUME);
        assertThat(onBad.deadLetterQueueRecords()).singleElement()
                .satisfies(r -> assertThat(r.topic()).isEqualTo("p.dlq"));
    }

    private static ErrorHandlerContext context() {
        return new ErrorHandlerContext() {
            @Override
            public String topic() {
                return "t";
            }

            @Override
            public int partition() {
                return 0;
            }

            @Override
            public long offset() {
                return 5;
            }

            @Override
            public Headers headers() {
                return new RecordHeaders();
            }

            @Override
            public String processorNodeId() {
                return "read.process";
            }

            @Override
            public TaskId taskId() {
                return new TaskId(0, 0);
            }

            @Override
            public long timestamp() {
                return 0;
            }

            @Override
            public byte[] sourceRawKey() {
                return null;
            }

            @Override
            public byte[] sourceRawValue() {
                return new byte[] {1};
            }
        };
    }
}
