package io.flowkafka.connectors.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowkafka.runtime.FlowRuntime;
import io.flowkafka.spec.ComputationKind;
import io.flowkafka.spec.PipelineSpec;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.junit.jupiter.api.Test;

/**
 * Operations audit: an at-most-once sink's queue gauges and the guarantee gauges outlived their runtime, so a
 * runtime created next on the same registry (after a failure) had its gauges read the closed one's objects.
 * docs/operations.md: "Meters of a closed runtime are removed at close()".
 */
class ClosedRuntimeMetersTest {
    private static final Schema EVENT = SchemaBuilder.record("Event").namespace("test").fields()
            .requiredString("user").endRecord();

    private static PipelineSpec spec() {
        return PipelineSpec.builder("meters").stream("events", EVENT)
                .computation("read", c -> c.kind(ComputationKind.SOURCE)
                        .source("events", "KafkaSource", Map.of("topics", "in")).outputStreamIds("events")
                        .sink("out", "TKafkaSink", List.of("events"), Map.of("topic", "t",
                                "at_most_once_strategy", Map.of("enabled", true))))
                .build();
    }

    private static Properties props() {
        Properties p = new Properties();
        p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "localhost:9");
        return p;
    }

    @Test
    void shouldLeaveNoMeterOfTheLastClosedRuntimeOfAPipeline() {
        MeterRegistry registry = new SimpleMeterRegistry();
        FlowRuntime first = FlowRuntime.create(spec(), props(), registry);
        FlowRuntime second = FlowRuntime.create(spec(), props(), registry);
        assertThat(registry.find("flow.sink.queue_messages").tag("pipeline", "meters").gauge()).isNotNull();
        assertThat(registry.find("flow.computation.guarantee").tag("pipeline", "meters").gauges()).hasSize(1);

        first.close();
        assertThat(registry.find("flow.sink.queue_messages").gauge()).as("the second runtime is not closed")
                .isNotNull();
        second.close();
        second.close();
        assertThat(registry.getMeters()).as("no meter of the pipeline is left").isEmpty();
    }
}
