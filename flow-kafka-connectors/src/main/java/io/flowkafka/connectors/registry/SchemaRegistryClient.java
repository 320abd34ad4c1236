package io.flowkafka.connectors.registry;

import org.apache.avro.Schema;

/**
 * The operations of a Confluent-compatible schema registry that the Avro serde needs.
 *
 * <p>Implementations: {@link RestSchemaRegistryClient} over the registry's REST API, and
 * {@link MockSchemaRegistry} in memory for tests. Implementations are thread-safe.
 *
 * <p>Every method throws {@link SchemaRegistryException} when the registry refuses or cannot
 * be reached; its {@link SchemaRegistryException#errorCode() error code} is the registry's
 * ({@code 40401} subject not found, {@code 40403} schema not found, {@code 409}/{@code 40901}
 * incompatible schema, {@code 42201} invalid schema...).
 */
public interface SchemaRegistryClient {
    /**
     * Registers {@code schema} under {@code subject}, or finds it there, and returns its id
     * ({@code POST /subjects/{subject}/versions}).
     *
     * @param subject the subject, such as {@code orders-value}
     * @param schema the schema to register
     * @return the registry-wide id of the schema
     * @throws SchemaRegistryException if the registry refuses (for example 409: incompatible
     *     with the subject's latest version) or cannot be reached
     */
    int register(String subject, Schema schema);

    /**
     * Finds {@code schema} among the versions of {@code subject} without registering it
     * ({@code POST /subjects/{subject}}).
     *
     * @param subject the subject to search
     * @param schema the schema to find
     * @return the schema as registered under the subject, with its id and version
     * @throws SchemaRegistryException with error code 40401 if the subject does not exist, 40403
     *     if the schema is not registered under it
     */
    RegisteredSchema lookup(String subject, Schema schema);

    /**
     * The schema with the given id ({@code GET /schemas/ids/{id}}).
     *
     * @param id the registry-wide schema id, as written in the wire format
     * @return the schema with that id
     * @throws SchemaRegistryException with error code 40403 if no schema has this id
     */
    Schema schemaById(int id);

    /**
     * The latest version of {@code subject} ({@code GET /subjects/{subject}/versions/latest}).
     *
     * @param subject the subject
     * @return the subject's highest version, with its id
     * @throws SchemaRegistryException with error code 40401 if the subject does not exist
     */
    RegisteredSchema latest(String subject);

    /**
     * Whether {@code schema} may be registered under {@code subject}, checked against its latest
     * version under the subject's compatibility level
     * ({@code POST /compatibility/subjects/{subject}/versions/latest?verbose=true}).
     *
     * @param subject the subject whose latest version is checked against
     * @param schema the candidate schema
     * @return whether the schema is compatible and, if not, the registry's reasons
     * @throws SchemaRegistryException with error code 40401 if the subject does not exist
     */
    CompatibilityResult testCompatibility(String subject, Schema schema);
}
