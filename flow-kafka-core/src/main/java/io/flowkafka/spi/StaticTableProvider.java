package io.flowkafka.spi;

import java.io.IOException;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.ServiceLoader;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericRecord;
import org.jspecify.annotations.Nullable;

/**
 * Opens the static table a {@code TStaticTableKeyVisitorJoiner} reads: the plug between flow-kafka-core, which
 * merges the table into a key visitor's scan, and the module that stores tables (flow-kafka-connectors). Found with
 * {@link ServiceLoader}; at most one implementation is used.
 *
 * <p>Reference 000, "Static table joiner": the table "must be strictly sorted by the computation's
 * {@code group_by_schema}"; the core checks the order as it reads, so an implementation only returns rows in the
 * table's own order.
 *
 * <p>Implementations are thread-safe; a {@link Rows} is used by one thread.
 */
public interface StaticTableProvider {
    /**
     * The problems of a joiner's parameters, checked at spec submit.
     *
     * @param parameters the joiner's {@code parameters}
     * @return one message per problem (each with its fix); empty if they are valid
     */
    List<String> problems(Map<String, Object> parameters);

    /**
     * The row schema of the table the parameters select now, to check its key prefix at submit.
     *
     * @param parameters the joiner's {@code parameters}, valid
     * @return the schema; empty if the table does not exist yet or has no rows
     * @throws IOException if the tables cannot be listed or read
     */
    Optional<Schema> rowSchema(Map<String, Object> parameters) throws IOException;

    /**
     * Opens the rows of the table the parameters select now (the newest table, for a directory), in the table's
     * order, from the first row whose {@code hashColumn} is at least {@code fromHash} (unsigned): a task reads only
     * its hash range. The table is sorted by that column, so an implementation may seek by binary search; one that
     * cannot seek returns earlier rows too (the caller skips them).
     *
     * @param parameters the joiner's {@code parameters}, valid
     * @param hashColumn the first column of the computation's {@code group_by_schema} (a uint64 hash)
     * @param fromHash the smallest hash wanted, unsigned
     * @return the rows; the caller closes them
     * @throws IOException if no table is available or it cannot be read
     */
    Rows open(Map<String, Object> parameters, String hashColumn, long fromHash) throws IOException;

    /** The rows of one table, in order; {@link #hasNext()} and {@link #next()} may throw unchecked I/O errors. */
    interface Rows extends Iterator<GenericRecord>, AutoCloseable {
        /**
         * The table being read, for messages.
         *
         * @return its name
         */
        String table();

        /** Releases the open files; further calls are harmless. */
        @Override
        void close();
    }

    /**
     * The implementation on the class path, if any.
     *
     * @return the first provider {@link ServiceLoader} finds; empty without one
     */
    static Optional<StaticTableProvider> find() {
        return ServiceLoader.load(StaticTableProvider.class, StaticTableProvider.class.getClassLoader()).findFirst();
    }

    /**
     * The implementation on the class path, or null; as {@link #find()}.
     *
     * @return the provider or null
     */
    static @Nullable StaticTableProvider findOrNull() {
        return find().orElse(null);
    }
}
