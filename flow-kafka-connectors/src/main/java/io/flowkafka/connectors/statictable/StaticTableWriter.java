package io.flowkafka.connectors.statictable;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.apache.avro.Schema;
import org.apache.avro.file.CodecFactory;
import org.apache.avro.file.DataFileWriter;
import org.apache.avro.generic.GenericDatumWriter;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.EncoderFactory;
import org.jspecify.annotations.Nullable;

/**
 * Writes one static table of {@link GenericRecord}s to a {@link TablesDirectory}: rows go to Avro
 * part files of at most {@code rowsPerPart} rows each, and {@link #publish()} makes the whole table
 * visible at once with its {@code table_timestamp} and the per-part row counts and data weights the
 * reader uses to seek.
 *
 * <p>Usage:
 * <pre>{@code
 * try (StaticTableWriter w = StaticTableWriter.builder(directory, "2026-12-03T00:00:00Z", schema)
 *         .tableTimestamp(Instant.parse("2026-12-03T00:00:00Z")).rowsPerPart(100_000).open()) {
 *     for (GenericRecord row : rows) {
 *         w.append(row);
 *     }
 *     w.publish();
 * }
 * }</pre>
 *
 * <p>Not thread-safe. Closing the writer without {@link #publish()} discards everything written.
 */
public final class StaticTableWriter implements AutoCloseable {
    /** The default number of rows per part file. */
    public static final long DEFAULT_ROWS_PER_PART = 1_000_000;
    /** The default number of rows between two sync marks of a part's index. */
    public static final long DEFAULT_ROWS_PER_SYNC_MARK = 65_536;

    private final String table;
    private final Schema schema;
    private final @Nullable Instant tableTimestamp;
    private final long rowsPerPart;
    private final long rowsPerSyncMark;
    private final CodecFactory codec;
    private final Map<String, JsonNode> custom;
    private final PendingTable pending;
    private final GenericDatumWriter<GenericRecord> datumWriter;
    private final EncodedRow encoded = new EncodedRow();
    private final List<TablePart> parts = new ArrayList<>();
    private final List<SyncMark> partMarks = new ArrayList<>();
    private @Nullable BinaryEncoder encoder;
    private @Nullable DataFileWriter<GenericRecord> part;
    private @Nullable CountingOutputStream partBytes;
    private long partRows;
    private long partWeight;
    private boolean finished;

    private StaticTableWriter(Builder b, PendingTable pending) {
        this.table = b.table;
        this.schema = b.schema;
        this.tableTimestamp = b.tableTimestamp;
        this.rowsPerPart = b.rowsPerPart;
        this.rowsPerSyncMark = b.rowsPerSyncMark;
        this.codec = b.codec;
        this.custom = new LinkedHashMap<>(b.custom);
        this.pending = pending;
        this.datumWriter = new GenericDatumWriter<>(schema);
    }

    /**
     * Starts a writer's options.
     *
     * @param directory where the table goes; not null
     * @param table the table name; not null, a valid table name
     * @param schema the schema of every row; not null, a record schema
     * @return the builder
     * @throws IllegalArgumentException if the name is invalid or the schema is not a record
     */
    public static Builder builder(TablesDirectory directory, String table, Schema schema) {
        return new Builder(directory, table, schema);
    }

    /**
     * Writes a whole table in one call.
     *
     * @param directory where the table goes; not null
     * @param table the table name; not null
     * @param schema the schema of every row; not null
     * @param tableTimestamp the {@code table_timestamp}; may be null for a table without one
     * @param rows the rows in order; not null
     * @return the attributes of the published table
     * @throws java.nio.file.FileAlreadyExistsException if the table exists
     * @throws IOException if it cannot be written
     */
    public static TableAttributes write(TablesDirectory directory, String table, Schema schema,
            @Nullable Instant tableTimestamp, Iterable<? extends GenericRecord> rows) throws IOException {
        Builder b = builder(directory, table, schema);
        if (tableTimestamp != null) {
            b.tableTimestamp(tableTimestamp);
        }
        try (StaticTableWriter w = b.open()) {
            for (GenericRecord r : rows) {
                w.append(r);
            }
            return w.publish();
        }
    }

    /**
     * Appends one row.
     *
     * @param row the row; not null, of the writer's schema
     * @throws IllegalStateException if the table was published or the writer closed
     * @throws IOException if the part file cannot be written
     */
    public void append(GenericRecord row) throws IOException {
        Objects.requireNonNull(row, "row");
        checkOpen();
        encoded.reset();
        encoder = EncoderFactory.get().directBinaryEncoder(encoded, encoder);
        datumWriter.write(row, encoder);
        encoder.flush();
        appendEncoded(encoded.asBuffer());
    }

    /**
     * Appends one row given as its Avro binary encoding in the writer's schema, as {@link #append} would encode it;
     * the bytes are not checked.
     *
     * @param row the encoded row, from its position to its limit; not null; not kept after the call
     * @throws IllegalStateException if the table was published or the writer closed
     * @throws IOException if the part file cannot be written
     */
    public void appendEncoded(ByteBuffer row) throws IOException {
        Objects.requireNonNull(row, "row");
        checkOpen();
        if (part == null) {
            startPart();
        } else if (partRows % rowsPerSyncMark == 0) {
            partMarks.add(new SyncMark(partRows, part.sync()));
        }
        int size = row.remaining();
        part.appendEncoded(row);
        partRows++;
        partWeight += size;
        if (partRows >= rowsPerPart) {
            finishPart();
        }
    }

    /**
     * Sets a custom attribute of the table before it is published, e.g. one that depends on the rows written.
     *
     * @param name the attribute name; not null, not {@code table_timestamp} or {@code parts}
     * @param value the value; not null
     * @throws IllegalArgumentException if the name is reserved
     * @throws IllegalStateException if the table was published or the writer closed
     */
    public void attribute(String name, JsonNode value) {
        checkOpen();
        custom.put(checkAttributeName(name), Objects.requireNonNull(value, "value"));
    }

    private static String checkAttributeName(String name) {
        Objects.requireNonNull(name, "name");
        if (name.equals(TableAttributes.TABLE_TIMESTAMP) || name.equals("parts")) {
            throw new IllegalArgumentException("attribute name " + name + " is reserved; use tableTimestamp(..)");
        }
        return name;
    }

    /**
     * Publishes the table with every row appended so far; a table of no rows has no part.
     *
     * @return the attributes of the published table
     * @throws java.nio.file.FileAlreadyExistsException if a table of that name exists
     * @throws IllegalStateException if the table was published or the writer closed
     * @throws IOException if it cannot be published; nothing is then visible
     */
    public TableAttributes publish() throws IOException {
        checkOpen();
        finishPart();
        TableAttributes attributes = new TableAttributes(tableTimestamp, parts, custom);
        pending.publish(table, attributes);
        finished = true;
        return attributes;
    }

    /**
     * Closes the writer; discards the table unless it was published.
     *
     * @throws IOException if the pending files cannot be deleted
     */
    @Override
    public void close() throws IOException {
        try {
            if (part != null) {
                part.close();
                part = null;
            }
        } finally {
            finished = true;
            pending.close();
        }
    }

    private void startPart() throws IOException {
        partBytes = new CountingOutputStream(pending.createPart(partName(parts.size())));
        DataFileWriter<GenericRecord> w = new DataFileWriter<>(new GenericDatumWriter<GenericRecord>(schema));
        w.setCodec(codec);
        part = w.create(schema, partBytes);
        partRows = 0;
        partWeight = 0;
        partMarks.clear();
    }

    private void finishPart() throws IOException {
        if (part == null) {
            return;
        }
        part.close();
        part = null;
        parts.add(new TablePart(partName(parts.size()), partRows, partBytes.count, partWeight, partMarks));
    }

    private static String partName(int index) {
        return String.format("part-%05d.avro", index);
    }

    private void checkOpen() {
        if (finished) {
            throw new IllegalStateException("writer of table " + table + " was already published or closed");
        }
    }

    /** One row's Avro encoding, reused from row to row without a copy. */
    private static final class EncodedRow extends ByteArrayOutputStream {
        ByteBuffer asBuffer() {
            return ByteBuffer.wrap(buf, 0, count);
        }
    }

    /** Counts the bytes of a part as they are written. */
    private static final class CountingOutputStream extends java.io.FilterOutputStream {
        long count;

        CountingOutputStream(OutputStream out) {
            super(out);
        }

        @Override
        public void write(int b) throws IOException {
            out.write(b);
            count++;
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            out.write(b, off, len);
            count += len;
        }
    }

    /** The options of a {@link StaticTableWriter}; not thread-safe. */
    public static final class Builder {
        private final TablesDirectory directory;
        private final String table;
        private final Schema schema;
        private @Nullable Instant tableTimestamp;
        private long rowsPerPart = DEFAULT_ROWS_PER_PART;
        private long rowsPerSyncMark = DEFAULT_ROWS_PER_SYNC_MARK;
        private CodecFactory codec = CodecFactory.deflateCodec(1);
        private final Map<String, JsonNode> custom = new LinkedHashMap<>();

        private Builder(TablesDirectory directory, String table, Schema schema) {
            this.directory = Objects.requireNonNull(directory, "directory");
            LocalTablesDirectory.checkTableName(table);
            this.table = table;
            this.schema = Objects.requireNonNull(schema, "schema");
            if (schema.getType() != Schema.Type.RECORD) {
                throw new IllegalArgumentException("table schema must be a record schema but was " + schema.getType());
            }
        }

        /**
         * Sets the {@code table_timestamp} attribute; without it the table has none.
         *
         * @param timestamp the table timestamp; not null
         * @return this builder
         */
        public Builder tableTimestamp(Instant timestamp) {
            this.tableTimestamp = Objects.requireNonNull(timestamp, "timestamp");
            return this;
        }

        /**
         * Sets the maximum number of rows per part file; {@value #DEFAULT_ROWS_PER_PART} by default.
         *
         * @param rows the rows per part, {@code >= 1}
         * @return this builder
         * @throws IllegalArgumentException if {@code rows < 1}
         */
        public Builder rowsPerPart(long rows) {
            if (rows < 1) {
                throw new IllegalArgumentException("rowsPerPart must be >= 1 but was " + rows);
            }
            this.rowsPerPart = rows;
            return this;
        }

        /**
         * Sets how many rows lie between two sync marks of a part's index, which a reader of a row
         * range seeks by; {@value #DEFAULT_ROWS_PER_SYNC_MARK} by default. Each mark also ends an
         * Avro block, so a small value makes small blocks.
         *
         * @param rows the rows per sync mark, {@code >= 1}
         * @return this builder
         * @throws IllegalArgumentException if {@code rows < 1}
         */
        public Builder rowsPerSyncMark(long rows) {
            if (rows < 1) {
                throw new IllegalArgumentException("rowsPerSyncMark must be >= 1 but was " + rows);
            }
            this.rowsPerSyncMark = rows;
            return this;
        }

        /**
         * Sets the Avro codec of the part files; deflate level 1 by default.
         *
         * @param codec the codec; not null
         * @return this builder
         */
        public Builder codec(CodecFactory codec) {
            this.codec = Objects.requireNonNull(codec, "codec");
            return this;
        }

        /**
         * Sets a custom attribute of the table.
         *
         * @param name the attribute name; not null, not {@code table_timestamp} or {@code parts}
         * @param value the value; not null
         * @return this builder
         * @throws IllegalArgumentException if the name is reserved
         */
        public Builder attribute(String name, JsonNode value) {
            custom.put(checkAttributeName(name), Objects.requireNonNull(value, "value"));
            return this;
        }

        /**
         * Opens the writer; its files stay invisible until {@link StaticTableWriter#publish()}.
         *
         * @return the writer; the caller closes it
         * @throws IOException if the pending table cannot be created
         */
        public StaticTableWriter open() throws IOException {
            return new StaticTableWriter(this, directory.beginTable());
        }
    }
}
