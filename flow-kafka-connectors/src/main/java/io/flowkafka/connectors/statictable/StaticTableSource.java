package io.flowkafka.connectors.statictable;

import io.flowkafka.spec.ComputationSpec;
import io.flowkafka.spec.SourceSpec;
import io.flowkafka.spec.StreamSpec;
import io.flowkafka.spi.PunctuatedSource;
import io.flowkafka.spi.SourceProvider;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * The static-table source ({@code NYT::NFlow::NStaticTableConnector::TSource}, short form
 * {@value #SHORT_NAME}): reads a sequence of immutable tables of a {@link TablesDirectory} in a Source computation
 * and emits each row, decoded with the stream's Avro schema, as a message of the source's stream (reference 001,
 * "Static tables"). Exactly-once: "deduplication by read ranges" (reference 002) — each task reads its share of
 * each table's row ranges, and its progress is kept in a changelogged store in the transaction of the messages.
 *
 * <p>Parameters:
 * <ol>
 *   <li>{@code tables_path}: a directory of tables, read in the locator's order; or {@code tables}: an explicit list
 *       of table directories, read in list order (exactly one of the two);</li>
 *   <li>{@code table_name_filter}: a regular expression over whole table names; others are ignored;</li>
 *   <li>{@code table_timestamp_locator}: {@code name} (the table name as ISO 8601, the default) or
 *       {@code attribute} (the {@code table_timestamp} attribute);</li>
 *   <li>{@code read_mode}: {@code sequence} (every table, in timestamp order, endlessly: new tables are read as they
 *       appear; the default) or {@code newest} (reference data: the newest table; a newer table starts a new run);</li>
 *   <li>{@code max_rows_per_second}, {@code max_bytes_per_second}: read limits per task (0, the default: none);
 *       dynamic;</li>
 *   <li>{@code use_planned_timestamps}: stamp each range with its planned start instead of the locator's timestamp
 *       (default false; dynamic, taking effect from the next table);</li>
 *   <li>{@code watermark_delay}: the watermark stays this far behind the earliest timestamp still to be emitted
 *       (default 1h);</li>
 *   <li>{@code finite}: complete once every listed table is read (tests); default false;</li>
 *   <li>{@code range_row_count} (default 1000) and {@code max_rows_per_iteration} (default 1000): the size of a
 *       row range, the unit spread over the partitions (fixed once a task has started a table: a new value is
 *       reported in the status, not used), and the rows read per step at most; a punctuation takes
 *       steps while rows are ready and {@code flow.key.visitor.max.punctuation.ms} lasts (one step per punctuation
 *       under FlowTestDriver).</li>
 * </ol>
 *
 * <p>Limitations:
 * <ol>
 *   <li>tables are read from the local filesystem ({@link LocalTablesDirectory});</li>
 *   <li>the read limits apply to each task, not to the source as a whole;</li>
 *   <li>Flow's replica switch has no counterpart: a rebalance restores the task's progress and keeps the schedule,
 *       so a table is never reread and never replanned.</li>
 * </ol>
 *
 * <p>Thread-safe: holds no state. Registered in {@code META-INF/services/io.flowkafka.spi.SourceProvider}.
 */
public final class StaticTableSource implements SourceProvider, PunctuatedSource {
    /** Flow's {@code source_class_name}. */
    public static final String FLOW_NAME = "NYT::NFlow::NStaticTableConnector::TSource";
    /** The short {@code source_class_name}. */
    public static final String SHORT_NAME = "StaticTableSource";

    /** For {@link java.util.ServiceLoader}. */
    public StaticTableSource() {
    }

    @Override
    public Set<String> sourceClassNames() {
        return Set.of(FLOW_NAME, SHORT_NAME);
    }

    @Override
    public Set<String> parameterNames(SourceSpec source) {
        return StaticTableSourceParameters.NAMES;
    }

    @Override
    public List<Problem> validate(ComputationSpec computation, SourceSpec source, @Nullable StreamSpec stream) {
        List<Problem> problems = new ArrayList<>();
        StaticTableSourceParameters.parse(source.parameters(), of(computation.id(), source), problems);
        return problems;
    }

    @Override
    public PunctuatedSource punctuated() {
        return this;
    }

    @Override
    public Set<String> dynamicParameterNames() {
        return StaticTableSourceParameters.DYNAMIC;
    }

    /**
     * Opens the reader of one task.
     *
     * @param context the task's view of the source; not null
     * @return the reader
     * @throws IllegalArgumentException if the source's parameters are invalid (the spec validator reports them first)
     */
    @Override
    public Reader open(Context context) {
        Objects.requireNonNull(context, "context");
        List<Problem> problems = new ArrayList<>();
        StaticTableSourceParameters p = StaticTableSourceParameters.parse(context.source().parameters(),
                of(context.computationId(), context.source()), problems);
        if (p == null) {
            throw new IllegalArgumentException(problems.get(0).message() + "; fix: " + problems.get(0).fix());
        }
        return new StaticTableRead(context, p);
    }

    private static String of(String computation, SourceSpec source) {
        return "static-table source '" + source.streamId() + "' of computation '" + computation + "'";
    }
}
