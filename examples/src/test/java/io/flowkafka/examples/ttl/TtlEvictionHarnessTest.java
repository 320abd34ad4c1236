package io.flowkafka.examples.ttl;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowkafka.testing.ComputationHarness;
import io.flowkafka.testing.HarnessResult;
import java.time.Duration;
import java.util.Map;
import org.apache.avro.generic.GenericRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** {@link TtlEviction} on the unit harness: one process function, visits fed by hand, no Kafka. */
class TtlEvictionHarnessTest {
    private static final long MS = 1_000_000L;
    private static final long NOW_MS = 1_800_000_000_000L;
    private ComputationHarness harness;

    @BeforeEach
    void open() {
        harness = ComputationHarness.create(TtlPipeline.spec("ttl", "events", "totals", "7d", "1d", 1),
                TtlPipeline.COMPUTATION);
    }

    @AfterEach
    void close() {
        harness.close();
    }

    private GenericRecord event(String user, long amount, long tsMs) {
        harness.message("events", Map.of("user", user, "amount", amount, "ts", tsMs), tsMs * MS).assertSucceeded();
        return harness.keyOf("events", Map.of("user", user, "amount", amount, "ts", tsMs));
    }

    @Test
    void shouldDeleteTheStateOfAKeyOlderThanTheTtlAndEmitNothing() {
        GenericRecord stale = event("old", 5, NOW_MS - Duration.ofDays(8).toMillis());
        HarnessResult visit = harness.visit(TtlPipeline.VISITOR, stale, 0, NOW_MS * MS).assertSucceeded();
        assertThat(visit.outputs()).isEmpty();
        assertThat(visit.stateChanges()).allMatch(c -> c.cleared()).extracting(c -> c.state())
                .containsExactlyInAnyOrder("last_seen", "daily");
        assertThat(harness.state("last_seen", stale)).isEmpty();
    }

    @Test
    void shouldEmitAFreshKeysAggregateOncePerVisitAndResetIt() {
        GenericRecord fresh = event("new", 5, NOW_MS - 1000);
        event("new", 2, NOW_MS - 2000);
        HarnessResult first = harness.visit(TtlPipeline.VISITOR, fresh, 3, NOW_MS * MS).assertSucceeded();
        assertThat(first.payloads(TtlPipeline.DAILY_TOTALS)).singleElement().satisfies(t -> {
            assertThat(t.get("user").toString()).isEqualTo("new");
            assertThat(t.get("count")).isEqualTo(2L);
            assertThat(t.get("sum")).isEqualTo(7L);
            assertThat(t.get("pass")).isEqualTo(3L);
        });
        assertThat(harness.state("last_seen", fresh)).get().extracting(r -> r.get("ts")).isEqualTo(NOW_MS - 1000);
        HarnessResult second = harness.visit(TtlPipeline.VISITOR, fresh, 4, NOW_MS * MS + 1).assertSucceeded();
        assertThat(second.payloads(TtlPipeline.DAILY_TOTALS)).singleElement()
                .satisfies(t -> assertThat(t.get("count")).isEqualTo(0L));
    }
}
