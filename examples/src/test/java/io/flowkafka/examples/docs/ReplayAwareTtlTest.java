package io.flowkafka.examples.docs;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowkafka.testing.ComputationHarness;
import io.flowkafka.testing.HarnessResult;
import java.time.Duration;
import java.util.Map;
import org.apache.avro.generic.GenericRecord;
import org.junit.jupiter.api.Test;

/** {@link ReplayAwareTtl}: late messages dropped, keys expired by the input watermark, not the wall clock. */
class ReplayAwareTtlTest {
    private static final long MS = 1_000_000L;
    /** 2020-01-01T00:00Z: replayed data, years behind the wall clock. */
    private static final long REPLAYED_MS = 1_577_836_800_000L;

    @Test
    void shouldDropLateMessagesAndExpireKeysByTheWatermark() {
        try (ComputationHarness ttl = ComputationHarness.create(ReplayAwareTtl.spec("docs", "events", "on-time"), "ttl")) {
            // tag::harness[]
            ttl.setInputWatermark("events", (REPLAYED_MS + 60_000) * MS);
            HarnessResult late = ttl.message("events", Map.of("user", "alice", "ts", REPLAYED_MS), REPLAYED_MS * MS);
            assertThat(late.outputs()).as("behind the watermark: dropped").isEmpty();

            long onTimeMs = REPLAYED_MS + 120_000;
            HarnessResult onTime = ttl.message("events", Map.of("user", "alice", "ts", onTimeMs), onTimeMs * MS);
            assertThat(onTime.outputs("on_time")).singleElement()
                    .satisfies(o -> assertThat(o.get("ts")).isEqualTo(onTimeMs));
            // end::harness[]

            GenericRecord alice = onTime.key();
            long wallClock = System.currentTimeMillis() * MS;
            ttl.visit("evict", alice, 0, wallClock).assertSucceeded();
            assertThat(ttl.state("last_seen", alice)).as("kept: the replay's watermark is within the TTL").isPresent();

            ttl.setInputWatermark("events", onTimeMs * MS + ReplayAwareTtl.TTL.plus(Duration.ofMinutes(1)).toNanos());
            ttl.visit("evict", alice, 1, wallClock).assertSucceeded();
            assertThat(ttl.state("last_seen", alice)).as("expired once the watermark passed the TTL").isEmpty();
        }
    }
}
