package io.flowkafka.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowkafka.internal.dlq.FlowProcessingException;
import org.apache.kafka.common.errors.RetriableException;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.streams.errors.StreamsException;
import org.junit.jupiter.api.Test;

/** Which stream-thread deaths the runtime counts as an input's fault (the rest get the thread replaced). */
class FlowRuntimeFailuresTest {
    @Test
    void shouldNotCountARetriableOutageAsAnInputFailure() {
        Throwable outage = new StreamsException(new FlowProcessingException("write", "write the outputs of message m",
                new IllegalStateException("registry down", new RetriableException("HTTP 503") { })));

        assertThat(FlowRuntime.causedByInput(outage)).isFalse();
    }

    @Test
    void shouldCountABadRecordAsAnInputFailure() {
        assertThat(FlowRuntime.causedByInput(new StreamsException(new FlowProcessingException("read",
                "decode the record of topic t", new SerializationException("bad bytes"))))).isTrue();
    }
}
