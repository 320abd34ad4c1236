package io.flowkafka.connectors.registry;

import java.util.Map;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericRecord;
import org.apache.kafka.common.serialization.Serdes;
import org.jspecify.annotations.Nullable;

/**
 * A Kafka {@code Serde<GenericRecord>} for Avro with a schema registry, in Confluent's wire
 * format: byte 0 is the magic byte {@code 0x00}, bytes 1-4 the schema id (big-endian), the rest
 * the record in Avro binary encoding — the layout Confluent's {@code KafkaAvroSerializer} and
 * {@code KafkaAvroDeserializer} document, so topics can be shared with their users.
 *
 * <p>Configure it with Confluent's keys ({@link ConfluentAvroSerdeConfig}):
 * <pre>{@code
 * Serde<GenericRecord> serde = new ConfluentAvroSerde();
 * serde.configure(Map.of("schema.registry.url", "http://registry:8081"), false);
 * byte[] bytes = serde.serializer().serialize("orders", order);   // subject orders-value
 * GenericRecord back = serde.deserializer().deserialize("orders", bytes);
 * }</pre>
 * {@code schema.registry.url=mock://<scope>} uses the in-JVM {@link MockSchemaRegistry} of that
 * scope, for tests. To use Confluent's own {@code GenericAvroSerde} instead, name it where a
 * serde class is asked for ({@link GenericRecordSerdes#create}).
 *
 * <p>How it differs from Confluent's serde:
 * <ol>
 *   <li>TopicNameStrategy only ({@code <topic>-key}, {@code <topic>-value});</li>
 *   <li>Avro {@code GenericRecord}s only: no specific records, no primitive values, no schema
 *       references, no JSON Schema or Protobuf;</li>
 *   <li>one registry URL; basic authentication only;</li>
 *   <li>the reader schema is a setting ({@code flow.avro.reader.schema});</li>
 *   <li>a registry that cannot answer now throws a retriable {@link SchemaRegistryException},
 *       not a {@code SerializationException}, so an outage does not dead-letter good records.</li>
 * </ol>
 *
 * <p>Thread-safe once configured. Errors: see {@link ConfluentAvroSerializer} and
 * {@link ConfluentAvroDeserializer}.
 */
public class ConfluentAvroSerde extends Serdes.WrapperSerde<GenericRecord> {
    /** Byte 0 of every record in Confluent's wire format. */
    public static final byte MAGIC_BYTE = 0x00;
    /** The magic byte and the 4-byte schema id before the Avro payload. */
    public static final int HEADER_BYTES = 5;

    private final ConfluentAvroSerializer serializer;
    private final ConfluentAvroDeserializer deserializer;
    private final boolean clientGiven;

    /**
     * A serde that gets its registry from {@code schema.registry.url} in {@link #configure}; its
     * serializer and deserializer share one client (and so its caches).
     */
    public ConfluentAvroSerde() {
        this(new ConfluentAvroSerializer(), new ConfluentAvroDeserializer(), false);
    }

    /**
     * A serde that uses {@code client}, with default settings until {@link #configure} (which
     * then needs no {@code schema.registry.url}).
     *
     * @param client the registry the serializer and the deserializer use
     * @param readerSchema the schema the deserializer resolves records to; null to keep the
     *     writer's
     */
    public ConfluentAvroSerde(SchemaRegistryClient client, @Nullable Schema readerSchema) {
        this(new ConfluentAvroSerializer(client), new ConfluentAvroDeserializer(client, readerSchema), true);
    }

    private ConfluentAvroSerde(ConfluentAvroSerializer serializer, ConfluentAvroDeserializer deserializer,
            boolean clientGiven) {
        super(serializer, deserializer);
        this.serializer = serializer;
        this.deserializer = deserializer;
        this.clientGiven = clientGiven;
    }

    /**
     * Reads the settings ({@link ConfluentAvroSerdeConfig}) for both directions. Call it once.
     *
     * @throws org.apache.kafka.common.config.ConfigException naming the key, for a bad setting or
     *     a missing {@code schema.registry.url} when no client was given
     */
    @Override
    public void configure(Map<String, ?> configs, boolean isKey) {
        if (!clientGiven) {
            SchemaRegistryClient client = new ConfluentAvroSerdeConfig(configs).createClient();
            serializer.useClient(client);
            deserializer.useClient(client);
        }
        super.configure(configs, isKey);
    }
}
