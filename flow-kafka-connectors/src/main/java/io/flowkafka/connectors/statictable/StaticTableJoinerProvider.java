package io.flowkafka.connectors.statictable;

import io.flowkafka.spi.StaticTableProvider;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericRecord;
import org.jspecify.annotations.Nullable;

/**
 * The tables a {@code TStaticTableKeyVisitorJoiner} reads, on the local filesystem: {@code parameters.tables_path}
 * is a tables directory; {@code parameters.table} names the table to read, or, without it, the newest table by the
 * timestamp locator (ISO8601 names, filtered by {@code table_name_filter}) is read, chosen again at each pass, so a
 * newly published table is read from the next pass on. A read starts at the first row of its hash, found by binary
 * search over row indexes (the reader seeks to a row through the parts' sync marks).
 *
 * <p>Found by flow-kafka-core through {@link java.util.ServiceLoader}. Thread-safe: it holds no state.
 */
public final class StaticTableJoinerProvider implements StaticTableProvider {
    private static final Set<String> NAMES = Set.of("tables_path", "table", "table_name_filter");

    /** A provider; {@link java.util.ServiceLoader} calls this. */
    public StaticTableJoinerProvider() {
    }

    @Override
    public List<String> problems(Map<String, Object> parameters) {
        List<String> problems = new ArrayList<>();
        Object path = parameters.get("tables_path");
        if (!(path instanceof String s) || s.isBlank()) {
            problems.add("parameters.tables_path must name the tables directory but is " + path);
        }
        for (String key : List.of("table", "table_name_filter")) {
            Object v = parameters.get(key);
            if (v != null && !(v instanceof String)) {
                problems.add("parameters." + key + " must be a string but is " + v);
            }
        }
        if (parameters.get("table_name_filter") instanceof String filter) {
            try {
                Pattern.compile(filter);
            } catch (PatternSyntaxException e) {
                problems.add("parameters.table_name_filter " + filter + " is not a regular expression: "
                        + e.getDescription() + "; set a Java regular expression that matches whole table names");
            }
            if (parameters.get("table") != null) {
                problems.add("parameters.table names the table to read, so table_name_filter would never be applied; "
                        + "give one of them: table for a fixed table, table_name_filter to read the newest table it "
                        + "matches");
            }
        }
        for (String key : parameters.keySet()) {
            if (!NAMES.contains(key)) {
                problems.add("unknown parameter '" + key + "'; use tables_path, table and table_name_filter");
            }
        }
        return problems;
    }

    @Override
    public Optional<Schema> rowSchema(Map<String, Object> parameters) throws IOException {
        if (!Files.isDirectory(root(parameters))) {
            return Optional.empty();
        }
        TablesDirectory directory = LocalTablesDirectory.open(root(parameters));
        String table = table(directory, parameters);
        if (table == null || !directory.tableNames().contains(table)) {
            return Optional.empty();
        }
        StaticTableReader reader = StaticTableReader.open(directory, table);
        if (reader.rowCount() == 0) {
            return Optional.empty();
        }
        try (TableRowIterator rows = reader.rows(0, 1)) {
            return Optional.of(rows.next().getSchema());
        }
    }

    @Override
    public Rows open(Map<String, Object> parameters, String hashColumn, long fromHash) throws IOException {
        Path root = root(parameters);
        if (!Files.isDirectory(root)) {
            throw new NoSuchFileException(root.toString(), null, "the tables directory does not exist");
        }
        TablesDirectory directory = LocalTablesDirectory.open(root);
        String table = table(directory, parameters);
        if (table == null) {
            throw new NoSuchFileException(root.toString(), null, "the tables directory holds no table with a "
                    + "timestamp yet");
        }
        if (directory.tableNames().contains(table) && !directory.complete(table)) {
            throw new NoSuchFileException(root.resolve(table).toString(), null, "the table is not complete yet (no "
                    + "_table.json and no _SUCCESS file)");
        }
        StaticTableReader reader = StaticTableReader.open(directory, table);
        TableRowIterator rows = reader.rows(firstRow(reader, hashColumn, fromHash), reader.rowCount());
        return new Rows() {
            @Override
            public String table() {
                return root.resolve(table).toString();
            }

            @Override
            public boolean hasNext() {
                return rows.hasNext();
            }

            @Override
            public GenericRecord next() {
                return rows.next();
            }

            @Override
            public void close() {
                rows.close();
            }
        };
    }

    /**
     * The first row whose hash is at least {@code fromHash} (unsigned), by binary search over row indexes: the
     * table is sorted by the hash (an unsorted table is reported as the scan reads it).
     */
    private static long firstRow(StaticTableReader reader, String hashColumn, long fromHash) {
        long lo = 0;
        long hi = reader.rowCount();
        if (fromHash == 0) {
            return 0;
        }
        while (lo < hi) {
            long mid = (lo + hi) >>> 1;
            long hash;
            try (TableRowIterator it = reader.rows(mid, mid + 1)) {
                Object h = it.next().get(hashColumn);
                hash = h instanceof Number n ? n.longValue() : 0L;
            }
            if (Long.compareUnsigned(hash, fromHash) < 0) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }

    private static Path root(Map<String, Object> parameters) {
        return Path.of(String.valueOf(parameters.get("tables_path")));
    }

    /** The table given, or the newest complete one the locator finds; null if there is none. */
    private static @Nullable String table(TablesDirectory directory, Map<String, Object> parameters)
            throws IOException {
        Object table = parameters.get("table");
        if (table != null) {
            return table.toString();
        }
        Object filter = parameters.get("table_name_filter");
        TableTimestampLocator locator = TableTimestampLocator.of(TableTimestampLocator.Source.NAME,
                filter == null ? null : filter.toString());
        List<LocatedTable> located = locator.inOrder(directory);
        for (int i = located.size() - 1; i >= 0; i--) {
            if (directory.complete(located.get(i).name())) {
                return located.get(i).name(); // a newer one another tool is still writing waits until complete
            }
        }
        return null;
    }
}
