package io.flowkafka.connectors.statictable;

import java.io.EOFException;
import java.io.UncheckedIOException;
import org.apache.avro.generic.GenericRecord;
import org.jspecify.annotations.Nullable;

/**
 * The row range a static-table source is reading, kept open between its steps: the next step goes on from the open
 * part file instead of opening it again and seeking to its row. Only a cache: a step that starts anywhere else (an
 * other range, another table, a progress rolled back) opens the range afresh.
 *
 * <p>Not thread-safe: owned by the task's stream thread.
 */
final class OpenRange {
    private @Nullable TableRowIterator rows;
    private @Nullable String table;
    private long next;
    private long end;

    /**
     * The rows of {@code table} from {@code from} to {@code to}: the open iterator if it reads on at {@code from}, else
     * a new one.
     */
    TableRowIterator at(String tableId, StaticTableReader reader, long from, long to) {
        if (rows != null && tableId.equals(table) && next == from && end == to) {
            return rows;
        }
        close();
        rows = reader.rows(from, to);
        table = tableId;
        next = from;
        end = to;
        return rows;
    }

    /** Whether an iterator of {@code tableId} is open (a step would read on from it). */
    boolean isOpenOn(String tableId) {
        return rows != null && tableId.equals(table);
    }

    /** The next row of {@code it}, an iterator of {@link #at}; a range shorter than its table said is an I/O error. */
    GenericRecord next(TableRowIterator it) {
        if (!it.hasNext()) {
            close();
            throw new UncheckedIOException(new EOFException("table " + table + " ended at row " + next
                    + ", before the end of its range at row " + end));
        }
        next++;
        return it.next();
    }

    /** Closes the open iterator, if any. */
    void close() {
        TableRowIterator r = rows;
        rows = null;
        table = null;
        if (r != null) {
            r.close();
        }
    }
}
