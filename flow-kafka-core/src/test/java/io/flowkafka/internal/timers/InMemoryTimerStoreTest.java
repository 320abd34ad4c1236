package io.flowkafka.internal.timers;

import java.io.File;

/** {@link TimerStore}'s contract over Kafka Streams' in-memory key-value stores. */
class InMemoryTimerStoreTest extends AbstractTimerStoreTest {
    @Override
    TimerTestStores open(File dir) {
        return TimerTestStores.inMemory(dir);
    }
}
