package io.flowkafka.examples.waitclick;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowkafka.spec.PipelineSpec;
import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.Test;

/**
 * Every test of {@link WaitClickJoinTest} on the keyed-source join with the stores of a deployment: RocksDB behind
 * flow-kafka's write-back store cache (with changelogs), on FlowTestDriver, which commits after every record.
 */
class CachedRocksDbWaitClickJoinTest extends WaitClickJoinTest {
    private static final long MIN = 60_000L;

    @Override
    protected PipelineSpec spec() {
        return WaitClickJoin.keyedSpec("wcj", "impressions", "clicks", "results", false);
    }

    @Override
    protected Properties props() {
        Properties p = new Properties();
        p.put("flow.state.stores", "rocksdb");
        p.put("flow.testing.store.changelogs", "true");
        p.put("statestore.cache.max.bytes", "1048576");
        return p;
    }

    private double counter(String name, String store) {
        return driver.meterRegistry().find(name).tag("store", store).functionCounters().stream()
                .mapToDouble(io.micrometer.core.instrument.FunctionCounter::count).sum();
    }

    /**
     * A late impression (its wait already over by the watermark) gets its result in the same commit interval that
     * stored its state and timer: the cache writes neither, and its counters say so.
     */
    @Test
    void shouldWriteNothingForAStateAndTimerCreatedAndRemovedInOneCommit() {
        impression("early", 0);
        watermarksTo(2 * 60 * MIN);
        assertThat(results()).containsExactly(Map.entry("early", "no_click"));
        double skippedStates = counter("flow.store.cache.skipped", "join.state");
        double skippedTimers = counter("flow.store.cache.skipped", "join.timers");
        double writtenTimers = counter("flow.store.cache.written", "join.timers");
        assertThat(writtenTimers).as("the early impression's timer outlived a commit: written").isPositive();

        impression("late", 10 * MIN); // due at once: the watermark is past 40 minutes
        assertThat(results()).containsExactly(Map.entry("late", "no_click"));
        assertThat(counter("flow.store.cache.skipped", "join.timers")).isGreaterThan(skippedTimers);
        assertThat(counter("flow.store.cache.skipped", "join.state")).isGreaterThan(skippedStates);
        assertThat(counter("flow.store.cache.written", "join.timers")).as("nothing written for the late one")
                .isEqualTo(writtenTimers);
    }
}
