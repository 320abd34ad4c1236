package io.flowkafka.connectors.statictable;

import java.util.Objects;

/**
 * One Avro object-container file of a table, as its table's attributes list it.
 *
 * @param name the file name inside the table, such as {@code part-00000.avro}
 * @param rowCount the number of rows in the file
 * @param byteSize the size of the file in bytes, as stored (compressed)
 * @param dataWeight the sum of the rows' Avro binary encodings in bytes, uncompressed (Flow's data weight)
 */
public record TablePart(String name, long rowCount, long byteSize, long dataWeight) {
    /**
     * Checks the fields.
     *
     * @param name the file name; not null, not empty, without {@code /}
     * @param rowCount the number of rows, {@code >= 0}
     * @param byteSize the file size in bytes, {@code >= 0}
     * @param dataWeight the data weight in bytes, {@code >= 0}
     * @throws IllegalArgumentException if a name is empty or has a {@code /}, or a number is negative
     */
    public TablePart {
        Objects.requireNonNull(name, "name");
        if (name.isEmpty() || name.contains("/")) {
            throw new IllegalArgumentException("part name must be a non-empty file name but was '" + name + "'");
        }
        if (rowCount < 0 || byteSize < 0 || dataWeight < 0) {
            throw new IllegalArgumentException("part " + name + ": rowCount, byteSize and dataWeight must be >= 0 but were "
                    + rowCount + ", " + byteSize + ", " + dataWeight);
        }
    }
}
