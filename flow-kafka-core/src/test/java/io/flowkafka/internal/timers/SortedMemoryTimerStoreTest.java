package io.flowkafka.internal.timers;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowkafka.internal.streams.SortedMemoryStore;
import java.io.File;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@link TimerStore}'s contract over flow-kafka's {@link SortedMemoryStore}s. */
class SortedMemoryTimerStoreTest extends AbstractTimerStoreTest {
    @Override
    TimerTestStores open(File dir) {
        return TimerTestStores.sortedMemory(dir);
    }

    /**
     * A watermark that passes one timer per record (the wait-click join) is served from the timers read ahead:
     * a seek per {@link TimerStore#READ_AHEAD} timers, not one per step, and no seek to find the next trigger.
     */
    @Test
    void shouldFireTimersOneStepAtATimeFromTheReadAhead() {
        int n = 1_000;
        for (int i = 0; i < n; i++) {
            addAndCommit(timer(DEDUP_STREAM, "k" + i, 10 + i, 10 + i));
        }
        SortedMemoryStore store = SortedMemoryStore.find(stores.timers);
        long before = store.scansOpened();
        for (int i = 0; i < n; i++) {
            List<PendingTimer> due = timers.due(DEDUP_STREAM, 11 + i, 256);
            assertThat(due).as("step %d", i).hasSize(1);
            assertThat(due.get(0).triggerTs()).isEqualTo(10 + i);
            timers.delete(due.get(0));
            timers.commitCall();
            assertThat(timers.due(DEDUP_STREAM, 11 + i, 256)).isEmpty();
            assertThat(timers.minPendingTriggerTimestamp(DEDUP_STREAM)).isEqualTo(i + 1 < n ? 11 + i : Long.MAX_VALUE);
        }
        assertThat(store.scansOpened() - before).as("seeks for %d steps", n)
                .isLessThanOrEqualTo(2L * n / TimerStore.READ_AHEAD + 4);
    }

    /**
     * Timers added in trigger order (event-time timers at a constant delay) lie above every stored one: no
     * deduplication read. One that ties with a stored timer is still read and deduplicated.
     */
    @Test
    void shouldAddTimersAboveTheLargestWithoutAReadAndStillDeduplicate() {
        SortedMemoryStore store = SortedMemoryStore.find(stores.timers);
        addAndCommit(timer(DEDUP_STREAM, "k0", 10, 5));
        long before = store.gets();
        for (int i = 1; i <= 500; i++) {
            addAndCommit(timer(DEDUP_STREAM, "k" + i, 10 + i, 5));
        }
        assertThat(store.gets() - before).as("reads for 500 adds in trigger order").isZero();

        addAndCommit(timer(DEDUP_STREAM, "k7", 17, 3)); // same key and trigger, smaller event time: replaces
        addAndCommit(timer(DEDUP_STREAM, "k8", 18, 9)); // larger event time: the stored one stays
        assertThat(store.gets() - before).isEqualTo(2);
        List<PendingTimer> due = timers.due(DEDUP_STREAM, 19, 256);
        assertThat(due).extracting(PendingTimer::triggerTs).containsExactly(10L, 11L, 12L, 13L, 14L, 15L, 16L, 17L, 18L);
        assertThat(due.get(7).eventTs()).isEqualTo(3);
        assertThat(due.get(8).eventTs()).isEqualTo(5);
    }
}
