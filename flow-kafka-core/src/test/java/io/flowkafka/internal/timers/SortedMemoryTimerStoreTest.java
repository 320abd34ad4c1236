package io.flowkafka.internal.timers;

import java.io.File;

/** {@link TimerStore}'s contract over flow-kafka's {@link io.flowkafka.internal.streams.SortedMemoryStore}s. */
class SortedMemoryTimerStoreTest extends AbstractTimerStoreTest {
    @Override
    TimerTestStores open(File dir) {
        return TimerTestStores.sortedMemory(dir);
    }
}
