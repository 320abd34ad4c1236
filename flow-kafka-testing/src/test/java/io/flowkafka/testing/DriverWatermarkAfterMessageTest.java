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
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.Test;

/**
 * On FlowTestDriver's one-partition topics, a source computation's last message of a call to an internal stream
 * carries the watermark after it (header {@code flow.wm}) instead of a control record following it: one record per
 * message for TopologyTestDriver to route and commit instead of two. What readers see must not change: the
 * watermark moves after the call's last message, exactly as the control record would have moved it.
 */
class DriverWatermarkAfterMessageTest {
    static final Schema EVENT = SchemaBuilder.record("Event").namespace("wm").fields()
            .requiredString("key").requiredLong("ts").endRecord();
    static final Schema SEEN = SchemaBuilder.record("Seen").namespace("wm").fields()
            .requiredString("key").requiredLong("watermark").endRecord();
    static final long MS = 1_000_000L;
    static final Instant T0 = FlowTestDriver.DEFAULT_WALL_CLOCK_START;

    /** Sends each input twice, as {@code key-1} then {@code key-2}: two messages of one call to one stream. */
    static final class Twice implements RowFunction {
        @Override
        public void onMessage(Message message, OutputCollector out, RuntimeContext context) {
            for (String suffix : List.of("-1", "-2")) {
                out.addMessage(context.createMessageBuilder("events")
                        .set("key", message.getPayload().get("key") + suffix)
                        .set("ts", message.getPayload().get("ts")).build());
            }
        }
    }

    /** Sends each message's key with the watermark of {@code events} its call saw. */
    static final class Watch implements RowFunction {
        @Override
        public void onMessage(Message message, OutputCollector out, RuntimeContext context) {
            out.addMessage(context.createMessageBuilder("seen").set("key", message.getPayload().get("key").toString())
                    .set("watermark", context.getInputWatermark("events")).build());
        }
    }

    /** topic in -> split (a Source computation: event time = ts, exact watermark) -> events -> watch -> seen. */
    static PipelineSpec spec() {
        WatermarkStrategy exact = WatermarkStrategy.DEFAULT.withTimestampColumn("ts")
                .withOutOfOrdernessBound(Duration.ZERO);
        return PipelineSpec.builder("wm")
                .stream("raw", EVENT).stream("events", EVENT).stream("seen", SEEN)
                .computation("split", c -> c.kind(ComputationKind.SOURCE).watermarkStrategy(exact)
                        .source("raw", "KafkaSource", Map.of("topics", "in"))
                        .processingFunction(Twice::new).outputStreamIds("events"))
                .computation("watch", c -> c.inputStreamIds("events")
                        .groupBy("hash", ColumnType.UINT64, "farm_hash(key)").groupBy("key", ColumnType.STRING, null)
                        .processingFunction(Watch::new).outputStreamIds("seen"))
                .build();
    }

    private static void pipeAt(FlowTestDriver driver, String key, long tsMs) {
        driver.pipeSource("in", key.getBytes(StandardCharsets.UTF_8),
                ("{\"key\":\"" + key + "\",\"ts\":" + tsMs + "}").getBytes(StandardCharsets.UTF_8),
                Instant.ofEpochMilli(tsMs));
    }

    @Test
    void shouldMoveTheWatermarkAfterTheCallsLastMessageWithoutAControlRecordPerMessage() {
        try (FlowTestDriver driver = FlowTestDriver.create(spec())) {
            long t = T0.toEpochMilli();
            pipeAt(driver, "a", t);
            pipeAt(driver, "b", t + 1_000);
            pipeAt(driver, "c", t + 2_000);

            List<TestRecord<byte[], byte[]>> internal = driver.readTopic("wm.events");
            long controls = internal.stream().filter(r -> r.headers().lastHeader("flow.control") != null).count();
            long carried = internal.stream().filter(r -> r.headers().lastHeader("flow.wm") != null).count();
            assertThat(internal).hasSize(6 + (int) controls);
            assertThat(carried).as("each call's last message carries the watermark after it").isEqualTo(3);
            assertThat(controls).as("control records: the first send's heartbeat at most, none per message")
                    .isLessThanOrEqualTo(1);

            // both messages of a call see the watermark from before the call; the next call sees the one after it
            var seen = driver.readPayloads("seen");
            assertThat(seen).extracting(r -> r.get("key").toString())
                    .containsExactly("a-1", "a-2", "b-1", "b-2", "c-1", "c-2");
            List<Long> watermarks = seen.stream().map(r -> (Long) r.get("watermark")).toList();
            assertThat(watermarks.get(1)).as("a-2 saw what a-1 saw").isEqualTo(watermarks.get(0));
            assertThat(watermarks.get(3)).as("b-2 saw what b-1 saw").isEqualTo(watermarks.get(2));
            assertThat(watermarks.get(5)).as("c-2 saw what c-1 saw").isEqualTo(watermarks.get(4));
            assertThat(watermarks.get(0)).as("nothing before a").isLessThan(t * MS);
            assertThat(watermarks.get(2)).as("after a: a's event time").isEqualTo(t * MS);
            assertThat(watermarks.get(4)).as("after b: b's event time").isEqualTo((t + 1_000) * MS);
        }
    }
}
