package io.flowkafka.internal.streams;

import java.util.List;
import java.util.function.Function;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.processor.StateRestoreCallback;
import org.apache.kafka.streams.processor.StateStore;
import org.apache.kafka.streams.processor.StateStoreContext;
import org.apache.kafka.streams.query.Position;
import org.apache.kafka.streams.state.KeyValueBytesStoreSupplier;
import org.apache.kafka.streams.state.KeyValueStore;
import org.jspecify.annotations.Nullable;

/**
 * What flow-kafka's in-memory key-value stores share: the name, the restore from a changelog (a null value deletes),
 * open and closed, an empty position (no interactive queries), nothing to flush, and the writes that reduce to
 * {@link #put} and {@link #delete}. A subclass owns the map and its scans, and empties the map on {@link #clear()}:
 * a store closed dirty and revived by Kafka Streams is restored from its changelog alone.
 *
 * <p>Threading: owned by one stream thread (one task), as the runtime uses state stores.
 */
public abstract class MemoryStore implements KeyValueStore<Bytes, byte[]> {
    private final String name;
    private final Position position = Position.emptyPosition();
    private volatile boolean open;

    protected MemoryStore(String name) {
        this.name = name;
    }

    /**
     * A supplier of stores built by {@code factory}, for {@link org.apache.kafka.streams.state.Stores#keyValueStoreBuilder}.
     */
    public static KeyValueBytesStoreSupplier supplier(String name, Function<String, MemoryStore> factory) {
        return new KeyValueBytesStoreSupplier() {
            @Override
            public String name() {
                return name;
            }

            @Override
            public KeyValueStore<Bytes, byte[]> get() {
                return factory.apply(name);
            }

            @Override
            public String metricsScope() {
                return "in-memory";
            }
        };
    }

    /** Removes every entry (the store is closing). */
    protected abstract void clear();

    @Override
    public final String name() {
        return name;
    }

    @Override
    public final void init(StateStoreContext context, StateStore root) {
        if (root != null) {
            context.register(root, (StateRestoreCallback) (key, value) -> {
                if (value == null) {
                    delete(Bytes.wrap(key));
                } else {
                    put(Bytes.wrap(key), value);
                }
            });
        }
        open = true;
    }

    @Override
    public final boolean persistent() {
        return false;
    }

    @Override
    public final boolean isOpen() {
        return open;
    }

    @Override
    public final Position getPosition() {
        return position;
    }

    @Override
    public final byte @Nullable [] putIfAbsent(Bytes key, byte[] value) {
        byte[] before = get(key);
        if (before == null) {
            put(key, value);
        }
        return before;
    }

    @Override
    public final void putAll(List<KeyValue<Bytes, byte[]>> entries) {
        for (KeyValue<Bytes, byte[]> e : entries) {
            put(e.key, e.value);
        }
    }

    @Override
    public final void flush() {
        // in memory: nothing to write
    }

    @Override
    public final void close() {
        clear();
        open = false;
    }
}
