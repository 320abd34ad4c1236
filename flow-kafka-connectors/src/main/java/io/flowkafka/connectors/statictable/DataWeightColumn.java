package io.flowkafka.connectors.statictable;

import java.util.Objects;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericRecord;
import org.jspecify.annotations.Nullable;

/**
 * The weight of one message for the arrival-order sink's {@code max_data_weight}. It keeps the
 * rule of reference 001: "By default, the message weight for the max_data_weight limit equals the
 * message size; the optional data_weight_column (type int64 or uint64, non-negative values) sets a
 * custom weight, and a null in it means the message size."
 *
 * <p>Avro has no unsigned type: the column must be an Avro {@code long}, optionally in a union with
 * {@code null}. Immutable and thread-safe.
 */
public final class DataWeightColumn {
    private static final DataWeightColumn MESSAGE_SIZE = new DataWeightColumn(null);

    private final @Nullable String column;

    private DataWeightColumn(@Nullable String column) {
        this.column = column;
    }

    /**
     * The weight for a sink's {@code data_weight_column}, checked against the input schema.
     *
     * @param schema the schema of the input stream; not null, a record
     * @param column {@code data_weight_column}; null for the message size
     * @return the weight rule
     * @throws IllegalArgumentException if the column is missing or not a (nullable) long
     */
    public static DataWeightColumn of(Schema schema, @Nullable String column) {
        Objects.requireNonNull(schema, "schema");
        if (column == null) {
            return MESSAGE_SIZE;
        }
        Schema.Field field = schema.getField(column);
        if (field == null) {
            throw new IllegalArgumentException("data_weight_column '" + column + "' is not a field of " + schema.getFullName()
                    + "; fix: name an int64 field of the input stream or drop the parameter");
        }
        Schema type = field.schema();
        boolean isLong = type.getType() == Schema.Type.LONG || (type.getType() == Schema.Type.UNION
                && type.getTypes().size() == 2 && type.getTypes().stream().anyMatch(t -> t.getType() == Schema.Type.NULL)
                && type.getTypes().stream().anyMatch(t -> t.getType() == Schema.Type.LONG));
        if (!isLong) {
            throw new IllegalArgumentException("data_weight_column '" + column + "' must be int64 (Avro long, "
                    + "optionally nullable) but was " + type);
        }
        return new DataWeightColumn(column);
    }

    /**
     * The weight of one message.
     *
     * @param row the message payload; not null
     * @param messageSize the message size in bytes, {@code >= 0}
     * @return the column's value, or {@code messageSize} without a column or for a null value
     * @throws IllegalArgumentException if the column holds a negative value
     */
    public long weightOf(GenericRecord row, long messageSize) {
        if (column == null) {
            return messageSize;
        }
        Object value = row.get(column);
        if (value == null) {
            return messageSize;
        }
        long weight = ((Number) value).longValue();
        if (weight < 0) {
            throw new IllegalArgumentException("data_weight_column '" + column + "' must hold non-negative values but "
                    + "held " + weight);
        }
        return weight;
    }
}
