package io.flowkafka.connectors.statictable;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.flowkafka.runtime.FlowRuntime;
import io.flowkafka.testing.Await;
import io.flowkafka.testing.ChildJvm;
import io.flowkafka.testing.KafkaCluster;
import io.flowkafka.testing.TestNames;
import io.flowkafka.testing.WithKafka;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import org.apache.avro.generic.GenericRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code TArrivalOrderTableSink} on a real broker once its input stops: the source's system watermark, passed to
 * the sink by the writing tasks after each commit, passes the open slot. Reference 001: "An empty slot T is created strictly in order, only if T
 * &lt;= wall clock and the known non-zero system watermark of the input stream is strictly greater than T +
 * table_period" and "A partition's frontier is deleted as soon as its system_timestamp drops below the system
 * watermark of the input stream". A burst closes slots by limit, so the sequence runs ahead of the wall clock first.
 * Two instances run the input's four partitions between them.
 */
@WithKafka
class ArrivalOrderEmptyTablesIT {
    @TempDir(cleanup = CleanupMode.ON_SUCCESS)
    static Path tempRoot;

    private static final Duration PERIOD = Duration.ofSeconds(1);

    @Test
    @Timeout(300)
    void shouldWriteEmptyTablesOnlyForSlotsTheWatermarkPassedOnceTheInputStops(KafkaCluster cluster,
            TestNames names) throws Exception {
        int records = 4_000;
        String pipeline = names.name("aoe");
        String input = names.topic("input");
        Path state = Files.createTempDirectory(tempRoot, "aoe");
        Path output = state.resolve("tables");
        cluster.createTopic(input, 4);
        ArrivalOrderSinkIT.produce(cluster, input, 0, records); // a burst: 8 slots closed by limit
        // two instances: the input's partitions are spread, and each learns the others' watermarks from the directory
        try (ChildJvm a = ArrivalOrderSinkIT.instance(cluster, pipeline, input, output, state, "a", "1s", "500");
                ChildJvm b = ArrivalOrderSinkIT.instance(cluster, pipeline, input, output, state, "b", "1s", "500")) {
            Await.until(Duration.ofMinutes(2), records + " rows in published tables",
                    () -> ArrivalOrderSinkIT.rowsIn(output) >= records);
            Instant lastWithRows = tables(output).entrySet().stream().filter(e -> e.getValue().rowCount() > 0)
                    .map(Map.Entry::getKey).max(Instant::compareTo).orElseThrow();
            // the input stopped: its watermark follows the clock and passes the open slot, which is empty
            Await.until(Duration.ofMinutes(1), "an empty table after " + lastWithRows,
                    () -> tables(output).entrySet().stream().anyMatch(e -> e.getKey().isAfter(lastWithRows)
                            && e.getValue().rowCount() == 0));
            Await.until(Duration.ofMinutes(1), "the frontiers dropped below the watermark",
                    () -> progress(output).get("frontiers").isEmpty());
            check(output, records);
        }
    }

    @Test
    @Timeout(300)
    void shouldStopThePipelineWithTheReasonWhenAnotherOwnerHoldsTheDirectory(KafkaCluster cluster, TestNames names)
            throws Exception {
        // reference 001: "If the sink detects another owner's progress, it fails with an error asking the user to
        // remove it": the tasks write the sink, so the pipeline stops, naming the directory and the fix
        String input = names.topic("input");
        Path state = Files.createTempDirectory(tempRoot, "aoo");
        Path output = state.resolve("tables");
        cluster.createTopic(input, 1);
        new ArrivalOrderTableSink(LocalTablesDirectory.open(output), new ArrivalOrderSinkParameters(PERIOD,
                Duration.ofHours(1), null, null), ArrivalOrderSinkMain.EVENT,
                new SinkProgress.Owner("another-pipeline", "read", "tables")).load(Instant.now());
        Properties props = cluster.clientProperties();
        props.put("state.dir", state.resolve("instance").toString());
        try (FlowRuntime runtime = FlowRuntime.create(ArrivalOrderSinkMain.spec(names.name("aoo"), input,
                output.toString()), props)) {
            runtime.start();
            assertThat(runtime.awaitState(FlowRuntime.State.FAILED, Duration.ofMinutes(2)))
                    .as(runtime.state().toString()).isTrue();
            assertThat(runtime.status()).anySatisfy(e -> {
                assertThat(e.path()).isEqualTo("/sinks/tables/stopped");
                assertThat(e.message()).contains("another owner").contains(output.toString())
                        .contains("remove the 'progress' attribute");
            });
        }
    }

    private static void check(Path output, int records) throws Exception {
        LocalTablesDirectory dir = LocalTablesDirectory.open(output);
        TreeMap<Instant, TableAttributes> tables = tables(output);
        Map<String, Integer> seen = new HashMap<>();
        int empty = 0;
        for (Map.Entry<Instant, TableAttributes> e : tables.entrySet()) {
            String name = ArrivalOrderTableSink.tableName(e.getKey());
            for (GenericRecord r : StaticTableReader.open(dir, name).readAll()) {
                seen.merge(r.get("id").toString(), 1, Integer::sum);
            }
            if (e.getValue().rowCount() == 0) {
                empty++;
                // the watermark, at most the wall clock of the task that wrote it, was strictly past T + period when
                // the table was created, and T was not in the future: none for a slot at or ahead of the watermark
                Instant created = Instant.parse(e.getValue().custom().get(ArrivalOrderTableSink.CREATION_TIME)
                        .asText());
                assertThat(e.getKey().plus(PERIOD)).as("empty table " + name).isBefore(created);
            }
        }
        assertThat(empty).isPositive();
        assertThat(seen).as("every input message in a table").hasSize(records);
        assertThat(seen.values()).as("each in exactly one table, once").containsOnly(1);
        List<Instant> ts = new ArrayList<>(tables.keySet());
        for (int i = 1; i < ts.size(); i++) {
            assertThat(Duration.between(ts.get(i - 1), ts.get(i))).as("strictly in order, no gap after "
                    + ts.get(i - 1)).isEqualTo(PERIOD);
        }
    }

    private static TreeMap<Instant, TableAttributes> tables(Path output) {
        try {
            LocalTablesDirectory dir = LocalTablesDirectory.open(output);
            TreeMap<Instant, TableAttributes> out = new TreeMap<>();
            for (String t : dir.tableNames()) {
                TableAttributes a = dir.attributes(t);
                out.put(a.tableTimestamp(), a);
            }
            return out;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static JsonNode progress(Path output) {
        try {
            return LocalTablesDirectory.open(output).directoryAttributes().get("progress");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
