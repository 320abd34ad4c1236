package io.flowkafka.connectors.clickhouse;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What a writer session learns of its target table when it starts, and the rule it keeps (reference 002,
 * ClickHouse): exactly-once needs an engine that deduplicates inserted blocks (Replicated*MergeTree,
 * SharedMergeTree); Distributed tables and engines outside the MergeTree family are rejected; a plain MergeTree is
 * accepted with a warning that exactly-once degrades to at-least-once; a known deduplication window shorter than
 * {@code replay_horizon} is warned about with the attributes Database, Table, DedupWindowSetting, ReplayHorizon and
 * DedupWindow.
 *
 * @param database the database
 * @param table the table
 * @param engine the table's engine, e.g. {@code ReplicatedMergeTree}
 * @param version the server's version
 * @param warnings what degrades the guarantee, one structured line each; empty when exactly-once holds
 */
public record TargetTable(String database, String table, String engine, ServerVersion version, List<String> warnings) {
    /** The engines whose inserted blocks are deduplicated. */
    public static final Set<String> DEDUPLICATING = Set.of("ReplicatedMergeTree", "ReplicatedReplacingMergeTree",
            "ReplicatedSummingMergeTree", "ReplicatedAggregatingMergeTree", "ReplicatedCollapsingMergeTree",
            "ReplicatedVersionedCollapsingMergeTree", "ReplicatedGraphiteMergeTree", "SharedMergeTree",
            "SharedReplacingMergeTree", "SharedSummingMergeTree", "SharedAggregatingMergeTree");
    /** The window setting compared with {@code replay_horizon}. */
    public static final String WINDOW_SETTING = "replicated_deduplication_window_seconds";
    private static final Pattern TABLE_WINDOW = Pattern.compile(WINDOW_SETTING + "\\s*=\\s*(\\d+)");

    /**
     * Inspects and checks the target table.
     *
     * @param client a client of the server
     * @param database the database
     * @param table the table
     * @param replayHorizon how late a replay may come
     * @return the table, with the warnings that apply
     * @throws RejectedTarget if the table is missing or its engine cannot take the sink's writes
     * @throws IOException if the server cannot be asked
     */
    public static TargetTable inspect(ClickHouseHttpClient client, String database, String table,
            Duration replayHorizon) throws IOException {
        ServerVersion version = ServerVersion.parse(client.query("SELECT version()"));
        String row = client.query("SELECT engine, engine_full FROM system.tables WHERE database = '" + database
                + "' AND name = '" + table + "'").strip();
        String where = "`" + database + "`.`" + table + "` on " + client.base();
        if (row.isEmpty()) {
            throw new RejectedTarget("table " + where + " does not exist; create it (e.g. ENGINE = "
                    + "ReplicatedMergeTree) before starting the pipeline");
        }
        String[] cols = row.split("\t", 2);
        String engine = cols[0];
        String full = cols.length > 1 ? cols[1] : "";
        if (engine.equals("Distributed")) {
            throw new RejectedTarget("table " + where + " is Distributed: its inserts are forwarded asynchronously "
                    + "and not deduplicated; write to the shards' local Replicated*MergeTree tables, with "
                    + "TShardedClickHouseBatchingSink and shard_hosts");
        }
        if (!engine.endsWith("MergeTree")) {
            throw new RejectedTarget("table " + where + " has engine " + engine + ", outside the MergeTree family; "
                    + "use a ReplicatedMergeTree (or SharedMergeTree) table");
        }
        List<String> warnings = new ArrayList<>();
        if (!DEDUPLICATING.contains(engine)) {
            warnings.add("ClickHouse table " + where + " has engine " + engine + ", which does not deduplicate "
                    + "inserted blocks: exactly-once degrades to at-least-once (a replay after a crash inserts its "
                    + "batch again); use ReplicatedMergeTree for exactly-once");
        } else {
            Duration window = window(client, full);
            if (window != null && window.compareTo(replayHorizon) < 0) {
                warnings.add("ClickHouse deduplication window shorter than replay_horizon: exactly-once degrades to "
                        + "at-least-once for replays later than the window. Database=" + database + " Table=" + table
                        + " DedupWindowSetting=" + WINDOW_SETTING + " ReplayHorizon=" + replayHorizon
                        + " DedupWindow=" + window);
            }
        }
        return new TargetTable(database, table, engine, version, List.copyOf(warnings));
    }

    private static Duration window(ClickHouseHttpClient client, String engineFull) throws IOException {
        Matcher m = TABLE_WINDOW.matcher(engineFull);
        if (m.find()) {
            return Duration.ofSeconds(Long.parseLong(m.group(1)));
        }
        String value;
        try {
            value = client.query("SELECT value FROM system.merge_tree_settings WHERE name = '" + WINDOW_SETTING + "'")
                    .strip();
        } catch (ClickHouseException e) {
            return null; // a server without the table: the window is unknown
        }
        return value.isEmpty() ? null : Duration.ofSeconds(Long.parseLong(value));
    }

    /** The target cannot take the sink's writes; retrying cannot help. */
    public static final class RejectedTarget extends IOException {
        private static final long serialVersionUID = 1L;

        RejectedTarget(String message) {
            super(message);
        }
    }
}
