package io.flowkafka.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flowkafka.api.MessageId;
import io.flowkafka.api.RowFunction;
import io.flowkafka.avro.ControlRecord;
import io.flowkafka.internal.partition.RangePartitioner;
import io.flowkafka.internal.watermarks.ControlRecords;
import io.flowkafka.spec.ColumnType;
import io.flowkafka.spec.ComputationKind;
import io.flowkafka.spec.PipelineSpec;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.junit.jupiter.api.Test;

/** The SPI's control records, partitions and sink decoding are the runtime's own. */
class PipelineCodecsTest {
    static final Schema EVENT = SchemaBuilder.record("Event").namespace("spi").fields()
            .requiredString("key").requiredLong("ts").endRecord();

    static PipelineSpec spec() {
        RowFunction noop = (message, output, context) -> { };
        return PipelineSpec.builder("p")
                .stream("raw", EVENT).stream("events", EVENT).stream("out", EVENT)
                .computation("read", c -> c.kind(ComputationKind.SOURCE)
                        .source("raw", "KafkaSource", Map.of("topics", "in-a,in-b")).outputStreamIds("events"))
                .computation("a", c -> c.inputStreamIds("events").groupBy("hash", ColumnType.UINT64, "farm_hash(key)").groupBy("key", ColumnType.STRING, null)
                        .processingFunction(() -> noop).outputStreamIds("out").desiredPartitionCount(3)
                        .sink("to_topic", "KafkaSink", List.of("out"), Map.of("topic", "sink-out")))
                .computation("b", c -> c.inputStreamIds("events").groupBy("hash", ColumnType.UINT64, "farm_hash(key)")
                        .processingFunction(() -> noop).desiredPartitionCount(5))
                .build();
    }

    @Test
    void shouldEncodeControlRecordsAsTheRuntimeDoesForEveryInternalTopicOfTheStream() {
        PipelineCodecs codecs = PipelineCodecs.of(spec(), new Properties());
        List<PipelineCodecs.EncodedRecord> records = codecs.encodeControl("events", 2, 100L, 200L, false, 7L);
        assertThat(records).extracting(PipelineCodecs.EncodedRecord::topic).containsExactly("p.events", "p.events.b");
        for (PipelineCodecs.EncodedRecord r : records) {
            ControlRecord c = new ControlRecords().decode(r.value());
            assertThat(c.getComputation()).isEqualTo("read");
            assertThat(c.getPartition()).isEqualTo(2);
            assertThat(c.getEventWatermark()).isEqualTo(100L);
            assertThat(c.getSystemWatermark()).isEqualTo(200L);
            assertThat(c.getCompleted()).isFalse();
            assertThat(r.key()).hasSize(8);
            assertThat(codecs.isControl(r.headers())).isTrue();
            assertThat(r.timestampMs()).isEqualTo(7L);
        }
        ControlRecord done = new ControlRecords().decode(codecs.encodeControl("events", 0, 1L, 1L, true, 7L).get(0).value());
        assertThat(done.getCompleted()).isTrue();
        assertThat(done.getEventWatermark()).isEqualTo(Long.MAX_VALUE);
        assertThat(done.getSystemWatermark()).isEqualTo(Long.MAX_VALUE);
        assertThatThrownBy(() -> codecs.encodeControl("raw", 0, 1L, 1L, false, 7L))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("has no internal topic");
    }

    @Test
    void shouldCountTheWritersTasksAsTheRuntimeDoes() {
        PipelineCodecs codecs = PipelineCodecs.of(spec(), new Properties());
        assertThat(codecs.writerOf("events", t -> t.equals("in-a") ? 2 : 6))
                .isEqualTo(new PipelineCodecs.StreamWriter("read", 6));
        assertThat(PipelineCodecs.of(spec(), driverProps()).writerOf("events", t -> 6))
                .as("TopologyTestDriver runs every computation as one task")
                .isEqualTo(new PipelineCodecs.StreamWriter("read", 1));
        assertThatThrownBy(() -> codecs.writerOf("out", t -> 1)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("stream 'out' of pipeline 'p' has no internal topic");
    }

    private static Properties driverProps() {
        Properties p = new Properties();
        p.put("flow.topology.test.driver", "true");
        return p;
    }

    @Test
    void shouldPartitionDataRecordsByTheRangeOfTheKeyHash() {
        PipelineCodecs codecs = PipelineCodecs.of(spec(), new Properties());
        for (int i = 0; i < 50; i++) {
            GenericRecord payload = new GenericData.Record(EVENT);
            payload.put("key", "k" + i);
            payload.put("ts", 1L);
            for (PipelineCodecs.EncodedRecord r : codecs.encode("events", payload, MessageId.of(new byte[] {1}), 1, 1)) {
                int n = r.topic().equals("p.events") ? 3 : 5;
                assertThat(codecs.partitionOf(r)).isEqualTo(RangePartitioner.partition(RangePartitioner.hashOf(r.key()), n))
                        .isBetween(0, n - 1);
            }
        }
    }

    @Test
    void shouldDecodeWhatAJsonSinkWrote() {
        PipelineCodecs codecs = PipelineCodecs.of(spec(), new Properties());
        GenericRecord r = codecs.decodeSinkValue("out", "sink-out",
                "{\"key\":\"k\",\"ts\":5}".getBytes(StandardCharsets.UTF_8));
        assertThat(r.get("key").toString()).isEqualTo("k");
        assertThat(r.get("ts")).isEqualTo(5L);
        assertThatThrownBy(() -> codecs.decodeSinkValue("out", "elsewhere", new byte[0]))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("no sink of pipeline 'p' writes stream 'out' to topic 'elsewhere'");
        assertThat(codecs.stateChangelogTopic("app", "a")).isEqualTo("app-" + codecs.stateStoreName("a") + "-changelog");
    }
}
