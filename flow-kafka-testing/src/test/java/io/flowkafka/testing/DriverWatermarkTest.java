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
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.avro.generic.GenericRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Explicit watermarks on {@link FlowTestDriver}: {@code advanceWatermark}, {@code completeStream}
 * and {@value FlowTestDriver#PIPE_WATERMARKS_CONFIG}. The pipeline:
 *
 * <pre>
 *   topic in -> read (Source, finite) -> stream events --+--> delay (Transform, key, event-time timer) -> stream out -> tally
 *                                                       +--> watch (Transform, same function)          -> stream watched
 * </pre>
 *
 * {@code delay} and {@code watch} report every message and every fired timer, with the input
 * watermark of {@code events} the function saw; a message at event time {@code ts} registers a
 * timer at {@code ts + 1 min}. {@code events} has two readers, so two internal topics.
 */
class DriverWatermarkTest {
    static final Schema EVENT = SchemaBuilder.record("Event").namespace("wm").fields()
            .requiredString("key").requiredLong("ts").endRecord();
    static final Schema REPORT = SchemaBuilder.record("Report").namespace("wm").fields()
            .requiredString("key").requiredString("kind").requiredLong("at").requiredLong("watermark").endRecord();
    static final Schema COUNT = SchemaBuilder.record("Count").namespace("wm").fields().requiredLong("n").endRecord();
    static final long MS = 1_000_000L;
    static final long WAIT = 60_000 * MS;
    static final long T0 = Instant.parse("2026-01-01T00:00:00Z").toEpochMilli() * MS;

    /** Reports messages and timers on its output stream; each message adds a timer {@link #WAIT} later. */
    static final class Reporter implements RowFunction {
        private final String output;

        Reporter(String output) {
            this.output = output;
        }

        @Override
        public void onMessage(Message message, OutputCollector out, RuntimeContext context) {
            if (message.getPayload().get("key").toString().equals("boom")) {
                throw new IllegalStateException("the reporter refuses key boom");
            }
            out.addTimer(message.getEventTimestamp() + WAIT, message.getEventTimestamp());
            out.addMessage(report(context, message.getPayload().get("key").toString(), "message",
                    message.getEventTimestamp()));
        }

        @Override
        public void onTimer(Timer timer, OutputCollector out, RuntimeContext context) {
            out.addMessage(report(context, timer.getKey().get("key").toString(), "timer", timer.getTriggerTimestamp()));
        }

        private Message report(RuntimeContext context, String key, String kind, long at) {
            return context.createMessageBuilder(output).set("key", key).set("kind", kind).set("at", at)
                    .set("watermark", context.getInputWatermark("events")).build();
        }
    }

    /** Counts the reports of fired timers per key: shows that what a fired timer sends is processed downstream. */
    static final class Tally implements RowFunction {
        @Override
        public void onMessage(Message message, OutputCollector out, RuntimeContext context) {
            if (message.getPayload().get("kind").toString().equals("timer")) {
                var state = context.getState("count");
                long n = state.get().map(r -> (Long) r.get("n")).orElse(0L);
                var next = new org.apache.avro.generic.GenericData.Record(COUNT);
                next.put("n", n + 1);
                state.set(next);
            }
        }
    }

    static PipelineSpec spec() {
        return spec("wm", "in", true);
    }

    /** The pipeline with its name, source topic and whether the source is finite. */
    static PipelineSpec spec(String name, String sourceTopic, boolean finite) {
        return PipelineSpec.builder(name)
                .stream("raw", EVENT).stream("events", EVENT).stream("out", REPORT).stream("watched", REPORT)
                .stream("tallies", REPORT)
                .computation("read", c -> c.kind(ComputationKind.SOURCE)
                        .source("raw", "KafkaSource", Map.of("topics", sourceTopic, "finite", finite))
                        .outputStreamIds("events"))
                .computation("delay", c -> c.inputStreamIds("events")
                        .groupBy("hash", ColumnType.UINT64, "farm_hash(key)").groupBy("key", ColumnType.STRING, null)
                        .timer("wait", Map.of("time_type", "event_time"))
                        .processingFunction(() -> new Reporter("out")).outputStreamIds("out"))
                .computation("watch", c -> c.inputStreamIds("events")
                        .groupBy("hash", ColumnType.UINT64, "farm_hash(key)").groupBy("key", ColumnType.STRING, null)
                        .timer("wait", Map.of("time_type", "event_time"))
                        .processingFunction(() -> new Reporter("watched")).outputStreamIds("watched"))
                .computation("tally", c -> c.inputStreamIds("out")
                        .groupBy("hash", ColumnType.UINT64, "farm_hash(key)").groupBy("key", ColumnType.STRING, null)
                        .state("count", COUNT).processingFunction(Tally::new).outputStreamIds("tallies"))
                .build();
    }

    private FlowTestDriver driver;

    private FlowTestDriver start(Properties props) {
        driver = FlowTestDriver.create(spec(), props);
        return driver;
    }

    private FlowTestDriver start() {
        return start(new Properties());
    }

    @AfterEach
    void stop() {
        if (driver != null) {
            driver.close();
        }
    }

    private void event(String key, long ets) {
        driver.pipe("events", Map.of("key", key, "ts", ets / MS), ets);
    }

    /** "kind:key:at" of each report, at relative to T0 in ms. */
    private List<String> reports(String stream) {
        return driver.readPayloads(stream).stream()
                .map(r -> r.get("kind") + ":" + r.get("key") + ":" + ((Long) r.get("at") - T0) / MS).toList();
    }

    @Test
    void shouldFireNoTimerBeforeTheWatermarkExceedsItsTrigger() {
        start();
        event("k", T0);
        assertThat(reports("out")).containsExactly("message:k:0");
        assertThat(driver.pendingTimers("delay")).singleElement()
                .satisfies(t -> assertThat(t.getTriggerTimestamp()).isEqualTo(T0 + WAIT));

        driver.advanceWatermark("events", T0 + WAIT - 1);
        assertThat(reports("out")).as("watermark below the trigger").isEmpty();
        driver.advanceWatermark("events", T0 + WAIT);
        assertThat(reports("out")).as("a watermark equal to the trigger does not fire it").isEmpty();
        assertThat(driver.pendingTimers("delay")).hasSize(1);

        driver.advanceWatermark("events", T0 + WAIT + 1);
        assertThat(reports("out")).containsExactly("timer:k:60000");
        assertThat(reports("watched")).as("every internal topic of the stream got the watermark")
                .containsExactly("message:k:0", "timer:k:60000");
        assertThat(driver.pendingTimers("delay")).isEmpty();
        assertThat(driver.stateForPayload("tally", "count", "out",
                Map.of("key", "k", "kind", "timer", "at", 0L, "watermark", 0L)))
                .as("what the timer sent was processed downstream")
                .hasValueSatisfying(r -> assertThat(r.get("n")).isEqualTo(1L));
    }

    @Test
    void shouldShowTheAdvancedWatermarkToTheFunction() {
        start();
        event("a", T0);
        assertThat(driver.readPayloads("out")).singleElement()
                .satisfies(r -> assertThat(r.get("watermark")).isEqualTo(Long.MIN_VALUE));
        driver.advanceWatermark("events", Instant.parse("2026-01-01T00:00:05Z"));
        event("b", T0 + 10_000 * MS);
        assertThat(driver.readPayloads("out")).singleElement()
                .satisfies(r -> assertThat(r.get("watermark")).isEqualTo(T0 + 5_000 * MS));
    }

    @Test
    void shouldRejectAWatermarkThatGoesBack() {
        start();
        driver.advanceWatermark("events", T0 + 100);
        driver.advanceWatermark("events", T0 + 100); // the same value again is allowed
        assertThatThrownBy(() -> driver.advanceWatermark("events", T0 + 99))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("watermarks never go back: stream 'events' already has the watermark "
                        + (T0 + 100))
                .hasMessageContaining("2026-01-01T00:00:00.000000100Z")
                .hasMessageContaining("pass a value >= " + (T0 + 100));
    }

    @Test
    void shouldRejectStreamsWhoseWatermarkATestCannotSet() {
        start();
        assertThatThrownBy(() -> driver.advanceWatermark("nope", T0))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("has no stream 'nope'");
        assertThatThrownBy(() -> driver.advanceWatermark("raw", T0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("stream 'raw' is a source stream of computation 'read'")
                .hasMessageContaining("completeSource");
        assertThatThrownBy(() -> driver.completeStream("raw"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("completeSource");
        assertThatThrownBy(() -> driver.advanceWatermark("tallies", T0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("stream 'tallies' of pipeline 'wm' is read by no computation");
    }

    @Test
    void shouldCompleteTheReadersAndFireTheRestWhenTheStreamCompletes() {
        start();
        event("k1", T0);
        event("k2", T0 + 600_000 * MS);
        driver.advanceWatermark("events", T0 + WAIT + 1);
        assertThat(reports("out")).containsExactly("message:k1:0", "message:k2:600000", "timer:k1:60000");
        assertThat(driver.completedComputations()).isEmpty();

        driver.completeStream("events");
        assertThat(reports("out")).as("the watermark is +infinity: every timer fired").containsExactly("timer:k2:660000");
        assertThat(driver.pendingTimers("delay")).isEmpty();
        assertThat(driver.pendingTimers("watch")).isEmpty();
        driver.completeStream("events"); // idempotent
        // completion is reported at the readers' next watermark step (they sent watermarks at this wall-clock time)
        driver.advanceWallClockTime(Duration.ofMillis(200));
        assertThat(driver.completedComputations()).contains("delay", "watch", "tally").doesNotContain("read");
        assertThat(driver.isCompleted()).as("the finite source is not done yet").isFalse();
        driver.completeSource("in");
        driver.advanceWallClockTime(Duration.ofMillis(200));
        assertThat(driver.isCompleted()).isTrue();

        assertThatThrownBy(() -> event("k3", T0)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("stream 'events' was completed with completeStream");
        assertThatThrownBy(() -> driver.advanceWatermark("events", Long.MAX_VALUE))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("cannot move");
    }

    @Test
    void shouldFollowTheDataWhenConfigured() {
        Properties props = new Properties();
        props.put(FlowTestDriver.PIPE_WATERMARKS_CONFIG, FlowTestDriver.PIPE_WATERMARKS_FOLLOW);
        start(props);
        event("k1", T0);
        event("k2", T0 + WAIT);
        assertThat(reports("out")).as("the watermark follows the data to the trigger, not past it")
                .containsExactly("message:k1:0", "message:k2:60000");
        event("k3", T0 + 30_000 * MS); // late data does not move the watermark back
        event("k4", T0 + WAIT + 1);
        assertThat(reports("out")).containsExactly("message:k3:30000", "message:k4:60000", "timer:k1:60000");
        List<GenericRecord> watched = driver.readPayloads("watched");
        assertThat(watched).last().satisfies(r -> assertThat(r.get("kind").toString()).isEqualTo("timer"));
        assertThat(watched.get(watched.size() - 2).get("watermark"))
                .as("k4's message saw the watermark of the data before it").isEqualTo(T0 + WAIT);
    }

    @Test
    void shouldNotMoveWatermarksOnPipeByDefault() {
        start();
        event("k1", T0);
        event("k2", T0 + 10 * WAIT);
        assertThat(reports("out")).containsExactly("message:k1:0", "message:k2:600000");
        assertThat(driver.pendingTimers("delay")).hasSize(2);
    }

    @Test
    void shouldRejectAnUnknownPipeWatermarksMode() {
        Properties props = new Properties();
        props.put(FlowTestDriver.PIPE_WATERMARKS_CONFIG, "sometimes");
        assertThatThrownBy(() -> FlowTestDriver.create(spec(), props)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("flow.testing.pipe.watermarks must be 'explicit' or 'follow' but was 'sometimes'");
    }
}
