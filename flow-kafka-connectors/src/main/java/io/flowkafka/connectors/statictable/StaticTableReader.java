package io.flowkafka.connectors.statictable;

import java.io.EOFException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.Objects;
import org.apache.avro.AvroRuntimeException;
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
 * <p>A part that holds fewer rows than the attributes say (a cut file) or cannot be decoded (a damaged one) is an
 * {@link UncheckedIOException} naming the part and the row: a row is never taken from the wrong part.
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
        private long partEnd;
        private @Nullable TablePart part;
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
                // parts are told apart by their row counts in the attributes, never by where a file happens to end
                while (reader == null || next >= partEnd) {
                    closeReader();
                    TablePart p = parts.next();
                    partStart = partEnd;
                    partEnd += p.rowCount();
                    if (partEnd <= next) {
                        continue;
                    }
                    part = p;
                    SeekableInput in = directory.openPart(table, p.name());
                    reader = new DataFileReader<>(in, readerSchema == null
                            ? new GenericDatumReader<>() : new GenericDatumReader<>(null, readerSchema));
                    skip(reader, in, p, next - partStart);
                }
                if (!reader.hasNext()) {
                    throw new EOFException("part " + part.name() + " holds fewer rows than the table's attributes "
                            + "say (" + part.rowCount() + "): it has no row " + (next - partStart)
                            + "; the file was cut (a partial copy, a full disk)");
                }
                return true;
            } catch (IOException | AvroRuntimeException e) {
                throw failure(e);
            }
        }

        @Override
        public GenericRecord next() {
            if (!hasNext()) {
                throw new NoSuchElementException("row " + next + " is past the range's end " + to);
            }
            GenericRecord row;
            try {
                row = reader.next();
            } catch (AvroRuntimeException e) {
                throw failure(e);
            }
            next++;
            return row;
        }

        /** An I/O failure naming the table, the row and the part; a damaged file's Avro error becomes one too. */
        private UncheckedIOException failure(Exception e) {
            String where = "cannot read table " + table + " at row " + next
                    + (part == null ? "" : " (part " + part.name() + ")");
            IOException cause = e instanceof IOException io ? io
                    : new IOException("the part file is damaged: " + e.getMessage(), e);
            UncheckedIOException failure = new UncheckedIOException(where + ": " + cause.getMessage(), cause);
            try {
                close();
            } catch (UncheckedIOException closing) {
                failure.addSuppressed(closing);
            }
            return failure;
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
