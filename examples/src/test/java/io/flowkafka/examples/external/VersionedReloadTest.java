package io.flowkafka.examples.external;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowkafka.connectors.statictable.LocalTablesDirectory;
import io.flowkafka.connectors.statictable.StaticTableWriter;
import io.flowkafka.testing.FlowTestDriver;
import io.flowkafka.testing.KeyVisitorCoverage;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The versioned reload of {@link StaticTableJoin#specFromTables} on {@link FlowTestDriver}. Reference 001: "Each new
 * version of a static table is a full reload of the entire reference dataset into state. This scheme doesn't
 * automatically clean up deleted rows." The loader tags rows with their version and its key visits delete the rows of
 * a version older than the newest fully loaded one: never a row of a version still loading, never anything on the
 * strength of a table that is missing.
 */
class VersionedReloadTest {
    private static final String V1 = "2026-01-01T00:00:00Z";
    private static final String V2 = "2026-01-02T00:00:00Z";
    /** Two rows a second: version 2's ten rows take five seconds, several cleanup passes of one second. */
    private static final StaticTableJoin.Reload RELOAD = new StaticTableJoin.Reload(Duration.ofSeconds(1),
            Map.of("max_rows_per_second", 2));

    @TempDir
    Path tables;
    private FlowTestDriver driver;

    @AfterEach
    void close() {
        if (driver != null) {
            try {
                assertThat(driver.readDeadLetters()).as("no call failed").isEmpty();
            } finally {
                driver.close();
            }
        }
    }

    private void table(String name, String... skus) throws IOException {
        table(name, null, skus);
    }

    /** A table of product rows named {@code sku@table}, with a {@code table_timestamp} attribute or none. */
    private void table(String name, Instant timestamp, String... skus) throws IOException {
        List<GenericRecord> rows = new ArrayList<>();
        for (String sku : skus) {
            GenericRecord r = new GenericData.Record(StaticTableJoin.PRODUCT);
            r.put("sku", sku);
            r.put("name", sku + "@" + name);
            rows.add(r);
        }
        StaticTableWriter.write(LocalTablesDirectory.open(tables), name, StaticTableJoin.PRODUCT, timestamp, rows);
    }

    private void start() {
        driver = FlowTestDriver.create(StaticTableJoin.specFromTables("shop", tables.toString(), "orders", "loaded",
                "enriched", 2, RELOAD));
    }

    private void advance(Duration d) {
        driver.advanceWallClockTime(d, Duration.ofMillis(100));
    }

    private Optional<GenericRecord> row(String sku) {
        return driver.externalTable("loader", StaticTableJoin.TABLE).get(Map.of("sku", sku));
    }

    /** The version a row carries, or null when the table has no row of the key. */
    private Long version(String sku) {
        return row(sku).map(r -> (Long) r.get("version")).orElse(null);
    }

    private Long loadedVersion() {
        return driver.externalTable(VersionLedger.COMPUTATION, VersionLedger.VERSIONS)
                .get(Map.of("sku", VersionLedger.LEDGER_SKU)).map(r -> (Long) r.get("version")).orElse(null);
    }

    private long pass() {
        return driver.keyVisitorCoverage("loader", StaticTableJoin.CLEANUP).map(KeyVisitorCoverage::pass).orElse(0L);
    }

    /** The name the enricher joins to an order of {@code sku} (through the joiner). */
    private String joined(String sku) {
        String id = "o-" + sku + "-" + driver.wallClockTime().toEpochMilli();
        driver.pipeSource("orders", id, "{\"order_id\":\"" + id + "\",\"sku\":\"" + sku + "\"}");
        List<String> out = driver.readSinkJson("enriched");
        assertThat(out).hasSize(1);
        return out.get(0).replaceAll(".*\"name\":\"([^\"]*)\".*", "$1");
    }

    private static long ms(String table) {
        return Instant.parse(table).toEpochMilli();
    }

    @Test
    void shouldDeleteRowsMissingFromANewVersionOnlyOnceItIsFullyLoaded() throws IOException {
        table(V1, "a", "b", "c");
        start();
        advance(Duration.ofSeconds(3));
        assertThat(loadedVersion()).as("version 1 fully loaded").isEqualTo(ms(V1));
        assertThat(List.of(version("a"), version("b"), version("c"))).containsOnly(ms(V1));

        // "A new table appearing in the directory automatically triggers a new run": version 2 lacks b
        table(V2, "a", "f1", "f2", "f3", "f4", "f5", "f6", "f7", "f8", "c");
        long passBefore = pass();
        advance(Duration.ofSeconds(2));
        assertThat(version("a")).as("version 2 half loaded: a is reloaded").isEqualTo(ms(V2));
        assertThat(version("c")).as("c is not reloaded yet").isEqualTo(ms(V1));
        assertThat(pass()).as("cleanup passes ran while version 2 was loading").isGreaterThanOrEqualTo(passBefore + 1);
        assertThat(loadedVersion()).as("version 2 is not fully loaded").isEqualTo(ms(V1));
        assertThat(version("b")).as("nothing of version 1 is deleted while version 2 is half loaded")
                .isEqualTo(ms(V1));
        assertThat(joined("b")).isEqualTo("b@" + V1);

        advance(Duration.ofSeconds(5));
        assertThat(loadedVersion()).as("version 2 fully loaded").isEqualTo(ms(V2));
        advance(Duration.ofSeconds(2)); // a full cleanup pass after the ledger moved
        assertThat(row("b")).as("b, missing from version 2, is deleted from the manager's table").isEmpty();
        assertThat(joined("b")).as("and from joiner lookups").isEqualTo("unknown");
        assertThat(List.of(version("a"), version("c"), version("f8"))).containsOnly(ms(V2));
        assertThat(joined("c")).isEqualTo("c@" + V2);
    }

    @Test
    void shouldDateVersionsAsTheSourceDoesWithTheAttributeLocatorAndAFilter() throws IOException {
        // tables named freely, dated by their table_timestamp attribute, next to a table the filter leaves out: the
        // ledger must see the same versions as the source, or no version is ever confirmed and nothing cleaned up
        StaticTableJoin.Reload byAttribute = new StaticTableJoin.Reload(Duration.ofSeconds(1), Map.of(
                "max_rows_per_second", 2, "table_timestamp_locator", "attribute", "table_name_filter", "products-.*"));
        table("products-v1", Instant.parse(V1), "a", "b", "c");
        table("other", Instant.parse("2027-01-01T00:00:00Z"), "x");
        driver = FlowTestDriver.create(StaticTableJoin.specFromTables("shop", tables.toString(), "orders", "loaded",
                "enriched", 2, byAttribute));
        advance(Duration.ofSeconds(3));
        assertThat(loadedVersion()).as("version 1 fully loaded").isEqualTo(ms(V1));
        table("products-v2", Instant.parse(V2), "a", "c");
        advance(Duration.ofSeconds(4));
        assertThat(loadedVersion()).as("version 2 fully loaded").isEqualTo(ms(V2));
        advance(Duration.ofSeconds(2));
        assertThat(row("b")).as("b, missing from version 2, is deleted").isEmpty();
        assertThat(row("x")).as("the filtered-out table is no version").isEmpty();
        assertThat(List.of(version("a"), version("c"))).containsOnly(ms(V2));
    }

    @Test
    void shouldDeleteNothingWhenTheNewVersionDisappearsWhileLoading() throws IOException {
        table(V1, "a", "b", "c");
        start();
        advance(Duration.ofSeconds(3));
        table(V2, "a", "f1", "f2", "f3", "f4", "f5", "f6", "f7", "f8", "c");
        advance(Duration.ofSeconds(2));
        assertThat(version("a")).isEqualTo(ms(V2));
        assertThat(LocalTablesDirectory.open(tables).removeTable(V2)).isTrue();
        advance(Duration.ofSeconds(8));
        // "never everything when a table is missing": version 2 never completes, so version 1 stays the loaded one
        assertThat(loadedVersion()).isEqualTo(ms(V1));
        assertThat(version("b")).isEqualTo(ms(V1));
        assertThat(version("c")).isEqualTo(ms(V1));
        assertThat(joined("b")).isEqualTo("b@" + V1);
    }
}
