package io.flowkafka.internal.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowkafka.internal.dlq.FlowProcessingException;
import io.flowkafka.internal.status.StatusBoard;
import org.apache.kafka.common.errors.RetriableException;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.streams.errors.StreamsException;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse;
import org.junit.jupiter.api.Test;

/** Which stream-thread deaths the runtime counts as an input's fault (the rest get the thread replaced). */
class StreamThreadFailuresTest {
    private final StreamThreadFailures shutdownOnInput = new StreamThreadFailures("p", new StatusBoard(), false);

    @Test
    void shouldNotCountARetriableOutageAsAnInputFailure() {
        Throwable outage = new StreamsException(new FlowProcessingException("write", "write the outputs of message m",
                new IllegalStateException("registry down", new RetriableException("HTTP 503") { })));

        assertThat(shutdownOnInput.handle(outage)).isEqualTo(StreamThreadExceptionResponse.REPLACE_THREAD);
    }

    @Test
    void shouldCountABadRecordAsAnInputFailure() {
        Throwable badRecord = new StreamsException(new FlowProcessingException("read", "decode the record of topic t",
                new SerializationException("bad bytes")));

        assertThat(shutdownOnInput.handle(badRecord)).isEqualTo(StreamThreadExceptionResponse.SHUTDOWN_CLIENT);
        assertThat(new StreamThreadFailures("p", new StatusBoard(), true).handle(badRecord))
                .as("flow.stream.thread.failure=replace").isEqualTo(StreamThreadExceptionResponse.REPLACE_THREAD);
    }
}
