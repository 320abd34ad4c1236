package io.flowkafka.connectors.registry;

import com.google.common.cache.Cache;
import com.google.common.cache.CacheBuilder;
import java.io.IOException;
import java.util.Map;
import java.util.Objects;
import org.apache.avro.AvroRuntimeException;
import org.apache.avro.Schema;
import org.apache.avro.SchemaCompatibility;
import org.apache.avro.generic.GenericDatumReader;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.io.BinaryDecoder;
import org.apache.avro.io.DecoderFactory;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.serialization.Deserializer;
import org.jspecify.annotations.Nullable;

/**
 * Reads Avro records in Confluent's wire format: checks the magic byte {@code 0x00}, fetches the
 * writer's schema by the 4-byte big-endian id (cached), and decodes the Avro binary rest. With a
 * reader schema ({@code flow.avro.reader.schema} or the constructor) records are resolved to it
 * by Avro's schema-resolution rules (an added field with a default gets its default); without
 * one they keep the writer's schema. Null bytes are read as null.
 *
 * <p>Errors: bytes that are not a record of this format — shorter than the 5-byte header, a
 * wrong magic byte, an id the registry does not know (40403), a writer schema that is not a
 * record or that the reader schema cannot read, an Avro payload that is truncated or too long —
 * throw {@link SerializationException} with a sentence naming the topic and the cause, so the
 * runtime sends the record to the dead-letter topic. A registry that cannot answer now (no
 * connection, a timeout, 5xx) throws {@link SchemaRegistryException} with
 * {@code retriable()} true instead: the record is not bad, and dead-lettering it would lose it.
 *
 * <p>Thread-safe once configured. {@link #close()} releases nothing; the client is not closed.
 */
public class ConfluentAvroDeserializer implements Deserializer<GenericRecord> {
    private @Nullable SchemaRegistryClient client;
    private @Nullable Schema readerSchema;
    private boolean isKey;
    private Cache<Integer, GenericDatumReader<GenericRecord>> readers = readerCache(
            ConfluentAvroSerdeConfig.CACHE_CAPACITY_DEFAULT);

    /** A deserializer that gets its registry from {@code schema.registry.url} in {@link #configure}. */
    public ConfluentAvroDeserializer() {
    }

    /**
     * A deserializer that uses {@code client} and resolves records to {@code readerSchema}, with
     * default settings until {@link #configure} (which then needs no {@code schema.registry.url}).
     *
     * @param client the registry to fetch writer schemas from, by id
     * @param readerSchema the schema to resolve records to; null to keep the writer's
     */
    public ConfluentAvroDeserializer(SchemaRegistryClient client, @Nullable Schema readerSchema) {
        this.client = Objects.requireNonNull(client, "client");
        this.readerSchema = readerSchema;
    }

    /** Sets the client that {@link #configure} would otherwise create from the URL. */
    void useClient(SchemaRegistryClient client) {
        this.client = Objects.requireNonNull(client, "client");
    }

    /**
     * Reads the settings ({@link ConfluentAvroSerdeConfig}); {@code flow.avro.reader.schema}
     * replaces a reader schema given to the constructor.
     *
     * @throws org.apache.kafka.common.config.ConfigException naming the key, for a bad setting or
     *     a missing {@code schema.registry.url} when no client was given
     */
    @Override
    public void configure(Map<String, ?> configs, boolean isKey) {
        ConfluentAvroSerdeConfig config = new ConfluentAvroSerdeConfig(configs);
        this.isKey = isKey;
        if (config.readerSchema() != null) {
            this.readerSchema = config.readerSchema();
        }
        this.readers = readerCache(config.getInt(ConfluentAvroSerdeConfig.CACHE_CAPACITY_CONFIG));
        if (client == null) {
            client = config.createClient();
        }
    }

    /**
     * Reads a record of {@code topic}.
     *
     * @return the record; null for null bytes
     * @throws SerializationException if the bytes are not a record of this format; the message
     *     names the topic and the cause
     * @throws SchemaRegistryException (retriable) if the registry cannot answer now
     * @throws IllegalStateException if neither a client nor {@code configure} was given
     */
    @Override
    public @Nullable GenericRecord deserialize(String topic, byte @Nullable [] data) {
        if (data == null) {
            return null;
        }
        SchemaRegistryClient registry = client;
        if (registry == null) {
            throw new IllegalStateException("ConfluentAvroDeserializer is not configured: call configure() with "
                    + "schema.registry.url, or construct it with a SchemaRegistryClient");
        }
        String what = "Could not deserialize the " + (isKey ? "key" : "value") + " of a record of topic '" + topic + "'";
        if (data.length < ConfluentAvroSerde.HEADER_BYTES) {
            throw new SerializationException(what + ": " + data.length + " bytes are fewer than the 5-byte header of "
                    + "Confluent's wire format (magic byte 0x00, 4-byte schema id)");
        }
        if (data[0] != ConfluentAvroSerde.MAGIC_BYTE) {
            throw new SerializationException(String.format("%s: byte 0 is 0x%02x, not the magic byte 0x00 of "
                    + "Confluent's wire format (was it written without a schema registry?)", what, data[0] & 0xff));
        }
        int id = ((data[1] & 0xff) << 24) | ((data[2] & 0xff) << 16) | ((data[3] & 0xff) << 8) | (data[4] & 0xff);
        try {
            GenericDatumReader<GenericRecord> reader = reader(registry, id);
            BinaryDecoder decoder = DecoderFactory.get().binaryDecoder(data, ConfluentAvroSerde.HEADER_BYTES,
                    data.length - ConfluentAvroSerde.HEADER_BYTES, null);
            GenericRecord record = reader.read(null, decoder);
            if (!decoder.isEnd()) {
                throw new SerializationException(what + ": bytes are left over after the record of schema id " + id
                        + " (" + (data.length - ConfluentAvroSerde.HEADER_BYTES) + " payload bytes); was it written "
                        + "with another schema?");
            }
            return record;
        } catch (SchemaRegistryException e) {
            if (e.retriable()) {
                throw e;
            }
            throw new SerializationException(what + ": schema id " + id + " could not be fetched: " + e.getMessage(), e);
        } catch (IOException | AvroRuntimeException | IndexOutOfBoundsException | NegativeArraySizeException
                | ClassCastException e) {
            throw new SerializationException(what + " with schema id " + id
                    + (readerSchema == null ? "" : " read as " + readerSchema.getFullName()) + ": " + e, e);
        }
    }

    private GenericDatumReader<GenericRecord> reader(SchemaRegistryClient registry, int id) {
        GenericDatumReader<GenericRecord> reader = readers.getIfPresent(id);
        if (reader != null) {
            return reader;
        }
        Schema writer = registry.schemaById(id);
        if (writer.getType() != Schema.Type.RECORD) {
            throw new AvroRuntimeException("schema id " + id + " is a " + writer.getType() + ", not a record; this "
                    + "deserializer reads records");
        }
        Schema reading = readerSchema == null ? writer : readerSchema;
        SchemaCompatibility.SchemaPairCompatibility pair = SchemaCompatibility.checkReaderWriterCompatibility(reading,
                writer);
        if (pair.getType() != SchemaCompatibility.SchemaCompatibilityType.COMPATIBLE) {
            throw new AvroRuntimeException("the reader schema " + reading.getFullName() + " cannot read records of "
                    + "schema id " + id + ": " + pair.getResult().getIncompatibilities().stream()
                    .map(i -> i.getType() + " at " + i.getLocation() + ": " + i.getMessage()).toList());
        }
        reader = new GenericDatumReader<>(writer, reading);
        readers.put(id, reader);
        return reader;
    }

    private static Cache<Integer, GenericDatumReader<GenericRecord>> readerCache(int capacity) {
        return CacheBuilder.newBuilder().maximumSize(capacity).build();
    }
}
