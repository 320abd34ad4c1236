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
import io.micrometer.core.instrument.Counter;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.avro.generic.GenericData;
import org.junit.jupiter.api.Test;

/**
 * Issue 27: {@code computations.<id>.skip_if_expression} in the dynamic spec. A message it matches is consumed
 * without a call (no output, no state change) and counted in {@code flow.messages.skipped}; the others are processed;
 * a change applies from the next message; a bad expression is rejected, naming the setting and the position, and
 * the expression in force stays.
 */
class SkipIfExpressionTest {
    static final Schema EVENT = SchemaBuilder.record("Event").namespace("skip").fields()
            .requiredString("key").requiredString("country").requiredLong("amount").endRecord();
    static final Schema COUNTED = SchemaBuilder.record("Counted").namespace("skip").fields()
            .requiredString("key").requiredLong("n").endRecord();
    static final Schema COUNT = SchemaBuilder.record("Count").namespace("skip").fields().requiredLong("n").endRecord();
    static final Instant T0 = FlowTestDriver.DEFAULT_WALL_CLOCK_START;

    /** Counts the messages of each key in its state and sends the new count. */
    static final class Count implements RowFunction {
        @Override
        public void onMessage(Message message, OutputCollector out, RuntimeContext context) {
            var state = context.getState("count");
            long n = state.get().map(r -> (Long) r.get("n")).orElse(0L) + 1;
            GenericData.Record next = new GenericData.Record(COUNT);
            next.put("n", n);
            state.set(next);
            out.addMessage(context.createMessageBuilder("counted")
                    .set("key", message.getPayload().get("key").toString()).set("n", n).build());
        }
    }

    static final Schema FIRED = SchemaBuilder.record("Fired").namespace("skip").fields()
            .requiredString("key").endRecord();
    static final long MS = 1_000_000L;

    /** Adds an event-time timer a minute after each message; a fired timer sends its key. */
    static final class Delay implements RowFunction {
        @Override
        public void onMessage(Message message, OutputCollector out, RuntimeContext context) {
            out.addTimer(message.getEventTimestamp() + 60_000 * MS, message.getEventTimestamp());
        }

        @Override
        public void onTimer(Timer timer, OutputCollector out, RuntimeContext context) {
            out.addMessage(context.createMessageBuilder("fired").set("key", timer.getKey().get("key").toString())
                    .build());
        }
    }

    /** topic in -> read (Source) -> events -> count (keyed, a state per key) -> counted. */
    static PipelineSpec spec() {
        return PipelineSpec.builder("skip")
                .stream("raw", EVENT).stream("events", EVENT).stream("counted", COUNTED)
                .computation("read", c -> c.kind(ComputationKind.SOURCE)
                        .source("raw", "KafkaSource", Map.of("topics", "in")).outputStreamIds("events"))
                .computation("count", c -> c.inputStreamIds("events")
                        .groupBy("hash", ColumnType.UINT64, "farm_hash(key)").groupBy("key", ColumnType.STRING, null)
                        .state("count", COUNT).processingFunction(Count::new).outputStreamIds("counted"))
                .build();
    }

    /** topic in -> read (Source, exact watermark) -> events -> delay (event-time timers) -> fired. */
    static PipelineSpec timerSpec() {
        return PipelineSpec.builder("skip")
                .stream("raw", EVENT).stream("events", EVENT).stream("fired", FIRED)
                .computation("read", c -> c.kind(ComputationKind.SOURCE)
                        .watermarkStrategy(WatermarkStrategy.DEFAULT.withOutOfOrdernessBound(Duration.ZERO))
                        .source("raw", "KafkaSource", Map.of("topics", "in")).outputStreamIds("events"))
                .computation("delay", c -> c.inputStreamIds("events")
                        .groupBy("hash", ColumnType.UINT64, "farm_hash(key)").groupBy("key", ColumnType.STRING, null)
                        .timer("wait", Map.of("time_type", "event_time"))
                        .processingFunction(Delay::new).outputStreamIds("fired"))
                .build();
    }

    private static void pipe(FlowTestDriver driver, String key, String country, long amount, Instant eventTime) {
        driver.pipeSource("in", key.getBytes(StandardCharsets.UTF_8), ("{\"key\":\"" + key + "\",\"country\":\""
                + country + "\",\"amount\":" + amount + "}").getBytes(StandardCharsets.UTF_8), eventTime);
    }

    private static void pipe(FlowTestDriver driver, String key, String country, long amount) {
        pipe(driver, key, country, amount, T0);
    }

    private static List<String> counted(FlowTestDriver driver) {
        return driver.readPayloads("counted").stream().map(r -> r.get("key") + "=" + r.get("n")).toList();
    }

    private static double skipped(FlowTestDriver driver, String computation) {
        Counter c = driver.meterRegistry().find("flow.messages.skipped").tag("pipeline", "skip")
                .tag("computation", computation).counter();
        return c == null ? 0 : c.count();
    }

    private static void skipIf(FlowTestDriver driver, String computation, Object expression) {
        Map<String, Object> settings = new HashMap<>();
        settings.put("skip_if_expression", expression); // a HashMap: null removes the expression
        driver.reconfigure(Map.of("computations", Map.of(computation, settings)));
    }

    private static long state(FlowTestDriver driver, String key) {
        return driver.state("count", "count", Map.of("key", key)).map(r -> (Long) r.get("n")).orElse(0L);
    }

    @Test
    void shouldSkipMatchingMessagesAndCountThemUntilTheExpressionIsRemoved() {
        try (FlowTestDriver driver = FlowTestDriver.create(spec())) {
            pipe(driver, "a", "US", 5);
            pipe(driver, "b", "DE", 7);
            assertThat(counted(driver)).containsExactly("a=1", "b=1");
            assertThat(skipped(driver, "count")).isZero();

            skipIf(driver, "count", "country = 'US' or amount >= 100");
            pipe(driver, "a", "US", 5);
            pipe(driver, "b", "DE", 7);
            pipe(driver, "b", "DE", 100);
            pipe(driver, "c", "FR", 1);
            assertThat(counted(driver)).as("US and amount >= 100 skipped: no output").containsExactly("b=2", "c=1");
            assertThat(state(driver, "a")).as("a skipped message changes no state").isEqualTo(1);
            assertThat(state(driver, "b")).isEqualTo(2);
            assertThat(skipped(driver, "count")).isEqualTo(2);
            assertThat(skipped(driver, "read")).as("counted for the computation that skipped").isZero();

            skipIf(driver, "count", "$stream_id = 'events' and country != 'DE'"); // a change: the next message on
            pipe(driver, "a", "US", 5);
            pipe(driver, "b", "DE", 100);
            assertThat(counted(driver)).containsExactly("b=3");
            assertThat(skipped(driver, "count")).isEqualTo(3);

            skipIf(driver, "count", "");
            pipe(driver, "a", "US", 5);
            pipe(driver, "b", "DE", 100);
            assertThat(counted(driver)).as("removed: everything is processed again").containsExactly("a=2", "b=4");
            skipIf(driver, "count", "country = 'DE'");
            skipIf(driver, "count", null);
            pipe(driver, "b", "DE", 1);
            assertThat(counted(driver)).as("null removes it too").containsExactly("b=5");
            assertThat(skipped(driver, "count")).isEqualTo(3);
            assertThat(driver.readDeadLetters()).isEmpty();
        }
    }

    @Test
    void shouldRejectABadExpressionNamingTheSettingAndPositionAndKeepTheOldOne() {
        try (FlowTestDriver driver = FlowTestDriver.create(spec())) {
            skipIf(driver, "count", "country = 'US'");
            assertThatThrownBy(() -> skipIf(driver, "count", "country = 'DE' and amount >"))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("dynamic_spec.computations.count.skip_if_expression at 28: "
                            + "expected a value after '>' but found end");
            assertThatThrownBy(() -> skipIf(driver, "count", "contry = 'DE'"))
                    .hasMessageContaining("dynamic_spec.computations.count.skip_if_expression at 1: unknown payload "
                            + "field 'contry'; the input payloads have: amount, country, key");
            assertThatThrownBy(() -> skipIf(driver, "count", 42))
                    .hasMessageContaining("dynamic_spec.computations.count.skip_if_expression must be a string");
            // all or nothing: a good expression beside a bad setting is not applied either
            assertThatThrownBy(() -> driver.reconfigure(Map.of("computations", Map.of(
                    "count", Map.of("skip_if_expression", "country = 'DE'"),
                    "nope", Map.of("skip_if_expression", "country = 'FR'")))))
                    .hasMessageContaining("unknown computation 'nope'");

            pipe(driver, "a", "US", 1);
            pipe(driver, "b", "DE", 1);
            assertThat(counted(driver)).as("the old expression is still in force").containsExactly("b=1");
            assertThat(skipped(driver, "count")).isEqualTo(1);
        }
    }

    @Test
    void shouldSkipSourceMessagesByEventTimestamp() {
        try (FlowTestDriver driver = FlowTestDriver.create(spec())) {
            long cutoff = T0.plusSeconds(60).toEpochMilli() * 1_000_000L;
            skipIf(driver, "read", "$event_timestamp < " + cutoff);
            pipe(driver, "a", "US", 1, T0);
            pipe(driver, "b", "US", 1, T0.plusSeconds(59));
            pipe(driver, "c", "US", 1, T0.plusSeconds(60));
            assertThat(counted(driver)).as("events before the cutoff never leave the source").containsExactly("c=1");
            assertThat(skipped(driver, "read")).isEqualTo(2);
            assertThat(skipped(driver, "count")).isZero();
            assertThat(driver.readPayloads("events")).extracting(r -> r.get("key").toString()).containsExactly("c");
        }
    }

    @Test
    void shouldAdvanceTheSourceWatermarkWithSkippedMessages() {
        // a skipped message is read like any other: its event time moves the source's watermark, so a pipeline
        // whose messages are mostly skipped still fires its timers, not only after idle_partitions.duration
        try (FlowTestDriver driver = FlowTestDriver.create(timerSpec())) {
            skipIf(driver, "read", "country = 'XX'");
            pipe(driver, "a", "US", 1, T0);
            pipe(driver, "z", "XX", 1, T0.plusSeconds(30));
            assertThat(driver.readPayloads("fired")).isEmpty();
            pipe(driver, "z", "XX", 1, T0.plusSeconds(61));
            assertThat(driver.readPayloads("fired")).as("the skipped message's event time passed a's timer")
                    .extracting(r -> r.get("key").toString()).containsExactly("a");
            assertThat(driver.pendingTimers("delay")).as("no timer of a skipped message").isEmpty();
            assertThat(skipped(driver, "read")).isEqualTo(2);
        }
    }
}
