package io.flowkafka.examples.external;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowkafka.connectors.statictable.LocalTablesDirectory;
import io.flowkafka.connectors.statictable.StaticTableWriter;
import io.flowkafka.spec.PipelineSpec;
import io.flowkafka.testing.ComputationHarness;
import io.flowkafka.testing.HarnessResult;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link VersionLedger} call by call: a version is published once its acknowledgements reach its table's row count,
 * never earlier, never when its table is missing, and never back to an older one (reference 001: "Each new version
 * of a static table is a full reload of the entire reference dataset into state": only a full reload may replace
 * the rows of the previous one).
 */
class VersionLedgerTest {
    private static final String V1 = "2026-01-01T00:00:00Z";
    private static final String V2 = "2026-01-02T00:00:00Z";

    @TempDir
    Path tables;

    private void table(String name, int rows) throws IOException {
        List<GenericRecord> list = new ArrayList<>();
        for (int i = 0; i < rows; i++) {
            GenericRecord r = new GenericData.Record(StaticTableJoin.PRODUCT);
            r.put("sku", "s" + i);
            r.put("name", "n" + i);
            list.add(r);
        }
        StaticTableWriter.write(LocalTablesDirectory.open(tables), name, StaticTableJoin.PRODUCT, null, list);
    }

    private ComputationHarness ledger() {
        PipelineSpec spec = StaticTableJoin.specFromTables("shop", tables.toString(), "orders", "loaded", "enriched",
                2);
        return ComputationHarness.create(spec, VersionLedger.COMPUTATION);
    }

    private static void ack(ComputationHarness h, String table, int times) {
        for (int i = 0; i < times; i++) {
            h.message(VersionLedger.ACKS, Map.of("sku", VersionLedger.LEDGER_SKU, "version", ms(table)), 0)
                    .assertSucceeded();
        }
    }

    private static Long loaded(ComputationHarness h) {
        return h.externalRow(VersionLedger.VERSIONS, h.keyOf(VersionLedger.ACKS, Map.of("sku",
                VersionLedger.LEDGER_SKU, "version", 0L))).map(r -> (Long) r.get("version")).orElse(null);
    }

    private static long ms(String table) {
        return Instant.parse(table).toEpochMilli();
    }

    @Test
    void shouldPublishAVersionOnceEveryRowOfItsTableIsAcknowledged() throws IOException {
        table(V1, 3);
        table(V2, 2);
        try (ComputationHarness h = ledger()) {
            ack(h, V1, 2);
            assertThat(loaded(h)).as("two of three rows").isNull();
            ack(h, V2, 1);
            ack(h, V1, 1);
            assertThat(loaded(h)).isEqualTo(ms(V1));
            ack(h, V2, 1);
            assertThat(loaded(h)).isEqualTo(ms(V2));
            ack(h, V1, 3);
            assertThat(loaded(h)).as("never back to an older version").isEqualTo(ms(V2));
        }
    }

    @Test
    void shouldNeverPublishAVersionWhoseTableIsMissing() throws IOException {
        table(V1, 1);
        try (ComputationHarness h = ledger()) {
            ack(h, V1, 1);
            ack(h, V2, 5);
            h.visitAll(VersionLedger.RECHECK, 1, 0).forEach(HarnessResult::assertSucceeded);
            // "never everything when a table is missing": version 2 cannot be counted, so it never replaces version 1
            assertThat(loaded(h)).isEqualTo(ms(V1));
        }
    }

    @Test
    void shouldPublishAVersionInAVisitOnceItsTableCanBeRead() throws IOException {
        try (ComputationHarness h = ledger()) {
            ack(h, V1, 2); // its table cannot be read when its last row is counted
            assertThat(loaded(h)).isNull();
            table(V1, 2);
            h.visitAll(VersionLedger.RECHECK, 1, 0).forEach(HarnessResult::assertSucceeded);
            assertThat(loaded(h)).isEqualTo(ms(V1));
        }
    }
}
