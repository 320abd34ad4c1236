package io.flowkafka.testing;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowkafka.api.Message;
import io.flowkafka.api.OutputCollector;
import io.flowkafka.api.RowFunction;
import io.flowkafka.api.RuntimeContext;
import io.flowkafka.spec.ColumnType;
import io.flowkafka.spec.ComputationKind;
import io.flowkafka.spec.PipelineSpec;
import io.flowkafka.spec.WatermarkStrategy;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.junit.jupiter.api.Test;

/**
 * Issue 3, "no timer storms": "when the watermark jumps over a large backlog, firing proceeds in bounded steps ...
 * and the output watermark advances between steps". Computation {@code timers} holds its output watermark at the
 * smallest EventTimestamp of its pending timers (the watermark hold); a downstream computation {@code watch} writes
 * the watermark of {@code fired} it sees with each fired timer's output.
 */
class TimerStepsWatermarkTest {
    static final Schema SEEN = SchemaBuilder.record("Seen").namespace("timers").fields()
            .requiredString("key").requiredLong("wm").endRecord();
    private static final long MS = 1_000_000L;

    /** Writes each message's key with the watermark of {@code fired} the call sees. */
    public static final class Watch implements RowFunction {
        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
            long wm = context.getInputWatermark("fired");
            output.addMessage(context.createMessageBuilder("seen").set("key", message.getPayload().get("key").toString())
                    .set("wm", wm == Long.MIN_VALUE ? Long.MIN_VALUE : wm / MS).build());
        }
    }

    @Test
    void shouldAdvanceTheOutputWatermarkBetweenTheStepsOfABacklog() {
        WatermarkStrategy exact = WatermarkStrategy.DEFAULT.withOutOfOrdernessBound(Duration.ZERO).withTimestampColumn("ts");
        PipelineSpec spec = PipelineSpec.builder("steps")
                .stream("raw", TimerSemanticsTest.EVENT).stream("a", TimerSemanticsTest.EVENT)
                .stream("fired", TimerSemanticsTest.FIRED).stream("seen", SEEN)
                .computation("read", c -> c.kind(ComputationKind.SOURCE).watermarkStrategy(exact)
                        .source("raw", "KafkaSource", Map.of("topics", "in")).outputStreamIds("a"))
                .computation("timers", c -> c.inputStreamIds("a")
                        .groupBy("hash", ColumnType.UINT64, "farm_hash(key)").groupBy("key", ColumnType.STRING, null)
                        .processingFunction(TimerSemanticsTest.Timers::new).outputStreamIds("fired")
                        .timer("e_a", Map.of()))
                .computation("watch", c -> c.inputStreamIds("fired")
                        .groupBy("hash", ColumnType.UINT64, "farm_hash(key)").groupBy("key", ColumnType.STRING, null)
                        .processingFunction(Watch::new).outputStreamIds("seen"))
                .build();
        Properties props = new Properties();
        props.put("flow.timers.max.per.punctuation", "2");
        try (FlowTestDriver driver = FlowTestDriver.create(spec, props)) {
            // six timers, event times 100..600 ms, all due once the watermark of a passes 2000 ms
            for (int i = 1; i <= 6; i++) {
                driver.pipeSource("in", "k" + i, "{\"key\":\"k" + i + "\",\"ts\":" + (i * 100) + ",\"cmd\":\"add e_a "
                        + (1_000 + i) + " " + (i * 100) + "\"}");
            }
            driver.pipeSource("in", "x", "{\"key\":\"x\",\"ts\":5000}");
            // the steps of two follow one another at once on the driver (deterministic steps); the clock moves nothing
            driver.advanceWallClockTime(Duration.ofSeconds(3), Duration.ofMillis(250));

            var records = driver.readPayloads("seen");
            List<String> seen = records.stream().map(r -> r.get("key") + "@" + r.get("wm")).toList();
            assertThat(seen).as("each timer's output seen downstream once, in trigger order").hasSize(6)
                    .extracting(s -> s.substring(0, s.indexOf('@')))
                    .containsExactly("k1", "k2", "k3", "k4", "k5", "k6");
            List<Long> wms = records.stream().map(r -> (Long) r.get("wm")).toList();
            assertThat(wms).as(seen + ": the watermark a step's outputs arrive under: held at the smallest pending event time, "
                    + "it moves up between the steps").isSorted();
            assertThat(wms.get(2)).as("the second step's outputs come after the first step's watermark")
                    .isGreaterThan(wms.get(0));
            assertThat(wms.get(4)).isGreaterThan(wms.get(2));
        }
    }
}
