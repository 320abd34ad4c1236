package io.flowkafka.connectors.statictable;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.util.List;
import org.apache.avro.file.SeekableInput;

/**
 * A directory of immutable static tables: the store SPI under the static-table source and the
 * arrival-order table sink. It owns one rule: a table is listed only once it is complete, and a
 * listed table never changes until it is removed.
 *
 * <p>A table is a set of Avro object-container part files plus its {@link TableAttributes}. A
 * writer builds it with {@link #beginTable()} under a name nobody lists and makes it visible in one
 * atomic step, {@link PendingTable#publish}. The directory itself has attributes too (a sink's
 * progress), replaced as a whole and atomically by {@link #replaceDirectoryAttributes}.
 *
 * <p>What an object-store implementation (S3, GCS) needs:
 * <ol>
 *   <li>atomic publish without rename: write the part objects under a prefix nobody lists (for
 *       example {@code <dir>/.pending/<uuid>/}), then create one manifest object per table
 *       ({@code <dir>/<table>/_table.json}, holding the attributes and the part keys) with a
 *       conditional put ({@code If-None-Match: *}); listing returns only tables whose manifest exists,
 *       so the manifest put is the commit point;</li>
 *   <li>directory attributes replaced with a conditional put on the previous ETag
 *       ({@code If-Match}), so two writers cannot both win;</li>
 *   <li>{@link #openPart} as ranged GETs behind {@link SeekableInput}, so a reader can skip to a
 *       row range;</li>
 *   <li>removal that deletes the manifest first, then the parts, so a half-removed table is never
 *       listed; and a sweep of abandoned pending prefixes (a lifecycle rule will do).</li>
 * </ol>
 *
 * <p>Thread-safety: implementations are safe for concurrent use; one table name is published by at
 * most one writer (a second publish under a taken name fails).
 */
public interface TablesDirectory {
    /**
     * The published tables, in name order (Java's {@code String} order).
     *
     * @return the table names; never the name of a table still being written or being removed
     * @throws IOException if the directory cannot be read
     */
    List<String> tableNames() throws IOException;

    /**
     * Whether a listed table is complete. A table published through this SPI always is; a child written by another
     * tool is once its writer marked it done with a {@code _SUCCESS} file, as Hadoop's output committer (Spark, Hive,
     * MapReduce) leaves on commit. Readers wait for a table that is not: its files may still be coming.
     *
     * @param table the table name; not null
     * @return whether the table may be read
     * @throws IOException if the directory cannot be read
     */
    default boolean complete(String table) throws IOException {
        return true;
    }

    /**
     * The attributes of a published table. A child written by another tool, without attributes,
     * gets no table timestamp, no custom attribute and its part files in name order.
     *
     * @param table the table name; not null
     * @return the table's attributes
     * @throws java.nio.file.NoSuchFileException if no such table is published (it may have been removed)
     * @throws IOException if the attributes cannot be read
     */
    TableAttributes attributes(String table) throws IOException;

    /**
     * Opens one part file of a published table for reading with seeks.
     *
     * @param table the table name; not null
     * @param part the part name, as {@link TableAttributes#parts()} lists it; not null
     * @return an input the caller closes
     * @throws java.nio.file.NoSuchFileException if the table or the part does not exist
     * @throws IOException if the part cannot be opened
     */
    SeekableInput openPart(String table, String part) throws IOException;

    /**
     * Starts writing a new table under a name nobody lists.
     *
     * @return the pending table; the caller publishes or aborts it
     * @throws IOException if the pending table cannot be created
     */
    PendingTable beginTable() throws IOException;

    /**
     * Removes a published table so that it is no longer listed, then deletes its files.
     *
     * @param table the table name; not null
     * @return whether the table existed
     * @throws IOException if it cannot be removed
     */
    boolean removeTable(String table) throws IOException;

    /**
     * The attributes of the directory itself, such as a sink's {@code progress}.
     *
     * @return a fresh copy of the attributes; an empty object when none were written
     * @throws IOException if they cannot be read
     */
    ObjectNode directoryAttributes() throws IOException;

    /**
     * Replaces the attributes of the directory as a whole, atomically: a reader sees the old or the
     * new attributes, never a mix or a partial write.
     *
     * @param attributes the new attributes; not null
     * @throws IOException if they cannot be written; the old attributes are then still in place
     */
    void replaceDirectoryAttributes(ObjectNode attributes) throws IOException;

    /**
     * Deletes what crashed writers left behind (pending tables never published, removals cut short).
     * Call it only when no writer of this directory is running.
     *
     * @return the number of leftovers deleted
     * @throws IOException if they cannot be deleted
     */
    int removeAbandoned() throws IOException;
}
