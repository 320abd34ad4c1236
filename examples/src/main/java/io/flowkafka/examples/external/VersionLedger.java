package io.flowkafka.examples.external;

import io.flowkafka.api.Message;
import io.flowkafka.api.OutputCollector;
import io.flowkafka.api.RowFunction;
import io.flowkafka.api.RuntimeContext;
import io.flowkafka.api.StateAccessor;
import io.flowkafka.api.Visit;
import io.flowkafka.connectors.statictable.LocalTablesDirectory;
import io.flowkafka.connectors.statictable.LocatedTable;
import io.flowkafka.connectors.statictable.StaticTableReader;
import io.flowkafka.connectors.statictable.TableTimestampLocator;
import io.flowkafka.connectors.statictable.TablesDirectory;
import io.flowkafka.spec.ComputationSpec;
import java.io.IOException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.avro.generic.GenericRecord;

/**
 * Knows when a version of the product table is fully loaded: counts the {@link VersionedLoader}'s acknowledgements
 * (one per table row, committed with the row's write) per version, and once a version's count reaches the row count
 * of its static table, publishes it as the newest loaded version in its manager table {@value #VERSIONS}, under the
 * reserved key {@code sku = ""}. The loader's visits read it there.
 *
 * <p>Rules: the loaded version only grows; a version older than it is ignored; a version whose table cannot be found
 * or read, or an empty table, is not complete, so it deletes nothing ("never everything when a table is missing");
 * its key visits ({@value #RECHECK}) check the versions still counting again, so a table unreadable for a while when
 * its last row was counted is published once readable. The tables are immutable, so a row count read once is cached.
 *
 * <p>Not thread-safe; the runtime makes one instance per task.
 */
public final class VersionLedger implements RowFunction {
    /** The ledger's computation. */
    public static final String COMPUTATION = "versions";
    /** The loader's acknowledgements. */
    public static final String ACKS = "load_acks";
    /** The ledger's table: the newest fully loaded version. */
    public static final String VERSIONS = "/versions";
    /** The computation parameter naming the tables directory. */
    public static final String TABLES_PATH = "tables_path";
    /** The reserved sku every acknowledgement and the ledger's row carry. */
    public static final String LEDGER_SKU = "";

    private static final String NS = "io.flowkafka.examples.external";
    /** An acknowledgement of one row of version {@code version} (epoch ms). */
    public static final Schema ACK = SchemaBuilder.record("LoadAck").namespace(NS).fields()
            .requiredString("sku").requiredLong("version").endRecord();
    /** The row of {@value #VERSIONS}: the newest fully loaded version. */
    public static final Schema LOADED = SchemaBuilder.record("LoadedVersion").namespace(NS).fields()
            .requiredString("sku").requiredLong("version").endRecord();
    /** The state: rows acknowledged per version still loading. */
    public static final Schema COUNTS = SchemaBuilder.record("LoadCounts").namespace(NS).fields()
            .name("acked").type().map().values().longType().noDefault().endRecord();
    /** The state's name. */
    public static final String COUNTS_STATE = "counts";
    /** The ledger's key-visitor stream: checks the versions still counting again. */
    public static final String RECHECK = "recheck";

    private final Map<Long, Long> rowCounts = new HashMap<>();

    /** A ledger. */
    public VersionLedger() {
    }

    @Override
    public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
        long version = (Long) message.getPayload().get("version");
        if (loadedVersion(context) >= version) {
            return; // a late row of a version a newer one already replaced
        }
        Map<String, Long> acked = acked(context);
        long n = acked.merge(Long.toString(version), 1L, Long::sum);
        if (rowCount(context, version).map(rows -> n >= rows).orElse(false)) {
            publish(context, version, acked);
        }
        save(context, acked);
    }

    /** Checks the versions still counting again: a table unreadable when its last row was counted is retried. */
    @Override
    public void onVisit(Visit visit, OutputCollector output, RuntimeContext context) {
        if (context.getState(COUNTS_STATE).get().isEmpty()) {
            return;
        }
        Map<String, Long> acked = acked(context);
        acked.entrySet().stream()
                .filter(e -> rowCount(context, Long.parseLong(e.getKey())).map(rows -> e.getValue() >= rows)
                        .orElse(false))
                .mapToLong(e -> Long.parseLong(e.getKey())).max()
                .ifPresent(version -> publish(context, version, acked));
        save(context, acked);
    }

    private static long loadedVersion(RuntimeContext context) {
        return context.getExternalState(VERSIONS).get().map(r -> (Long) r.get("version")).orElse(Long.MIN_VALUE);
    }

    /** Publishes {@code version} as the newest loaded one and forgets the counts it replaces. */
    private static void publish(RuntimeContext context, long version, Map<String, Long> acked) {
        StateAccessor<GenericRecord> loaded = context.getExternalState(VERSIONS);
        GenericRecord r = loaded.newRecord();
        r.put("sku", LEDGER_SKU);
        r.put("version", version);
        loaded.set(r);
        acked.keySet().removeIf(v -> Long.parseLong(v) <= version);
    }

    private static Map<String, Long> acked(RuntimeContext context) {
        Map<String, Long> acked = new HashMap<>();
        context.getState(COUNTS_STATE).get().ifPresent(c ->
                ((Map<?, ?>) c.get("acked")).forEach((k, v) -> acked.put(k.toString(), (Long) v)));
        return acked;
    }

    private static void save(RuntimeContext context, Map<String, Long> acked) {
        StateAccessor<GenericRecord> counts = context.getState(COUNTS_STATE);
        GenericRecord c = counts.newRecord();
        c.put("acked", acked);
        counts.set(c);
    }

    /** The ledger's computation with the source's table locator parameters, so it dates the tables as the source. */
    static ComputationSpec.Builder locating(ComputationSpec.Builder ledger, Map<String, Object> sourceParameters) {
        for (String name : TableTimestampLocator.SOURCE_PARAMETERS) {
            if (sourceParameters.containsKey(name)) {
                ledger.parameter(name, sourceParameters.get(name));
            }
        }
        return ledger;
    }

    /** The row count of the table of {@code version}; empty when no such table is readable, or it is empty. */
    private Optional<Long> rowCount(RuntimeContext context, long version) {
        Long known = rowCounts.get(version);
        if (known != null) {
            return Optional.of(known);
        }
        try {
            TablesDirectory dir = LocalTablesDirectory.open(Path.of(context.getParameters().get(TABLES_PATH)
                    .toString()));
            List<LocatedTable> tables = TableTimestampLocator.ofSourceParameters(context.getParameters())
                    .inOrder(dir); // dated as the source dates them
            for (int i = tables.size() - 1; i >= 0; i--) {
                if (tables.get(i).timestamp().toEpochMilli() == version) {
                    long rows = StaticTableReader.open(dir, tables.get(i).name()).rowCount();
                    if (rows == 0) {
                        return Optional.empty();
                    }
                    rowCounts.put(version, rows);
                    return Optional.of(rows);
                }
            }
        } catch (IOException e) {
            return Optional.empty(); // not confirmed now: the version stays loading
        }
        return Optional.empty();
    }
}
