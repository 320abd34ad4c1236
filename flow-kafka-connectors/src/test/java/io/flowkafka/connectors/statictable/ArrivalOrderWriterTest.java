package io.flowkafka.connectors.statictable;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowkafka.spec.SinkSpec;
import io.flowkafka.spi.SinkContext;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The writer feeds the engine the input system watermark that its tasks' committed epochs reached. Reference 001: "An empty
 * slot T is created strictly in order, only if T &lt;= wall clock and the known non-zero system watermark of the
 * input stream is strictly greater than T + table_period. A watermark equal to the boundary is therefore not enough,
 * and empty tables aren't created in the future."
 */
class ArrivalOrderWriterTest {
    private static final Duration PERIOD = Duration.ofHours(1);

    @TempDir
    Path dir;

    private ArrivalOrderWriter writer() {
        SinkSpec sink = new SinkSpec("tables", "TArrivalOrderTableSink", List.of("rows"), Map.of(
                "output_directory", dir.toString(), "table_period", "1h", "table_ttl", "7d"));
        SinkContext context = new SinkContext("pp", "pp", "read", sink, Map.of(), Map.of("tick.ms", "3600000"),
                new SimpleMeterRegistry(), "pp.dlq", Map.of("rows", ArrivalOrderSinkProviderTest.ROW));
        return (ArrivalOrderWriter) new ArrivalOrderSinkProvider().createWriter(context);
    }

    private List<String> tables() throws Exception {
        return LocalTablesDirectory.open(dir).tableNames();
    }

    private static long nanos(Instant t) {
        return t.getEpochSecond() * 1_000_000_000L + t.getNano();
    }

    @Test
    void shouldWriteAnEmptyTableOnceEveryPartitionsWatermarkIsStrictlyPastTheSlot() throws Exception {
        try (ArrivalOrderWriter d = writer()) {
            d.open(0, null);
            d.open(1, null);
            Instant t = new ArrivalOrderTableSink(LocalTablesDirectory.open(dir), new ArrivalOrderSinkParameters(
                    PERIOD, Duration.ofDays(7), null, null), ArrivalOrderSinkProviderTest.ROW,
                    new SinkProgress.Owner("pp", "read", "tables")).load(Instant.now()).nextTableTimestamp();
            assertThat(t).as("the open slot: T <= wall clock").isBeforeOrEqualTo(Instant.now());
            long past = nanos(t.plus(PERIOD)) + 1;

            d.publish();
            assertThat(tables()).as("no watermark yet").isEmpty();

            d.onSystemWatermark(0, past, 2);
            d.publish();
            assertThat(tables()).as("partition 1's watermark unknown: the input's is unknown").isEmpty();

            d.onSystemWatermark(1, nanos(t.plus(PERIOD)), 2);
            d.publish();
            assertThat(tables()).as("the minimum equals T + table_period: not enough").isEmpty();

            d.onSystemWatermark(1, past, 2);
            d.publish();
            // the next slot T + period lies ahead of the wall clock and of the watermark: none for it
            assertThat(tables()).as("strictly past T + table_period").containsExactly(
                    ArrivalOrderTableSink.tableName(t));
            assertThat(LocalTablesDirectory.open(dir).attributes(ArrivalOrderTableSink.tableName(t)).rowCount())
                    .isZero();
        }
    }

    private Instant openSlot() throws Exception {
        return new ArrivalOrderTableSink(LocalTablesDirectory.open(dir), new ArrivalOrderSinkParameters(PERIOD,
                Duration.ofDays(7), null, null), ArrivalOrderSinkProviderTest.ROW,
                new SinkProgress.Owner("pp", "read", "tables")).load(Instant.now()).nextTableTimestamp();
    }

    @Test
    void shouldKnowTheWatermarksOfPartitionsThatOtherInstancesRun() throws Exception {
        // the input's partitions spread over two instances: each learns the others' through the output directory
        try (ArrivalOrderWriter a = writer(); ArrivalOrderWriter b = writer()) {
            a.open(0, null);
            b.open(1, null);
            Instant t = openSlot();
            long past = nanos(t.plus(PERIOD)) + 1;
            a.onSystemWatermark(0, past, 2);
            a.publish();
            b.publish();
            assertThat(tables()).as("partition 1 never reported: the input's watermark is unknown").isEmpty();
            b.onSystemWatermark(1, past, 2);
            b.discard(1); // the partition moves away: what its committed epochs reached stays known
            a.publish();
            assertThat(tables()).as("instance a publishes with partition 1's watermark from instance b")
                    .containsExactly(ArrivalOrderTableSink.tableName(t));
        }
    }
}
