package io.flowkafka.testing;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowkafka.api.Message;
import io.flowkafka.api.OutputCollector;
import io.flowkafka.api.RowFunction;
import io.flowkafka.api.RuntimeContext;
import io.flowkafka.api.Timer;
import io.flowkafka.spec.ColumnType;
import io.flowkafka.spec.ComputationKind;
import io.flowkafka.spec.PipelineSpec;
import io.flowkafka.spec.WatermarkStrategy;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The rules of the timers pages (reference 003 and 004), each quoted and shown on
 * {@link FlowTestDriver}. Two sources feed stream {@code a} and stream {@code b}; computation
 * {@code timers} reads both, registers timers as its input messages say, and reports each fired
 * timer on stream {@code fired}.
 */
class TimerSemanticsTest {
    static final Schema EVENT = SchemaBuilder.record("Ev").namespace("timers").fields()
            .requiredString("key").requiredLong("ts").optionalString("cmd").endRecord();
    static final Schema FIRED = SchemaBuilder.record("Fired").namespace("timers").fields()
            .requiredString("key").requiredString("stream").requiredLong("trigger").requiredLong("event")
            .endRecord();
    private static final long MS = 1_000_000L;

    /**
     * Commands in {@code cmd}: {@code add <timer stream> <trigger ms> <event ms>}; a timer whose key
     * is {@code fail} throws when it fires; one whose key starts with {@code audit} also emits to {@code audit}.
     */
    public static final class Timers implements RowFunction {
        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
            Object cmd = message.getPayload().get("cmd");
            if (cmd == null) {
                return;
            }
            String[] c = cmd.toString().split(" ");
            if (c[0].equals("add")) {
                output.addTimer(c[1], Long.parseLong(c[2]) * MS, Long.parseLong(c[3]) * MS);
            }
        }

        @Override
        public void onTimer(Timer timer, OutputCollector output, RuntimeContext context) {
            String key = timer.getKey().get("key").toString();
            output.addMessage(context.createMessageBuilder("fired").set("key", key).set("stream", timer.getStreamId())
                    .set("trigger", timer.getTriggerTimestamp() / MS).set("event", timer.getEventTimestamp() / MS)
                    .build());
            if (key.equals("fail")) {
                throw new IllegalStateException("timer handler fails for key fail");
            }
            if (key.startsWith("chain") && !timer.getStreamId().equals("t_all")) {
                // a timer of the first timer stream, due at once: fired in the steps that follow
                output.addTimer("t_all", timer.getTriggerTimestamp(), timer.getEventTimestamp());
            }
            if (key.startsWith("audit")) {
                output.addMessage(context.createMessageBuilder("audit").set("key", key)
                        .set("stream", timer.getStreamId()).set("trigger", timer.getTriggerTimestamp() / MS)
                        .set("event", timer.getEventTimestamp() / MS).build());
            }
        }
    }

    private FlowTestDriver driver;

    @BeforeEach
    void start() {
        driver = FlowTestDriver.create(spec());
    }

    /** Sources a and b (event time = {@code ts}, no out-of-orderness) into computation {@code timers}. */
    static PipelineSpec spec() {
        WatermarkStrategy exact = WatermarkStrategy.DEFAULT.withOutOfOrdernessBound(Duration.ZERO).withTimestampColumn("ts");
        return PipelineSpec.builder("timers")
                .stream("raw_a", EVENT).stream("raw_b", EVENT).stream("a", EVENT).stream("b", EVENT)
                .stream("fired", FIRED).stream("audit", FIRED)
                .computation("read_a", c -> c.kind(ComputationKind.SOURCE).watermarkStrategy(exact)
                        .source("raw_a", "KafkaSource", Map.of("topics", "in-a")).outputStreamIds("a"))
                .computation("read_b", c -> c.kind(ComputationKind.SOURCE).watermarkStrategy(exact)
                        .source("raw_b", "KafkaSource", Map.of("topics", "in-b")).outputStreamIds("b"))
                .computation("timers", c -> c.inputStreamIds("a", "b")
                        .groupBy("hash", ColumnType.UINT64, "farm_hash(key)").groupBy("key", ColumnType.STRING, null)
                        .processingFunction(Timers::new).outputStreamIds("fired", "audit")
                        .timer("t_all", Map.of())
                        .timer("t_a", Map.of("streams", List.of("a")))
                        .timer("t_delay", Map.of("streams_with_delays", Map.of("a", "10s")))
                        .timer("t_nodedup", Map.of("streams", List.of("a"), "deduplicate_equal_timestamps", false))
                        .timer("t_b_only", Map.of("streams", List.of("b")))
                        .timer("t_wall", Map.of("time_type", "real_time"))
                        .timer("t_dep_a", Map.of())
                        .streamsDependency("audit", List.of("t_b_only"))
                        .streamsDependency("t_dep_a", List.of("a")))
                .build();
    }

    @AfterEach
    void stop() {
        driver.close();
    }

    /** Pipes an event into source a or b and lets the watermarks it moves flow downstream. */
    private void event(String source, String key, long tsMs, String cmd) {
        event(driver, source, key, tsMs, cmd);
    }

    /** Pipes an event into topic {@code in-<source>} of {@code driver}, then moves its clock a watermark interval. */
    static void event(FlowTestDriver driver, String source, String key, long tsMs, String cmd) {
        driver.pipeSource("in-" + source, key, "{\"key\":\"" + key + "\",\"ts\":" + tsMs
                + (cmd == null ? "" : ",\"cmd\":\"" + cmd + "\"") + "}");
        driver.advanceWallClockTime(Duration.ofMillis(200)); // the watermark interval
    }

    private List<String> fired() {
        return driver.readPayloads("fired").stream()
                .map(r -> r.get("stream") + ":" + r.get("key") + ":" + r.get("trigger") + ":" + r.get("event"))
                .toList();
    }

    @Test
    void shouldFireOnlyWhenTheWatermarkExceedsTheTriggerTimestamp() {
        // "When the EventWatermark (or another configured watermark) exceeds TriggerTimestamp, the timer is delivered"
        event("a", "k", 100, "add t_a 1000 100");
        event("a", "x", 1000, null);
        assertThat(fired()).as("a watermark equal to the trigger does not fire it").isEmpty();
        event("a", "x", 1001, null);
        assertThat(fired()).containsExactly("t_a:k:1000:100");
    }

    @Test
    void shouldFireATimerThatAFiringAddsToAnEarlierTimerStreamBeforeThePipeReturns() {
        // testing.md: "Due timers fire before the call returns ... in steps that follow one another until none is due"
        event("b", "x", 5000, null);
        event("a", "chain", 100, "add t_a 1000 100");
        driver.pipeSource("in-a", "x", "{\"key\":\"x\",\"ts\":1001}"); // the a watermark passes 1000; no clock move
        assertThat(fired()).containsExactly("t_a:chain:1000:100", "t_all:chain:1000:100");
        assertThat(driver.pendingTimers("timers")).as("nothing due is left pending").isEmpty();
    }

    @Test
    void shouldCountOnlyTheWatermarksOfTheListedStreams() {
        // "streams / streams_with_delays — let you limit which input streams contribute to the watermark calculation"
        event("a", "k", 100, "add t_all 500 100");
        event("a", "k", 100, "add t_a 500 100");
        event("a", "x", 600, null);
        assertThat(fired()).as("t_a waits on a only; t_all also waits on b, which has not moved")
                .containsExactly("t_a:k:500:100");
        event("b", "y", 700, null);
        assertThat(fired()).containsExactly("t_all:k:500:100");
    }

    @Test
    void shouldCountOnlyTheStreamsATimersDependencyLists() {
        // "streams_dependency defaults: a timer depends on all input and source streams": its entry narrows them
        event("a", "k", 100, "add t_all 500 100");
        event("a", "k", 100, "add t_dep_a 500 100");
        event("a", "x", 600, null);
        assertThat(fired()).as("t_dep_a depends on a only; t_all also waits on b, which has not moved")
                .containsExactly("t_dep_a:k:500:100");
        event("b", "y", 700, null);
        assertThat(fired()).containsExactly("t_all:k:500:100");
    }

    @Test
    void shouldCountOnlyTheStreamsATimersDependencyListsOnTheHarnessToo() {
        // the harness level of "one test, three levels" must fire as the runtime does
        try (PipelineUnderTest p = FlowTestLevel.HARNESS.open(spec(), "timers", new java.util.Properties())) {
            p.pipe("a", Map.of("key", "k", "ts", 100L, "cmd", "add t_dep_a 500 100"), 100 * MS);
            p.advanceWatermark("a", 600 * MS);
            assertThat(p.awaitPayloads("fired", 1)).singleElement()
                    .satisfies(r -> assertThat(r.get("stream").toString()).isEqualTo("t_dep_a"));
        }
    }

    @Test
    void shouldShiftAStreamsWatermarkByItsDelay() {
        // "streams_with_delays also lets you set an individual delay for each stream"
        event("a", "k", 100, "add t_delay 1000 100");
        event("a", "x", 5000, null);
        assertThat(fired()).as("a at 5000 minus 10 s does not exceed 1000").isEmpty();
        event("a", "x", 11_001, null);
        assertThat(fired()).containsExactly("t_delay:k:1000:100");
    }

    @Test
    void shouldKeepTheSmallerEventTimestampOfEqualTimers() {
        // "if you try to create a timer with the same key and trigger_timestamp, only one timer remains —
        //  the one with the smaller EventTimestamp value"
        event("a", "k", 100, "add t_a 2000 500");
        event("a", "k", 100, "add t_a 2000 300");
        event("a", "k", 100, "add t_a 2000 400");
        event("a", "k", 100, "add t_nodedup 2000 500");
        event("a", "k", 100, "add t_nodedup 2000 300");
        event("a", "x", 2001, null);
        assertThat(fired()).containsExactlyInAnyOrder("t_a:k:2000:300", "t_nodedup:k:2000:500", "t_nodedup:k:2000:300");
    }

    @Test
    void shouldFireTheTimersOfAKeyInTriggerOrder() {
        // "Within one timer stream, timers for the same key are processed in TriggerTimestamp order."
        event("a", "k", 100, "add t_a 3000 1");
        event("a", "k", 100, "add t_a 2500 2");
        event("a", "k", 100, "add t_a 2800 3");
        event("a", "k", 100, "add t_a 2600 4");
        event("a", "x", 5000, null);
        assertThat(fired()).containsExactly("t_a:k:2500:2", "t_a:k:2600:4", "t_a:k:2800:3", "t_a:k:3000:1");
    }

    @Test
    void shouldFireRealTimeTimersFromTheClock() {
        // "real_time — compared with real astronomical time."
        long now = driver.wallClockTime().toEpochMilli();
        event("a", "k", 100, "add t_wall " + (now + 5_000) + " 100");
        assertThat(fired()).isEmpty();
        driver.advanceWallClockTime(Duration.ofSeconds(4));
        assertThat(fired()).isEmpty();
        driver.advanceWallClockTime(Duration.ofSeconds(2));
        assertThat(fired()).containsExactly("t_wall:k:" + (now + 5_000) + ":100");
    }

    @Test
    void shouldBlockAWholeGroupEvenThroughAStreamWithoutTimers() {
        // 004: "When output-stream limits block one timer stream, handing out ready timers pauses for that stream's
        // whole group, even where the blocked stream has no timers registered; other groups go on."
        // t_b_only (waits on b) shares b with t_all, which shares a with t_a: one event_time group.
        // Only t_b_only writes to 'audit'; t_wall (real_time) is a group of its own.
        long now = driver.wallClockTime().toEpochMilli();
        driver.blockOutputStream("audit", true);
        event("a", "k", 100, "add t_a 500 100");
        event("a", "k", 100, "add t_wall " + (now + 1000) + " 100");
        event("a", "x", 600, null);
        driver.advanceWallClockTime(Duration.ofSeconds(2));
        assertThat(fired()).as("t_a is held with its group; the real_time group goes on")
                .containsExactly("t_wall:k:" + (now + 1000) + ":100");
        driver.blockOutputStream("audit", false);
        driver.advanceWallClockTime(Duration.ofMillis(100));
        assertThat(fired()).containsExactly("t_a:k:500:100");
    }

    @Test
    void shouldSendAFailingTimerToDeadLettersWithoutItsOutputs() {
        // DESIGN: "If it throws, none of them are, and the input — message, timer or visit — goes to the dead-letter topic"
        event("a", "fail", 100, "add t_a 700 100");
        event("a", "k", 100, "add t_a 800 100");
        event("a", "x", 900, null);
        assertThat(fired()).as("the failing timer's output is dropped; the next timer fires").containsExactly("t_a:k:800:100");
        assertThat(driver.readDeadLetters()).singleElement().satisfies(d -> {
            assertThat(d.computation()).isEqualTo("timers");
            assertThat(d.errorMessage()).isEqualTo("timer handler fails for key fail");
            assertThat(d.stage()).startsWith("process timer");
        });
        event("a", "x", 2000, null);
        assertThat(fired()).as("a dead-lettered timer does not fire again").isEmpty();
    }

    @Test
    void shouldRefuseATimersOutputToAStreamWhoseDependencyLeavesTheTimerOut() {
        // audit depends on t_b_only alone: its watermark does not wait for t_a, so t_a's output there would be late
        event("a", "audit-a", 100, "add t_a 500 100");
        event("b", "audit-b", 100, "add t_b_only 500 100");
        event("a", "x", 600, null);
        event("b", "y", 600, null);
        assertThat(driver.readPayloads("audit")).extracting(r -> r.get("key").toString()).containsExactly("audit-b");
        assertThat(driver.readDeadLetters()).singleElement().satisfies(d -> {
            assertThat(d.stage()).startsWith("process timer");
            assertThat(d.errorMessage()).contains("emitted to 'audit' from onTimer of timer stream 't_a'",
                    "streams_dependency.audit does not list 't_a'");
        });
    }

    @Test
    void shouldListPendingTimersInFiringOrderUntilTheyFire() {
        event("a", "k", 100, "add t_a 3000 100");
        event("a", "k", 110, "add t_a 2000 110");
        event("a", "j", 120, "add t_b_only 5000 120");
        assertThat(driver.pendingTimers("timers"))
                .extracting(t -> t.getStreamId() + ":" + t.getKey().get("key") + ":" + t.getTriggerTimestamp() / MS)
                .containsExactly("t_a:k:2000", "t_a:k:3000", "t_b_only:j:5000");
        assertThat(driver.pendingTimers("timers", driver.pendingTimers("timers").get(2).getKey()))
                .singleElement().extracting(t -> t.getEventTimestamp() / MS).isEqualTo(120L);
        event("a", "x", 2500, null);
        assertThat(driver.pendingTimers("timers")).extracting(t -> t.getTriggerTimestamp() / MS)
                .as("the timer at 2000 fired").containsExactly(3000L, 5000L);
        assertThat(fired()).containsExactly("t_a:k:2000:110");
    }

    @Test
    void shouldStampATimerWithTheSystemTimeOfItsCreation() {
        // reference 003: a timer's system_timestamp is the "Timestamp of the timer creation"
        Instant created = driver.wallClockTime();
        event("a", "k", 100, "add t_a 3000 100");
        driver.advanceWallClockTime(Duration.ofSeconds(5));
        event("a", "j", 110, "add t_a 4000 110");
        assertThat(driver.pendingTimers("timers")).extracting(t -> t.getSystemTimestamp() / MS)
                .containsExactly(created.toEpochMilli(), created.toEpochMilli() + 200 + 5_000);
    }
}
