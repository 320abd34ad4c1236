package io.flowkafka.testing;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowkafka.api.Message;
import io.flowkafka.api.OutputCollector;
import io.flowkafka.api.RowFunction;
import io.flowkafka.api.RuntimeContext;
import io.flowkafka.api.Timer;
import io.flowkafka.avro.ControlRecord;
import io.flowkafka.internal.message.FlowHeaders;
import io.flowkafka.internal.serde.AvroCodec;
import io.flowkafka.internal.watermarks.ControlRecords;
import io.flowkafka.spec.ColumnType;
import io.flowkafka.spec.PipelineSpec;
import io.flowkafka.spec.WatermarkStrategy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.avro.generic.GenericRecord;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.Test;

/**
 * A task revived by Kafka Streams ({@link FlowTestDriver#reviveTask()}: close() then init() on the same processor
 * objects, as after a commit that timed out under exactly_once_v2) goes on as a fresh instance over the same stores
 * would: DESIGN "per-task state lives in stores, or in one object built at init() and dropped at close()". Each case
 * fails when the processor keeps per-task fields across init(): control records sent once per node and attempt,
 * visitors and punctuators registered again, a batch flushed by a stale punctuator.
 */
class TaskReviveTest {
    static final long MS = 1_000_000L;
    static final Schema EVENT = SchemaBuilder.record("Ev").namespace("revive").fields()
            .requiredString("user").requiredLong("ts").endRecord();
    static final Schema OUT = SchemaBuilder.record("Out").namespace("revive").fields()
            .requiredString("user").requiredString("what").requiredLong("at").endRecord();

    private final ControlRecords codec = new ControlRecords();

    /** Reports each message; sets an event-time timer 10 ms after it, which reports the watermark it fired at. */
    public static final class EchoAndRemind implements RowFunction {
        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
            output.addMessage(context.createMessageBuilder("out").set("user", message.getKey().get("user").toString())
                    .set("what", "message").set("at", message.getEventTimestamp() / MS).build());
            output.addTimer(message.getEventTimestamp() + 10 * MS, message.getEventTimestamp());
        }

        @Override
        public void onTimer(Timer timer, OutputCollector output, RuntimeContext context) {
            output.addMessage(context.createMessageBuilder("out").set("user", timer.getKey().get("user").toString())
                    .set("what", "timer").set("at", timer.getTriggerTimestamp() / MS).build());
        }
    }

    /** Reads and drops. */
    public static final class Drop implements RowFunction {
        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
        }
    }

    /** Control records read from an internal stream's topic since the last call, by their producer and sequence. */
    private Map<String, Integer> controlRecords(FlowTestDriver driver, String topic) {
        Map<String, Integer> bySequence = new LinkedHashMap<>();
        for (TestRecord<byte[], byte[]> r : driver.readTopic(topic)) {
            if (FlowHeaders.isControl(r.headers())) {
                ControlRecord c = codec.decode(r.value());
                bySequence.merge(c.getComputation() + "/" + c.getPartition() + "#" + c.getSequence(), 1, Integer::sum);
            }
        }
        return bySequence;
    }

    @Test
    void shouldGoOnAsAFreshSourceAndBatchingComputationAfterARevive() {
        try (FlowTestDriver driver = FlowTestDriver.create(SwiftMapBatchingTest.spec(SwiftMapBatchingTest.BatchTotal::new,
                SwiftMapBatchingTest.batches(4)))) {
            for (int i = 0; i < 6; i++) { // a batch of 4 cut, 2 buffered in the batch store
                driver.pipeSource("events-in", "u" + i, "{\"user\":\"u" + i + "\",\"n\":1}");
            }
            driver.advanceWallClockTime(Duration.ofSeconds(2));
            controlRecords(driver, "batching.events");

            driver.reviveTask();
            for (int i = 6; i < 10; i++) {
                driver.pipeSource("events-in", "u" + i, "{\"user\":\"u" + i + "\",\"n\":1}");
            }
            driver.completeSource("events-in");
            driver.advanceWallClockTime(Duration.ofSeconds(5), Duration.ofMillis(500));

            long counted = driver.readPayloads("sums").stream().mapToLong(s -> (Long) s.get("count")).sum();
            assertThat(counted).as("every input in exactly one batch").isEqualTo(10);
            assertThat(controlRecords(driver, "batching.events")).as("one control record per emission")
                    .isNotEmpty().allSatisfy((producer, n) -> assertThat(n).as(producer).isEqualTo(1));
            assertThat(driver.isCompleted()).isTrue();
        }
    }

    private static PipelineSpec keyedWithTimers() {
        WatermarkStrategy exact = WatermarkStrategy.DEFAULT.withOutOfOrdernessBound(Duration.ZERO)
                .withTimestampColumn("ts");
        return PipelineSpec.builder("rvk").stream("raw", EVENT).stream("out", OUT)
                .computation("echo", c -> c.watermarkStrategy(exact)
                        .source("raw", "KafkaSource", Map.of("topics", "in", "key_partitioned", true, "finite", true))
                        .groupBy("hash", ColumnType.UINT64, "farm_hash(user)").groupBy("user", ColumnType.STRING, null)
                        .processingFunction(EchoAndRemind::new).outputStreamIds("out").timer("remind", Map.of()))
                .computation("next", c -> c.inputStreamIds("out")
                        .groupBy("hash", ColumnType.UINT64, "farm_hash(user)").groupBy("user", ColumnType.STRING, null)
                        .processingFunction(Drop::new))
                .build();
    }

    private static void event(FlowTestDriver driver, String user, long tsMs) {
        driver.pipeSource("in", user, "{\"user\":\"" + user + "\",\"ts\":" + tsMs + "}");
    }

    /** Outputs of stream "out" read since the last call, as user:what@at; its control records into {@code controls}. */
    private List<String> outputs(FlowTestDriver driver, Map<String, Integer> controls) {
        AvroCodec payloads = new AvroCodec(OUT);
        List<String> out = new ArrayList<>();
        for (TestRecord<byte[], byte[]> r : driver.readTopic("rvk.out")) {
            if (FlowHeaders.isControl(r.headers())) {
                ControlRecord c = codec.decode(r.value());
                controls.merge(c.getComputation() + "/" + c.getPartition() + "#" + c.getSequence(), 1, Integer::sum);
            } else {
                GenericRecord p = payloads.decode(r.value());
                out.add(p.get("user") + ":" + p.get("what") + "@" + p.get("at"));
            }
        }
        return out;
    }

    @Test
    void shouldGoOnAsAFreshKeyedTransformWithTimersAfterARevive() {
        try (FlowTestDriver driver = FlowTestDriver.create(keyedWithTimers())) {
            event(driver, "ann", 100);
            event(driver, "bob", 105);
            driver.advanceWallClockTime(Duration.ofSeconds(2));
            assertThat(outputs(driver, new HashMap<>())).containsExactly("ann:message@100", "bob:message@105");

            driver.reviveTask();
            Map<String, Integer> controls = new HashMap<>();
            event(driver, "ann", 112); // passes ann's timer at 110, not bob's at 115
            assertThat(outputs(driver, controls)).containsExactly("ann:message@112", "ann:timer@110");

            driver.completeSource("in");
            driver.advanceWallClockTime(Duration.ofSeconds(5), Duration.ofMillis(500));
            assertThat(outputs(driver, controls)).as("each timer fired once").containsExactlyInAnyOrder(
                    "bob:timer@115", "ann:timer@122");
            assertThat(controls).as("one control record per emission").isNotEmpty()
                    .allSatisfy((producer, n) -> assertThat(n).as(producer).isEqualTo(1));
            assertThat(driver.isCompleted()).isTrue();
        }
    }

    @Test
    void shouldVisitEveryKeyOncePerPassAfterARevive() {
        try (FlowTestDriver driver = FlowTestDriver.create(KeyVisitorSemanticsTest.spec(
                Map.of("period", "10s", "bucket_count", 4), false, b -> b), new Properties())) {
            for (int i = 0; i < 40; i++) {
                driver.pipeSource("in", "k" + i, "{\"key\":\"k" + i + "\",\"cmd\":\"put\"}");
            }
            driver.advanceWallClockTime(Duration.ofSeconds(4), Duration.ofMillis(100));
            driver.reviveTask();
            driver.advanceWallClockTime(Duration.ofSeconds(31), Duration.ofMillis(100));

            Map<Long, Map<String, Integer>> visits = new HashMap<>();
            for (GenericRecord v : driver.readPayloads("visits")) {
                visits.computeIfAbsent((Long) v.get("pass"), p -> new HashMap<>()).merge(v.get("key").toString(), 1,
                        Integer::sum);
            }
            assertThat(visits).containsKeys(0L, 1L, 2L);
            for (long pass = 0; pass < 3; pass++) {
                assertThat(visits.get(pass)).as("pass %d", pass).hasSize(40)
                        .allSatisfy((key, n) -> assertThat(n).as(key).isEqualTo(1));
            }
        }
    }
}
