package io.flowkafka.testing;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowkafka.api.Message;
import io.flowkafka.api.OutputCollector;
import io.flowkafka.api.RowFunction;
import io.flowkafka.api.RuntimeContext;
import io.flowkafka.api.Timer;
import io.flowkafka.internal.timers.TimerStore;
import io.flowkafka.spec.ColumnType;
import io.flowkafka.spec.ComputationKind;
import io.flowkafka.spec.PipelineSpec;
import io.flowkafka.spec.WatermarkStrategy;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.kafka.streams.TopologyDescription;
import org.junit.jupiter.api.Test;

/**
 * The watermark hold (DESIGN.md, "Watermarks and completion"): a task's output watermark is held
 * back by the EventTimestamp of its pending timers, so a reader never sees the watermark pass a
 * message that a pending timer is still to emit. Computation {@code waiter} registers timers and
 * echoes every input to stream {@code late}; {@code reader} reports, per message, the watermark
 * of {@code late} it sees. Only a computation whose output watermark is read keeps the holds index.
 */
class WatermarkHoldTest {
    static final Schema EVENT = SchemaBuilder.record("Ev").namespace("hold").fields()
            .requiredString("key").requiredLong("ts").optionalString("cmd").endRecord();
    static final Schema SEEN = SchemaBuilder.record("Seen").namespace("hold").fields()
            .requiredString("key").requiredLong("ts").requiredLong("watermark").endRecord();
    private static final long MS = 1_000_000L;

    /** {@code cmd = "add <trigger ms> <event ms>"} registers a timer; every input and fired timer is echoed. */
    public static final class Waiter implements RowFunction {
        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
            Object cmd = message.getPayload().get("cmd");
            if (cmd != null) {
                String[] c = cmd.toString().split(" ");
                output.addTimer(Long.parseLong(c[1]) * MS, Long.parseLong(c[2]) * MS);
            }
            output.addMessage(context.createMessageBuilder("late").set("key", message.getPayload().get("key").toString())
                    .set("ts", message.getPayload().get("ts")).set("cmd", null).build());
        }

        @Override
        public void onTimer(Timer timer, OutputCollector output, RuntimeContext context) {
            output.addMessage(context.createMessageBuilder("late").set("key", timer.getKey().get("key").toString())
                    .set("ts", timer.getEventTimestamp() / MS).set("cmd", "fired").build());
        }
    }

    /** Reports each message of {@code late} with the watermark of {@code late} the reader sees. */
    public static final class Reader implements RowFunction {
        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
            long w = context.getInputWatermark("late");
            output.addMessage(context.createMessageBuilder("seen").set("key", message.getPayload().get("key").toString())
                    .set("ts", message.getPayload().get("ts")).set("watermark", w == Long.MIN_VALUE ? w : w / MS)
                    .build());
        }
    }

    private static PipelineSpec spec() {
        WatermarkStrategy exact = WatermarkStrategy.DEFAULT.withOutOfOrdernessBound(Duration.ZERO).withTimestampColumn("ts");
        return PipelineSpec.builder("hold")
                .stream("raw", EVENT).stream("a", EVENT).stream("late", EVENT).stream("seen", SEEN)
                .computation("read", c -> c.kind(ComputationKind.SOURCE).watermarkStrategy(exact)
                        .source("raw", "KafkaSource", Map.of("topics", "in")).outputStreamIds("a"))
                .computation("waiter", c -> c.inputStreamIds("a")
                        .groupBy("hash", ColumnType.UINT64, "farm_hash(key)").groupBy("key", ColumnType.STRING, null)
                        .processingFunction(Waiter::new).outputStreamIds("late").timer("t", Map.of()))
                .computation("reader", c -> c.inputStreamIds("late")
                        .groupBy("hash", ColumnType.UINT64, "farm_hash(key)").groupBy("key", ColumnType.STRING, null)
                        .processingFunction(Reader::new).outputStreamIds("seen").timer("t", Map.of())
                        .sink("seen_sink", "KafkaSink", List.of("seen"), Map.of("topic", "seen-out")))
                .build();
    }

    private static void event(FlowTestDriver driver, String key, long tsMs, String cmd) {
        driver.pipeSource("in", key, "{\"key\":\"" + key + "\",\"ts\":" + tsMs
                + (cmd == null ? "" : ",\"cmd\":\"" + cmd + "\"") + "}");
        driver.advanceWallClockTime(Duration.ofMillis(200)); // the watermark interval
    }

    /** "key:ts:watermark" of every message the reader saw since the last call. */
    private static List<String> seen(FlowTestDriver driver) {
        List<String> out = new java.util.ArrayList<>();
        for (String json : driver.readSinkJson("seen-out")) {
            out.add(json.replaceAll(".*\"key\": ?\"([^\"]*)\".*\"ts\": ?(-?\\d+).*\"watermark\": ?(-?\\d+).*", "$1:$2:$3"));
        }
        return out;
    }

    @Test
    void shouldHoldTheOutputWatermarkAtThePendingTimersEventTimestamp() {
        try (FlowTestDriver driver = FlowTestDriver.create(spec())) {
            event(driver, "k", 100, "add 1000000 100"); // a timer far ahead, its EventTimestamp 100 ms
            event(driver, "x", 2_000, null);
            event(driver, "y", 3_000, null);
            assertThat(seen(driver)).as("waiter's input is at 3000 ms, but its pending timer holds its output at 100 ms")
                    .isNotEmpty().allSatisfy(s -> assertThat(Long.parseLong(s.split(":")[2])).isLessThanOrEqualTo(100));
            event(driver, "z", 1_000_001, null); // waiter's watermark passes the trigger: the timer fires
            event(driver, "w", 1_000_002, null);
            List<String> after = seen(driver);
            assertThat(after).as("the fired timer's message comes before the watermark passes its event time")
                    .contains("k:100:100");
            assertThat(after.get(after.size() - 1)).as("without pending timers the watermark follows the input")
                    .isEqualTo("w:1000002:1000001");
        }
    }

    @Test
    void shouldKeepTheHoldsIndexOnlyWhereTheOutputWatermarkIsRead() {
        try (FlowTestDriver driver = FlowTestDriver.create(spec())) {
            Set<String> stores = driver.topology().describe().subtopologies().stream()
                    .flatMap(s -> s.nodes().stream())
                    .filter(n -> n instanceof TopologyDescription.Processor)
                    .flatMap(n -> ((TopologyDescription.Processor) n).stores().stream())
                    .collect(Collectors.toSet());
            assertThat(stores).as("waiter writes internal stream late, which reader follows")
                    .contains(TimerStore.timersStoreName("waiter"), TimerStore.holdsStoreName("waiter"));
            assertThat(stores).as("reader writes only to a sink: nobody reads its output watermark")
                    .contains(TimerStore.timersStoreName("reader"))
                    .doesNotContain(TimerStore.holdsStoreName("reader"));
        }
    }
}
