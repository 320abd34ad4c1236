package io.flowkafka.connectors.clickhouse;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

/**
 * {@link InsertErrorKind} on the answers of an HTTP server on loopback shaped like ClickHouse's, through the real
 * {@link ClickHouseHttpClient}. Reference 002, {@code TAtLeastOnceClickHouseSink}: "Known transient errors are retried
 * without a limit; unclassified errors are attempted at most max_insert_attempts times in total (10 by default), and
 * permanent errors fail immediately".
 */
class InsertErrorKindTest {
    private static final byte[] ROW = "{\"id\":\"a\"}\n".getBytes(StandardCharsets.UTF_8);

    @ParameterizedTest(name = "HTTP {0} code {1} -> {3}")
    @CsvSource({
        "500, 252, TOO_MANY_PARTS, TRANSIENT",
        "500, 202, TOO_MANY_SIMULTANEOUS_QUERIES, TRANSIENT",
        "500, 159, TIMEOUT_EXCEEDED, TRANSIENT",
        "500, 242, TABLE_IS_READ_ONLY, TRANSIENT",
        "503, 0, (no code), TRANSIENT",
        "404, 60, UNKNOWN_TABLE, PERMANENT",
        "400, 16, NO_SUCH_COLUMN_IN_TABLE, PERMANENT",
        "400, 27, CANNOT_PARSE_INPUT_ASSERTION_FAILED, PERMANENT",
        "400, 53, TYPE_MISMATCH, PERMANENT",
        "400, 62, SYNTAX_ERROR, PERMANENT",
        "500, 49, LOGICAL_ERROR, UNCLASSIFIED",
        "500, 0, (no code), UNCLASSIFIED"})
    void shouldClassifyAClickHouseErrorAnswerByItsCode(int status, int code, String name, InsertErrorKind expected)
            throws Exception {
        try (FakeClickHouse server = new FakeClickHouse();
                ClickHouseHttpClient client = new ClickHouseHttpClient(server.url(), null, null, Duration.ofSeconds(5))) {
            server.then(code == 0 ? new FakeClickHouse.Answer(status, 0, "oops") : FakeClickHouse.error(status, code, name));
            IOException e = catchThrowableOfType(IOException.class,
                    () -> client.insert("`default`.`t`", "JSONEachRow", ROW, Map.of()));
            assertThat(InsertErrorKind.of(e)).isEqualTo(expected);
            assertThat(InsertErrorKind.notSent(e)).as("the INSERT reached the server").isFalse();
        }
    }

    @Test
    void shouldTellARefusedConnectionAsTransientAndNotSent() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort(); // closed again: nothing listens there
        }
        try (ClickHouseHttpClient client = new ClickHouseHttpClient(URI.create("http://127.0.0.1:" + port), null, null,
                Duration.ofSeconds(5))) {
            IOException e = catchThrowableOfType(IOException.class,
                    () -> client.insert("`default`.`t`", "JSONEachRow", ROW, Map.of()));
            assertThat(InsertErrorKind.of(e)).isEqualTo(InsertErrorKind.TRANSIENT);
            assertThat(InsertErrorKind.notSent(e)).isTrue();
        }
    }

    @Test
    void shouldTellARequestTimeoutAsTransientButStarted() throws Exception {
        try (FakeClickHouse server = new FakeClickHouse().then(FakeClickHouse.HANG);
                ClickHouseHttpClient client = new ClickHouseHttpClient(server.url(), null, null,
                        Duration.ofMillis(300))) {
            IOException e = catchThrowableOfType(IOException.class,
                    () -> client.insert("`default`.`t`", "JSONEachRow", ROW, Map.of()));
            assertThat(InsertErrorKind.of(e)).isEqualTo(InsertErrorKind.TRANSIENT);
            assertThat(InsertErrorKind.notSent(e)).as("the INSERT was sent: it may have started").isFalse();
        }
    }
}
