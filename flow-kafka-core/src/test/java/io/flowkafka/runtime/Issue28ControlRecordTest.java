package io.flowkafka.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowkafka.internal.message.FlowHeaders;
import io.flowkafka.spec.ColumnType;
import io.flowkafka.spec.ComputationKind;
import io.flowkafka.spec.PipelineSpec;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 28.3: a record with a {@code flow.control} header whose value is not a control record, in an internal
 * topic, failed the task instead of going to the dead-letter topic: the task restarted from the last commit and met
 * the same record again, so the pipeline stopped for good. Found by FuzzedRecordsIT; failed before the fix.
 */
class Issue28ControlRecordTest {
    private static final Schema EVENT = SchemaBuilder.record("E").namespace("ctl").fields()
            .requiredString("id").requiredLong("ts").endRecord();
    private static final Instant START = Instant.parse("2026-01-01T00:00:00Z");

    @TempDir
    Path stateDir;

    /** Reads and forwards. */
    public static final class Forward implements io.flowkafka.api.RowFunction {
        @Override
        public void onMessage(io.flowkafka.api.Message message, io.flowkafka.api.OutputCollector output,
                io.flowkafka.api.RuntimeContext context) {
            output.addMessage(context.createMessageBuilder("out").setPayload(message.getPayload()).build());
        }
    }

    @Test
    void shouldDeadLetterAnUndecodableControlRecordAndGoOn() {
        PipelineSpec spec = PipelineSpec.builder("ctl").stream("raw", EVENT).stream("events", EVENT).stream("out", EVENT)
                .computation("read", c -> c.kind(ComputationKind.SOURCE)
                        .source("raw", "KafkaSource", Map.of("topics", "ctl-in")).outputStreamIds("events"))
                .computation("next", c -> c.inputStreamIds("events").groupBy("hash", ColumnType.UINT64, "farm_hash(id)")
                        .groupBy("id", ColumnType.STRING, null).processingFunction(Forward::new).outputStreamIds("out")
                        .sink("o", "KafkaSink", List.of("out"), Map.of("topic", "ctl-out")))
                .build();
        FlowRuntime runtime = FlowRuntime.create(spec, props());
        try (TopologyTestDriver driver = new TopologyTestDriver(runtime.topology(), runtime.streamsProperties(), START)) {
            TestOutputTopic<byte[], byte[]> dead = driver.createOutputTopic(runtime.deadLetterTopic(),
                    new ByteArrayDeserializer(), new ByteArrayDeserializer());
            TestOutputTopic<byte[], byte[]> out = driver.createOutputTopic("ctl-out", new ByteArrayDeserializer(),
                    new ByteArrayDeserializer());
            Headers junk = new RecordHeaders().add(FlowHeaders.CONTROL, new byte[] {1});
            driver.createInputTopic(runtime.streamTopics("events").get(0), new ByteArraySerializer(),
                    new ByteArraySerializer()).pipeInput(new TestRecord<>(new byte[] {7}, new byte[] {1, 2, 3}, junk, START));
            driver.createInputTopic("ctl-in", new StringSerializer(), new StringSerializer())
                    .pipeInput(new TestRecord<>("a", "{\"id\":\"a\",\"ts\":1000}", START));

            assertThat(dead.readRecordsToList()).singleElement().satisfies(r -> {
                assertThat(header(r, "flow.dlq.computation")).isEqualTo("next");
                assertThat(header(r, "flow.dlq.stage")).contains("control record");
                assertThat(header(r, "flow.dlq.error.message")).isNotBlank();
            });
            assertThat(out.readRecordsToList()).hasSize(1);
        }
    }

    private static String header(TestRecord<byte[], byte[]> r, String name) {
        var h = r.headers().lastHeader(name);
        return h == null ? null : new String(h.value(), StandardCharsets.UTF_8);
    }

    private Properties props() {
        Properties p = new Properties();
        p.put("flow.state.stores", "memory");
        p.put("flow.topology.test.driver", "true");
        p.put("bootstrap.servers", "unused:9092");
        p.put("state.dir", stateDir.toString());
        return p;
    }
}
