package io.flowkafka.testing;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowkafka.api.Message;
import io.flowkafka.api.OutputCollector;
import io.flowkafka.api.RowFunction;
import io.flowkafka.api.RuntimeContext;
import io.flowkafka.spec.ColumnType;
import io.flowkafka.spec.ComputationKind;
import io.flowkafka.spec.ExternalStateManagerSpec;
import io.flowkafka.spec.PipelineSpec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The service-log source on {@link FlowTestDriver} (reference 002: "The service log is an infinite source that
 * cycles through the table. Exactly-once guarantees apply within each cycle."; "often populated by the pipeline
 * itself via external state operations").
 *
 * <p>Pipeline: source {@code in} (JSON {@code {"key", "value"}}) feeds {@code keeper}, which writes each key's
 * latest value to the table {@code /profiles} through its manager; Source computation {@code log} reads that table
 * with {@code TServiceLogSource} (3 rows per step, a cycle every 10 s) and copies every row to {@code logged}.
 */
class ServiceLogSourceTest {
    static final Schema EVENT = SchemaBuilder.record("Ev").namespace("sl").fields()
            .requiredString("key").requiredString("value").endRecord();
    static final Schema PROFILE = SchemaBuilder.record("Profile").namespace("sl").fields()
            .requiredString("key").requiredString("value").endRecord();

    /** Writes each key's latest value to the managed table. */
    public static final class Keeper implements RowFunction {
        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
            GenericRecord row = new GenericData.Record(PROFILE);
            row.put("key", message.getPayload().get("key").toString());
            row.put("value", message.getPayload().get("value").toString());
            context.getExternalState("/profiles").set(row);
        }
    }

    /** Copies each row read from the service log to {@code logged}. */
    public static final class Copier implements RowFunction {
        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
            output.addMessage(context.createMessageBuilder("logged").set("key", message.getPayload().get("key"))
                    .set("value", message.getPayload().get("value")).build());
        }
    }

    private FlowTestDriver driver;
    /** Every row read from {@code logged}, in order. */
    private final List<Message> logged = new ArrayList<>();

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

    static PipelineSpec spec() {
        return spec(false);
    }

    static PipelineSpec spec(boolean finite) {
        return PipelineSpec.builder("sl")
                .stream("raw", EVENT).stream("events", EVENT).stream("rows", PROFILE).stream("logged", PROFILE)
                .computation("read", c -> c.kind(ComputationKind.SOURCE).source("raw", "KafkaSource",
                        Map.of("topics", "in")).outputStreamIds("events"))
                .computation("keeper", c -> c.inputStreamIds("events")
                        .groupBy("hash", ColumnType.UINT64, "farm_hash(key)").groupBy("key", ColumnType.STRING, null)
                        .processingFunction(Keeper::new)
                        .externalStateManager(ExternalStateManagerSpec.of("/profiles", PROFILE)))
                .computation("log", c -> c.kind(ComputationKind.SOURCE)
                        .source("rows", "TServiceLogSource", Map.of("table", "/profiles", "max_rows_per_iteration", 3,
                                "min_cycle_duration", "10s", "finite", finite))
                        .processingFunction(Copier::new).outputStreamIds("logged"))
                .build();
    }

    private void put(String key, String value) {
        driver.pipeSource("in", key, "{\"key\":\"" + key + "\",\"value\":\"" + value + "\"}");
    }

    private void advance(Duration d) {
        driver.advanceWallClockTime(d, Duration.ofMillis(100));
    }

    /** How often each key was read so far. */
    private Map<String, Integer> counts() {
        logged.addAll(driver.readStream("logged"));
        Map<String, Integer> counts = new HashMap<>();
        logged.forEach(m -> counts.merge(m.getPayload().get("key").toString(), 1, Integer::sum));
        return counts;
    }

    private static List<String> keys() {
        return IntStream.range(0, 20).mapToObj(i -> "k" + i).toList();
    }

    @Test
    void shouldReadEveryRowOncePerCycleCycleAfterCycle() {
        driver = FlowTestDriver.create(spec());
        keys().forEach(k -> put(k, "v-" + k));
        advance(Duration.ofSeconds(5));
        assertThat(counts()).containsOnlyKeys(keys()).allSatisfy((k, n) -> assertThat(n).as(k).isEqualTo(1));
        assertThat(logged.get(0).getPayload().get("value").toString()).startsWith("v-");
        advance(Duration.ofSeconds(10));
        assertThat(counts()).allSatisfy((k, n) -> assertThat(n).as(k).isEqualTo(2));
        put("k20", "late"); // a new row: read from the next cycle on
        advance(Duration.ofSeconds(10));
        Map<String, Integer> counts = counts();
        assertThat(counts).containsEntry("k20", 1);
        keys().forEach(k -> assertThat(counts.get(k)).as(k).isEqualTo(3));
        assertThat(logged).extracting(Message::getMessageId).doesNotHaveDuplicates();
        // a row's event time is its cycle's start: three cycles, each with every row of its time once
        Map<Long, List<String>> byCycle = new java.util.TreeMap<>();
        logged.forEach(m -> byCycle.computeIfAbsent(m.getEventTimestamp(), t -> new ArrayList<>())
                .add(m.getPayload().get("key").toString()));
        assertThat(byCycle).hasSize(3);
        assertThat(byCycle.values()).allSatisfy(ks -> assertThat(ks).doesNotHaveDuplicates().containsAll(keys()));
        assertThat(driver.completedComputations()).as("an infinite source").doesNotContain("log");
        assertThat(driver.meterRegistry().get("flow.service_log.cycle").tag("stream", "rows").gauge().value())
                .as("three cycles done, the fourth waits for its start").isEqualTo(3.0);
        assertThat(driver.meterRegistry().get("flow.service_log.rows").tag("stream", "rows").gauge().value())
                .isEqualTo(61.0);
    }

    @Test
    void shouldCompleteAfterOneCycleWhenFinite() {
        // flow-catalog: the service log makes "infinite rescans of a sorted table; finite for tests"
        driver = FlowTestDriver.create(spec(true));
        keys().forEach(k -> put(k, "v-" + k));
        advance(Duration.ofSeconds(5));
        assertThat(counts()).containsOnlyKeys(keys()).allSatisfy((k, n) -> assertThat(n).as(k).isEqualTo(1));
        assertThat(driver.completedComputations()).contains("log");
        advance(Duration.ofSeconds(30));
        assertThat(counts()).as("no second cycle").allSatisfy((k, n) -> assertThat(n).as(k).isEqualTo(1));
    }

    @Test
    void shouldResumeACycleAfterTheLastCommittedRowWhenTheTaskIsRevived() {
        // "Exactly-once guarantees apply within each cycle": the read progress is in a changelogged store
        driver = FlowTestDriver.create(spec());
        keys().forEach(k -> put(k, "v-" + k));
        advance(Duration.ofMillis(300)); // part of cycle 0
        int before = counts().values().stream().mapToInt(Integer::intValue).sum();
        assertThat(before).isBetween(1, 19);
        driver.reviveTask();
        advance(Duration.ofSeconds(5));
        assertThat(counts()).containsOnlyKeys(keys()).allSatisfy((k, n) -> assertThat(n).as(k).isEqualTo(1));
        advance(Duration.ofMillis(5_300)); // part of cycle 1
        driver.reviveTask();
        advance(Duration.ofSeconds(4));
        assertThat(counts()).allSatisfy((k, n) -> assertThat(n).as(k).isEqualTo(2));
        assertThat(logged).extracting(Message::getMessageId).doesNotHaveDuplicates();
    }
}
