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
}
