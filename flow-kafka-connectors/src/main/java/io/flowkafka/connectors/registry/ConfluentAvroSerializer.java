package io.flowkafka.connectors.registry;

import com.google.common.cache.Cache;
import com.google.common.cache.CacheBuilder;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import org.apache.avro.AvroRuntimeException;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericDatumWriter;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.EncoderFactory;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.serialization.Serializer;
import org.jspecify.annotations.Nullable;

/**
 * Writes Avro records in Confluent's wire format: byte 0 is the magic byte {@code 0x00}, bytes
 * 1-4 the schema id (big-endian), the rest the record in Avro binary encoding.
 *
 * <p>The subject is {@code <topic>-value} ({@code <topic>-key} for keys). With
 * {@code auto.register.schemas=true} (the default) the record's schema is registered under it,
 * or found there; with {@code false} it is looked up, and a record whose schema is not
 * registered fails; with {@code use.latest.version=true} every record is written with the
 * subject's latest version, its fields taken by name. Settings: {@link ConfluentAvroSerdeConfig}.
 * A null record is written as null (a tombstone).
 *
 * <p>Errors: a record that cannot be written (its schema is refused by the registry, is not
 * registered, or does not fit the latest version) throws {@link SerializationException} naming
 * the topic and the cause. A registry that cannot answer now (no connection, a timeout, 5xx)
 * throws {@link SchemaRegistryException} with {@code retriable()} true instead, so that a handler
 * does not treat an outage as a bad record.
 *
 * <p>Thread-safe once configured. {@link #close()} releases nothing; the client is not closed.
 */
public class ConfluentAvroSerializer implements Serializer<GenericRecord> {
    private @Nullable SchemaRegistryClient client;
    private boolean isKey;
    private boolean autoRegister = ConfluentAvroSerdeConfig.AUTO_REGISTER_SCHEMAS_DEFAULT;
    private boolean useLatest = ConfluentAvroSerdeConfig.USE_LATEST_VERSION_DEFAULT;
    private Cache<Schema, GenericDatumWriter<GenericRecord>> writers = writerCache(
            ConfluentAvroSerdeConfig.CACHE_CAPACITY_DEFAULT);
    private final ConcurrentMap<String, RegisteredSchema> latestBySubject = new ConcurrentHashMap<>();

    /** A serializer that gets its registry from {@code schema.registry.url} in {@link #configure}. */
    public ConfluentAvroSerializer() {
    }

    /**
     * A serializer of values that uses {@code client}, with default settings until
     * {@link #configure} (which then needs no {@code schema.registry.url}).
     *
     * @param client the registry to register or look up schemas in
     */
    public ConfluentAvroSerializer(SchemaRegistryClient client) {
        this.client = Objects.requireNonNull(client, "client");
    }

    /** Sets the client that {@link #configure} would otherwise create from the URL. */
    void useClient(SchemaRegistryClient client) {
        this.client = Objects.requireNonNull(client, "client");
    }

    /**
     * Reads the settings ({@link ConfluentAvroSerdeConfig}).
     *
     * @throws org.apache.kafka.common.config.ConfigException naming the key, for a bad setting or
     *     a missing {@code schema.registry.url} when no client was given
     */
    @Override
    public void configure(Map<String, ?> configs, boolean isKey) {
        ConfluentAvroSerdeConfig config = new ConfluentAvroSerdeConfig(configs);
        this.isKey = isKey;
        this.autoRegister = config.getBoolean(ConfluentAvroSerdeConfig.AUTO_REGISTER_SCHEMAS_CONFIG);
        this.useLatest = config.getBoolean(ConfluentAvroSerdeConfig.USE_LATEST_VERSION_CONFIG);
        this.writers = writerCache(config.getInt(ConfluentAvroSerdeConfig.CACHE_CAPACITY_CONFIG));
        this.latestBySubject.clear();
        if (client == null) {
            client = config.createClient();
        }
    }

    /**
     * Writes {@code record} for {@code topic}.
     *
     * @return the wire-format bytes; null for a null record
     * @throws SerializationException if the record cannot be written; the message names the
     *     topic, the subject and the cause
     * @throws SchemaRegistryException (retriable) if the registry cannot answer now
     * @throws IllegalStateException if neither a client nor {@code configure} was given
     */
    @Override
    public byte @Nullable [] serialize(String topic, @Nullable GenericRecord record) {
        if (record == null) {
            return null;
        }
        SchemaRegistryClient registry = client;
        if (registry == null) {
            throw new IllegalStateException("ConfluentAvroSerializer is not configured: call configure() with "
                    + "schema.registry.url, or construct it with a SchemaRegistryClient");
        }
        String subject = topic + (isKey ? "-key" : "-value");
        Schema schema = record.getSchema();
        try {
            int id;
            Schema writerSchema = schema;
            if (useLatest) {
                RegisteredSchema latest = latestBySubject.computeIfAbsent(subject, registry::latest);
                id = latest.id();
                writerSchema = latest.schema();
            } else if (autoRegister) {
                id = registry.register(subject, schema);
            } else {
                id = registry.lookup(subject, schema).id();
            }
            ByteArrayOutputStream out = new ByteArrayOutputStream(64);
            out.write(ConfluentAvroSerde.MAGIC_BYTE);
            out.write(id >>> 24);
            out.write(id >>> 16);
            out.write(id >>> 8);
            out.write(id);
            BinaryEncoder encoder = EncoderFactory.get().directBinaryEncoder(out, null);
            writer(writerSchema, !writerSchema.equals(schema)).write(record, encoder);
            encoder.flush();
            return out.toByteArray();
        } catch (SchemaRegistryException e) {
            if (e.retriable()) {
                throw e;
            }
            throw new SerializationException("Could not serialize a record for topic '" + topic + "' (subject '"
                    + subject + "', schema " + schema.getFullName() + "): " + e.getMessage(), e);
        } catch (IOException | AvroRuntimeException | ClassCastException | NullPointerException e) {
            throw new SerializationException("Could not serialize a record for topic '" + topic + "' (subject '"
                    + subject + "'): the record does not fit the schema " + schema.getFullName()
                    + (useLatest ? " (the subject's latest version)" : "") + ": " + e, e);
        }
    }

    private GenericDatumWriter<GenericRecord> writer(Schema writerSchema, boolean byName) {
        if (byName) {
            return new GenericDatumWriter<>(writerSchema, ByName.INSTANCE);
        }
        GenericDatumWriter<GenericRecord> writer = writers.getIfPresent(writerSchema);
        if (writer == null) {
            writer = new GenericDatumWriter<>(writerSchema);
            writers.put(writerSchema, writer);
        }
        return writer;
    }

    private static Cache<Schema, GenericDatumWriter<GenericRecord>> writerCache(int capacity) {
        return CacheBuilder.newBuilder().maximumSize(capacity).build();
    }

    /** Takes fields by name, so a record of an equivalent schema writes with the latest version. */
    private static final class ByName extends GenericData {
        static final ByName INSTANCE = new ByName();

        @Override
        public Object getField(Object record, String name, int position) {
            GenericRecord generic = (GenericRecord) record;
            Schema.Field field = generic.getSchema().getField(name);
            if (field == null) {
                throw new AvroRuntimeException("the record's schema " + generic.getSchema().getFullName()
                        + " has no field '" + name + "' that the writer schema writes");
            }
            return generic.get(field.pos());
        }
    }
}
