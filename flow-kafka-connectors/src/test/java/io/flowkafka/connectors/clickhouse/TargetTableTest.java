package io.flowkafka.connectors.clickhouse;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * {@link TargetTable}'s checks on the real server. Reference 002: "Distributed tables, engines outside the MergeTree
 * family ... are rejected. A single-host, non-replicated MergeTree without block deduplication is accepted with a
 * warning, but exactly-once degrades to at-least-once ... If a known deduplication window is shorter than
 * replay_horizon, the sink writes a structured warning with the attributes Database, Table, DedupWindowSetting,
 * ReplayHorizon, and DedupWindow."
 */
class TargetTableTest {
    @Test
    void shouldAcceptReplicatedMergeTreeWithoutWarnings() throws Exception {
        try (ClickHouseHttpClient ch = ClickHouseTestServer.client()) {
            ClickHouseTestServer.createReplicated(ch, "target_ok", "id String");
            TargetTable t = TargetTable.inspect(ch, "default", "target_ok", Duration.ofDays(1));
            assertThat(t.engine()).isEqualTo("ReplicatedMergeTree");
            assertThat(t.warnings()).isEmpty(); // the default window is 7 days
        }
    }

    @Test
    void shouldWarnWithTheNamedAttributesWhenTheWindowIsShorterThanTheReplayHorizon() throws Exception {
        try (ClickHouseHttpClient ch = ClickHouseTestServer.client()) {
            ch.query("DROP TABLE IF EXISTS default.target_window");
            ch.query("CREATE TABLE default.target_window (id String) ENGINE = ReplicatedMergeTree("
                    + "'/clickhouse/tables/{shard}/target_window_" + System.nanoTime() + "', '{replica}') ORDER BY id "
                    + "SETTINGS replicated_deduplication_window_seconds = 3600");
            TargetTable t = TargetTable.inspect(ch, "default", "target_window", Duration.ofDays(1));
            assertThat(t.warnings()).singleElement().asString().contains("Database=default", "Table=target_window",
                    "DedupWindowSetting=replicated_deduplication_window_seconds", "ReplayHorizon=PT24H",
                    "DedupWindow=PT1H");
            assertThat(TargetTable.inspect(ch, "default", "target_window", Duration.ofMinutes(30)).warnings())
                    .isEmpty();
        }
    }

    @Test
    void shouldAcceptAPlainMergeTreeWithADegradeWarning() throws Exception {
        try (ClickHouseHttpClient ch = ClickHouseTestServer.client()) {
            ch.query("DROP TABLE IF EXISTS default.target_plain");
            ch.query("CREATE TABLE default.target_plain (id String) ENGINE = MergeTree ORDER BY id");
            assertThat(TargetTable.inspect(ch, "default", "target_plain", Duration.ofDays(1)).warnings())
                    .singleElement().asString().contains("MergeTree", "exactly-once degrades to at-least-once");
        }
    }

    @Test
    void shouldRejectDistributedOtherEnginesAndMissingTables() throws Exception {
        try (ClickHouseHttpClient ch = ClickHouseTestServer.client()) {
            ch.query("DROP TABLE IF EXISTS default.target_log");
            ch.query("CREATE TABLE default.target_log (id String) ENGINE = TinyLog");
            ch.query("DROP TABLE IF EXISTS default.target_dist");
            ch.query("CREATE TABLE default.target_dist (id String) ENGINE = Distributed(flow_local, default, "
                    + "target_log)");
            assertThatThrownBy(() -> TargetTable.inspect(ch, "default", "target_dist", Duration.ofDays(1)))
                    .isInstanceOf(TargetTable.RejectedTarget.class).hasMessageContaining("Distributed");
            assertThatThrownBy(() -> TargetTable.inspect(ch, "default", "target_log", Duration.ofDays(1)))
                    .isInstanceOf(TargetTable.RejectedTarget.class).hasMessageContaining("TinyLog");
            assertThatThrownBy(() -> TargetTable.inspect(ch, "default", "target_none", Duration.ofDays(1)))
                    .isInstanceOf(TargetTable.RejectedTarget.class).hasMessageContaining("does not exist");
        }
    }
}
