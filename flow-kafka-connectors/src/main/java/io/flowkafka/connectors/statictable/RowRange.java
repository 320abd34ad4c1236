package io.flowkafka.connectors.statictable;

/**
 * Rows {@code [from, to)} of a static table.
 *
 * @param from the first row index, {@code >= 0}
 * @param to the index after the last row, {@code >= from}
 */
public record RowRange(long from, long to) {
    /**
     * Checks the bounds.
     *
     * @param from the first row index, {@code >= 0}
     * @param to the index after the last row, {@code >= from}
     * @throws IllegalArgumentException if {@code from < 0} or {@code to < from}
     */
    public RowRange {
        if (from < 0 || to < from) {
            throw new IllegalArgumentException("row range must have 0 <= from <= to but was [" + from + ", " + to + ")");
        }
    }

    /**
     * The number of rows.
     *
     * @return {@code to - from}
     */
    public long size() {
        return to - from;
    }
}
