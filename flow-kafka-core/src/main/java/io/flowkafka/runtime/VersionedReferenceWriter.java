package io.flowkafka.runtime;

import io.flowkafka.spec.PipelineSpec;
import io.flowkafka.spi.PipelineCodecs;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.function.BiConsumer;
import org.apache.avro.generic.GenericRecord;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.jspecify.annotations.Nullable;

/**
 * Writes a versioned reference, the table a {@code versioned} external state joiner reads (the Kafka analog of
 * Flow's table behind an atomically switched symlink): a batch job writes every row of a new version, then
 * switches the pointer to it with one write; joiners read the new version from their next call on, without a
 * restart, and a call never mixes two versions.
 *
 * <p>The topic has exactly one partition, so the pointer record is ordered after the rows of the version it names
 * and a joiner that sees the pointer has seen those rows (checked when the writer is created). Record key of a row:
 * {@code version | 0x00 | encoded group-by key}; of the pointer: {@code 0x00 "pointer"}; values: the row's Avro
 * binary, the version's UTF-8. Rows of versions no longer read are deleted with {@link #dropVersion} (tombstones;
 * the topic is compacted).
 *
 * <pre>{@code
 * try (VersionedReferenceWriter w = VersionedReferenceWriter.create(spec, "enricher", "/catalog", props)) {
 *     w.writeVersion("2026-12-03", rows);   // key record -> row record
 *     w.switchTo("2026-12-03");             // one write: joiners switch
 *     w.dropVersion("2026-12-02");
 * }
 * }</pre>
 *
 * <p>Not thread-safe: one batch job writes a reference at a time.
 */
public final class VersionedReferenceWriter implements AutoCloseable {
    /**
     * Where a writer's records go and how it reads the topic back: Kafka clients ({@link #create(PipelineSpec,
     * String, String, Properties)}), or the test driver's table.
     */
    public interface Transport extends AutoCloseable {
        /** {@return the number of partitions of the topic} */
        int partitionCount();

        /**
         * Sends one record.
         *
         * @param key the record key
         * @param value the record value; null: a tombstone
         */
        void send(byte[] key, byte @Nullable [] value);

        /** Waits until every record sent is written. */
        void flush();

        /**
         * Reads the topic's committed records from its start to its current end, in order.
         *
         * @param record receives each record's key and value (null: a tombstone)
         */
        void readAll(BiConsumer<byte[], byte @Nullable []> record);

        /** Releases the transport's clients. */
        @Override
        default void close() {
        }
    }

    private final PipelineCodecs codecs;
    private final PipelineCodecs.ExternalTable table;
    private final Transport transport;

    private VersionedReferenceWriter(PipelineCodecs codecs, PipelineCodecs.ExternalTable table, Transport transport) {
        this.codecs = codecs;
        this.table = table;
        this.transport = transport;
    }

    /**
     * A writer of the versioned reference that {@code joinerName} of {@code computationId} reads, through the
     * transport given (the test driver's, or another).
     *
     * @param codecs the pipeline's codecs
     * @param computationId the computation declaring the joiner
     * @param joinerName the versioned joiner's name, e.g. {@code /catalog}
     * @param transport where the records go
     * @return the writer
     * @throws IllegalArgumentException if the joiner is unknown or not versioned
     * @throws IllegalStateException if the topic has more than one partition
     */
    public static VersionedReferenceWriter create(PipelineCodecs codecs, String computationId, String joinerName,
            Transport transport) {
        PipelineCodecs.ExternalTable table = codecs.externalTable(computationId, joinerName);
        if (!table.versioned()) {
            throw new IllegalArgumentException("external state '" + joinerName + "' of computation '" + computationId
                    + "' is not a versioned joiner (parameters.versioned: true); a VersionedReferenceWriter writes "
                    + "only versioned references");
        }
        int partitions = transport.partitionCount();
        if (partitions != 1) {
            transport.close();
            throw new IllegalStateException("versioned reference topic " + table.topic() + " has " + partitions
                    + " partitions but needs exactly 1: a pointer switch must be ordered after the rows of the "
                    + "version it names; recreate the topic with one partition (cleanup.policy=compact)");
        }
        return new VersionedReferenceWriter(codecs, table, transport);
    }

    /**
     * A writer of the versioned reference that {@code joinerName} of {@code computationId} reads, on the Kafka
     * cluster of {@code clientProps} (an idempotent producer; a read_committed consumer for
     * {@link #currentVersion()} and {@link #dropVersion}).
     *
     * @param spec the pipeline
     * @param computationId the computation declaring the joiner
     * @param joinerName the versioned joiner's name, e.g. {@code /catalog}
     * @param clientProps {@code bootstrap.servers}, security and {@code flow.topic.prefix}; others pass to the clients
     * @return the writer
     * @throws IllegalArgumentException if the joiner is unknown or not versioned
     * @throws IllegalStateException if the topic has more than one partition
     */
    public static VersionedReferenceWriter create(PipelineSpec spec, String computationId, String joinerName,
            Properties clientProps) {
        PipelineCodecs codecs = PipelineCodecs.of(spec, clientProps);
        String topic = codecs.externalTable(computationId, joinerName).topic();
        return create(codecs, computationId, joinerName, new KafkaTransport(topic, clientProps));
    }

    /** {@return the topic written} */
    public String topic() {
        return table.topic();
    }

    /**
     * A key of the joiner's computation from its {@code group_by_schema} columns (a computed hash column may be
     * left out), as rows are keyed.
     *
     * @param keyColumns the key columns by name
     * @return the key record
     */
    public GenericRecord key(Map<String, ?> keyColumns) {
        return codecs.keyOf(table.computationId(), keyColumns);
    }

    /**
     * Writes the rows of {@code version} and waits until they are written. Joiners do not read them until
     * {@link #switchTo} names the version.
     *
     * @param version the version, a non-empty string without NUL
     * @param rows key record (see {@link #key}) to row record of the table's schema
     */
    public void writeVersion(String version, Map<GenericRecord, GenericRecord> rows) {
        writeVersion(version, rows.entrySet());
    }

    /**
     * Writes the rows of {@code version} and waits until they are written.
     *
     * @param version the version, a non-empty string without NUL
     * @param rows key record to row record pairs
     */
    public void writeVersion(String version, Iterable<? extends Map.Entry<GenericRecord, GenericRecord>> rows) {
        for (Map.Entry<GenericRecord, GenericRecord> e : rows) {
            byte[] key = PipelineCodecs.versionedRowKey(version, codecs.encodeKey(table.computationId(), e.getKey()));
            transport.send(key, PipelineCodecs.encodeRow(table.schema(), Objects.requireNonNull(e.getValue(), "row")));
        }
        transport.flush();
    }

    /**
     * Switches joiners to {@code version}: one write of the pointer, after every row written before it.
     *
     * @param version the version to read from now on
     */
    public void switchTo(String version) {
        PipelineCodecs.versionedRowKey(version, new byte[0]); // checks the name
        transport.send(PipelineCodecs.versionedPointerKey(), version.getBytes(StandardCharsets.UTF_8));
        transport.flush();
    }

    /** {@return the version the pointer names, read from the topic; empty before the first switch} */
    public Optional<String> currentVersion() {
        String[] current = {null};
        byte[] pointer = PipelineCodecs.versionedPointerKey();
        transport.readAll((k, v) -> {
            if (java.util.Arrays.equals(k, pointer)) {
                current[0] = v == null ? null : new String(v, StandardCharsets.UTF_8);
            }
        });
        return Optional.ofNullable(current[0]);
    }

    /**
     * Deletes every row of {@code version} (tombstones), which joiners no longer read.
     *
     * @param version a version that is not the current one
     * @return how many rows were deleted
     * @throws IllegalStateException if {@code version} is the current version
     */
    public int dropVersion(String version) {
        PipelineCodecs.versionedRowKey(version, new byte[0]);
        byte[] pointer = PipelineCodecs.versionedPointerKey();
        Map<java.nio.ByteBuffer, byte[]> live = new LinkedHashMap<>();
        String[] current = {null};
        transport.readAll((k, v) -> {
            if (java.util.Arrays.equals(k, pointer)) {
                current[0] = v == null ? null : new String(v, StandardCharsets.UTF_8);
            } else if (version.equals(PipelineCodecs.versionOfRowKey(k))) {
                if (v == null) {
                    live.remove(java.nio.ByteBuffer.wrap(k));
                } else {
                    live.put(java.nio.ByteBuffer.wrap(k), k);
                }
            }
        });
        if (version.equals(current[0])) {
            throw new IllegalStateException("version '" + version + "' of " + table.topic() + " is the current one: "
                    + "switch to another version before dropping it");
        }
        List<byte[]> keys = new ArrayList<>(live.values());
        keys.forEach(k -> transport.send(k, null));
        transport.flush();
        return keys.size();
    }

    /** Closes the transport. */
    @Override
    public void close() {
        transport.close();
    }

    /** The Kafka clients of a writer: an idempotent producer, and a read_committed consumer to read the topic. */
    private static final class KafkaTransport implements Transport {
        private final String topic;
        private final Properties props;
        private final KafkaProducer<byte[], byte[]> producer;
        private final List<java.util.concurrent.Future<?>> sent = new ArrayList<>();

        KafkaTransport(String topic, Properties clientProps) {
            this.topic = topic;
            this.props = clients(clientProps);
            Properties p = new Properties();
            p.putAll(props);
            p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
            p.put(ProducerConfig.ACKS_CONFIG, "all");
            this.producer = new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer());
        }

        private static Properties clients(Properties given) {
            Properties p = new Properties();
            given.forEach((k, v) -> {
                if (!String.valueOf(k).startsWith("flow.")) {
                    p.put(k, v);
                }
            });
            return p;
        }

        @Override
        public int partitionCount() {
            return producer.partitionsFor(topic).size();
        }

        @Override
        public void send(byte[] key, byte @Nullable [] value) {
            sent.add(producer.send(new ProducerRecord<>(topic, 0, key, value)));
        }

        @Override
        public void flush() {
            producer.flush();
            try {
                for (java.util.concurrent.Future<?> f : sent) {
                    f.get();
                }
            } catch (ExecutionException e) {
                throw new IllegalStateException("writing versioned reference topic " + topic + " failed: "
                        + e.getCause().getMessage(), e.getCause());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted writing " + topic, e);
            } finally {
                sent.clear();
            }
        }

        @Override
        public void readAll(BiConsumer<byte[], byte @Nullable []> record) {
            Properties p = new Properties();
            p.putAll(props);
            p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
            p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
            p.remove(ConsumerConfig.GROUP_ID_CONFIG);
            try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(p, new ByteArrayDeserializer(),
                    new ByteArrayDeserializer())) {
                TopicPartition tp = new TopicPartition(topic, 0);
                c.assign(List.of(tp));
                c.seekToBeginning(List.of(tp));
                long end = c.endOffsets(List.of(tp)).get(tp);
                while (c.position(tp) < end) {
                    for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(200))) {
                        if (r.key() != null) {
                            record.accept(r.key(), r.value());
                        }
                    }
                }
            }
        }

        @Override
        public void close() {
            producer.close(Duration.ofSeconds(30));
        }
    }
}
