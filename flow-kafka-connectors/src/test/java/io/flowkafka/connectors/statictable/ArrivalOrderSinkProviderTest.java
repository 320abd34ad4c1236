package io.flowkafka.connectors.statictable;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flowkafka.api.Message;
import io.flowkafka.api.OutputCollector;
import io.flowkafka.api.RowFunction;
import io.flowkafka.api.RuntimeContext;
import io.flowkafka.spec.ColumnType;
import io.flowkafka.spec.ComputationKind;
import io.flowkafka.spec.InvalidSpecException;
import io.flowkafka.spec.PipelineSpec;
import io.flowkafka.spec.SinkSpec;
import io.flowkafka.spi.OutboxBatch;
import io.flowkafka.spi.OutboxDeliveryException;
import io.flowkafka.spi.OutboxRecord;
import io.flowkafka.spi.SinkContext;
import io.flowkafka.spi.StagedSinkWriter;
import io.flowkafka.spi.SinkProvider;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code TArrivalOrderTableSink}'s parameters, checked before start, and its writer's epochs and replay dedup. */
class ArrivalOrderSinkProviderTest {
    static final Schema ROW = SchemaBuilder.record("Row").namespace("t").fields().requiredLong("n")
            .optionalLong("w").requiredString("s").endRecord();
    final ArrivalOrderSinkProvider provider = new ArrivalOrderSinkProvider();

    @TempDir
    Path dir;

    private Map<String, Object> valid() {
        Map<String, Object> p = new HashMap<>();
        p.put("output_directory", dir.toString());
        p.put("table_period", "1h");
        p.put("table_ttl", "7d");
        return p;
    }

    private static SinkSpec sink(Map<String, Object> parameters) {
        return new SinkSpec("tables", "TArrivalOrderTableSink", List.of("rows"), parameters);
    }

    private List<SinkProvider.Problem> problems(Map<String, Object> parameters) {
        return provider.validate(sink(parameters));
    }

    @Test
    void shouldAcceptTheParametersOfThePage() {
        Map<String, Object> p = valid();
        p.put("max_row_count", 1000);
        p.put("max_data_weight", "1048576");
        p.put("data_weight_column", "w");
        assertThat(problems(p)).isEmpty();
    }

    @Test
    void shouldRequireTableTtl() {
        // "The mandatory table_ttl parameter bounds the lifetime of the output tables"
        Map<String, Object> p = valid();
        p.remove("table_ttl");
        assertThat(problems(p)).singleElement().satisfies(problem -> {
            assertThat(problem.field()).isEqualTo("parameters.table_ttl");
            assertThat(problem.message()).contains("TArrivalOrderTableSink 'tables'", "no table_ttl", "mandatory");
        });
    }

    @Test
    void shouldRejectATtlOfMoreThan40000Periods() {
        // "A spec with a table_ttl / table_period ratio greater than 40000 is rejected because of the Cypress limit on
        // the number of children."
        Map<String, Object> p = valid();
        p.put("table_period", "1s");
        p.put("table_ttl", "40000s");
        assertThat(problems(p)).isEmpty();
        p.put("table_ttl", "40001s");
        assertThat(problems(p)).singleElement().satisfies(problem -> {
            assertThat(problem.field()).isEqualTo("parameters.table_ttl");
            assertThat(problem.message()).contains("'tables'", "40000").doesNotContain("fix:");
            assertThat(problem.fix()).contains("lower table_ttl or raise table_period");
        });
    }

    @Test
    void shouldNameTheFieldOfEveryOtherMistake() {
        Map<String, Object> p = valid();
        p.remove("output_directory");
        p.put("table_period", "soon");
        p.put("max_row_count", -1);
        p.put("max_data_weight", "x");
        p.put("payload_column", "s");
        p.put("max_batch_records", 200); // an outbox sink's parameter: this sink has none
        p.put("max_rows", 1000); // misspelled: the table would have no row limit
        p.put("format", "parquet");
        assertThat(problems(p)).extracting(SinkProvider.Problem::field).containsExactlyInAnyOrder(
                "parameters.output_directory", "parameters.table_period", "parameters.max_row_count",
                "parameters.max_data_weight", "parameters.payload_column", "parameters.max_batch_records",
                "parameters.max_rows", "parameters.format");
        // "The sink requires exactly one input stream"
        assertThat(provider.validate(new SinkSpec("tables", "TArrivalOrderTableSink", List.of("a", "b"), valid())))
                .extracting(SinkProvider.Problem::field).containsExactly("input_stream_ids");
    }

    @Test
    void shouldRejectTheSpecBeforeStartNamingTheComputationAndTheSink() {
        Map<String, Object> p = valid();
        p.remove("table_ttl");
        assertThatThrownBy(() -> PipelineSpec.builder("pp").stream("raw", ROW).stream("rows", ROW)
                .computation("read", c -> c.kind(ComputationKind.SOURCE)
                        .source("raw", "KafkaSource", Map.of("topics", "in")).outputStreamIds("rows")
                        .sink("tables", "TArrivalOrderTableSink", List.of("rows"), p))
                .build().validated())
                .isInstanceOf(InvalidSpecException.class).hasMessageContaining("read")
                .hasMessageContaining("parameters.table_ttl").hasMessageContaining("'tables'");
    }

    /** Rules audit: a Transform over an internal stream was accepted and stopped the pipeline at its first epoch. */
    @Test
    void shouldRejectAWriterWhoseMessageIdsCannotIncrease() {
        // reference 001: the sink "requires exactly one input stream with increasing MessageId values within it"
        PipelineSpec.Builder pipeline = PipelineSpec.builder("pp").stream("raw", ROW).stream("rows", ROW)
                .stream("out", ROW)
                .computation("read", c -> c.kind(ComputationKind.SOURCE)
                        .source("raw", "KafkaSource", Map.of("topics", "in")).outputStreamIds("rows"))
                .computation("count", c -> c.inputStreamIds("rows").groupBy("hash", ColumnType.UINT64, "farm_hash(s)")
                        .groupBy("s", ColumnType.STRING, null).processingFunction(PassRows::new)
                        .timer("expire", Map.of()).outputStreamIds("out")
                        .sink("tables", "TArrivalOrderTableSink", List.of("out"), valid()));
        assertThatThrownBy(() -> pipeline.build().validated()).isInstanceOf(InvalidSpecException.class)
                .hasMessageContaining("computation 'count', field 'sinks.tables.sink_class_name'")
                .hasMessageContaining("needs increasing message ids in its input, but computation 'count' reads "
                        + "internal streams [rows], whose partitions bring messages of many source partitions and has "
                        + "timers")
                .hasMessageContaining("write the sink from a computation reading one source topic");
        // review: a Source reading two topics interleaves the ids of their partitions in each task
        PipelineSpec.Builder twoTopics = PipelineSpec.builder("pp").stream("raw", ROW).stream("rows", ROW)
                .computation("read", c -> c.kind(ComputationKind.SOURCE)
                        .source("raw", "KafkaSource", Map.of("topics", List.of("in-a", "in-b"))).outputStreamIds("rows")
                        .sink("tables", "TArrivalOrderTableSink", List.of("rows"), valid()));
        assertThatThrownBy(() -> twoTopics.build().validated()).isInstanceOf(InvalidSpecException.class)
                .hasMessageContaining("but computation 'read' reads 2 source topics");
        PipelineSpec.Builder twoNamed = PipelineSpec.builder("pp").stream("raw", ROW).stream("rows", ROW)
                .computation("read", c -> c.kind(ComputationKind.SOURCE)
                        .source("raw", "KafkaSource", Map.of("topics", "in-a, in-b")).outputStreamIds("rows")
                        .sink("tables", "TArrivalOrderTableSink", List.of("rows"), valid()));
        assertThatThrownBy(() -> twoNamed.build().validated()).as("topics as one comma-separated string")
                .hasMessageContaining("but computation 'read' reads 2 source topics");
        // spec audit: KafkaSource also takes them as 'topic'
        PipelineSpec.Builder twoAsTopic = PipelineSpec.builder("pp").stream("raw", ROW).stream("rows", ROW)
                .computation("read", c -> c.kind(ComputationKind.SOURCE)
                        .source("raw", "KafkaSource", Map.of("topic", "in-a,in-b")).outputStreamIds("rows")
                        .sink("tables", "TArrivalOrderTableSink", List.of("rows"), valid()));
        assertThatThrownBy(() -> twoAsTopic.build().validated()).as("topics under the name 'topic'")
                .hasMessageContaining("but computation 'read' reads 2 source topics");
    }

    /** A Transform's function for the spec above; never called. */
    public static final class PassRows implements RowFunction {
        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
        }
    }

    @Test
    void shouldCheckTheDataWeightColumnAgainstTheInputSchema() {
        // "the optional data_weight_column (type int64 or uint64, non-negative values)"
        Map<String, Object> p = valid();
        p.put("data_weight_column", "s");
        assertThatThrownBy(() -> provider.createWriter(context(p))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'tables'").hasMessageContaining("data_weight_column 's' must be int64");
        // docs/code audit: at load too, so describe and flow.spec.warnings=fail catch it before anything starts
        assertThatThrownBy(() -> PipelineSpec.builder("pp").stream("raw", ROW).stream("rows", ROW)
                .computation("read", c -> c.kind(ComputationKind.SOURCE)
                        .source("raw", "KafkaSource", Map.of("topics", "in")).outputStreamIds("rows")
                        .sink("tables", "TArrivalOrderTableSink", List.of("rows"), p))
                .build().validated())
                .isInstanceOf(InvalidSpecException.class).hasMessageContaining("sinks.tables.parameters.data_weight_column")
                .hasMessageContaining("data_weight_column 's' must be int64");
    }

    private SinkContext context(Map<String, Object> parameters) {
        Map<String, Object> props = Map.of("tick.ms", "3600000");
        return new SinkContext("pp", "pp", "read", sink(parameters), Map.of(), props, new SimpleMeterRegistry(),
                "pp.dlq", Map.of("rows", ROW));
    }

    private static OutboxRecord record(long n) {
        byte[] json = ("{\"n\":" + n + ",\"w\":null,\"s\":\"x\"}").getBytes(StandardCharsets.UTF_8);
        return new OutboxRecord(n, ArrivalOrderTableSinkTest.id(n), null, json, new RecordHeaders(), 0, 5_000 + n);
    }

    private static OutboxBatch batch(int partition, long from, long to) {
        List<OutboxRecord> records = new ArrayList<>();
        for (long n = from; n < to; n++) {
            records.add(record(n));
        }
        return new OutboxBatch("tables", partition, records, to);
    }

    /** One committed epoch of a task: the batch's records written, prepared, and the commit reported. */
    private static byte[] commit(StagedSinkWriter writer, OutboxBatch batch) throws Exception {
        for (OutboxRecord r : batch.records()) {
            writer.write(batch.partition(), r);
        }
        writer.flush(batch.partition());
        byte[] recorded = writer.prepare(batch.partition());
        assertThat(recorded).as("an epoch that wrote rows records them").isNotNull();
        writer.committed(batch.partition(), recorded);
        return recorded;
    }

    @Test
    void shouldWriteOnlyTheUncoveredTailOfAPartlyCoveredReplay() throws Exception {
        // "with a partially covered replay, the sink writes only the uncovered tail without restarting the job"
        try (var writer = provider.createWriter(context(valid()))) {
            writer.open(0, null);
            byte[] recorded = commit(writer, batch(0, 0, 5));
            // the input is read again from its start (a reset): the task reopens and the replay comes, longer
            writer.discard(0);
            writer.open(0, recorded);
            commit(writer, batch(0, 0, 8));
        }
        ArrivalOrderTableSink engine = new ArrivalOrderTableSink(LocalTablesDirectory.open(dir),
                new ArrivalOrderSinkParameters(Duration.ofHours(1), Duration.ofDays(7), null, null), ROW,
                new SinkProgress.Owner("pp", "read", "tables"));
        List<String> tables = engine.publish(Instant.now().plus(Duration.ofHours(2)), null);
        assertThat(tables).hasSize(1);
        List<Long> rows = StaticTableReader.open(LocalTablesDirectory.open(dir), tables.get(0)).readAll().stream()
                .map(r -> (Long) r.get("n")).toList();
        assertThat(rows).containsExactly(0L, 1L, 2L, 3L, 4L, 5L, 6L, 7L);
        assertThat(engine.load(Instant.now()).frontiers().get(0))
                .isEqualTo(new SinkProgress.Frontier(5_007, ArrivalOrderTableSinkTest.id(7)));
    }

    @Test
    void shouldHoldTheWatermarkBackWhileACommittedEpochIsNotVisible() throws Exception {
        // "only if ... the known non-zero system watermark of the input stream is strictly greater than T +
        // table_period": the watermark may cover only rows the publisher can see, or an empty table passes them by
        try (var writer = (ArrivalOrderWriter) provider.createWriter(context(valid()))) {
            writer.open(0, null);
            for (OutboxRecord r : batch(0, 0, 3).records()) {
                writer.write(0, r);
            }
            byte[] recorded = writer.prepare(0);
            Path lock = dir.resolve(ArrivalOrderTableSink.STAGING).resolve(".listing-lock");
            Files.deleteIfExists(lock);
            Files.createDirectories(lock); // the rename cannot take its lock: it fails, the epoch stays pending
            writer.committed(0, recorded);
            Files.delete(lock); // publishing can list again
            writer.onSystemWatermark(0, Long.MAX_VALUE, 1);
            writer.publish();
            assertThat(LocalTablesDirectory.open(dir).tableNames()).as("no empty table past the pending rows")
                    .isEmpty();
            byte[] next = writer.prepare(0); // the next epoch records the pending one again; its commit renames it
            writer.committed(0, next);
            writer.onSystemWatermark(0, Long.MAX_VALUE, 1);
            writer.publish();
        }
        ArrivalOrderTableSink engine = new ArrivalOrderTableSink(LocalTablesDirectory.open(dir),
                new ArrivalOrderSinkParameters(Duration.ofHours(1), Duration.ofDays(7), null, null), ROW,
                new SinkProgress.Owner("pp", "read", "tables"));
        assertThat(engine.stagedFiles()).singleElement().satisfies(f -> assertThat(f.rows()).isEqualTo(3));
    }

    @Test
    void shouldMakeAnEpochVisibleOnlyOnceItsTransactionCommitted() throws Exception {
        // an aborted epoch is never written; one whose commit a crash separated from the writer's is, by the next open
        try (var writer = provider.createWriter(context(valid()))) {
            writer.open(0, null);
            byte[] first = commit(writer, batch(0, 0, 3));
            for (OutboxRecord r : batch(0, 3, 6).records()) {
                writer.write(0, r);
            }
            assertThat(writer.prepare(0)).isNotNull();
            writer.discard(0); // the transaction aborted: the task closes dirty and reopens
            writer.open(0, first);
            for (OutboxRecord r : batch(0, 3, 6).records()) { // the replay
                writer.write(0, r);
            }
            byte[] second = writer.prepare(0);
            writer.discard(0); // committed, then the instance died before the writer heard of it
            writer.open(0, second);
        }
        ArrivalOrderTableSink engine = new ArrivalOrderTableSink(LocalTablesDirectory.open(dir),
                new ArrivalOrderSinkParameters(Duration.ofHours(1), Duration.ofDays(7), null, null), ROW,
                new SinkProgress.Owner("pp", "read", "tables"));
        List<String> tables = engine.publish(Instant.now().plus(Duration.ofHours(2)), null);
        List<Long> rows = StaticTableReader.open(LocalTablesDirectory.open(dir), tables.get(0)).readAll().stream()
                .map(r -> (Long) r.get("n")).toList();
        assertThat(rows).containsExactly(0L, 1L, 2L, 3L, 4L, 5L);
        try (var left = Files.list(dir.resolve(ArrivalOrderTableSink.STAGING))) {
            assertThat(left.filter(f -> StagingPool.partitionOf(f) == 0).toList()).as("the aborted epoch's file")
                    .isEmpty();
        }
    }

    private static OutboxBatch avroBatch(int partition, long from, long to, RowEncoder encoder) {
        List<OutboxRecord> records = new ArrayList<>();
        for (long n = from; n < to; n++) {
            GenericRecord row = new GenericData.Record(ROW);
            row.put("n", n);
            row.put("w", n % 2 == 0 ? 100 + n : null);
            row.put("s", "x".repeat((int) n));
            records.add(new OutboxRecord(n, ArrivalOrderTableSinkTest.id(n), null, encoder.encode(row),
                    new RecordHeaders(), 0, 5_000 + n));
        }
        return new OutboxBatch("tables", partition, records, to);
    }

    @Test
    void shouldWriteAvroValuesAsTheyAreAndWeighThemByTheColumnOrTheirSize() throws Exception {
        // "By default, the message weight for the max_data_weight limit equals the message size; the optional
        // data_weight_column ... sets a custom weight, and a null in it means the message size."
        RowEncoder encoder = new RowEncoder(ROW);
        OutboxBatch batch = avroBatch(0, 0, 6, encoder);
        long sizes = batch.records().stream().mapToLong(r -> r.value().length).sum();
        long byColumn = 0;
        for (OutboxRecord r : batch.records()) {
            byColumn += r.offset() % 2 == 0 ? 100 + r.offset() : r.value().length;
        }
        for (String column : new String[] {null, "w"}) {
            Path out = dir.resolve(column == null ? "by-size" : "by-column");
            Map<String, Object> p = valid();
            p.put("output_directory", out.toString());
            p.put("format", "avro");
            if (column != null) {
                p.put("data_weight_column", column);
            }
            try (var writer = provider.createWriter(context(p))) {
                writer.open(0, null);
                commit(writer, batch);
            }
            ArrivalOrderTableSink engine = new ArrivalOrderTableSink(LocalTablesDirectory.open(out),
                    new ArrivalOrderSinkParameters(Duration.ofHours(1), Duration.ofDays(7), null, null), ROW,
                    new SinkProgress.Owner("pp", "read", "tables"));
            long expected = column == null ? sizes : byColumn;
            assertThat(engine.stagedFiles()).singleElement().satisfies(f -> assertThat(f.weight())
                    .isEqualTo(expected));
            List<String> tables = engine.publish(Instant.now().plus(Duration.ofHours(2)), null);
            List<GenericRecord> rows = StaticTableReader.open(LocalTablesDirectory.open(out), tables.get(0))
                    .readAll();
            assertThat(rows).as(out.toString()).hasSize(6);
            for (int i = 0; i < 6; i++) {
                assertThat(encoder.encode(rows.get(i))).isEqualTo(batch.records().get(i).value());
            }
        }
    }

    @Test
    void shouldRefuseInTheCallAMessageWithANegativeWeightOrNoValue() throws Exception {
        // "data_weight_column (type int64 or uint64, non-negative values)": a negative value is bad input; the
        // producing call fails (its input goes to the dead letters) instead of the task failing on every replay
        Map<String, Object> p = valid();
        p.put("data_weight_column", "w");
        try (var writer = provider.createWriter(context(p))) {
            writer.check(record(1));
            OutboxRecord negative = new OutboxRecord(2, ArrivalOrderTableSinkTest.id(2), null,
                    "{\"n\":2,\"w\":-5,\"s\":\"x\"}".getBytes(StandardCharsets.UTF_8), new RecordHeaders(), 0, 5_002);
            assertThatThrownBy(() -> writer.check(negative)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("TArrivalOrderTableSink 'tables' cannot write message")
                    .hasMessageContaining("data_weight_column 'w' must hold non-negative values but held -5");
            OutboxRecord empty = new OutboxRecord(3, ArrivalOrderTableSinkTest.id(3), null, null, new RecordHeaders(),
                    0, 5_003);
            assertThatThrownBy(() -> writer.check(empty)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("has no value");
            // a writer handed it anyway (no check) stops with the reason rather than throwing from write
            writer.open(0, null);
            writer.write(0, record(1));
            writer.write(0, negative);
            assertThatThrownBy(() -> writer.prepare(0)).isInstanceOfSatisfying(OutboxDeliveryException.class,
                    e -> assertThat(e.fatal()).isTrue()).hasMessageContaining("must hold non-negative values");
        }
    }

    @Test
    void shouldStopOnMessageIdsThatDoNotIncrease() throws Exception {
        // "The sink requires exactly one input stream with increasing MessageId values within it"
        try (var writer = provider.createWriter(context(valid()))) {
            writer.open(0, null);
            writer.write(0, record(3));
            writer.write(0, record(1));
            assertThatThrownBy(() -> writer.prepare(0)).isInstanceOfSatisfying(OutboxDeliveryException.class,
                    e -> assertThat(e.fatal()).isTrue()).hasMessageContaining("needs increasing message ids");
        }
    }

    @Test
    void shouldStopWhenAnotherOwnerHoldsTheDirectory() throws Exception {
        new ArrivalOrderTableSink(LocalTablesDirectory.open(dir), new ArrivalOrderSinkParameters(Duration.ofHours(1),
                Duration.ofDays(7), null, null), ROW, new SinkProgress.Owner("other", "read", "tables"))
                .load(Instant.now());
        try (var writer = provider.createWriter(context(valid()))) {
            assertThatThrownBy(() -> writer.open(0, null))
                    .isInstanceOfSatisfying(OutboxDeliveryException.class, e -> assertThat(e.fatal()).isTrue())
                    .hasMessageContaining("another owner");
        }
    }
}
