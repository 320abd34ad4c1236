package io.flowkafka.connectors.statictable;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flowkafka.spec.ColumnType;
import io.flowkafka.spec.ComputationKind;
import io.flowkafka.spec.InvalidSpecException;
import io.flowkafka.spec.PipelineSpec;
import io.flowkafka.spec.SinkSpec;
import io.flowkafka.spi.OutboxBatch;
import io.flowkafka.spi.OutboxDeliveryException;
import io.flowkafka.spi.OutboxRecord;
import io.flowkafka.spi.SinkContext;
import io.flowkafka.spi.SinkProvider;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
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

/** {@code TArrivalOrderTableSink}'s parameters, checked before start, and its deliverer's replay dedup. */
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
        assertThat(problems(p)).extracting(SinkProvider.Problem::field).containsExactlyInAnyOrder(
                "parameters.output_directory", "parameters.table_period", "parameters.max_row_count",
                "parameters.max_data_weight", "parameters.payload_column");
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

    @Test
    void shouldCheckTheDataWeightColumnAgainstTheInputSchema() {
        // "the optional data_weight_column (type int64 or uint64, non-negative values)"
        Map<String, Object> p = valid();
        p.put("data_weight_column", "s");
        assertThatThrownBy(() -> provider.createDeliverer(context(p))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'tables'").hasMessageContaining("data_weight_column 's' must be int64");
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

    @Test
    void shouldWriteOnlyTheUncoveredTailOfAPartlyCoveredReplay() throws Exception {
        // "with a partially covered replay, the sink writes only the uncovered tail without restarting the job"
        try (var deliverer = provider.createDeliverer(context(valid()))) {
            deliverer.open(0, java.util.OptionalLong.empty());
            deliverer.deliver(batch(0, 0, 5));
            // the outbox offset commit was lost: the partition is reopened and the batch comes again, longer
            deliverer.release(0);
            deliverer.open(0, java.util.OptionalLong.empty());
            deliverer.deliver(batch(0, 0, 8));
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
            try (var deliverer = provider.createDeliverer(context(p))) {
                deliverer.open(0, java.util.OptionalLong.empty());
                deliverer.deliver(batch);
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
    void shouldStopOnMessageIdsThatDoNotIncrease() throws Exception {
        // "The sink requires exactly one input stream with increasing MessageId values within it"
        try (var deliverer = provider.createDeliverer(context(valid()))) {
            deliverer.open(0, java.util.OptionalLong.empty());
            OutboxBatch bad = new OutboxBatch("tables", 0, List.of(record(3), record(1)), 5);
            assertThatThrownBy(() -> deliverer.deliver(bad)).isInstanceOfSatisfying(OutboxDeliveryException.class,
                    e -> assertThat(e.fatal()).isTrue()).hasMessageContaining("needs increasing message ids");
        }
    }

    @Test
    void shouldStopWhenAnotherOwnerHoldsTheDirectory() throws Exception {
        new ArrivalOrderTableSink(LocalTablesDirectory.open(dir), new ArrivalOrderSinkParameters(Duration.ofHours(1),
                Duration.ofDays(7), null, null), ROW, new SinkProgress.Owner("other", "read", "tables"))
                .load(Instant.now());
        try (var deliverer = provider.createDeliverer(context(valid()))) {
            assertThatThrownBy(() -> deliverer.open(0, java.util.OptionalLong.empty()))
                    .isInstanceOfSatisfying(OutboxDeliveryException.class, e -> assertThat(e.fatal()).isTrue())
                    .hasMessageContaining("another owner");
        }
    }
}
