package io.flowkafka.examples.external;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flowkafka.spec.PipelineSpec;
import io.flowkafka.testing.ComputationHarness;
import io.flowkafka.testing.HarnessResult;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.junit.jupiter.api.Test;

/**
 * The rules of {@link VersionedLoader} call by call on a {@link ComputationHarness}: a row never goes back to an
 * older version, every row is acknowledged, and a visit deletes a row only when the ledger names a newer fully
 * loaded version (reference 001: "This scheme doesn't automatically clean up deleted rows": the cleanup is ours, so
 * it deletes nothing it cannot prove replaced).
 */
class VersionedLoaderTest {
    private static final long V1 = Instant.parse("2026-01-01T00:00:00Z").toEpochMilli();
    private static final long V2 = Instant.parse("2026-01-02T00:00:00Z").toEpochMilli();
    private static final PipelineSpec SPEC = StaticTableJoin.specFromTables("shop", "/nonexistent", "orders",
            "loaded", "enriched", 2);

    private static GenericRecord product(String sku, String name) {
        GenericRecord p = new GenericData.Record(StaticTableJoin.PRODUCT);
        p.put("sku", sku);
        p.put("name", name);
        return p;
    }

    private static HarnessResult load(ComputationHarness h, String sku, String name, long version) {
        return h.message("products", product(sku, name), version * 1_000_000L).assertSucceeded();
    }

    private static Long version(ComputationHarness h, String sku) {
        return row(h, sku).map(r -> (Long) r.get("version")).orElse(null);
    }

    private static Optional<GenericRecord> row(ComputationHarness h, String sku) {
        return h.externalRow(StaticTableJoin.TABLE, h.keyOf("products", product(sku, "")));
    }

    private static void ledger(ComputationHarness h, long version) {
        GenericRecord r = new GenericData.Record(VersionLedger.LOADED);
        r.put("sku", VersionLedger.LEDGER_SKU);
        r.put("version", version);
        h.putExternalRow(VersionLedger.VERSIONS, StaticTableJoin.ledgerKey(SPEC), r);
    }

    @Test
    void shouldNeverTakeARowBackToAnOlderVersionButAcknowledgeEveryRow() {
        try (ComputationHarness h = ComputationHarness.create(SPEC, "loader")) {
            load(h, "a", "new", V2);
            // two source tasks may emit rows of two versions in any order
            HarnessResult late = load(h, "a", "old", V1);
            assertThat(version(h, "a")).isEqualTo(V2);
            assertThat(row(h, "a").get().get("name").toString()).isEqualTo("new");
            assertThat(late.payloads(VersionLedger.ACKS)).singleElement()
                    .satisfies(ack -> assertThat(ack.get("version")).isEqualTo(V1));
        }
    }

    @Test
    void shouldDeleteOnlyRowsOlderThanTheNewestLoadedVersion() {
        try (ComputationHarness h = ComputationHarness.create(SPEC, "loader")) {
            load(h, "b", "kept", V1);
            h.visitAll(StaticTableJoin.CLEANUP, 1, 0).forEach(HarnessResult::assertSucceeded);
            assertThat(version(h, "b")).as("no loaded version known: nothing is deleted").isEqualTo(V1);
            ledger(h, V1);
            load(h, "a", "loading", V2);
            h.visitAll(StaticTableJoin.CLEANUP, 2, 0).forEach(HarnessResult::assertSucceeded);
            assertThat(version(h, "b")).as("version 1 is the newest loaded one").isEqualTo(V1);
            assertThat(version(h, "a")).as("a row of a version still loading").isEqualTo(V2);
            ledger(h, V2);
            h.visitAll(StaticTableJoin.CLEANUP, 3, 0).forEach(HarnessResult::assertSucceeded);
            assertThat(version(h, "b")).as("missing from the fully loaded version 2").isNull();
            assertThat(version(h, "a")).isEqualTo(V2);
        }
    }

    @Test
    void shouldRejectPlannedTimestamps() {
        assertThatThrownBy(() -> StaticTableJoin.specFromTables("shop", "/t", "orders", "loaded", "enriched", 2,
                new StaticTableJoin.Reload(Duration.ofMinutes(1), Map.of("use_planned_timestamps", true))))
                .hasMessageContaining("use_planned_timestamps");
    }
}
