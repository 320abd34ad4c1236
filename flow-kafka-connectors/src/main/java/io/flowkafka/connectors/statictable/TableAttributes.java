package io.flowkafka.connectors.statictable;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Instant;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * The attributes kept beside a table, the analog of its Cypress attributes: the
 * {@code table_timestamp}, the list of part files with their row counts, and arbitrary JSON
 * attributes (a sink's progress, a version tag).
 *
 * <p>Immutable and thread-safe. A child of a tables directory written by another tool has no
 * attributes: its {@link #timestamp()} is empty, which the arrival-order sink rejects
 * (reference 001: "The sink doesn't accept a directory with children that have no table_timestamp
 * attribute").
 *
 * @param tableTimestamp the {@code table_timestamp} attribute, or null when the table has none
 * @param parts the part files in read order; rows are numbered across them in this order
 * @param custom the other attributes by name, in insertion order
 */
public record TableAttributes(@Nullable Instant tableTimestamp, List<TablePart> parts, Map<String, JsonNode> custom) {
    /** The attribute name Flow uses for the table timestamp. */
    public static final String TABLE_TIMESTAMP = "table_timestamp";

    /**
     * Copies the collections and checks the fields.
     *
     * @param tableTimestamp the table timestamp; null when the table has none
     * @param parts the part files; not null, names distinct
     * @param custom the other attributes; not null, without the reserved names {@code table_timestamp} and {@code parts}
     * @throws IllegalArgumentException if two parts share a name or a custom attribute uses a reserved name
     */
    public TableAttributes {
        parts = List.copyOf(Objects.requireNonNull(parts, "parts"));
        if (parts.stream().map(TablePart::name).distinct().count() != parts.size()) {
            throw new IllegalArgumentException("part names must be distinct but were " + parts);
        }
        Objects.requireNonNull(custom, "custom");
        if (custom.containsKey(TABLE_TIMESTAMP) || custom.containsKey("parts")) {
            throw new IllegalArgumentException("custom attributes must not use the reserved names table_timestamp and "
                    + "parts; set the table timestamp through the tableTimestamp field");
        }
        custom = Collections.unmodifiableMap(new LinkedHashMap<>(custom));
    }

    /**
     * Attributes with a table timestamp and parts and no custom attribute.
     *
     * @param tableTimestamp the table timestamp; may be null
     * @param parts the part files; not null
     * @return the attributes
     */
    public static TableAttributes of(@Nullable Instant tableTimestamp, List<TablePart> parts) {
        return new TableAttributes(tableTimestamp, parts, Map.of());
    }

    /**
     * The table timestamp, if the table has one.
     *
     * @return the {@code table_timestamp} attribute, or empty
     */
    public Optional<Instant> timestamp() {
        return Optional.ofNullable(tableTimestamp);
    }

    /**
     * A copy with one custom attribute set.
     *
     * @param name the attribute name; not null, not reserved
     * @param value the value; not null
     * @return the new attributes
     * @throws IllegalArgumentException if the name is reserved
     */
    public TableAttributes withAttribute(String name, JsonNode value) {
        Map<String, JsonNode> copy = new LinkedHashMap<>(custom);
        copy.put(Objects.requireNonNull(name, "name"), Objects.requireNonNull(value, "value"));
        return new TableAttributes(tableTimestamp, parts, copy);
    }

    /**
     * The number of rows over all parts.
     *
     * @return the row count of the table
     */
    public long rowCount() {
        return parts.stream().mapToLong(TablePart::rowCount).sum();
    }

    /**
     * The stored size over all parts.
     *
     * @return the byte size of the table
     */
    public long byteSize() {
        return parts.stream().mapToLong(TablePart::byteSize).sum();
    }

    /**
     * The data weight over all parts: the rows' Avro binary encodings, uncompressed.
     *
     * @return the data weight of the table in bytes
     */
    public long dataWeight() {
        return parts.stream().mapToLong(TablePart::dataWeight).sum();
    }
}
