package io.flowkafka.connectors.registry;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.ConnectException;
import org.apache.kafka.common.errors.RetriableException;
import org.junit.jupiter.api.Test;

/** Retriable registry failures carry a Kafka RetriableException, the runtime's sign of an outage. */
class SchemaRegistryExceptionTest {
    private static SchemaRegistryException withStatus(int status, Throwable cause) {
        return new SchemaRegistryException("GET http://r:8081/schemas/ids/1 failed: HTTP " + status, "http://r:8081",
                null, status, SchemaRegistryException.NO_ERROR_CODE, cause);
    }

    @Test
    void shouldCarryARetriableExceptionForAnOutage() {
        ConnectException refused = new ConnectException("Connection refused");
        for (int status : new int[] {SchemaRegistryException.NO_RESPONSE, 408, 429, 500, 503}) {
            SchemaRegistryException e = withStatus(status, status == 0 ? refused : null);

            assertThat(e.retriable()).as("status %d", status).isTrue();
            assertThat(e.getCause()).as("status %d", status).isInstanceOf(SchemaRegistryUnavailableException.class)
                    .isInstanceOf(RetriableException.class).hasMessage(e.getMessage());
        }
        assertThat(withStatus(0, refused).getCause()).hasCause(refused);
    }

    @Test
    void shouldCarryNoRetriableExceptionForADefiniteAnswer() {
        for (int status : new int[] {200, 401, 403, 404, 409, 422}) {
            SchemaRegistryException e = withStatus(status, null);

            assertThat(e.retriable()).as("status %d", status).isFalse();
            assertThat(e).as("status %d", status).hasNoCause();
        }
    }
}
