package io.flowkafka.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flowkafka.api.Timer;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Map;
import org.apache.avro.generic.GenericRecord;
import org.junit.jupiter.api.Test;

/**
 * Issue 23 part 6: {@link FlowTestDriver} takes a key as the user's key columns wherever it asks for one, the
 * uint64 {@code farm_hash} column computed as the runtime computes it. The pipeline of
 * {@link DriverPipeThenAssertTest}: {@code delay} and {@code count} are keyed by
 * {@code [hash = farm_hash(key), key]}.
 */
class DriverKeyColumnsTest {
    private static final Instant T0 = FlowTestDriver.DEFAULT_WALL_CLOCK_START;

    private static void pipeAt(FlowTestDriver driver, String key, Instant eventTime) {
        driver.pipeSource("in", key.getBytes(StandardCharsets.UTF_8),
                ("{\"key\":\"" + key + "\",\"ts\":" + eventTime.toEpochMilli() + "}").getBytes(StandardCharsets.UTF_8),
                eventTime);
    }

    @Test
    void shouldFindTimersAndStatesByTheKeyColumnsWithTheHashComputedAsTheRuntimeDoes() {
        try (FlowTestDriver driver = FlowTestDriver.create(DriverPipeThenAssertTest.spec(0))) {
            pipeAt(driver, "a", T0);
            pipeAt(driver, "b", T0.plusSeconds(30));
            pipeAt(driver, "c", T0.plusSeconds(61)); // fires a's timer

            assertThat(driver.pendingTimers("delay", Map.of("key", "b"))).singleElement()
                    .satisfies(t -> assertThat(t.getTriggerTimestamp())
                            .isEqualTo(FlowTestDriver.nanosOf(T0.plusSeconds(90))));
            assertThat(driver.pendingTimers("delay", Map.of("key", "a"))).as("fired").isEmpty();
            Timer b = driver.pendingTimers("delay").stream()
                    .filter(t -> t.getKey().get("key").toString().equals("b")).findFirst().orElseThrow();
            GenericRecord key = driver.key("delay", Map.of("key", "b"));
            assertThat(key.get("hash")).as("the runtime's farm_hash of the key column").isEqualTo(b.getKey().get("hash"));
            assertThat(key.get("key")).isEqualTo("b");

            assertThat(driver.state("count", "count", Map.of("key", "a")))
                    .hasValueSatisfying(r -> assertThat(r.get("n")).isEqualTo(1L));
            assertThat(driver.state("count", "count", Map.of("key", "b"))).isEmpty();
            assertThat(driver.stateForPayload("count", "count", "fired", Map.of("key", "a")))
                    .as("only the fields the key reads: no dummy 'trigger'")
                    .hasValueSatisfying(r -> assertThat(r.get("n")).isEqualTo(1L));
            assertThat(driver.state("count", "count", driver.key("count", Map.of("key", "a", "hash", key.get("hash")))))
                    .as("a hash given is taken as is (here the wrong one)").isEmpty();
        }
    }

    @Test
    void shouldRejectKeyColumnsThatDoNotMakeAKey() {
        try (FlowTestDriver driver = FlowTestDriver.create(DriverPipeThenAssertTest.spec(0))) {
            assertThatThrownBy(() -> driver.key("delay", Map.of("user", "a")))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("computation 'delay' has no key column 'user'")
                    .hasMessageContaining("[hash, key]");
            assertThatThrownBy(() -> driver.pendingTimers("delay", Map.of()))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("key column 'hash' of computation 'delay' is computed as farm_hash(key)");
            assertThatThrownBy(() -> driver.state("count", "count", Map.of("key", 7L)))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("key column 'key' of computation 'count' is string");
            assertThatThrownBy(() -> driver.stateForPayload("count", "count", "fired", Map.of("trigger", 1L)))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("reads fields [key]");
        }
    }
}
