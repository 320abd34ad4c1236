package io.flowkafka.connectors.statictable;

/**
 * A sync point of an Avro part file: the block starting at {@code position} begins with row
 * {@code row} of the part. {@link org.apache.avro.file.DataFileReader#seek(long)} takes the position.
 *
 * @param row the part-local index of the first row of the block, {@code >= 0}
 * @param position the byte position returned by {@link org.apache.avro.file.DataFileWriter#sync()}, {@code >= 0}
 */
public record SyncMark(long row, long position) {
    /**
     * Checks the fields.
     *
     * @param row the row, {@code >= 0}
     * @param position the byte position, {@code >= 0}
     * @throws IllegalArgumentException if either is negative
     */
    public SyncMark {
        if (row < 0 || position < 0) {
            throw new IllegalArgumentException("sync mark row and position must be >= 0 but were " + row + " and "
                    + position);
        }
    }
}
