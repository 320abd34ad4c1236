package io.flowkafka.connectors.statictable;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flowkafka.api.Message;
import io.flowkafka.api.OutputCollector;
import io.flowkafka.api.RowFunction;
import io.flowkafka.api.RuntimeContext;
import io.flowkafka.api.Visit;
import io.flowkafka.spec.ColumnType;
import io.flowkafka.spec.ExternalStateJoinerSpec;
import io.flowkafka.spec.KeyVisitorStreamSpec;
import io.flowkafka.spec.PipelineSpec;
import io.flowkafka.spi.StaticTableProvider;
import io.flowkafka.testing.FlowTestDriver;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code TStaticTableKeyVisitorJoiner} through {@link StaticTableJoinerProvider} on {@link FlowTestDriver}: an
 * auditor-style computation with only a visit stream over a static table (reference 000, "Static table joiner").
 */
class StaticTableJoinerTest {
    private static final Schema ROW = SchemaBuilder.record("Row").fields().requiredLong("hash").requiredLong("id")
            .requiredString("value").endRecord();
    /** What the visits saw: "pass/id=value" or "id:read-only message". */
    static final List<String> SEEN = new CopyOnWriteArrayList<>();

    @TempDir
    Path tables;
    private FlowTestDriver driver;

    /** Records each visit's row and tries to write it. */
    public static final class Probe implements RowFunction {
        /** A probe. */
        public Probe() {
        }

        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
        }

        @Override
        public void onVisit(Visit visit, OutputCollector output, RuntimeContext context) {
            var table = context.getExternalState("/table");
            GenericRecord row = table.get().orElseThrow();
            SEEN.add(visit.getPass() + "/" + row.get("id") + "=" + row.get("value"));
            try {
                table.clear();
            } catch (UnsupportedOperationException e) {
                SEEN.add(row.get("id") + ":" + e.getMessage());
            }
        }
    }

    /** Looks the table row up from onMessage too, which the table's scan cannot serve. */
    public static final class LookupProbe implements RowFunction {
        /** A probe. */
        public LookupProbe() {
        }

        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
            SEEN.add("message/" + context.getExternalState("/table").get().isPresent());
        }

        @Override
        public void onVisit(Visit visit, OutputCollector output, RuntimeContext context) {
            GenericRecord row = context.getExternalState("/table").get().orElseThrow();
            SEEN.add(visit.getPass() + "/" + row.get("id") + "=" + row.get("value"));
        }
    }

    @AfterEach
    void close() {
        SEEN.clear();
        if (driver != null) {
            driver.close();
        }
    }

    private PipelineSpec spec(int partitions) {
        return PipelineSpec.builder("joiner").computation("scan", c -> c
                .groupBy("hash", ColumnType.UINT64, "farm_hash(id)").groupBy("id", ColumnType.INT64, null)
                .externalStateJoiner(new ExternalStateJoinerSpec("/table", "TStaticTableKeyVisitorJoiner", null, null,
                        null, false, Map.of("tables_path", tables.toString(), "table", "t")))
                .keyVisitorStream(KeyVisitorStreamSpec.builder("scan_iter").externalNames("/table")
                        .period(Duration.ofSeconds(10)).finite(false).build())
                .processingFunction(Probe::new).desiredPartitionCount(partitions)).build();
    }

    private void write(int rows) throws IOException {
        List<GenericRecord> out = new ArrayList<>();
        for (long id = 0; id < rows; id++) {
            GenericRecord r = new GenericData.Record(ROW);
            r.put("hash", driver.key("scan", Map.of("id", id)).get("hash"));
            r.put("id", id);
            r.put("value", "v" + id);
            out.add(r);
        }
        out.sort((a, b) -> Long.compareUnsigned((Long) a.get("hash"), (Long) b.get("hash")));
        StaticTableWriter.write(LocalTablesDirectory.open(tables), "t", ROW, null, out);
    }

    @Test
    void shouldVisitEveryTableKeyOncePerPassAcrossPartitionsWithItsRowReadOnly() throws IOException {
        // "passes the table row to ProcessVisit as a read-only state for the visit key"; each task reads its range
        driver = FlowTestDriver.create(spec(3));
        write(200);
        driver.advanceWallClockTime(Duration.ofSeconds(11), Duration.ofMillis(100));
        List<String> rows = SEEN.stream().filter(s -> s.startsWith("0/")).toList();
        assertThat(rows).as("pass 0 visits each table key once").hasSize(200).doesNotHaveDuplicates()
                .contains("0/0=v0", "0/199=v199");
        assertThat(SEEN.stream().filter(s -> s.contains(":")).toList()).isNotEmpty()
                .allSatisfy(s -> assertThat(s).contains("external state '/table' is read through a joiner",
                        "TStaticTableKeyVisitorJoiner is read-only"));
        assertThat(driver.status()).noneMatch(e -> e.path().endsWith("/background_fill"));
    }

    @Test
    void shouldRefuseATableLookupOutsideTheVisitsOfItsScan() throws IOException {
        // "passes the table row to ProcessVisit as a read-only state for the visit key": the table is read beside the
        // scan, so a message's call cannot look a row up (it would see whatever the last scan step read)
        Schema event = SchemaBuilder.record("Ev").fields().requiredLong("id").endRecord();
        PipelineSpec spec = PipelineSpec.builder("lookup").stream("raw", event).stream("events", event)
                .computation("read", c -> c.kind(io.flowkafka.spec.ComputationKind.SOURCE)
                        .source("raw", "KafkaSource", Map.of("topics", "in")).outputStreamIds("events"))
                .computation("scan", c -> c.inputStreamIds("events")
                        .groupBy("hash", ColumnType.UINT64, "farm_hash(id)").groupBy("id", ColumnType.INT64, null)
                        .externalStateJoiner(new ExternalStateJoinerSpec("/table", "TStaticTableKeyVisitorJoiner", null,
                                null, null, false, Map.of("tables_path", tables.toString(), "table", "t")))
                        .keyVisitorStream(KeyVisitorStreamSpec.builder("scan_iter").externalNames("/table")
                                .period(Duration.ofSeconds(10)).finite(false).build())
                        .processingFunction(LookupProbe::new)).build();
        driver = FlowTestDriver.create(spec);
        write(5);
        driver.advanceWallClockTime(Duration.ofSeconds(11), Duration.ofMillis(100));
        driver.pipeSource("in", null, "{\"id\": 1}");
        assertThat(SEEN).as("the visits read their rows; the message's lookup failed").contains("0/1=v1")
                .noneMatch(s -> s.startsWith("message/"));
        List<FlowTestDriver.DeadLetter> letters = driver.readDeadLetters();
        assertThat(letters).singleElement().satisfies(l -> assertThat(l.errorMessage())
                .contains("static table of joiner '/table'", "key visitor 'scan_iter'",
                        "readable only in onVisit of that visitor, not in onMessage or onTimer"));
    }

    @Test
    void shouldTreatATableOfAnotherToolWithoutSuccessAsUnavailable() throws IOException {
        List<GenericRecord> rows = new ArrayList<>();
        for (long id = 0; id < 3; id++) {
            GenericRecord r = new GenericData.Record(ROW);
            r.put("hash", id);
            r.put("id", id);
            r.put("value", "v" + id);
            rows.add(r);
        }
        StaticTableWriter.write(LocalTablesDirectory.open(tables), "t", ROW, null, rows);
        Files.delete(tables.resolve("t").resolve(LocalTablesDirectory.MANIFEST));
        Map<String, Object> parameters = Map.of("tables_path", tables.toString(), "table", "t");
        StaticTableJoinerProvider provider = new StaticTableJoinerProvider();

        assertThatThrownBy(() -> provider.open(parameters, "hash", 0)).isInstanceOf(NoSuchFileException.class)
                .hasMessageContaining("not complete");
        Files.createFile(tables.resolve("t").resolve("_SUCCESS"));
        Map<String, Object> newest = Map.of("tables_path", tables.toString());
        StaticTableWriter.write(LocalTablesDirectory.open(tables), "2026-01-02", ROW, null, rows.subList(0, 1));
        Files.delete(tables.resolve("2026-01-02").resolve(LocalTablesDirectory.MANIFEST)); // still being written
        StaticTableWriter.write(LocalTablesDirectory.open(tables), "2026-01-01", ROW, null, rows);
        try (StaticTableProvider.Rows read = provider.open(newest, "hash", 0)) {
            assertThat(read.table()).as("the newest complete table").endsWith("2026-01-01");
        }
        try (StaticTableProvider.Rows read = provider.open(parameters, "hash", 0)) {
            int n = 0;
            while (read.hasNext()) {
                assertThat(read.next().get("value").toString()).isEqualTo("v" + n++);
            }
            assertThat(n).isEqualTo(3);
        }
    }

    /** Docs/code audit: a bad filter passed the load and failed every background read, retried for ever. */
    @Test
    void shouldRejectATableNameFilterThatIsNoRegularExpressionAtLoad() {
        assertThat(new StaticTableJoinerProvider().problems(Map.of("tables_path", "/x", "table_name_filter", "[")))
                .singleElement().asString().startsWith("parameters.table_name_filter [ is not a regular expression");
        assertThat(new StaticTableJoinerProvider().problems(Map.of("tables_path", "/x", "table_name_filter",
                "\\d{4}-\\d{2}-\\d{2}"))).isEmpty();
    }

    /** Spec audit: a table given by name was read whatever the filter said. */
    @Test
    void shouldRejectATableNameFilterBesideAGivenTable() {
        assertThat(new StaticTableJoinerProvider().problems(Map.of("tables_path", "/x", "table", "2026-01-01",
                "table_name_filter", "ledger-.*"))).singleElement().asString()
                .contains("table_name_filter would never be applied", "give one of them");
    }
}
