package io.flowkafka.internal.timers;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@link TimerStore}'s contract over Kafka Streams' RocksDB key-value stores, reopened from disk. */
class RocksDbTimerStoreTest extends AbstractTimerStoreTest {
    @Override
    TimerTestStores open(File dir) {
        return TimerTestStores.rocksDb(dir);
    }

    /**
     * "Scans over stores that see many deletes ... resume from a remembered position instead of
     * walking tombstones from the start" (DESIGN.md): with 200k fresh tombstones at the start of
     * stream 1, a stream 0 that empties after every timer fires quickly, because its seeks stop at
     * its end mark instead of walking stream 1's tombstones (seconds when they did).
     */
    @Test
    void shouldNotWalkTheNextStreamsTombstonesWhenAStreamEmpties() {
        for (int i = 0; i < 200_000; i++) {
            timers.add(timer(ALL_STREAM, "k" + (i % 100), i, i));
        }
        timers.commitCall();
        assertThat(fireAll(ALL_STREAM, Long.MAX_VALUE, 1_000)).hasSize(200_000);
        addAndCommit(timer(ALL_STREAM, "live", 1_000_000, 1_000_000));

        long start = System.nanoTime();
        for (int i = 0; i < 1_000; i++) {
            addAndCommit(timer(DEDUP_STREAM, "k", i, i));
            List<PendingTimer> due = timers.due(DEDUP_STREAM, Long.MAX_VALUE, 10);
            assertThat(due).hasSize(1);
            timers.delete(due.get(0));
            timers.commitCall();
            assertThat(timers.minPendingEventTimestamp()).isEqualTo(1_000_000);
            assertThat(timers.due(DEDUP_STREAM, Long.MAX_VALUE, 10)).isEmpty();
        }
        long millis = (System.nanoTime() - start) / 1_000_000;
        assertThat(millis).as("1000 add-fire rounds on an emptying stream took %d ms", millis).isLessThan(3_000);
    }
}
