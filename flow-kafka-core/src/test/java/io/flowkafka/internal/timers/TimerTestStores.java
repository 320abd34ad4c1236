package io.flowkafka.internal.timers;

import java.io.File;
import java.util.Properties;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.processor.StateStoreContext;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.api.MockProcessorContext;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;

/**
 * A computation's two timer stores outside a topology, opened on {@link MockProcessorContext}'s
 * store context: in memory, or RocksDB in a directory (reopenable, as after a restart).
 * Not thread-safe.
 */
final class TimerTestStores implements AutoCloseable {
    static final String COMPUTATION = "comp";

    private final boolean persistent;
    /** In memory: flow-kafka's {@link io.flowkafka.internal.streams.SortedMemoryStore} (as compiled) or Kafka's. */
    private final boolean sortedMemory;
    private final long cacheBytes;
    private final File stateDir;
    KeyValueStore<Bytes, byte[]> timers;
    KeyValueStore<Bytes, byte[]> holds;

    private TimerTestStores(boolean persistent, File stateDir) {
        this(persistent, false, -1, stateDir);
    }

    private TimerTestStores(boolean persistent, boolean sortedMemory, long cacheBytes, File stateDir) {
        this.persistent = persistent;
        this.sortedMemory = sortedMemory;
        this.cacheBytes = cacheBytes;
        this.stateDir = stateDir;
        open();
    }

    static TimerTestStores inMemory(File stateDir) {
        return new TimerTestStores(false, stateDir);
    }

    /** In memory, on the stores the compiler builds: {@link io.flowkafka.internal.streams.SortedMemoryStore}. */
    static TimerTestStores sortedMemory(File stateDir) {
        return new TimerTestStores(false, true, -1, stateDir);
    }

    static TimerTestStores rocksDb(File stateDir) {
        return new TimerTestStores(true, stateDir);
    }

    /**
     * RocksDB stores behind flow-kafka's write-back cache of {@code cacheBytes} per store, as the compiler
     * builds them; closing flushes the cache first, as a task's commit does.
     */
    static TimerTestStores cachedRocksDb(File stateDir, long cacheBytes) {
        return new TimerTestStores(true, false, cacheBytes, stateDir);
    }

    boolean persistent() {
        return persistent;
    }

    /** Closes and reopens RocksDB stores from disk; in-memory stores stay as they are. */
    void reopen() {
        if (persistent) {
            close();
            open();
        }
    }

    private void open() {
        Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, "timers-test");
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "unused:9092");
        MockProcessorContext<Object, Object> context = new MockProcessorContext<>(props, new TaskId(0, 0), stateDir);
        StateStoreContext storeContext = context.getStateStoreContext();
        timers = open(TimerStore.timersStoreName(COMPUTATION), storeContext);
        holds = open(TimerStore.holdsStoreName(COMPUTATION), storeContext);
    }

    private KeyValueStore<Bytes, byte[]> open(String name, StateStoreContext context) {
        KeyValueStore<Bytes, byte[]> store = persistent
                ? Stores.persistentKeyValueStore(name).get()
                : sortedMemory ? io.flowkafka.internal.streams.SortedMemoryStore.supplier(name).get()
                : Stores.inMemoryKeyValueStore(name).get();
        if (cacheBytes >= 0) {
            store = io.flowkafka.internal.streams.WriteBackStore.wrap(store,
                    new io.flowkafka.internal.streams.WriteBackStore.Budget(cacheBytes), true);
        }
        store.init(context, store);
        return store;
    }

    @Override
    public void close() {
        if (timers instanceof io.flowkafka.internal.streams.WriteBackStore cached) {
            cached.flushCache();
            ((io.flowkafka.internal.streams.WriteBackStore) holds).flushCache();
        }
        timers.close();
        holds.close();
    }
}
