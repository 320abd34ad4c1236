package io.flowkafka.connectors.statictable;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowkafka.api.Message;
import io.flowkafka.api.OutputCollector;
import io.flowkafka.api.RowFunction;
import io.flowkafka.api.RuntimeContext;
import io.flowkafka.internal.metrics.TaskMeters;
import io.flowkafka.spec.ComputationKind;
import io.flowkafka.spec.InvalidSpecException;
import io.flowkafka.spec.PipelineSpec;
import io.flowkafka.spec.WatermarkStrategy;
import io.flowkafka.testing.FlowTestDriver;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.LongStream;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.avro.file.DataFileWriter;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericDatumWriter;
import org.apache.avro.generic.GenericRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The static-table source on {@link FlowTestDriver}, reading a directory of tables; the driver's clock drives the
 * punctuation (reference 001, "Static tables"). Each test quotes the rule it checks.
 *
 * <p>Pipeline: Source computation {@code reader} reads {@code tables_path} with {@code StaticTableSource} and copies
 * each row to {@code out}.
 */
class StaticTableSourceTest {
    static final Schema ROW = SchemaBuilder.record("Row").namespace("st").fields()
            .requiredLong("id").requiredString("table").endRecord();
    static final Schema OUT = SchemaBuilder.record("Out").namespace("st").fields()
            .requiredLong("id").requiredString("table").requiredLong("system_ts").requiredLong("watermark")
            .endRecord();

    /** Copies each row to {@code out}. */
    public static final class Copier implements RowFunction {
        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
            output.addMessage(context.createMessageBuilder("out").set("id", message.getPayload().get("id"))
                    .set("table", message.getPayload().get("table").toString())
                    .set("system_ts", message.getSystemTimestamp())
                    .set("watermark", context.getInputWatermark("rows")).build());
        }
    }

    @TempDir
    Path dir;
    private FlowTestDriver driver;
    private final List<Message> out = new ArrayList<>();

    @AfterEach
    void close() {
        if (driver != null) {
            driver.close();
        }
    }

    private PipelineSpec spec(Map<String, Object> extra) {
        Map<String, Object> p = new HashMap<>(Map.of("tables_path", dir.toString(), "max_rows_per_iteration", 10,
                "range_row_count", 4));
        p.putAll(extra);
        return PipelineSpec.builder("st").stream("rows", ROW).stream("out", OUT)
                .computation("reader", c -> c.kind(ComputationKind.SOURCE)
                        .source("rows", StaticTableSource.FLOW_NAME, p)
                        .processingFunction(Copier::new).outputStreamIds("out"))
                .build();
    }

    private static PipelineSpec listing(Map<String, Object> parameters) {
        Map<String, Object> p = new HashMap<>(parameters);
        return PipelineSpec.builder("st").stream("rows", ROW).stream("out", OUT)
                .computation("reader", c -> c.kind(ComputationKind.SOURCE)
                        .source("rows", StaticTableSource.FLOW_NAME, p)
                        .processingFunction(Copier::new).outputStreamIds("out"))
                .build();
    }

    private void table(String name, long rows) throws IOException {
        List<GenericRecord> list = new ArrayList<>();
        for (long i = 0; i < rows; i++) {
            GenericRecord r = new GenericData.Record(ROW);
            r.put("id", i);
            r.put("table", name);
            list.add(r);
        }
        StaticTableWriter.write(LocalTablesDirectory.open(dir), name, ROW, null, list);
    }

    /** The file of a table's first part. */
    private Path firstPart(String table) throws IOException {
        return dir.resolve(table).resolve(LocalTablesDirectory.open(dir).attributes(table).parts().get(0).name());
    }

    private void advance(Duration d) {
        driver.advanceWallClockTime(d, Duration.ofMillis(100));
    }

    private List<Message> read() {
        out.addAll(driver.readStream("out"));
        return out;
    }

    private Map<String, List<Long>> idsByTable() {
        Map<String, List<Long>> by = new java.util.LinkedHashMap<>();
        read().forEach(m -> by.computeIfAbsent(m.getPayload().get("table").toString(), t -> new ArrayList<>())
                .add((Long) m.getPayload().get("id")));
        return by;
    }

    private static List<Long> ids(long n) {
        return LongStream.range(0, n).boxed().toList();
    }

    @Test
    void shouldReadAnEndlessSequenceOfTablesInTimestampOrderEachRowOnce() throws IOException {
        // "you often need to read an endless sequence of tables"; ISO 8601 names order the tables
        table("2026-01-02", 7);
        table("2026-01-01", 25);
        table("not-a-timestamp", 3); // "whose name parses as an ISO8601 timestamp": not a candidate
        driver = FlowTestDriver.create(spec(Map.of()));
        advance(Duration.ofSeconds(2));
        assertThat(idsByTable()).containsExactly(Map.entry("2026-01-01", ids(25)), Map.entry("2026-01-02", ids(7)));
        table("2026-01-03", 5); // endless: a new table is read when it appears
        advance(Duration.ofSeconds(1));
        assertThat(idsByTable()).containsEntry("2026-01-03", ids(5));
        assertThat(out).extracting(Message::getMessageId).doesNotHaveDuplicates();
        assertThat(driver.completedComputations()).as("an endless source").doesNotContain("reader");
        // timestamps from the locator: every row of a table carries the table's timestamp
        assertThat(out).filteredOn(m -> m.getPayload().get("table").toString().equals("2026-01-01"))
                .allSatisfy(m -> assertThat(m.getEventTimestamp())
                        .isEqualTo(Instant.parse("2026-01-01T00:00:00Z").toEpochMilli() * 1_000_000L));
    }

    @Test
    void shouldMoveTheSourceWatermarkThroughATableWithNothingToRead() throws IOException {
        // a task whose share of a table is empty emits no row; its watermark still follows "the earliest timestamp
        // still to be emitted ... less watermark_delay", or it would hold back every reader downstream
        table("2026-01-01", 0);
        driver = FlowTestDriver.create(spec(Map.of()));
        advance(Duration.ofSeconds(2));

        double lag = driver.meterRegistry().get(TaskMeters.WATERMARK_LAG).tag("computation", "reader")
                .tag("kind", "event").gauge().value(); // against the machine's clock, NaN before a watermark
        Instant watermark = Instant.parse("2026-01-01T00:00:00Z").minus(Duration.ofHours(1)) // watermark_delay
                .minus(WatermarkStrategy.DEFAULT.outOfOrdernessBound());
        assertThat(Instant.now().minusMillis((long) (lag * 1000))).as("the table's timestamp, less the delays")
                .isBetween(watermark.minusSeconds(60), watermark.plusSeconds(60));
    }

    @Test
    void shouldReadAnExplicitListOfTablesInListOrder() throws IOException {
        table("2026-01-01", 3);
        table("2026-01-02", 2);
        Map<String, Object> p = new HashMap<>();
        p.put("tables", List.of(dir.resolve("2026-01-02").toString(), dir.resolve("2026-01-01").toString()));
        driver = FlowTestDriver.create(PipelineSpec.builder("st").stream("rows", ROW).stream("out", OUT)
                .computation("reader", c -> c.kind(ComputationKind.SOURCE)
                        .source("rows", StaticTableSource.SHORT_NAME, Map.of("tables", p.get("tables"), "finite", true))
                        .processingFunction(Copier::new).outputStreamIds("out"))
                .build());
        advance(Duration.ofSeconds(1));
        assertThat(idsByTable()).containsExactly(Map.entry("2026-01-02", ids(2)), Map.entry("2026-01-01", ids(3)));
        assertThat(driver.completedComputations()).contains("reader");
    }

    @Test
    void shouldFilterTablesByName() throws IOException {
        table("2026-01-01", 3);
        table("2026-01-02", 3);
        driver = FlowTestDriver.create(spec(Map.of("table_name_filter", ".*-02")));
        advance(Duration.ofSeconds(1));
        assertThat(idsByTable()).containsOnlyKeys("2026-01-02");
    }

    @Test
    void shouldReadRowsPerIterationAndResumeAfterTheLastCommittedRowWhenRevived() throws IOException {
        // reference 002: "Source: exactly-once — deduplication by read ranges"
        table("2026-01-01", 95);
        driver = FlowTestDriver.create(spec(Map.of()));
        advance(Duration.ofMillis(300));
        int before = read().size();
        assertThat(before).isBetween(10, 40);
        driver.reviveTask();
        advance(Duration.ofSeconds(2));
        assertThat(idsByTable()).containsExactly(Map.entry("2026-01-01", ids(95)));
    }

    @Test
    void shouldLimitRowsPerSecondAndChangeTheLimitThroughTheDynamicSpec() throws IOException {
        // "you must read from it with rate limiting"; the limits are dynamic parameters
        table("2026-01-01", 200);
        driver = FlowTestDriver.create(spec(Map.of("max_rows_per_second", 20)));
        advance(Duration.ofSeconds(2));
        int first = read().size();
        assertThat(first).as("a bucket of one second, then 20 rows/s").isBetween(50, 60);
        driver.reconfigure(Map.of("computations", Map.of("reader", Map.of("source_streams",
                Map.of("rows", Map.of("max_rows_per_second", 60))))));
        advance(Duration.ofSeconds(2));
        assertThat(read().size() - first).as("60 rows/s from the change on").isBetween(100, 125);
    }

    @Test
    void shouldStopReadingWhileTheDynamicSpecDrainsItsComputation() throws IOException {
        // "draining" stops a computation's sources before a spec change (flow-kafka drain): tables too, not only topics
        table("2026-01-01", 200);
        driver = FlowTestDriver.create(spec(Map.of("max_rows_per_second", 20)));
        advance(Duration.ofSeconds(1));
        assertThat(read()).isNotEmpty();
        driver.reconfigure(Map.of("computations", Map.of("reader", Map.of("draining", true))));
        advance(Duration.ofMillis(300)); // a step begun before the change may still emit
        int drained = read().size();
        advance(Duration.ofSeconds(3));
        assertThat(read()).as("nothing read while draining").hasSize(drained);
        driver.reconfigure(Map.of("computations", Map.of("reader", Map.of("draining", false))));
        advance(Duration.ofSeconds(2));
        assertThat(read().size()).as("reading resumes").isGreaterThan(drained);
        assertThat(idsByTable().get("2026-01-01")).doesNotHaveDuplicates();
    }

    @Test
    void shouldLimitBytesPerSecondAndChangeTheLimitThroughTheDynamicSpec() throws IOException {
        // the byte limit is the other dynamic read limit: 20 rows' worth of bytes a second, then 60 rows' worth
        table("2026-01-01", 400);
        StaticTableReader reader = StaticTableReader.open(LocalTablesDirectory.open(dir), "2026-01-01");
        double rowBytes = (double) reader.dataWeight() / reader.rowCount();
        driver = FlowTestDriver.create(spec(Map.of("max_bytes_per_second", Math.round(20 * rowBytes))));
        advance(Duration.ofSeconds(2));
        int first = read().size();
        assertThat(first).as("a bucket of one second, then 20 rows' bytes a second").isBetween(45, 65);
        driver.reconfigure(Map.of("computations", Map.of("reader", Map.of("source_streams",
                Map.of("rows", Map.of("max_bytes_per_second", Math.round(60 * rowBytes)))))));
        advance(Duration.ofSeconds(2));
        assertThat(read().size() - first).as("60 rows' bytes a second from the change on").isBetween(95, 130);
    }

    @Test
    void shouldRejectAFractionalRateLimitInsteadOfReadingWithoutLimit() throws IOException {
        // 0.5 rows/s truncated to 0 would mean "no limit"
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> FlowTestDriver.create(spec(Map.of(
                "max_rows_per_second", 0.5))))
                .isInstanceOf(InvalidSpecException.class)
                .hasMessageContaining("parameters.max_rows_per_second").hasMessageContaining("set an integer >= 0");
        table("2026-01-01", 10);
        driver = FlowTestDriver.create(spec(Map.of("max_rows_per_second", 20)));
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> driver.reconfigure(Map.of("computations",
                Map.of("reader", Map.of("source_streams", Map.of("rows", Map.of("max_bytes_per_second", 0.5)))))))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("max_bytes_per_second");
    }

    @Test
    void shouldRejectADynamicChangeOfAStaticParameter() throws IOException {
        driver = FlowTestDriver.create(spec(Map.of()));
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> driver.reconfigure(Map.of("computations",
                Map.of("reader", Map.of("source_streams", Map.of("rows", Map.of("tables_path", "/x")))))))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("tables_path is not a dynamic parameter");
    }

    @Test
    void shouldStampRangesWithPlannedTimestampsProportionalToTheRowsAssigned() throws IOException {
        // "set both SystemTimestamp and EventTimestamp to the planned start of each row range. The timestamp is
        // proportional to the fraction of rows already assigned for reading. The controller fixes the start time
        // and total read duration when it starts a table, using the current read limits."
        table("2026-01-01", 40);
        driver = FlowTestDriver.create(spec(Map.of("use_planned_timestamps", true, "max_rows_per_second", 10,
                "range_row_count", 10)));
        Instant start = driver.wallClockTime();
        advance(Duration.ofSeconds(6));
        List<Message> rows = read();
        assertThat(rows).hasSizeGreaterThanOrEqualTo(40);
        for (Message m : rows) {
            long id = (Long) m.getPayload().get("id");
            long rangeStart = id / 10 * 10;
            // 40 rows at 10 rows/s: 4 s from the table's start (the first punctuation, 100 ms in); the range of
            // rows [10k, 10k+10) is planned at that start + k s, whenever it is read
            long expected = (start.toEpochMilli() + 100 + rangeStart * 100) * 1_000_000L;
            assertThat(m.getEventTimestamp()).as("row " + id).isEqualTo(expected);
            assertThat(m.getPayload().get("system_ts")).as("SystemTimestamp too").isEqualTo(expected);
        }
    }

    @Test
    void shouldKeepThePlannedScheduleAcrossARestart() throws IOException {
        // "Process restarts preserve the schedule."
        table("2026-01-01", 40);
        driver = FlowTestDriver.create(spec(Map.of("use_planned_timestamps", true, "max_rows_per_second", 10,
                "range_row_count", 10)));
        Instant start = driver.wallClockTime();
        advance(Duration.ofMillis(1500));
        driver.reviveTask();
        advance(Duration.ofSeconds(10)); // late: a replanned schedule would start here
        Map<Long, Long> byId = new HashMap<>();
        read().forEach(m -> byId.put((Long) m.getPayload().get("id"), m.getEventTimestamp()));
        assertThat(byId).hasSize(40);
        long last = byId.get(39L) / 1_000_000L;
        assertThat(last - start.toEpochMilli()).as("range [30, 40) keeps its planned instant").isEqualTo(3100L);
    }

    @Test
    void shouldApplyUsePlannedTimestampsFromTheNextTable() throws IOException {
        // "Enabling or disabling it takes effect from the next table. After disabling the option, the next table
        // uses locator timestamps again."
        table("2026-01-01", 20);
        driver = FlowTestDriver.create(spec(Map.of("use_planned_timestamps", true, "max_rows_per_second", 10,
                "range_row_count", 10)));
        advance(Duration.ofMillis(500)); // table 1 under way, planned
        driver.reconfigure(Map.of("computations", Map.of("reader", Map.of("source_streams",
                Map.of("rows", Map.of("use_planned_timestamps", false))))));
        table("2026-01-02", 5);
        advance(Duration.ofSeconds(5));
        long locator2 = Instant.parse("2026-01-02T00:00:00Z").toEpochMilli() * 1_000_000L;
        long locator1 = Instant.parse("2026-01-01T00:00:00Z").toEpochMilli() * 1_000_000L;
        assertThat(read()).filteredOn(m -> m.getPayload().get("table").toString().equals("2026-01-01"))
                .hasSize(20).allSatisfy(m -> assertThat(m.getEventTimestamp()).as("still planned")
                        .isNotEqualTo(locator1));
        assertThat(out).filteredOn(m -> m.getPayload().get("table").toString().equals("2026-01-02"))
                .hasSize(5).allSatisfy(m -> assertThat(m.getEventTimestamp()).isEqualTo(locator2));
    }

    @Test
    void shouldKeepTheWatermarkWatermarkDelayBehindTheEarliestTimestampStillToBeEmitted() throws IOException {
        // flow-catalog: the source has "watermark_delay 1h"; rows at the watermark's left are late
        table("2026-01-01", 3);
        driver = FlowTestDriver.create(spec(Map.of("watermark_delay", "10m")));
        advance(Duration.ofSeconds(1));
        long table = Instant.parse("2026-01-01T00:00:00Z").toEpochMilli() * 1_000_000L;
        // less the computation's out-of-orderness bound (1 min by default), as for every source
        assertThat(read()).hasSize(3).allSatisfy(m -> assertThat(m.getPayload().get("watermark"))
                .isEqualTo(table - Duration.ofMinutes(10).toNanos() - Duration.ofMinutes(1).toNanos()));
    }

    @Test
    void shouldCompleteOnceEveryListedTableIsReadWhenFinite() throws IOException {
        table("2026-01-01", 12);
        table("2026-01-02", 3);
        driver = FlowTestDriver.create(spec(Map.of("finite", true)));
        advance(Duration.ofSeconds(2));
        assertThat(idsByTable()).containsExactly(Map.entry("2026-01-01", ids(12)), Map.entry("2026-01-02", ids(3)));
        assertThat(driver.completedComputations()).contains("reader");
    }

    @Test
    void shouldReadOnlyTheNewestTableAndRunAgainWhenANewerOneAppears() throws IOException {
        // "The controller automatically determines which table version is latest ... A new table appearing in the
        // directory automatically triggers a new run."
        table("2026-01-01", 5);
        table("2026-01-02", 6);
        driver = FlowTestDriver.create(spec(Map.of("read_mode", "newest")));
        advance(Duration.ofSeconds(1));
        assertThat(idsByTable()).containsExactly(Map.entry("2026-01-02", ids(6)));
        advance(Duration.ofSeconds(1));
        assertThat(read()).as("no second run without a new table").hasSize(6);
        table("2026-01-03", 4);
        advance(Duration.ofSeconds(1));
        assertThat(idsByTable()).containsExactly(Map.entry("2026-01-02", ids(6)), Map.entry("2026-01-03", ids(4)));
    }

    @Test
    void shouldReportATableThatDisappearsMidReadAndGoOnWithTheNext() throws IOException {
        // the controller must decide "what to do if a table unexpectedly disappears": the status names the table
        // and the rows skipped; the source goes on with the next table
        table("2026-01-01", 100);
        table("2026-01-02", 3);
        driver = FlowTestDriver.create(spec(Map.of()));
        advance(Duration.ofMillis(200));
        int before = read().size();
        assertThat(before).isBetween(1, 99);
        LocalTablesDirectory.open(dir).removeTable("2026-01-01");
        advance(Duration.ofSeconds(1));
        assertThat(idsByTable().get("2026-01-02")).isEqualTo(ids(3));
        assertThat(idsByTable().get("2026-01-01")).hasSizeLessThan(100);
        assertThat(driver.status()).anySatisfy(e -> {
            assertThat(e.path()).isEqualTo("source_streams/rows/table/2026-01-01");
            assertThat(e.message()).contains("static table '2026-01-01'", "disappeared while being read",
                    "the rest are skipped", "goes on with the next table");
        });
    }

    @Test
    void shouldWaitOnACutTableReportingItAndReadEachRowOnceWhenItIsCopiedAgain() throws IOException {
        // "what to do if a table unexpectedly disappears" has a sibling: a table still there whose file is cut. Its
        // rows are neither skipped nor taken from elsewhere: the source reports it and waits on it
        table("2026-01-01", 30);
        table("2026-01-02", 3);
        Path part = firstPart("2026-01-01");
        byte[] whole = Files.readAllBytes(part);
        try (DataFileWriter<GenericRecord> w = new DataFileWriter<>(new GenericDatumWriter<GenericRecord>(ROW))) {
            w.create(ROW, part.toFile());
            for (long i = 0; i < 6; i++) {
                GenericRecord r = new GenericData.Record(ROW);
                r.put("id", i);
                r.put("table", "2026-01-01");
                w.append(r);
            }
        }
        driver = FlowTestDriver.create(spec(Map.of()));
        advance(Duration.ofSeconds(2));
        assertThat(idsByTable()).containsExactly(Map.entry("2026-01-01", ids(6)));
        assertThat(driver.status()).anySatisfy(e -> {
            assertThat(e.path()).isEqualTo("source_streams/rows/table/2026-01-01/read");
            assertThat(e.message()).contains("cannot read table 2026-01-01 at row 6", "fewer rows than the table's "
                    + "attributes say (30)", "It waits and retries", "copy the table's files again in full");
        });
        Files.write(part, whole);
        advance(Duration.ofSeconds(6));
        assertThat(idsByTable()).containsExactly(Map.entry("2026-01-01", ids(30)), Map.entry("2026-01-02", ids(3)));
        assertThat(driver.status()).noneSatisfy(e -> assertThat(e.path()).endsWith("/read"));
    }

    @Test
    void shouldGoOnWithTheNextTableWhenACutTableIsRemoved() throws IOException {
        table("2026-01-01", 30);
        table("2026-01-02", 3);
        Path part = firstPart("2026-01-01");
        Files.write(part, Arrays.copyOf(Files.readAllBytes(part), 40)); // cut inside the header
        driver = FlowTestDriver.create(spec(Map.of()));
        advance(Duration.ofSeconds(2));
        assertThat(driver.status()).anySatisfy(e -> assertThat(e.path()).endsWith("2026-01-01/read"));
        LocalTablesDirectory.open(dir).removeTable("2026-01-01");
        advance(Duration.ofSeconds(6));
        assertThat(idsByTable()).containsEntry("2026-01-02", ids(3));
        assertThat(driver.status()).noneSatisfy(e -> assertThat(e.path()).endsWith("/read"));
    }

    @Test
    void shouldReportATableWhoseSchemaTheStreamCannotRead() throws IOException {
        Schema other = SchemaBuilder.record("Row").namespace("st").fields().requiredString("id").endRecord();
        GenericRecord r = new GenericData.Record(other);
        r.put("id", "x");
        StaticTableWriter.write(LocalTablesDirectory.open(dir), "2026-01-01", other, null, List.of(r));
        driver = FlowTestDriver.create(spec(Map.of()));
        advance(Duration.ofSeconds(1));
        assertThat(read()).isEmpty();
        assertThat(driver.status()).anySatisfy(e -> assertThat(e.message())
                .contains("cannot be read as the schema of stream 'rows'"));
    }

    @Test
    void shouldRejectASpecWithBothTablesAndTablesPath() {
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> FlowTestDriver.create(spec(Map.of("tables",
                List.of("/a/b")))))
                .isInstanceOf(InvalidSpecException.class)
                .hasMessageContaining("computation 'reader'").hasMessageContaining("parameters.tables")
                .hasMessageContaining("set exactly one");
    }

    @Test
    void shouldRejectListedTablesThatWouldNeverBeRead() {
        // "the newest table in the directory whose name parses as an ISO8601 timestamp": with the default locator a
        // listed table named otherwise has no timestamp, and one the filter leaves out is not read either
        Map<String, Object> p = new HashMap<>();
        p.put("tables", List.of(dir.resolve("2026-01-01").toString(), dir.resolve("products").toString()));
        p.put("finite", true);
        PipelineSpec byName = listing(p);
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> FlowTestDriver.create(byName))
                .isInstanceOf(InvalidSpecException.class)
                .hasMessageContaining("computation 'reader'").hasMessageContaining("parameters.tables")
                .hasMessageContaining("products, whose name is no ISO 8601 timestamp")
                .hasMessageContaining("table_timestamp_locator \"attribute\"");
        p.put("table_timestamp_locator", "attribute"); // dated by their attributes: accepted
        p.put("table_name_filter", "\\d{4}-.*");
        PipelineSpec filtered = listing(p);
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> FlowTestDriver.create(filtered))
                .isInstanceOf(InvalidSpecException.class)
                .hasMessageContaining("products, which table_name_filter")
                .hasMessageContaining("it would never be read");
    }

    /** The read resumes after the last table it read, found by its path: a table listed twice would loop forever. */
    @Test
    void shouldRejectATableListedTwice() {
        Map<String, Object> p = new HashMap<>();
        p.put("tables", List.of(dir.resolve("2026-01-01").toString(), dir.resolve("2026-01-02").toString(),
                dir.resolve("2026-01-01").toString()));
        PipelineSpec twice = listing(p);
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> FlowTestDriver.create(twice))
                .isInstanceOf(InvalidSpecException.class)
                .hasMessageContaining("computation 'reader'").hasMessageContaining("parameters.tables")
                .hasMessageContaining("2026-01-01] more than once").hasMessageContaining("list each table once");
    }

    @Test
    void shouldSpreadRangesAcrossPartitions() {
        // "ranges spread across partitions": range i belongs to partition i % n; every row to exactly one
        long rows = 23;
        long range = 4;
        int n = 3;
        List<Long> all = new ArrayList<>();
        for (int p = 0; p < n; p++) {
            long share = StaticTableRead.shareRows(rows, range, p, n);
            for (long k = 0; k < share; k++) {
                long row = StaticTableRead.globalRow(k, range, p, n);
                assertThat(row / range % n).isEqualTo(p);
                all.add(row);
            }
        }
        assertThat(all).hasSize(23).containsExactlyInAnyOrderElementsOf(ids(23));
        assertThat(StaticTableRead.shareRows(3, 4, 1, 3)).isZero();
    }
}
