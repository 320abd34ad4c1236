package io.flowkafka.connectors.registry;

import java.util.Objects;
import org.apache.avro.Schema;

/**
 * A schema as registered under a subject.
 *
 * @param subject the subject, such as {@code orders-value}
 * @param id the registry-wide schema id, the one written in the wire format
 * @param version the version of the schema within the subject, from 1
 * @param schema the schema
 */
public record RegisteredSchema(String subject, int id, int version, Schema schema) {
    /**
     * Checks the fields.
     *
     * @param subject the subject, such as {@code orders-value}; not null
     * @param id the registry-wide schema id
     * @param version the version within the subject, from 1
     * @param schema the schema; not null
     */
    public RegisteredSchema {
        Objects.requireNonNull(subject, "subject");
        Objects.requireNonNull(schema, "schema");
    }
}
