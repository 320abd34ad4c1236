package io.flowkafka.connectors.clickhouse;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.flowkafka.spi.OutboxDeliveryException;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.URI;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * {@link AtLeastOnceWriter}'s retries against a loopback server answering like ClickHouse. Reference 002,
 * {@code TAtLeastOnceClickHouseSink}: "A failed write prevents the epoch from committing, so messages are not lost.
 * Known transient errors are retried without a limit; unclassified errors are attempted at most max_insert_attempts
 * times in total (10 by default), and permanent errors fail immediately."
 */
class AtLeastOnceWriterTest {
    private static AtLeastOnceWriter writer(FakeClickHouse server, Map<String, Object> params) {
        return new AtLeastOnceWriter(DirectSinkFixtures.context(ClickHouseDirectSinkProvider.T_AT_LEAST_ONCE,
                server.url(), params, new SimpleMeterRegistry()));
    }

    @Test
    void shouldRetryTransientErrorsUntilTheEpochsRowsAreInsertedOnce() throws Exception {
        try (FakeClickHouse server = new FakeClickHouse().then(FakeClickHouse.error(500, 252, "TOO_MANY_PARTS"),
                FakeClickHouse.error(500, 202, "TOO_MANY_SIMULTANEOUS_QUERIES"),
                FakeClickHouse.error(500, 252, "TOO_MANY_PARTS"));
                AtLeastOnceWriter w = writer(server, Map.of("max_insert_attempts", 2))) {
            w.write(0, DirectSinkFixtures.record(0, 0));
            w.write(0, DirectSinkFixtures.record(1, 1));
            w.flush(0);
            assertThat(server.inserts()).as("3 transient failures do not count against max_insert_attempts 2")
                    .hasSize(4).allSatisfy(body -> assertThat(body.lines()).hasSize(2));
            w.flush(0);
            assertThat(server.inserts()).as("nothing new to write").hasSize(4);
        }
    }

    @Test
    void shouldStopThePipelineAfterMaxInsertAttemptsUnclassifiedFailuresInTotal() throws Exception {
        try (FakeClickHouse server = new FakeClickHouse().then(FakeClickHouse.error(500, 49, "LOGICAL_ERROR"),
                FakeClickHouse.error(500, 49, "LOGICAL_ERROR"), FakeClickHouse.error(500, 49, "LOGICAL_ERROR"));
                AtLeastOnceWriter w = writer(server, Map.of("max_insert_attempts", 3))) {
            w.write(1, DirectSinkFixtures.record(0, 0));
            OutboxDeliveryException e = catchThrowableOfType(OutboxDeliveryException.class, () -> w.flush(1));
            assertThat(e.fatal()).isTrue();
            assertThat(e).hasMessageContaining("after 3 attempt(s) in total (max_insert_attempts 3)");
            assertThat(server.inserts()).hasSize(3);
        }
    }

    @Test
    void shouldCountUnclassifiedAttemptsUntilASuccessResetsThem() throws Exception {
        try (FakeClickHouse server = new FakeClickHouse().then(FakeClickHouse.error(500, 49, "LOGICAL_ERROR"),
                FakeClickHouse.error(500, 49, "LOGICAL_ERROR"));
                AtLeastOnceWriter w = writer(server, Map.of("max_insert_attempts", 3))) {
            w.write(2, DirectSinkFixtures.record(0, 0));
            w.flush(2); // 2 unclassified failures, the third attempt succeeds
            assertThat(server.inserts()).hasSize(3);
            assertThat(w.unclassifiedAttempts(2)).isZero();
            server.then(FakeClickHouse.error(500, 49, "LOGICAL_ERROR"), FakeClickHouse.error(500, 49, "LOGICAL_ERROR"));
            w.write(2, DirectSinkFixtures.record(1, 1));
            w.flush(2); // again 2 failures: the count started over after the success
            assertThat(server.inserts()).hasSize(6);
        }
    }

    @Test
    void shouldNotWriteTheRowsOfATaskThatClosedWithoutCommittingThem() throws Exception {
        try (FakeClickHouse server = new FakeClickHouse();
                AtLeastOnceWriter w = writer(server, Map.of())) {
            w.write(0, DirectSinkFixtures.record(0, 0));
            w.write(1, DirectSinkFixtures.record(1, 1));
            w.discard(0); // task 0's epoch aborted: its replay writes record 0 again
            w.write(0, DirectSinkFixtures.record(2, 2));
            w.flush(0);
            w.flush(1);
            assertThat(server.inserts()).hasSize(2);
            assertThat(server.inserts().get(0).lines()).hasSize(1).allSatisfy(l -> assertThat(l).contains("\"n\":2"));
            assertThat(server.inserts().get(1).lines()).hasSize(1).allSatisfy(l -> assertThat(l).contains("\"n\":1"));
        }
    }

    @Test
    void shouldFailAtOnceOnAPermanentError() throws Exception {
        try (FakeClickHouse server = new FakeClickHouse().then(FakeClickHouse.error(400, 16, "NO_SUCH_COLUMN_IN_TABLE"));
                AtLeastOnceWriter w = writer(server, Map.of())) {
            w.write(0, DirectSinkFixtures.record(0, 0));
            OutboxDeliveryException e = catchThrowableOfType(OutboxDeliveryException.class, () -> w.flush(0));
            assertThat(e.fatal()).isTrue();
            assertThat(e).hasMessageContaining("permanent").hasMessageContaining("Code: 16");
            assertThat(server.inserts()).hasSize(1);
        }
    }

    @Test
    void shouldKeepEachTasksRowsToItsOwnFlush() throws Exception {
        try (FakeClickHouse server = new FakeClickHouse(); AtLeastOnceWriter w = writer(server, Map.of())) {
            w.write(0, DirectSinkFixtures.record(0, 0));
            w.write(1, DirectSinkFixtures.record(0, 1));
            w.write(0, DirectSinkFixtures.record(1, 2));
            w.flush(1);
            assertThat(server.inserts()).singleElement().satisfies(b -> assertThat(b).contains("\"e1\"")
                    .doesNotContain("\"e0\""));
            w.flush(0);
            assertThat(server.inserts()).hasSize(2);
            assertThat(server.inserts().get(1).lines()).hasSize(2);
        }
    }

    @Test
    void shouldKeepEqualRowsOfTwoEpochsInAReplicatedTable() throws Exception {
        // at least once: a message is never lost, also one whose row equals an earlier one (ClickHouse drops an
        // INSERT whose block equals an earlier one in a Replicated table unless insert_deduplicate is off)
        URI url = ClickHouseTestServer.url();
        try (ClickHouseHttpClient ch = ClickHouseTestServer.client()) {
            ClickHouseTestServer.createReplicated(ch, "alo_equal_rows", "id String, user String, n Int64");
            try (AtLeastOnceWriter w = new AtLeastOnceWriter(DirectSinkFixtures.context(
                    ClickHouseDirectSinkProvider.T_AT_LEAST_ONCE, url, Map.of("table", "alo_equal_rows"),
                    new SimpleMeterRegistry()))) {
                w.write(0, DirectSinkFixtures.record(0, 7));
                w.flush(0);
                w.write(0, DirectSinkFixtures.record(1, 7)); // another message, the same columns
                w.flush(0);
            }
            assertThat(ch.query("SELECT count() FROM default.alo_equal_rows").strip()).isEqualTo("2");
        }
    }
}
