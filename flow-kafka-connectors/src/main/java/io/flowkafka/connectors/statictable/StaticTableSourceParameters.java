package io.flowkafka.connectors.statictable;

import io.flowkafka.spec.Durations;
import io.flowkafka.spi.SourceProvider.Problem;
import java.math.BigDecimal;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;

/**
 * The parameters of the static-table source, parsed. Static: {@code tables} or {@code tables_path},
 * {@code table_name_filter}, {@code table_timestamp_locator}, {@code read_mode}, {@code watermark_delay},
 * {@code finite}, {@code range_row_count}, {@code max_rows_per_iteration}. Dynamic (also changed through the dynamic
 * spec): {@code max_rows_per_second}, {@code max_bytes_per_second}, {@code use_planned_timestamps}.
 *
 * @param tables the explicit tables, in read order; empty when {@code tables_path} is set
 * @param tablesPath the directory of tables; null when {@code tables} is set
 * @param locator the timestamp locator, with {@code table_name_filter}
 * @param newest whether only the newest table is read (reference data; a new table starts a new run)
 * @param watermarkDelay how far the watermark stays behind the earliest timestamp still to be emitted
 * @param finite whether the source completes once it read what is listed
 * @param rangeRowCount rows per range: ranges {@code i} with {@code i % partitions == partition} are a task's share
 * @param maxRowsPerIteration rows per step at most (the runtime may take several steps per punctuation)
 * @param limits the read limits
 * @param usePlannedTimestamps whether a table starting now gets a planned schedule
 */
record StaticTableSourceParameters(List<Path> tables, @Nullable Path tablesPath, TableTimestampLocator locator,
        boolean newest, Duration watermarkDelay, boolean finite, long rangeRowCount, int maxRowsPerIteration,
        ReadLimits limits, boolean usePlannedTimestamps) {
    /** Every parameter name. */
    static final Set<String> NAMES = Set.of("tables", "tables_path", "table_name_filter", "table_timestamp_locator",
            "read_mode", "watermark_delay", "finite", "range_row_count", "max_rows_per_iteration",
            "max_rows_per_second", "max_bytes_per_second", "use_planned_timestamps");
    /** The parameters the dynamic spec may change. */
    static final Set<String> DYNAMIC = Set.of("max_rows_per_second", "max_bytes_per_second", "use_planned_timestamps");
    static final Duration DEFAULT_WATERMARK_DELAY = Duration.ofHours(1);
    static final long DEFAULT_RANGE_ROW_COUNT = 1000;
    static final int DEFAULT_MAX_ROWS_PER_ITERATION = 1000;

    /**
     * Parses {@code p}, collecting every problem.
     *
     * @param p the parameters
     * @param of names the source and computation in messages
     * @param problems receives the problems
     * @return the parameters, or null if there was an error
     */
    static @Nullable StaticTableSourceParameters parse(Map<String, Object> p, String of, List<Problem> problems) {
        int before = problems.size();
        List<Path> tables = new ArrayList<>();
        Path tablesPath = null;
        Object t = p.get("tables");
        Object tp = p.get("tables_path");
        if ((t == null) == (tp == null)) {
            problems.add(Problem.error(t == null ? "parameters.tables_path" : "parameters.tables", of + " has "
                    + (t == null ? "neither 'tables' nor 'tables_path'" : "both 'tables' and 'tables_path'"),
                    "set exactly one: parameters.tables_path to a directory of tables, or parameters.tables to a list "
                            + "of table directories"));
        } else if (t != null) {
            if (!(t instanceof List<?> list) || list.isEmpty() || list.stream().anyMatch(e -> !(e instanceof String s)
                    || s.isBlank())) {
                problems.add(Problem.error("parameters.tables", of + " has tables " + t,
                        "set a non-empty list of table directories, e.g. [\"/data/ref/2026-12-03\"]"));
            } else {
                list.forEach(e -> tables.add(Path.of((String) e)));
                List<Path> repeated = tables.stream().map(x -> x.toAbsolutePath().normalize())
                        .collect(Collectors.groupingBy(x -> x, LinkedHashMap::new, Collectors.counting()))
                        .entrySet().stream().filter(e -> e.getValue() > 1).map(Map.Entry::getKey).toList();
                if (!repeated.isEmpty()) { // the read resumes after a table by its path: a repeated one loops
                    problems.add(Problem.error("parameters.tables", of + " lists " + repeated + " more than once",
                            "list each table once (a table is read once: see No rereads in docs/static-tables.md)"));
                }
            }
        } else if (!(tp instanceof String s) || s.isBlank()) {
            problems.add(Problem.error("parameters.tables_path", of + " has tables_path " + tp,
                    "set the directory of the tables, e.g. \"/data/ref\""));
        } else {
            tablesPath = Path.of(s);
        }
        String filter = null;
        Object f = p.get("table_name_filter");
        if (f != null) {
            try {
                Pattern.compile(String.valueOf(f));
                filter = String.valueOf(f);
            } catch (PatternSyntaxException e) {
                problems.add(Problem.error("parameters.table_name_filter", of + " has table_name_filter " + f
                        + ", not a regular expression: " + e.getDescription(), "set a Java regular expression that "
                        + "matches whole table names, e.g. \"\\\\d{4}-\\\\d{2}-\\\\d{2}\""));
            }
        }
        TableTimestampLocator.Source locatorSource = TableTimestampLocator.Source.NAME;
        Object l = p.get("table_timestamp_locator");
        if (l != null) {
            switch (String.valueOf(l)) {
                case "name" -> locatorSource = TableTimestampLocator.Source.NAME;
                case "attribute" -> locatorSource = TableTimestampLocator.Source.ATTRIBUTE;
                default -> problems.add(Problem.error("parameters.table_timestamp_locator", of
                        + " has table_timestamp_locator " + l, "set \"name\" (the table name as ISO 8601, the default)"
                        + " or \"attribute\" (the table_timestamp attribute)"));
            }
        }
        // a listed table the locator cannot date, or the filter leaves out, would be skipped at run time: unread
        TableTimestampLocator listed = TableTimestampLocator.of(locatorSource, filter);
        for (Path table : tables) {
            String name = table.getFileName() == null ? table.toString() : table.getFileName().toString();
            if (!listed.accepts(name)) {
                problems.add(Problem.error("parameters.tables", of + " lists table " + table + ", which "
                        + "table_name_filter " + filter + " leaves out: it would never be read",
                        "drop it from tables or widen table_name_filter"));
            } else if (locatorSource == TableTimestampLocator.Source.NAME
                    && TableTimestampLocator.parseIso8601(name).isEmpty()) {
                problems.add(Problem.error("parameters.tables", of + " lists table " + table + ", whose name is no "
                        + "ISO 8601 timestamp: it would never be read", "name the table as a timestamp (e.g. "
                        + "2026-12-03T10:00:00Z), or set table_timestamp_locator \"attribute\" and give each table "
                        + "a table_timestamp attribute"));
            }
        }
        boolean newest = false;
        Object m = p.get("read_mode");
        if (m != null) {
            switch (String.valueOf(m)) {
                case "sequence" -> newest = false;
                case "newest" -> newest = true;
                default -> problems.add(Problem.error("parameters.read_mode", of + " has read_mode " + m,
                        "set \"sequence\" (every table in timestamp order, the default) or \"newest\" (the newest "
                                + "table; a new table starts a new run)"));
            }
        }
        if (newest && !tables.isEmpty()) {
            problems.add(Problem.error("parameters.read_mode", of + " has read_mode \"newest\" with an explicit "
                    + "'tables' list", "use tables_path with read_mode \"newest\", or drop read_mode"));
        }
        Duration delay = DEFAULT_WATERMARK_DELAY;
        if (p.get("watermark_delay") != null) {
            try {
                delay = Durations.parse(p.get("watermark_delay"), "watermark_delay");
                if (delay.isNegative()) {
                    throw new IllegalArgumentException("watermark_delay must be >= 0 but was " + delay);
                }
            } catch (IllegalArgumentException e) {
                problems.add(Problem.error("parameters.watermark_delay", of + ": " + e.getMessage(),
                        "set a non-negative duration such as \"1h\" or \"0s\""));
            }
        }
        boolean finite = bool(p, "finite", of, problems);
        boolean planned = bool(p, "use_planned_timestamps", of, problems);
        long range = positive(p, "range_row_count", DEFAULT_RANGE_ROW_COUNT, of, problems, 1);
        long perIteration = positive(p, "max_rows_per_iteration", DEFAULT_MAX_ROWS_PER_ITERATION, of, problems, 1);
        long rows = positive(p, "max_rows_per_second", 0, of, problems, 0);
        long bytes = positive(p, "max_bytes_per_second", 0, of, problems, 0);
        if (problems.size() > before) {
            return null;
        }
        return new StaticTableSourceParameters(List.copyOf(tables), tablesPath, listed, newest, delay, finite, range,
                (int) Math.min(Integer.MAX_VALUE, perIteration), new ReadLimits(rows, bytes), planned);
    }

    private static boolean bool(Map<String, Object> p, String name, String of, List<Problem> problems) {
        Object v = p.get(name);
        if (v == null || Boolean.FALSE.equals(v) || "false".equals(v)) {
            return false;
        }
        if (Boolean.TRUE.equals(v) || "true".equals(v)) {
            return true;
        }
        problems.add(Problem.error("parameters." + name, of + " has " + name + " " + v, "set true or false"));
        return false;
    }

    private static long positive(Map<String, Object> p, String name, long dflt, String of, List<Problem> problems,
            long min) {
        Object v = p.get(name);
        if (v == null) {
            return dflt;
        }
        try {
            // exact: 0.5 rows/s must not truncate to 0, which means no limit
            long n = new BigDecimal(v.toString().trim()).longValueExact();
            if (n >= min) {
                return n;
            }
        } catch (NumberFormatException | ArithmeticException e) {
            // reported below
        }
        problems.add(Problem.error("parameters." + name, of + " has " + name + " " + v, "set an integer >= " + min
                + (min == 0 ? " (0: no limit)" : "")));
        return dflt;
    }
}
