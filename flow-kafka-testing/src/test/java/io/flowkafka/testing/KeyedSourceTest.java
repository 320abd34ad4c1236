package io.flowkafka.testing;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowkafka.api.Message;
import io.flowkafka.api.OutputCollector;
import io.flowkafka.api.RowFunction;
import io.flowkafka.api.RuntimeContext;
import io.flowkafka.api.StateAccessor;
import io.flowkafka.api.Timer;
import io.flowkafka.spec.ColumnType;
import io.flowkafka.spec.ComputationSpec;
import io.flowkafka.spec.PipelineSpec;
import io.flowkafka.spec.WatermarkStrategy;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.junit.jupiter.api.Test;

/**
 * A Transform computation reading a key-partitioned source directly (flow-kafka's keyed source):
 * keyed by its group_by_schema computed from each source record, with per-key state and timers,
 * in one sub-topology (no Source computation, no internal stream between).
 */
class KeyedSourceTest {
    static final long MS = 1_000_000L;
    static final Schema EVENT = SchemaBuilder.record("Ev").namespace("keyed").fields()
            .requiredString("user").requiredLong("ts").optionalString("cmd").endRecord();
    static final Schema OUT = SchemaBuilder.record("Out").namespace("keyed").fields()
            .requiredString("user").requiredString("what").requiredLong("n").endRecord();
    static final Schema COUNT = SchemaBuilder.record("Count").namespace("keyed").fields().requiredLong("n").endRecord();

    /** Counts per user; "timer T" adds an event-time timer at T ms; a timer reports the count it sees. */
    public static final class CountAndRemind implements RowFunction {
        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
            StateAccessor<GenericRecord> count = context.getState("count");
            long n = count.get().map(r -> (Long) r.get("n")).orElse(0L) + 1;
            GenericRecord r = new GenericData.Record(COUNT);
            r.put("n", n);
            count.set(r);
            String user = message.getKey().get("user").toString();
            output.addMessage(context.createMessageBuilder("out").set("user", user).set("what", "count").set("n", n)
                    .build());
            Object cmd = message.getPayload().get("cmd");
            if (cmd != null && cmd.toString().startsWith("timer ")) {
                output.addTimer(Long.parseLong(cmd.toString().substring(6)) * MS, message.getEventTimestamp());
            }
        }

        @Override
        public void onTimer(Timer timer, OutputCollector output, RuntimeContext context) {
            StateAccessor<GenericRecord> count = context.getState("count");
            output.addMessage(context.createMessageBuilder("out").set("user", timer.getKey().get("user").toString())
                    .set("what", "timer@" + timer.getTriggerTimestamp() / MS)
                    .set("n", count.get().map(r -> (Long) r.get("n")).orElse(0L)).build());
        }
    }

    private static PipelineSpec spec(UnaryOperator<ComputationSpec.Builder> more) {
        WatermarkStrategy exact = WatermarkStrategy.DEFAULT.withOutOfOrdernessBound(Duration.ZERO).withTimestampColumn("ts");
        return PipelineSpec.builder("keyed").stream("raw", EVENT).stream("out", OUT)
                .computation("count", c -> more.apply(c.watermarkStrategy(exact)
                        .groupBy("hash", ColumnType.UINT64, "farm_hash(user)").groupBy("user", ColumnType.STRING, null)
                        .state("count", COUNT).processingFunction(CountAndRemind::new).outputStreamIds("out")
                        .timer("remind", Map.of())))
                .build();
    }

    private static PipelineSpec keyed(Map<String, Object> extra) {
        Map<String, Object> p = new java.util.LinkedHashMap<>(Map.of("topics", "in", "key_partitioned", true));
        p.putAll(extra);
        return spec(c -> c.source("raw", "KafkaSource", p));
    }

    private static void event(FlowTestDriver driver, String user, long tsMs, String cmd) {
        event(driver, "in", user, tsMs, cmd);
    }

    private static List<String> outputs(FlowTestDriver driver) {
        return driver.readPayloads("out").stream().map(r -> r.get("user") + ":" + r.get("what") + ":" + r.get("n"))
                .toList();
    }

    @Test
    void shouldKeepStatePerGroupByKeyInOneSubTopology() {
        try (FlowTestDriver driver = FlowTestDriver.create(keyed(Map.of()))) {
            assertThat(driver.topology().describe().subtopologies()).as("source, state and sink in one sub-topology")
                    .hasSize(1);
            event(driver, "ann", 1, null);
            event(driver, "bob", 2, null);
            event(driver, "ann", 3, null);
            assertThat(outputs(driver)).containsExactly("ann:count:1", "bob:count:1", "ann:count:2");
            assertThat(driver.stateForPayload("count", "count", "raw", Map.of("user", "ann", "ts", 0L))).map(r -> r.get("n")).contains(2L);
            assertThat(driver.stateForPayload("count", "count", "raw", Map.of("user", "bob", "ts", 0L))).map(r -> r.get("n")).contains(1L);
        }
    }

    @Test
    void shouldFireAKeysTimerWhenTheSourceWatermarkPassesIt() {
        // timers page: "When the EventWatermark ... exceeds TriggerTimestamp, the timer is delivered"; a keyed source's
        // timers follow the watermark of its own source partition
        try (FlowTestDriver driver = FlowTestDriver.create(keyed(Map.of()))) {
            event(driver, "ann", 100, "timer 1000");
            event(driver, "ann", 500, null);
            event(driver, "bob", 1000, null);
            assertThat(outputs(driver)).as("a watermark equal to the trigger does not fire it")
                    .containsExactly("ann:count:1", "ann:count:2", "bob:count:1");
            event(driver, "bob", 1001, null);
            assertThat(outputs(driver)).as("the timer runs with its key's state").containsExactly("bob:count:2",
                    "ann:timer@1000:2");
            assertThat(driver.pendingTimers("count")).isEmpty();
        }
    }

    @Test
    void shouldFirePendingTimersAndCompleteWhenAFiniteSourceEnds() {
        try (FlowTestDriver driver = FlowTestDriver.create(keyed(Map.of("finite", true)))) {
            event(driver, "ann", 100, "timer 900000");
            assertThat(driver.pendingTimers("count")).hasSize(1);
            driver.completeSource("in");
            driver.advanceWallClockTime(Duration.ofSeconds(1));
            assertThat(outputs(driver)).containsExactly("ann:count:1", "ann:timer@900000:1");
            assertThat(driver.isCompleted()).isTrue();
        }
    }

    @Test
    void shouldSendARecordWithoutTheKeyFieldToTheDeadLetterTopicAndGoOn() {
        try (FlowTestDriver driver = FlowTestDriver.create(keyed(Map.of()))) {
            driver.pipeSource("in", "x", "{\"ts\":5}");
            event(driver, "ann", 6, null);
            assertThat(driver.readDeadLetters()).singleElement()
                    .satisfies(d -> assertThat(d.valueAsString()).isEqualTo("{\"ts\":5}"));
            assertThat(outputs(driver)).containsExactly("ann:count:1");
        }
    }

    private static PipelineSpec twoSources() {
        WatermarkStrategy exact = WatermarkStrategy.DEFAULT.withOutOfOrdernessBound(Duration.ZERO).withTimestampColumn("ts")
                .withIdlePartitions(Duration.ofSeconds(10), 0.4);
        return PipelineSpec.builder("keyed").stream("a", EVENT).stream("b", EVENT).stream("out", OUT)
                .computation("count", c -> c.watermarkStrategy(exact)
                        .source("a", "KafkaSource", Map.of("topics", "in-a", "key_partitioned", true))
                        .source("b", "KafkaSource", Map.of("topics", "in-b", "key_partitioned", true))
                        .groupBy("hash", ColumnType.UINT64, "farm_hash(user)").groupBy("user", ColumnType.STRING, null)
                        .state("count", COUNT).processingFunction(CountAndRemind::new).outputStreamIds("out")
                        .timer("remind", Map.of()))
                .build();
    }

    private static void event(FlowTestDriver driver, String topic, String user, long tsMs, String cmd) {
        driver.pipeSource(topic, user, "{\"user\":\"" + user + "\",\"ts\":" + tsMs
                + (cmd == null ? "" : ",\"cmd\":\"" + cmd + "\"") + "}");
    }

    @Test
    void shouldKeepOneKeysStateAcrossCoPartitionedSources() {
        try (FlowTestDriver driver = FlowTestDriver.create(twoSources())) {
            event(driver, "in-a", "ann", 1, null);
            event(driver, "in-b", "ann", 2, null);
            event(driver, "in-a", "ann", 3, null);
            assertThat(outputs(driver)).containsExactly("ann:count:1", "ann:count:2", "ann:count:3");
        }
    }

    @Test
    void shouldFireTimersOnTheMinimumOfTheSourcesWatermarks() {
        // the task's watermark is the minimum over its sources: a timer waits for the slower one
        try (FlowTestDriver driver = FlowTestDriver.create(twoSources())) {
            event(driver, "in-a", "ann", 100, "timer 1000");
            event(driver, "in-a", "x", 5000, null);
            event(driver, "in-b", "y", 900, null);
            assertThat(outputs(driver)).as("source b's watermark (900) holds the timer").doesNotContain(
                    "ann:timer@1000:1");
            event(driver, "in-b", "y", 1001, null);
            assertThat(outputs(driver)).contains("ann:timer@1000:1");
        }
    }

    @Test
    void shouldStopWaitingForAnIdleSourceAfterTheIdleDuration() {
        // idle_partitions.duration: a source without records for that long no longer holds the watermark back
        try (FlowTestDriver driver = FlowTestDriver.create(twoSources())) {
            event(driver, "in-a", "ann", 100, "timer 1000");
            event(driver, "in-b", "y", 200, null);
            event(driver, "in-a", "x", 5000, null);
            assertThat(outputs(driver)).doesNotContain("ann:timer@1000:1");
            driver.advanceWallClockTime(Duration.ofSeconds(5));
            event(driver, "in-a", "x", 5001, null);
            assertThat(outputs(driver)).as("b has been quiet 5 s of 10").doesNotContain("ann:timer@1000:1");
            driver.advanceWallClockTime(Duration.ofSeconds(6));
            assertThat(outputs(driver)).as("b is idle now: a's watermark alone decides").contains("ann:timer@1000:1");
        }
    }
}
