package io.flowkafka.internal.external;

import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueBytesStoreSupplier;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.StoreBuilder;
import org.apache.kafka.streams.state.Stores;
import org.jspecify.annotations.Nullable;

/**
 * The Kafka Streams global store of one external table topic: every reader of the table in the pipeline
 * (joiners, state joiners, key visitors' {@code external_names}, the service-log source) reads this one store.
 *
 * <p>Rules kept: one global store per distinct topic (Kafka Streams lets a topic feed one source); the store
 * key is the topic's record key and the value its record value, a null value deleting the row, so a plain
 * table is keyed by the encoded group-by key (hash first: a hash range is a key range) and a versioned
 * reference keeps its {@link VersionedKeys} layout. The store has no changelog: the topic is its changelog,
 * and Kafka Streams 4.4 restores a global store by reprocessing the topic through this processor
 * ({@code GlobalStateManagerImpl.reprocessState}, pinned in {@code KafkaStreamsInternalsTest}), so restored
 * and live rows are copied the same way. Under {@code exactly_once_v2} the global consumer reads
 * {@code read_committed} (also pinned): an aborted call's rows are never seen.
 */
public final class TableStore {
    private TableStore() {
    }

    /** The name of the global store over {@code topic}. */
    public static String storeName(String topic) {
        return "external." + topic;
    }

    /** The source node name of the global store over {@code topic}. */
    static String sourceName(String topic) {
        return "external.source." + topic;
    }

    /** The processor name of the global store over {@code topic}. */
    static String processorName(String topic) {
        return "external.copy." + topic;
    }

    /**
     * Adds the global store of {@code topic} to {@code topology}.
     *
     * @param persistent RocksDB (true) or in memory (tests, benchmarks)
     */
    public static void addTo(Topology topology, String topic, boolean persistent) {
        String name = storeName(topic);
        KeyValueBytesStoreSupplier supplier = persistent ? Stores.persistentKeyValueStore(name)
                : Stores.inMemoryKeyValueStore(name);
        StoreBuilder<KeyValueStore<Bytes, byte[]>> builder = Stores.keyValueStoreBuilder(supplier, Serdes.Bytes(),
                Serdes.ByteArray()).withLoggingDisabled();
        topology.addGlobalStore(builder, sourceName(topic), new ByteArrayDeserializer(), new ByteArrayDeserializer(),
                topic, processorName(topic), () -> new RowCopier(name));
    }

    /** Copies each record of the topic into the store: a row per key, a null value deleting it. */
    static final class RowCopier implements Processor<byte[], byte[], Void, Void> {
        private final String storeName;
        private @Nullable KeyValueStore<Bytes, byte[]> store;

        RowCopier(String storeName) {
            this.storeName = storeName;
        }

        @Override
        public void init(ProcessorContext<Void, Void> context) {
            this.store = context.getStateStore(storeName);
        }

        @Override
        public void process(Record<byte[], byte[]> record) {
            if (record.key() == null) {
                return; // not a row: a table is keyed
            }
            KeyValueStore<Bytes, byte[]> s = java.util.Objects.requireNonNull(store);
            if (record.value() == null) {
                s.delete(Bytes.wrap(record.key()));
            } else {
                s.put(Bytes.wrap(record.key()), record.value());
            }
        }
    }
}
