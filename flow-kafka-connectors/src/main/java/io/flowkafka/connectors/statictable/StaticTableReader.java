package io.flowkafka.connectors.statictable;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.Objects;
import org.apache.avro.Schema;
import org.apache.avro.file.DataFileReader;
import org.apache.avro.file.SeekableInput;
import org.apache.avro.generic.GenericDatumReader;
import org.apache.avro.generic.GenericRecord;
import org.jspecify.annotations.Nullable;

/**
 * Reads one published static table by row index: rows are numbered from 0 across the part files in
 * the order the table's attributes list them, and {@link #rows(long, long)} reads {@code [from, to)}
 * without decoding what lies before {@code from}: whole parts are skipped by their row counts, the
 * reader seeks to the part's last {@link SyncMark} before {@code from}, and skips whole Avro blocks
 * from there by their block headers, without reading or inflating their data ({@link AvroBlocks}).
 *
 * <p>Thread-safe: each {@link #rows} call opens its own files. Holds no open file itself.
 */
public final class StaticTableReader {
    private final TablesDirectory directory;
    private final String table;
    private final TableAttributes attributes;
    private final @Nullable Schema readerSchema;

    private StaticTableReader(TablesDirectory directory, String table, TableAttributes attributes,
            @Nullable Schema readerSchema) {
        this.directory = directory;
        this.table = table;
        this.attributes = attributes;
        this.readerSchema = readerSchema;
    }

    /**
     * Opens a published table, reading its attributes once.
     *
     * @param directory the tables directory; not null
     * @param table the table name; not null
     * @return the reader
     * @throws java.nio.file.NoSuchFileException if the table is not published
     * @throws IOException if its attributes cannot be read
     */
    public static StaticTableReader open(TablesDirectory directory, String table) throws IOException {
        return open(directory, table, null);
    }

    /**
     * Opens a published table, reading rows with a reader schema (Avro schema resolution).
     *
     * @param directory the tables directory; not null
     * @param table the table name; not null
     * @param readerSchema the schema to read rows as; null for each part's writer schema
     * @return the reader
     * @throws java.nio.file.NoSuchFileException if the table is not published
     * @throws IOException if its attributes cannot be read
     */
    public static StaticTableReader open(TablesDirectory directory, String table, @Nullable Schema readerSchema)
            throws IOException {
        Objects.requireNonNull(directory, "directory");
        return new StaticTableReader(directory, table, directory.attributes(table), readerSchema);
    }

    /**
     * The table's attributes, as read when the reader was opened.
     *
     * @return the attributes
     */
    public TableAttributes attributes() {
        return attributes;
    }

    /**
     * The number of rows of the table.
     *
     * @return the row count
     */
    public long rowCount() {
        return attributes.rowCount();
    }

    /**
     * The stored size of the table's part files.
     *
     * @return the byte size
     */
    public long byteSize() {
        return attributes.byteSize();
    }

    /**
     * The data weight of the table: its rows' Avro binary encodings, uncompressed.
     *
     * @return the data weight in bytes
     */
    public long dataWeight() {
        return attributes.dataWeight();
    }

    /**
     * Reads rows {@code [from, to)} in order.
     *
     * @param from the first row index, {@code >= 0}
     * @param to the row index after the last, {@code from <= to <= rowCount()}
     * @return an iterator the caller closes; it throws {@link UncheckedIOException} if a part cannot be read
     * @throws IllegalArgumentException if the range is outside the table
     */
    public TableRowIterator rows(long from, long to) {
        if (from < 0 || from > to || to > rowCount()) {
            throw new IllegalArgumentException("row range [" + from + ", " + to + ") of table " + table
                    + " must lie within [0, " + rowCount() + ")");
        }
        return new PartsIterator(from, to);
    }

    /**
     * Reads the whole table into a list; for tests and small tables.
     *
     * @return every row in order
     * @throws IOException if a part cannot be read
     */
    public List<GenericRecord> readAll() throws IOException {
        List<GenericRecord> rows = new ArrayList<>();
        try (TableRowIterator it = rows(0, rowCount())) {
            it.forEachRemaining(rows::add);
        } catch (UncheckedIOException e) {
            throw e.getCause();
        }
        return rows;
    }

    /** Walks the parts that overlap {@code [from, to)}. */
    private final class PartsIterator implements TableRowIterator {
        private final Iterator<TablePart> parts;
        private long partStart;
        private long next;
        private final long to;
        private @Nullable DataFileReader<GenericRecord> reader;

        PartsIterator(long from, long to) {
            this.parts = attributes.parts().iterator();
            this.next = from;
            this.to = to;
        }

        @Override
        public boolean hasNext() {
            if (next >= to) {
                close();
                return false;
            }
            try {
                while (reader == null || !reader.hasNext()) {
                    closeReader();
                    TablePart p = parts.next();
                    if (partStart + p.rowCount() <= next) {
                        partStart += p.rowCount();
                        continue;
                    }
                    SeekableInput in = directory.openPart(table, p.name());
                    reader = new DataFileReader<>(in, readerSchema == null
                            ? new GenericDatumReader<>() : new GenericDatumReader<>(null, readerSchema));
                    skip(reader, in, p, next - partStart);
                    partStart += p.rowCount();
                }
                return true;
            } catch (IOException e) {
                UncheckedIOException failure = new UncheckedIOException("cannot read table " + table + " at row " + next, e);
                close();
                throw failure;
            }
        }

        @Override
        public GenericRecord next() {
            if (!hasNext()) {
                throw new NoSuchElementException("row " + next + " is past the range's end " + to);
            }
            next++;
            return reader.next();
        }

        @Override
        public void close() {
            next = to;
            try {
                closeReader();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        private void closeReader() throws IOException {
            if (reader != null) {
                DataFileReader<GenericRecord> r = reader;
                reader = null;
                r.close();
            }
        }
    }

    /** Seeks to the last sync mark before row {@code rows}, walks whole blocks by their headers, decodes the rest. */
    private static void skip(DataFileReader<GenericRecord> reader, SeekableInput in, TablePart part, long rows)
            throws IOException {
        if (rows <= 0) {
            return;
        }
        SyncMark mark = part.markAtOrBefore(rows);
        long position = reader.previousSync();
        if (mark != null && mark.row() > 0) {
            position = mark.position();
            rows -= mark.row();
        }
        AvroBlocks.Walk walk = AvroBlocks.skip(in, position, rows);
        reader.seek(walk.position());
        rows -= walk.skipped();
        GenericRecord reuse = null;
        for (; rows > 0 && reader.hasNext(); rows--) {
            reuse = reader.next(reuse);
        }
    }
}
