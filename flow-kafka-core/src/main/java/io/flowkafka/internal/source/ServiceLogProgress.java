package io.flowkafka.internal.source;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.StoreBuilder;
import org.apache.kafka.streams.state.Stores;
import org.jspecify.annotations.Nullable;

/**
 * The read progress of a task's service-log sources, in a changelogged store keyed by source stream: the cycle,
 * when it started, how many rows the task emitted in all (its message ids), and the last key emitted in the cycle.
 *
 * <p>Rule kept: progress is written in the transaction of the calls it covers, so after a crash a cycle resumes
 * after the last committed row, and every row is emitted once per cycle.
 *
 * <p>Value layout: {@code cycle (8) | cycleStartMs (8) | emitted (8) | lastKey (rest; empty: the cycle's start)}.
 */
final class ServiceLogProgress {
    /**
     * One source's progress.
     *
     * @param cycle the cycle being read, from 0
     * @param cycleStartMs the wall clock when the cycle started
     * @param emitted rows emitted by the task over all cycles (the next row's message id)
     * @param lastKey the last key emitted in this cycle; empty at its start
     */
    record Position(long cycle, long cycleStartMs, long emitted, byte[] lastKey) {
    }

    private final KeyValueStore<Bytes, byte[]> store;

    ServiceLogProgress(KeyValueStore<Bytes, byte[]> store) {
        this.store = store;
    }

    /** The progress of {@code stream}; null before its first read. */
    @Nullable Position load(String stream) {
        byte[] v = store.get(key(stream));
        if (v == null) {
            return null;
        }
        ByteBuffer b = ByteBuffer.wrap(v);
        long cycle = b.getLong();
        long start = b.getLong();
        long emitted = b.getLong();
        byte[] last = new byte[b.remaining()];
        b.get(last);
        return new Position(cycle, start, emitted, last);
    }

    void save(String stream, Position p) {
        store.put(key(stream), ByteBuffer.allocate(24 + p.lastKey().length).putLong(p.cycle()).putLong(p.cycleStartMs())
                .putLong(p.emitted()).put(p.lastKey()).array());
    }

    private static Bytes key(String stream) {
        return Bytes.wrap(stream.getBytes(StandardCharsets.UTF_8));
    }

    /** The name of a computation's progress store (also names its changelog topic). */
    static String storeName(String computationId) {
        return computationId + ".service_log_progress";
    }

    /** A builder of the changelogged progress store. */
    static StoreBuilder<KeyValueStore<Bytes, byte[]>> storeBuilder(String computationId, boolean persistent) {
        var supplier = persistent ? Stores.persistentKeyValueStore(storeName(computationId))
                : Stores.inMemoryKeyValueStore(storeName(computationId));
        return Stores.keyValueStoreBuilder(supplier, Serdes.Bytes(), Serdes.ByteArray())
                .withLoggingEnabled(java.util.Map.of());
    }
}
