package io.flowkafka.connectors.statictable;

import java.io.IOException;
import java.time.DateTimeException;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.temporal.TemporalAccessor;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * Flow's {@code TTableTimestampLocatorSpec}: which timestamp a table has, and so which table is the
 * latest. It keeps the rule of reference 001: "most often, this is the newest table in the directory
 * whose name parses as an ISO8601 timestamp" — a table whose timestamp cannot be located is not a
 * candidate, neither for {@link #latest} nor for {@link #inOrder}.
 *
 * <p>Sources of the timestamp:
 * <ol>
 *   <li>{@link Source#NAME} (the default): the table name as ISO 8601 — an instant with an offset
 *       ({@code 2026-12-03T10:00:00Z}, {@code 2026-12-03T13:00:00+03:00}), a local date-time taken as
 *       UTC ({@code 2026-12-03T10:00:00}, {@code 2026-12-03T10:00}) or a date taken as midnight UTC
 *       ({@code 2026-12-03}); fractions of a second are kept;</li>
 *   <li>{@link Source#ATTRIBUTE}: the table's {@code table_timestamp} attribute, as the arrival-order
 *       sink writes it.</li>
 * </ol>
 * An optional {@code table_name_filter} (a regular expression over the whole name) drops other
 * tables first.
 *
 * <p>Immutable and thread-safe.
 */
public final class TableTimestampLocator {
    /** Where a table's timestamp comes from. */
    public enum Source {
        /** The table name, parsed as ISO 8601. */
        NAME,
        /** The {@code table_timestamp} attribute. */
        ATTRIBUTE
    }

    private static final TableTimestampLocator DEFAULT = new TableTimestampLocator(Source.NAME, null);

    private final Source source;
    private final @Nullable Pattern nameFilter;

    private TableTimestampLocator(Source source, @Nullable Pattern nameFilter) {
        this.source = source;
        this.nameFilter = nameFilter;
    }

    /**
     * The default locator: ISO 8601 table names, no name filter.
     *
     * @return the default locator
     */
    public static TableTimestampLocator iso8601Names() {
        return DEFAULT;
    }

    /**
     * A locator with a source and an optional name filter.
     *
     * @param source where timestamps come from; not null
     * @param tableNameFilter a regular expression the whole name must match; null for no filter
     * @return the locator
     * @throws java.util.regex.PatternSyntaxException if the filter is not a regular expression
     */
    public static TableTimestampLocator of(Source source, @Nullable String tableNameFilter) {
        Objects.requireNonNull(source, "source");
        return new TableTimestampLocator(source, tableNameFilter == null ? null : Pattern.compile(tableNameFilter));
    }

    /** The static-table source's parameters that choose its locator. */
    public static final List<String> SOURCE_PARAMETERS = List.of("table_timestamp_locator", "table_name_filter");

    /**
     * The locator of a static-table source's parameters, already validated ({@code table_timestamp_locator},
     * {@code table_name_filter}): for code that must date tables as a source does.
     *
     * @param sourceParameters the source's parameters; not null
     * @return the locator
     */
    public static TableTimestampLocator ofSourceParameters(Map<String, ?> sourceParameters) {
        Object filter = sourceParameters.get("table_name_filter");
        return of("attribute".equals(String.valueOf(sourceParameters.get("table_timestamp_locator"))) ? Source.ATTRIBUTE
                : Source.NAME, filter == null ? null : filter.toString());
    }

    /**
     * Parses a table name as ISO 8601, in the forms the class comment lists.
     *
     * @param name the table name; not null
     * @return the instant it names, or empty if it is not ISO 8601
     */
    public static Optional<Instant> parseIso8601(String name) {
        Objects.requireNonNull(name, "name");
        try {
            TemporalAccessor t = DateTimeFormatter.ISO_DATE_TIME.parseBest(name, OffsetDateTime::from,
                    LocalDateTime::from);
            return Optional.of(t instanceof OffsetDateTime o ? o.toInstant()
                    : ((LocalDateTime) t).toInstant(ZoneOffset.UTC));
        } catch (DateTimeException e) {
            // not a date-time: try a date
        }
        try {
            return Optional.of(LocalDate.parse(name, DateTimeFormatter.ISO_LOCAL_DATE).atStartOfDay(ZoneOffset.UTC)
                    .toInstant());
        } catch (DateTimeException e) {
            return Optional.empty();
        }
    }

    /**
     * Whether a table passes the name filter.
     *
     * @param name the table name; not null
     * @return true if there is no filter or the whole name matches it
     */
    public boolean accepts(String name) {
        return nameFilter == null || nameFilter.matcher(name).matches();
    }

    /**
     * Locates one table's timestamp.
     *
     * @param directory the directory, read only for {@link Source#ATTRIBUTE}; not null
     * @param name the table name; not null
     * @return the timestamp, or empty if the table is filtered out or has none
     * @throws IOException if the attributes cannot be read
     */
    public Optional<Instant> locate(TablesDirectory directory, String name) throws IOException {
        if (!accepts(name)) {
            return Optional.empty();
        }
        return switch (source) {
            case NAME -> parseIso8601(name);
            case ATTRIBUTE -> directory.attributes(name).timestamp();
        };
    }

    /**
     * The tables with a located timestamp, oldest first (equal timestamps in name order): the order
     * the source reads an endless sequence in.
     *
     * @param directory the directory; not null
     * @return the located tables
     * @throws IOException if the directory cannot be read
     */
    public List<LocatedTable> inOrder(TablesDirectory directory) throws IOException {
        List<LocatedTable> located = new ArrayList<>();
        for (String name : directory.tableNames()) {
            try {
                locate(directory, name).ifPresent(t -> located.add(new LocatedTable(name, t)));
            } catch (java.nio.file.NoSuchFileException e) {
                // removed between listing and reading: not a candidate
            }
        }
        located.sort(Comparator.comparing(LocatedTable::timestamp).thenComparing(LocatedTable::name));
        return located;
    }

    /**
     * The latest table: the one with the newest located timestamp (the greatest name among equals).
     *
     * @param directory the directory; not null
     * @return the latest table, or empty if no table has a located timestamp
     * @throws IOException if the directory cannot be read
     */
    public Optional<LocatedTable> latest(TablesDirectory directory) throws IOException {
        List<LocatedTable> located = inOrder(directory);
        return located.isEmpty() ? Optional.empty() : Optional.of(located.get(located.size() - 1));
    }

    @Override
    public String toString() {
        return "TableTimestampLocator[source=" + source + (nameFilter == null ? "" : ", table_name_filter=" + nameFilter)
                + "]";
    }
}
