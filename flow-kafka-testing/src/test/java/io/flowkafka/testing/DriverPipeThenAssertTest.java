package io.flowkafka.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flowkafka.api.Message;
import io.flowkafka.api.OutputCollector;
import io.flowkafka.api.RowFunction;
import io.flowkafka.api.RuntimeContext;
import io.flowkafka.api.Timer;
import io.flowkafka.spec.ColumnType;
import io.flowkafka.spec.ComputationKind;
import io.flowkafka.spec.PipelineSpec;
import io.flowkafka.spec.WatermarkStrategy;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.junit.jupiter.api.Test;

/**
 * Issue 23 part 6: {@link FlowTestDriver} keeps TopologyTestDriver's "pipe, then assert" habit. A piped
 * record's watermark reaches downstream computations, and the timers it makes due fire, before the pipe returns,
 * without the test moving the wall clock; and what fires never depends on the machine's speed
 * ({@code flow.timers.max.punctuation.ms} does not apply on the driver).
 *
 * <p>Both tests failed on the code before the fix: the first because a Source computation sent its watermark only
 * every {@code flow.watermark.interval.ms} of driver time (so nothing fired without advanceWallClockTime), the second
 * because a timer step stopped after 1 ms of real time and the rest waited for a punctuation.
 */
class DriverPipeThenAssertTest {
    static final Schema EVENT = SchemaBuilder.record("Event").namespace("pipe").fields()
            .requiredString("key").requiredLong("ts").endRecord();
    static final Schema FIRED = SchemaBuilder.record("Fired").namespace("pipe").fields()
            .requiredString("key").requiredLong("trigger").endRecord();
    static final Schema COUNT = SchemaBuilder.record("Count").namespace("pipe").fields().requiredLong("n").endRecord();
    static final long MS = 1_000_000L;
    static final long WAIT_MS = 60_000;
    static final Instant T0 = FlowTestDriver.DEFAULT_WALL_CLOCK_START;

    /** Adds a timer {@link #WAIT_MS} after each message; a fired timer sends its key, after spinning for {@code sleepMs}. */
    static final class Delay implements RowFunction {
        private final long sleepMs;

        Delay(long sleepMs) {
            this.sleepMs = sleepMs;
        }

        @Override
        public void onMessage(Message message, OutputCollector out, RuntimeContext context) {
            out.addTimer(message.getEventTimestamp() + WAIT_MS * MS, message.getEventTimestamp());
        }

        @Override
        public void onTimer(Timer timer, OutputCollector out, RuntimeContext context) {
            if (sleepMs > 0) {
                long end = System.nanoTime() + sleepMs * 1_000_000L; // a slow call: longer than a 1 ms step
                while (System.nanoTime() - end < 0) {
                    Thread.onSpinWait();
                }
            }
            out.addMessage(context.createMessageBuilder("fired").set("key", timer.getKey().get("key").toString())
                    .set("trigger", timer.getTriggerTimestamp() / MS).build());
        }
    }

    /** Counts the fired timers per key: what a fired timer sends is processed further downstream. */
    static final class Count implements RowFunction {
        @Override
        public void onMessage(Message message, OutputCollector out, RuntimeContext context) {
            var state = context.getState("count");
            long n = state.get().map(r -> (Long) r.get("n")).orElse(0L);
            var next = new org.apache.avro.generic.GenericData.Record(COUNT);
            next.put("n", n + 1);
            state.set(next);
        }
    }

    /** topic in -> read (Source, exact watermark) -> events -> delay (event-time timer) -> fired -> count. */
    static PipelineSpec spec(long sleepMs) {
        WatermarkStrategy exact = WatermarkStrategy.DEFAULT.withOutOfOrdernessBound(Duration.ZERO);
        return PipelineSpec.builder("pipe")
                .stream("raw", EVENT).stream("events", EVENT).stream("fired", FIRED).stream("counts", FIRED)
                .computation("read", c -> c.kind(ComputationKind.SOURCE).watermarkStrategy(exact)
                        .source("raw", "KafkaSource", Map.of("topics", "in")).outputStreamIds("events"))
                .computation("delay", c -> c.inputStreamIds("events")
                        .groupBy("hash", ColumnType.UINT64, "farm_hash(key)").groupBy("key", ColumnType.STRING, null)
                        .timer("wait", Map.of("time_type", "event_time"))
                        .processingFunction(() -> new Delay(sleepMs)).outputStreamIds("fired"))
                .computation("count", c -> c.inputStreamIds("fired")
                        .groupBy("hash", ColumnType.UINT64, "farm_hash(key)").groupBy("key", ColumnType.STRING, null)
                        .state("count", COUNT).processingFunction(Count::new).outputStreamIds("counts"))
                .build();
    }

    private static void pipeAt(FlowTestDriver driver, String key, Instant eventTime) {
        driver.pipeSource("in", key.getBytes(StandardCharsets.UTF_8),
                ("{\"key\":\"" + key + "\",\"ts\":" + eventTime.toEpochMilli() + "}").getBytes(StandardCharsets.UTF_8),
                eventTime);
    }

    @Test
    void shouldFireTheTimersAPipedSourceRecordMakesDueWithoutAdvancingTheWallClock() {
        try (FlowTestDriver driver = FlowTestDriver.create(spec(0))) {
            pipeAt(driver, "a", T0);
            pipeAt(driver, "b", T0.plusSeconds(30));
            assertThat(driver.readPayloads("fired")).as("no watermark exceeds a trigger yet").isEmpty();

            // the source's watermark passes a's trigger (T0 + 1 min), not b's
            pipeAt(driver, "c", T0.plusSeconds(61));
            assertThat(driver.readPayloads("fired")).as("the watermark reached delay: a's timer fired")
                    .extracting(r -> r.get("key").toString()).containsExactly("a");
            assertThat(driver.pendingTimers("delay")).extracting(t -> t.getKey().get("key").toString())
                    .containsExactly("b", "c");

            pipeAt(driver, "d", T0.plusSeconds(200));
            assertThat(driver.readPayloads("fired")).extracting(r -> r.get("key").toString())
                    .containsExactly("b", "c");
            assertThat(driver.wallClockTime()).as("the test never moved the wall clock").isEqualTo(T0);
        }
    }

    @Test
    void shouldFireEveryDueTimerWhateverTheStepTimeLimit() {
        Properties props = new Properties();
        props.put("flow.timers.max.punctuation.ms", "1"); // each timer call below takes over 2 ms
        try (FlowTestDriver driver = FlowTestDriver.create(spec(2), props)) {
            List<String> keys = List.of("k0", "k1", "k2", "k3", "k4", "k5", "k6", "k7", "k8", "k9");
            for (String k : keys) {
                driver.pipe("events", Map.of("key", k, "ts", 0L), DriverWatermarkTest.T0);
            }
            driver.advanceWatermark("events", DriverWatermarkTest.T0 + WAIT_MS * MS + 1);

            assertThat(driver.readPayloads("fired")).as("every due timer fired before advanceWatermark returned")
                    .extracting(r -> r.get("key").toString()).containsExactlyInAnyOrderElementsOf(keys);
            assertThat(driver.pendingTimers("delay")).isEmpty();
        }
    }

    @Test
    void shouldFireABacklogLargerThanOneStepBeforeThePipeReturns() {
        Properties props = new Properties();
        props.put("flow.timers.max.per.punctuation", "2");
        try (FlowTestDriver driver = FlowTestDriver.create(spec(0), props)) {
            for (int i = 0; i < 7; i++) {
                pipeAt(driver, "k" + i, T0.plusMillis(i));
            }
            pipeAt(driver, "late", T0.plusSeconds(120));
            assertThat(driver.readPayloads("fired")).as("seven timers, steps of two, all before the pipe returned")
                    .extracting(r -> r.get("key").toString())
                    .containsExactly("k0", "k1", "k2", "k3", "k4", "k5", "k6");
        }
    }

    @Test
    void shouldPaceWatermarksByTheIntervalOfTheDriversClockWhenAsked() {
        Properties props = new Properties();
        props.put(FlowTestDriver.WATERMARK_SENDS_CONFIG, FlowTestDriver.WATERMARK_SENDS_INTERVAL);
        try (FlowTestDriver driver = FlowTestDriver.create(spec(0), props)) {
            pipeAt(driver, "a", T0); // the first send is due at once: watermark T0
            pipeAt(driver, "b", T0.plusSeconds(30));
            pipeAt(driver, "c", T0.plusSeconds(61)); // the source's watermark passes a's trigger
            assertThat(driver.readPayloads("fired")).as("within one watermark interval nothing more went downstream")
                    .isEmpty();
            assertThat(driver.pendingTimers("delay")).hasSize(3);

            driver.advanceWallClockTime(Duration.ofMillis(200)); // flow.watermark.interval.ms
            assertThat(driver.readPayloads("fired")).as("the next interval sent the watermark: a's timer fired")
                    .extracting(r -> r.get("key").toString()).containsExactly("a");
            assertThat(driver.state("count", "count", Map.of("key", "a"))).as("and what it sent was counted downstream")
                    .hasValueSatisfying(r -> assertThat(r.get("n")).isEqualTo(1L));
        }
    }

    @Test
    void shouldRejectAnUnknownWatermarkSendsValueNamingTheChoices() {
        Properties props = new Properties();
        props.put(FlowTestDriver.WATERMARK_SENDS_CONFIG, "sometimes");
        assertThatThrownBy(() -> FlowTestDriver.create(spec(0), props))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("flow.testing.watermark.sends must be 'each-change' or 'interval' but was 'sometimes'");
    }
}
