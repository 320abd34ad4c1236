package io.flowkafka.internal.timers;

import java.io.File;

/**
 * {@link TimerStore}'s contract over RocksDB stores behind flow-kafka's write-back cache
 * ({@code WriteBackStore}), as the compiler builds a computation's timer stores: scans merge the cache's
 * unflushed timers with RocksDB's. The cache is small (16 KiB per store), so it also evicts while the
 * tests run.
 */
class CachedRocksDbTimerStoreTest extends AbstractTimerStoreTest {
    @Override
    TimerTestStores open(File dir) {
        return TimerTestStores.cachedRocksDb(dir, 16 * 1024);
    }
}
