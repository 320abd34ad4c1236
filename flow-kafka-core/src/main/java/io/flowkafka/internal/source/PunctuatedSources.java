package io.flowkafka.internal.source;

import io.flowkafka.spec.SourceSpec;
import io.flowkafka.spi.PunctuatedSource;
import io.flowkafka.spi.SourceProvider;
import java.nio.charset.StandardCharsets;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.StoreBuilder;
import org.apache.kafka.streams.state.Stores;
import org.jspecify.annotations.Nullable;

/**
 * Sources read by a {@link PunctuatedSource} of their provider (no topic): which they are, and the changelogged store
 * holding their progress, keyed by {@code stream \0 key}.
 */
public final class PunctuatedSources {
    private PunctuatedSources() {
    }

    /** The punctuated reader of {@code source}'s provider, or null for a topic source. */
    public static @Nullable PunctuatedSource of(SourceSpec source) {
        SourceProvider p = Sources.provider(source.sourceClassName());
        return p == null ? null : p.punctuated();
    }

    /** Whether {@code source} is read on a punctuation, not from topics. */
    public static boolean is(SourceSpec source) {
        return of(source) != null;
    }

    /** The name of a computation's progress store (also names its changelog topic). */
    public static String storeName(String computationId) {
        return computationId + ".punctuated_source_progress";
    }

    /** A builder of a computation's changelogged progress store. */
    public static StoreBuilder<KeyValueStore<Bytes, byte[]>> storeBuilder(String computationId, boolean persistent) {
        var supplier = persistent ? Stores.persistentKeyValueStore(storeName(computationId))
                : Stores.inMemoryKeyValueStore(storeName(computationId));
        return Stores.keyValueStoreBuilder(supplier, Serdes.Bytes(), Serdes.ByteArray())
                .withLoggingEnabled(java.util.Map.of());
    }

    /** The progress of one source over the computation's store. */
    public static PunctuatedSource.Progress progress(KeyValueStore<Bytes, byte[]> store, String stream) {
        return new PunctuatedSource.Progress() {
            @Override
            public byte @Nullable [] get(String key) {
                return store.get(key(stream, key));
            }

            @Override
            public void put(String key, byte[] value) {
                store.put(key(stream, key), value);
            }
        };
    }

    private static Bytes key(String stream, String key) {
        return Bytes.wrap((stream + "\u0000" + key).getBytes(StandardCharsets.UTF_8));
    }
}
