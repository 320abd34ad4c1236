package io.flowkafka.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowkafka.avro.ControlRecord;
import io.flowkafka.internal.message.FlowHeaders;
import io.flowkafka.internal.watermarks.ControlRecords;
import io.flowkafka.spec.ColumnType;
import io.flowkafka.spec.ComputationKind;
import io.flowkafka.spec.ComputationSpec;
import io.flowkafka.spec.PipelineSpec;
import io.flowkafka.spec.WatermarkStrategy;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.function.UnaryOperator;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * idle_partitions.duration ("a partition that has received no messages for this long is idle") on
 * the source task itself: silence makes a source partition idle, unless its consumer knows of records
 * waiting in it, or the runtime kept its sources paused. The idle flag is what the task's control
 * records tell the readers of its stream.
 */
class SourceIdlenessTopologyTest {
    private static final Schema EVENT = SchemaBuilder.record("E").namespace("idle").fields()
            .requiredString("id").requiredLong("ts").endRecord();
    private static final Duration IDLE = Duration.ofSeconds(10);
    private static final TopicPartition IN0 = new TopicPartition("idle-in", 0);

    @TempDir
    Path stateDir;

    /** Reads and ignores. */
    public static final class Ignore implements io.flowkafka.api.RowFunction {
        @Override
        public void onMessage(io.flowkafka.api.Message message, io.flowkafka.api.OutputCollector output,
                io.flowkafka.api.RuntimeContext context) {
        }
    }

    private final ControlRecords codec = new ControlRecords();
    private static final Instant START = Instant.parse("2026-01-01T00:00:00Z");

    /** One record on the source's partition at the start: then the source is silent. */
    private static void pipeOneRecord(TopologyTestDriver driver) {
        TestInputTopic<String, String> in = driver.createInputTopic("idle-in", new StringSerializer(), new StringSerializer());
        in.pipeInput(new TestRecord<>("a", "{\"id\":\"a\",\"ts\":1000}", START));
    }

    private static PipelineSpec spec() {
        return pipeline(List.of("raw"), c -> c.kind(ComputationKind.SOURCE)
                .source("raw", "KafkaSource", Map.of("topics", "idle-in")));
    }

    /** Computation "read" (reading the given source streams) writes stream "events", which "next" reads. */
    private static PipelineSpec pipeline(List<String> sourceStreams, UnaryOperator<ComputationSpec.Builder> read) {
        PipelineSpec.Builder b = PipelineSpec.builder("idle");
        sourceStreams.forEach(stream -> b.stream(stream, EVENT));
        return b.stream("events", EVENT)
                .computation("read", c -> read.apply(c)
                        .watermarkStrategy(WatermarkStrategy.DEFAULT.withTimestampColumn("ts")
                                .withIdlePartitions(IDLE, 0.4))
                        .outputStreamIds("events"))
                .computation("next", c -> byId(c.inputStreamIds("events")).processingFunction(Ignore::new))
                .build();
    }

    private static ComputationSpec.Builder byId(ComputationSpec.Builder c) {
        return c.groupBy("hash", ColumnType.UINT64, "farm_hash(id)").groupBy("id", ColumnType.STRING, null);
    }

    /** The topic of stream "events", where the source's control records go. */
    private static TestOutputTopic<byte[], byte[]> events(TopologyTestDriver driver) {
        return driver.createOutputTopic("idle.events", new ByteArrayDeserializer(), new ByteArrayDeserializer());
    }

    @Test
    void shouldNotReportASilentPartitionWithRecordsWaitingIdleUntilItsConsumerHasHandedThemOver() {
        FlowRuntime runtime = FlowRuntime.create(spec(), props());
        try (TopologyTestDriver driver = new TopologyTestDriver(runtime.topology(), runtime.streamsProperties(), START)) {
            TestOutputTopic<byte[], byte[]> events = events(driver);
            pipeOneRecord(driver);
            runtime.sourceIdleness().recordsWaiting(IN0, true); // the consumer has more, not handed over yet

            driver.advanceWallClockTime(IDLE.multipliedBy(3));
            assertThat(idleFlags(events)).as("silent for three idle durations, with records waiting").isNotEmpty()
                    .containsOnly(false);

            runtime.sourceIdleness().recordsWaiting(IN0, false); // caught up: its silence is idleness now
            driver.advanceWallClockTime(Duration.ofSeconds(1));
            assertThat(idleFlags(events)).contains(true);
        }
    }

    @Test
    void shouldNotCountTimePausedAsSilence() {
        FlowRuntime runtime = FlowRuntime.create(spec(), props());
        try (TopologyTestDriver driver = new TopologyTestDriver(runtime.topology(), runtime.streamsProperties(), START)) {
            TestOutputTopic<byte[], byte[]> events = events(driver);
            pipeOneRecord(driver);
            driver.advanceWallClockTime(IDLE.minusSeconds(4)); // 6 s of silence
            runtime.sourceIdleness().pause(START.plus(IDLE.minusSeconds(4)).toEpochMilli());
            runtime.sourceIdleness().resume(START.plus(IDLE.multipliedBy(5)).toEpochMilli()); // 44 s paused
            driver.advanceWallClockTime(IDLE.multipliedBy(5).minus(IDLE.minusSeconds(4)).plusSeconds(3));
            assertThat(idleFlags(events)).as("6 s before the pause and 3 s after it").containsOnly(false);

            driver.advanceWallClockTime(Duration.ofSeconds(2));
            assertThat(idleFlags(events)).as("11 s of silence outside the pause").contains(true);
        }
    }

    /**
     * Records waiting count only where the task will read them: not in a partition its
     * {@code partition_filter} excludes, nor in a finite source's partition already read to its end
     * (here marked done as the runtime does from committed offsets; the task's own "read up to the
     * bound" is the next test).
     */
    @Test
    void shouldNotLetRecordsWaitingWhereTheTaskWillNotReadHoldItsIdleness() {
        TopicPartition filtered = new TopicPartition("idle-filtered", 0);
        TopicPartition finite = new TopicPartition("idle-finite", 0);
        // a keyed Transform reading three sources (a Source computation has one)
        PipelineSpec spec = pipeline(List.of("raw", "raw_filtered", "raw_finite"), c -> byId(c)
                .processingFunction(Ignore::new)
                .source("raw", "KafkaSource", Map.of("topics", "idle-in", "key_partitioned", true))
                .source("raw_filtered", "KafkaSource", Map.of("topics", "idle-filtered", "key_partitioned", true,
                        "partition_filter", List.of(1L))) // excludes this task's partition 0
                .source("raw_finite", "KafkaSource", Map.of("topics", "idle-finite", "key_partitioned", true,
                        "finite", true)));
        FlowRuntime runtime = FlowRuntime.create(spec, props());
        try (TopologyTestDriver driver = new TopologyTestDriver(runtime.topology(), runtime.streamsProperties(), START)) {
            TestOutputTopic<byte[], byte[]> events = events(driver);
            pipeOneRecord(driver);
            runtime.sourceIdleness().recordsWaiting(filtered, true);
            driver.advanceWallClockTime(IDLE.multipliedBy(2));
            assertThat(idleFlags(events)).as("records waiting only in the partition the filter excludes")
                    .contains(true);

            runtime.sourceIdleness().recordsWaiting(finite, true);
            driver.advanceWallClockTime(Duration.ofSeconds(1));
            assertThat(idleFlags(events)).as("records waiting in the finite source, not read to its end yet")
                    .isNotEmpty().containsOnly(false);

            runtime.completeFiniteSource("idle-finite", 0); // read to its end (as the runtime marks it from commits)
            driver.advanceWallClockTime(Duration.ofSeconds(1));
            assertThat(idleFlags(events)).as("records waiting only where the task will not read").contains(true);
        }
    }

    /**
     * The task's own "read up to the bound": a finite partition whose last record below its bound the task has
     * processed no longer holds its idleness, though its consumer knows of records after the bound (written since
     * the runtime read the bounds at start), which the task will drop.
     */
    @Test
    void shouldNotLetRecordsWaitingBeyondAFiniteBoundTheTaskHasReachedHoldItsIdleness() {
        TopicPartition finite = new TopicPartition("idle-finite", 0);
        PipelineSpec spec = pipeline(List.of("raw", "raw_finite"), c -> byId(c)
                .processingFunction(Ignore::new)
                .source("raw", "KafkaSource", Map.of("topics", "idle-in", "key_partitioned", true))
                .source("raw_finite", "KafkaSource", Map.of("topics", "idle-finite", "key_partitioned", true,
                        "finite", true)));
        FlowRuntime runtime = FlowRuntime.create(spec, props());
        runtime.finiteSources().bound(finite, 2); // as read at start: offsets 0 and 1 are the source's records
        try (TopologyTestDriver driver = new TopologyTestDriver(runtime.topology(), runtime.streamsProperties(), START)) {
            TestOutputTopic<byte[], byte[]> events = events(driver);
            TestInputTopic<String, String> finiteIn = driver.createInputTopic("idle-finite", new StringSerializer(),
                    new StringSerializer());
            pipeOneRecord(driver);
            finiteIn.pipeInput(new TestRecord<>("b", "{\"id\":\"b\",\"ts\":1000}", START));
            runtime.sourceIdleness().recordsWaiting(finite, true);
            driver.advanceWallClockTime(IDLE.multipliedBy(2));
            assertThat(idleFlags(events)).as("records waiting in the finite source below its bound").isNotEmpty()
                    .containsOnly(false);

            // the record at bound - 1: the task has read the source to its end
            finiteIn.pipeInput(new TestRecord<>("c", "{\"id\":\"c\",\"ts\":1001}", START.plus(IDLE.multipliedBy(2))));
            driver.advanceWallClockTime(IDLE.multipliedBy(2));
            assertThat(idleFlags(events)).as("records waiting only beyond the bound").contains(true);
        }
    }

    /** The idle flags of the source's control records written since the last call. */
    private List<Boolean> idleFlags(TestOutputTopic<byte[], byte[]> topic) {
        return topic.readRecordsToList().stream().filter(r -> FlowHeaders.isControl(r.headers()))
                .map(r -> codec.decode(r.value())).filter(c -> c.getComputation().equals("read"))
                .map(ControlRecord::getIdle).toList();
    }

    private Properties props() {
        Properties p = new Properties();
        p.put("flow.state.stores", "memory");
        p.put("flow.topology.test.driver", "true");
        p.put("bootstrap.servers", "unused:9092");
        p.put("state.dir", stateDir.toString());
        p.put("flow.watermark.interval.ms", "100");
        p.put("flow.watermark.heartbeat.ms", "500");
        return p;
    }
}
