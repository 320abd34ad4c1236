package io.flowkafka.connectors.clickhouse;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.flowkafka.spi.OutboxBatch;
import io.flowkafka.spi.OutboxDeliveryException;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.ServerSocket;
import java.net.URI;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

/**
 * {@link AtMostOnceDeliverer} in queue mode (partition -1: no markers) against a loopback server answering like
 * ClickHouse. Reference 002, {@code TAtMostOnceClickHouseSink}: "In either mode, once INSERT has started, a failed
 * insert is acknowledged instead of retried. Each message generates a separate INSERT".
 */
class AtMostOnceDelivererTest {
    @Test
    void shouldInsertEachMessageSeparatelyAndAcknowledgeAFailedInsertThatStarted() throws Exception {
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        try (FakeClickHouse server = new FakeClickHouse().then(new FakeClickHouse.Answer(200, 0, ""),
                FakeClickHouse.error(500, 252, "TOO_MANY_PARTS"));
                AtMostOnceDeliverer d = new AtMostOnceDeliverer(DirectSinkFixtures.context(
                        ClickHouseDirectSinkProvider.T_AT_MOST_ONCE, server.url(), Map.of(), meters))) {
            assertThat(d.open(-1, OptionalLong.empty())).isEmpty();
            d.deliver(new OutboxBatch("ch", -1, List.of(DirectSinkFixtures.record(0, 0), DirectSinkFixtures.record(1, 1),
                    DirectSinkFixtures.record(2, 2)), 3));
            assertThat(server.inserts()).as("one INSERT per message, the failed one not retried although transient")
                    .hasSize(3).allSatisfy(b -> assertThat(b.lines()).hasSize(1));
            assertThat(meters.get("flow.sink.dropped").counter().count()).isEqualTo(1.0);
        }
    }

    @Test
    void shouldRetryWhenTheConnectionIsRefusedBeforeTheInsertStarts() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        try (AtMostOnceDeliverer d = new AtMostOnceDeliverer(DirectSinkFixtures.context(
                ClickHouseDirectSinkProvider.T_AT_MOST_ONCE, URI.create("http://127.0.0.1:" + port), Map.of(), meters))) {
            d.open(-1, OptionalLong.empty());
            OutboxDeliveryException e = catchThrowableOfType(OutboxDeliveryException.class,
                    () -> d.deliver(new OutboxBatch("ch", -1, List.of(DirectSinkFixtures.record(0, 0)), 1)));
            assertThat(e.fatal()).as("retried, not fatal").isFalse();
            assertThat(meters.get("flow.sink.dropped").counter().count()).isZero();
        }
    }

    @Test
    void shouldInsertTwoMessagesWithEqualRowsIntoAReplicatedTable() throws Exception {
        // "Each message generates a separate INSERT": a message whose row equals an earlier one is inserted too, not
        // dropped by the Replicated table's block deduplication
        URI url = ClickHouseTestServer.url();
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        try (ClickHouseHttpClient ch = ClickHouseTestServer.client()) {
            ClickHouseTestServer.createReplicated(ch, "amo_equal_rows", "id String, user String, n Int64");
            try (AtMostOnceDeliverer d = new AtMostOnceDeliverer(DirectSinkFixtures.context(
                    ClickHouseDirectSinkProvider.T_AT_MOST_ONCE, url, Map.of("table", "amo_equal_rows"), meters))) {
                d.open(-1, OptionalLong.empty());
                d.deliver(new OutboxBatch("ch", -1, List.of(DirectSinkFixtures.record(0, 7),
                        DirectSinkFixtures.record(1, 7)), 2));
            }
            assertThat(ch.query("SELECT count() FROM default.amo_equal_rows").strip()).isEqualTo("2");
            assertThat(meters.get("flow.sink.dropped").counter().count()).isZero();
        }
    }

    /**
     * Docs/code audit: a message_id_column that is also a field of the stream gave every row the column twice, which
     * ClickHouse refuses: an at-most-once sink dropped every message, an at-least-once one stopped the pipeline.
     */
    @Test
    void shouldRefuseAMessageIdColumnThatIsAlsoAFieldOfTheStream() {
        for (String sinkClass : List.of(ClickHouseDirectSinkProvider.T_AT_MOST_ONCE,
                ClickHouseDirectSinkProvider.T_AT_LEAST_ONCE)) {
            IllegalArgumentException e = catchThrowableOfType(() -> new DirectTarget(DirectSinkFixtures.context(
                    sinkClass, URI.create("http://127.0.0.1:1"), Map.of("message_id_column", "id"),
                    new SimpleMeterRegistry())), IllegalArgumentException.class);
            assertThat(e).as(sinkClass).hasMessageContaining("message_id_column 'id' is also a field of stream events");
        }
    }
}
