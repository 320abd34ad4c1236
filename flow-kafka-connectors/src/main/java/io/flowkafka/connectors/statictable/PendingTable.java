package io.flowkafka.connectors.statictable;

import java.io.IOException;
import java.io.OutputStream;

/**
 * A table being written: part files are added under a name nobody lists, and {@link #publish}
 * makes the table visible, complete, in one step.
 *
 * <p>Not thread-safe: one writer owns it. Closing it without publishing discards it.
 */
public interface PendingTable extends AutoCloseable {
    /**
     * Creates a part file.
     *
     * @param part the part name, a file name such as {@code part-00000.avro}; not null
     * @return a stream the caller closes before {@link #publish}
     * @throws java.nio.file.FileAlreadyExistsException if the part exists
     * @throws IllegalStateException if the table was published or closed
     * @throws IOException if the file cannot be created
     */
    OutputStream createPart(String part) throws IOException;

    /**
     * Makes the table visible under {@code table} with {@code attributes}, atomically: a lister
     * sees nothing, or the whole table with its attributes.
     *
     * @param table the table name; not null, not empty, no {@code /}, not starting with {@code .} or {@code _}
     * @param attributes the table's attributes; its parts must be the parts created here
     * @throws java.nio.file.FileAlreadyExistsException if a table of that name exists; the pending
     *     table is then still open and may be published under another name
     * @throws IllegalArgumentException if the name is invalid or the attributes list a part not created here
     * @throws IllegalStateException if the table was published or closed
     * @throws IOException if it cannot be published; nothing is then visible
     */
    void publish(String table, TableAttributes attributes) throws IOException;

    /**
     * Discards the table unless it was published.
     *
     * @throws IOException if the pending files cannot be deleted
     */
    @Override
    void close() throws IOException;
}
