package io.flowkafka.testing;

import io.flowkafka.spi.PipelineCodecs;
import java.time.Instant;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;
import java.util.function.Supplier;
import org.apache.avro.generic.GenericRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.test.TestRecord;
import org.jspecify.annotations.Nullable;

/**
 * An external table of a pipeline on {@link FlowTestDriver}: seed rows, read a row, switch a versioned reference.
 *
 * <p>What it keeps: a row put here is a record of the table's topic, exactly as a manager or a
 * {@code VersionedReferenceWriter} writes it, which the driver hands to the table's global store at once (no
 * lag on the driver), so joiners see it in the next call; a row of a managed table is also put in its manager's
 * state store, where the manager reads its rows. Reads return committed rows: those of a managed table from its
 * manager's state store, the others from the table's global store (the pointer's version for a versioned
 * reference).
 *
 * <p>Threading: the test's thread, like the driver.
 */
public final class DriverExternalTable {
    private final PipelineCodecs.ExternalTable table;
    private final PipelineCodecs codecs;
    private final TopologyTestDriver driver;
    private final Function<Map<String, ?>, GenericRecord> keyOf;
    private final Supplier<Instant> clock;
    private final Runnable afterWrite;
    private @Nullable TestInputTopic<byte[], byte[]> topic;

    DriverExternalTable(PipelineCodecs.ExternalTable table, PipelineCodecs codecs, TopologyTestDriver driver,
            Function<Map<String, ?>, GenericRecord> keyOf, Supplier<Instant> clock, Runnable afterWrite) {
        this.table = table;
        this.codecs = codecs;
        this.driver = driver;
        this.keyOf = keyOf;
        this.clock = clock;
        this.afterWrite = afterWrite;
    }

    /** {@return the table's topic} */
    public String topic() {
        return table.topic();
    }

    /**
     * The key of the table's computation from its {@code group_by_schema} columns, as
     * {@link FlowTestDriver#key(String, Map)} builds it.
     *
     * @param keyColumns the key columns by name; a computed column may be left out
     * @return the key
     */
    public GenericRecord key(Map<String, ?> keyColumns) {
        return keyOf.apply(keyColumns);
    }

    /**
     * Writes a row (a versioned reference: use {@link #put(String, Map, GenericRecord)}).
     *
     * @param keyColumns the key columns by name
     * @param row a record of the table's schema
     */
    public void put(Map<String, ?> keyColumns, GenericRecord row) {
        put(key(keyColumns), row);
    }

    /**
     * Writes a row of a plain table.
     *
     * @param key a key record of the table's computation
     * @param row a record of the table's schema
     */
    public void put(GenericRecord key, GenericRecord row) {
        Objects.requireNonNull(row, "row (use delete to remove a row)");
        plainOnly();
        write(key, PipelineCodecs.encodeRow(table.schema(), row));
    }

    /**
     * Writes a record to the table's topic with the key and value bytes as given, as another writer of the topic
     * might: to test how the pipeline treats a row that is not of the table's key or row schema.
     *
     * @param key the record key bytes
     * @param value the record value bytes, or null (a tombstone)
     * @throws IllegalStateException if the table has no topic the driver pipes (a manager's own table)
     */
    public void putBytes(byte[] key, byte @Nullable [] value) {
        Objects.requireNonNull(key, "key");
        if (table.storeName() == null) {
            throw new IllegalStateException("external table '" + table.name() + "' is read from its manager's state "
                    + "only: it has no topic to write bytes to");
        }
        pipe(key, value);
    }

    /**
     * Deletes a row of a plain table.
     *
     * @param keyColumns the key columns by name
     */
    public void delete(Map<String, ?> keyColumns) {
        plainOnly();
        write(key(keyColumns), null);
    }

    /**
     * Writes a row of version {@code version} of a versioned reference (joiners see it once the pointer names
     * the version: {@link #switchTo}).
     *
     * @param version the version
     * @param keyColumns the key columns by name
     * @param row a record of the table's schema
     */
    public void put(String version, Map<String, ?> keyColumns, GenericRecord row) {
        versionedOnly();
        pipe(PipelineCodecs.versionedRowKey(version, codecs.encodeKey(table.computationId(), key(keyColumns))),
                PipelineCodecs.encodeRow(table.schema(), row));
    }

    /**
     * Switches a versioned reference to {@code version}: one write of its pointer.
     *
     * @param version the version joiners read from their next call on
     */
    public void switchTo(String version) {
        versionedOnly();
        PipelineCodecs.versionedRowKey(version, new byte[0]); // checks the name
        pipe(PipelineCodecs.versionedPointerKey(), version.getBytes(java.nio.charset.StandardCharsets.UTF_8));
    }

    /**
     * The committed row of a key.
     *
     * @param keyColumns the key columns by name
     * @return the row, empty if absent
     */
    public Optional<GenericRecord> get(Map<String, ?> keyColumns) {
        return get(key(keyColumns));
    }

    /**
     * The committed row of the key that a payload of {@code inputStreamId} maps to.
     *
     * @param inputStreamId an input or source stream of the table's computation
     * @param payloadFields payload fields by name: those the key reads
     * @return the row, empty if absent
     */
    public Optional<GenericRecord> getForPayload(String inputStreamId, Map<String, ?> payloadFields) {
        return get(codecs.keyOfFields(table.computationId(), inputStreamId, payloadFields));
    }

    /**
     * The committed row of a key.
     *
     * @param key a key record of the table's computation
     * @return the row, empty if absent
     */
    public Optional<GenericRecord> get(GenericRecord key) {
        byte[] encoded = codecs.encodeKey(table.computationId(), key);
        byte[] v;
        if (table.managed()) {
            v = managerStore().get(codecs.stateStoreKey(table.computationId(), key, table.name()));
        } else {
            KeyValueStore<Bytes, byte[]> store = driver.getKeyValueStore(Objects.requireNonNull(table.storeName()));
            if (table.versioned()) {
                byte[] pointer = store.get(Bytes.wrap(PipelineCodecs.versionedPointerKey()));
                v = pointer == null ? null : store.get(Bytes.wrap(PipelineCodecs.versionedRowKey(
                        new String(pointer, java.nio.charset.StandardCharsets.UTF_8), encoded)));
            } else {
                v = store.get(Bytes.wrap(encoded));
            }
        }
        return v == null ? Optional.empty() : Optional.of(PipelineCodecs.decodeRow(table.schema(), v));
    }

    /**
     * A transport of {@code io.flowkafka.runtime.VersionedReferenceWriter} writing this table: records are piped
     * into its topic; reading the topic back reads the latest record of each key (as compaction leaves it).
     */
    io.flowkafka.runtime.VersionedReferenceWriter.Transport transport() {
        return new io.flowkafka.runtime.VersionedReferenceWriter.Transport() {
            @Override
            public int partitionCount() {
                return 1;
            }

            @Override
            public void send(byte[] key, byte @Nullable [] value) {
                pipe(key, value);
            }

            @Override
            public void flush() {
            }

            @Override
            public void readAll(java.util.function.BiConsumer<byte[], byte @Nullable []> record) {
                KeyValueStore<Bytes, byte[]> store = driver.getKeyValueStore(Objects.requireNonNull(table.storeName()));
                try (var it = store.all()) {
                    it.forEachRemaining(kv -> record.accept(kv.key.get(), kv.value));
                }
            }
        };
    }

    private KeyValueStore<Bytes, byte[]> managerStore() {
        return driver.getKeyValueStore(codecs.stateStoreName(table.computationId()));
    }

    private void write(GenericRecord key, byte @Nullable [] value) {
        if (table.managed()) {
            // the manager reads its rows in its state store; joiners, in the global store fed by the topic
            Bytes k = codecs.stateStoreKey(table.computationId(), key, table.name());
            if (value == null) {
                managerStore().delete(k);
            } else {
                managerStore().put(k, value);
            }
        }
        if (table.storeName() != null) {
            pipe(codecs.encodeKey(table.computationId(), key), value);
        }
    }

    private void pipe(byte[] key, byte @Nullable [] value) {
        if (topic == null) {
            topic = driver.createInputTopic(table.topic(), new ByteArraySerializer(), new ByteArraySerializer());
        }
        topic.pipeInput(new TestRecord<>(key, value, null, clock.get()));
        afterWrite.run();
    }

    private void plainOnly() {
        if (table.versioned()) {
            throw new IllegalStateException("external table '" + table.name() + "' is a versioned reference: write a "
                    + "version's rows with put(version, key, row) and switch with switchTo(version)");
        }
    }

    private void versionedOnly() {
        if (!table.versioned()) {
            throw new IllegalStateException("external table '" + table.name() + "' is not versioned: write rows with "
                    + "put(key, row)");
        }
    }
}
