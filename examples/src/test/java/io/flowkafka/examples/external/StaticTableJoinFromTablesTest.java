package io.flowkafka.examples.external;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowkafka.connectors.statictable.LocalTablesDirectory;
import io.flowkafka.connectors.statictable.StaticTableWriter;
import io.flowkafka.testing.FlowTestDriver;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The loader + enricher pattern reading its reference from a directory of static tables (reference 001: "one
 * computation reads the reference via the static_table source and writes it to state (loader); a second computation
 * on the input stream retrieves a value by key from the same state and emits an enriched message (enricher)").
 */
class StaticTableJoinFromTablesTest {
    @TempDir
    Path tables;

    private void table(String name, String... skuAndName) throws IOException {
        List<GenericRecord> rows = new ArrayList<>();
        for (int i = 0; i < skuAndName.length; i += 2) {
            GenericRecord r = new GenericData.Record(StaticTableJoin.PRODUCT);
            r.put("sku", skuAndName[i]);
            r.put("name", skuAndName[i + 1]);
            rows.add(r);
        }
        StaticTableWriter.write(LocalTablesDirectory.open(tables), name, StaticTableJoin.PRODUCT, null, rows);
    }

    private static void order(FlowTestDriver d, String id, String sku) {
        d.pipeSource("orders", id, "{\"order_id\":\"" + id + "\",\"sku\":\"" + sku + "\"}");
    }

    @Test
    void shouldEnrichWithTheNewestTableAndReloadWhenANewerOneAppears() throws IOException {
        table("2026-01-01T00:00:00Z", "s1", "kettle", "s2", "teapot");
        try (FlowTestDriver d = FlowTestDriver.create(StaticTableJoin.specFromTables("shop", tables.toString(),
                "orders", "loaded", "enriched", 2))) {
            d.advanceWallClockTime(Duration.ofSeconds(1), Duration.ofMillis(100));
            order(d, "o1", "s1");
            // "A new table appearing in the directory automatically triggers a new run."
            table("2026-01-02T00:00:00Z", "s1", "steel kettle");
            d.advanceWallClockTime(Duration.ofSeconds(1), Duration.ofMillis(100));
            order(d, "o2", "s1");
            order(d, "o3", "s2");
            assertThat(d.readSinkJson("enriched")).containsExactly(
                    "{\"order_id\":\"o1\",\"sku\":\"s1\",\"name\":\"kettle\"}",
                    "{\"order_id\":\"o2\",\"sku\":\"s1\",\"name\":\"steel kettle\"}",
                    // s2, missing from the new version, stays until a cleanup visit (a pass a minute) reaches it:
                    // VersionedReloadTest checks the cleanup
                    "{\"order_id\":\"o3\",\"sku\":\"s2\",\"name\":\"teapot\"}");
            assertThat(d.readSinkJson("loaded")).hasSize(3);
            assertThat(d.externalTable("loader", StaticTableJoin.TABLE).get(Map.of("sku", "s1")))
                    .hasValueSatisfying(r -> assertThat(r.get("name").toString()).isEqualTo("steel kettle"));
        }
    }
}
