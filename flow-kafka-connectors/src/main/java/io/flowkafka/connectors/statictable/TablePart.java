package io.flowkafka.connectors.statictable;

import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * One Avro object-container file of a table, as its table's attributes list it.
 *
 * @param name the file name inside the table, such as {@code part-00000.avro}
 * @param rowCount the number of rows in the file
 * @param byteSize the size of the file in bytes, as stored (compressed)
 * @param dataWeight the sum of the rows' Avro binary encodings in bytes, uncompressed (Flow's data weight)
 * @param syncMarks a sparse index of Avro sync points, ascending by row, to seek to a row range
 *     without reading what lies before it; may be empty
 */
public record TablePart(String name, long rowCount, long byteSize, long dataWeight, List<SyncMark> syncMarks) {
    /**
     * Checks the fields.
     *
     * @param name the file name; not null, not empty, without {@code /}
     * @param rowCount the number of rows, {@code >= 0}
     * @param byteSize the file size in bytes, {@code >= 0}
     * @param dataWeight the data weight in bytes, {@code >= 0}
     * @param syncMarks the sync index; not null, ascending by row, rows within {@code [0, rowCount]}
     * @throws IllegalArgumentException if a name is empty or has a {@code /}, a number is negative or
     *     the sync marks are out of order
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
        syncMarks = List.copyOf(Objects.requireNonNull(syncMarks, "syncMarks"));
        long previous = -1;
        for (SyncMark m : syncMarks) {
            if (m.row() <= previous || m.row() > rowCount) {
                throw new IllegalArgumentException("part " + name + ": sync marks must ascend by row within [0, "
                        + rowCount + "] but were " + syncMarks);
            }
            previous = m.row();
        }
    }

    /**
     * A part without a sync index.
     *
     * @param name the file name
     * @param rowCount the number of rows
     * @param byteSize the file size
     * @param dataWeight the data weight
     * @return the part
     */
    public static TablePart of(String name, long rowCount, long byteSize, long dataWeight) {
        return new TablePart(name, rowCount, byteSize, dataWeight, List.of());
    }

    /**
     * The last sync mark at or before a row, where a reader of that row can start.
     *
     * @param row a row of the part
     * @return the mark, or null to start at the beginning of the file
     */
    public @Nullable SyncMark markAtOrBefore(long row) {
        SyncMark best = null;
        for (SyncMark m : syncMarks) {
            if (m.row() > row) {
                break;
            }
            best = m;
        }
        return best;
    }
}
