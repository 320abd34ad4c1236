package io.flowkafka.connectors.clickhouse;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link ClickHouseHttpClient} against the real server {@code .ci/services} starts, and against {@link FakeClickHouse}
 * for an answer the real server cannot be made to stall.
 */
class ClickHouseHttpClientTest {
    @Test
    void shouldQueryInsertAndDeduplicateAByteIdenticalBlockInReplicatedMergeTree() throws Exception {
        try (ClickHouseHttpClient c = ClickHouseTestServer.client()) {
            assertThat(ServerVersion.parse(c.query("SELECT version()")).major()).isPositive();
            ClickHouseTestServer.createReplicated(c, "client_dedup", "id String, n Int64");
            byte[] rows = "{\"id\":\"a\",\"n\":1}\n{\"id\":\"b\",\"n\":2}\n".getBytes(StandardCharsets.UTF_8);
            c.insert("default.client_dedup", "JSONEachRow", rows, Map.of());
            c.insert("default.client_dedup", "JSONEachRow", rows, Map.of()); // the replay of the same block
            assertThat(c.query("SELECT id, n FROM default.client_dedup ORDER BY id")).isEqualTo("a\t1\nb\t2\n");
            c.insert("default.client_dedup", "JSONEachRow",
                    "{\"id\":\"c\",\"n\":3}\n".getBytes(StandardCharsets.UTF_8), Map.of());
            assertThat(c.query("SELECT count() FROM default.client_dedup").strip()).isEqualTo("3");
        }
    }

    @Test
    void shouldTellAPermanentErrorWithItsCode() throws Exception {
        try (ClickHouseHttpClient c = ClickHouseTestServer.client()) {
            assertThatThrownBy(() -> c.query("SELECT * FROM default.no_such_table_ch"))
                    .isInstanceOfSatisfying(ClickHouseException.class, e -> {
                        assertThat(e.code()).isEqualTo(60);
                        assertThat(e.permanent()).isTrue();
                        assertThat(e.getMessage()).contains("no_such_table_ch");
                    });
        }
    }

    @Test
    @Timeout(30)
    void shouldTimeOutAnInsertWhoseAnswerStallsAfterItsHeaders() throws Exception {
        try (FakeClickHouse fake = new FakeClickHouse().then(FakeClickHouse.STALL);
                ClickHouseHttpClient c = new ClickHouseHttpClient(fake.url(), "default", "", Duration.ofMillis(300))) {
            assertThatThrownBy(() -> c.insert("default.t", "JSONEachRow", "{}\n".getBytes(StandardCharsets.UTF_8),
                    Map.of())).isInstanceOf(HttpTimeoutException.class).hasMessageContaining("PT0.3S");
            assertThat(fake.inserts()).hasSize(1);
        }
    }

    @Test
    void shouldSendSettingsAsUrlParametersInKeyOrder() {
        try (ClickHouseHttpClient c = new ClickHouseHttpClient(java.net.URI.create("http://h:8123"), null, null,
                java.time.Duration.ofSeconds(1))) {
            assertThat(c.insertUri("`d`.`t`", "JSONEachRow", Map.of("insert_deduplication_token", "7:1", "a", "b"))
                    .toString()).isEqualTo("http://h:8123/?a=b&insert_deduplication_token=7%3A1"
                            + "&query=INSERT+INTO+%60d%60.%60t%60+FORMAT+JSONEachRow");
        }
    }

    @Test
    void shouldParseVersionsAndKnowWhichHaveTheDedupToken() {
        assertThat(ServerVersion.parse("18.16.1\n").hasDedupToken()).isFalse();
        assertThat(ServerVersion.parse("22.1.3.7").hasDedupToken()).isFalse();
        assertThat(ServerVersion.parse("22.2.2.1").hasDedupToken()).isTrue();
        assertThat(ServerVersion.parse("24.8.4.13").hasDedupToken()).isTrue();
        assertThatThrownBy(() -> ServerVersion.parse("x")).isInstanceOf(IllegalArgumentException.class);
    }
}
