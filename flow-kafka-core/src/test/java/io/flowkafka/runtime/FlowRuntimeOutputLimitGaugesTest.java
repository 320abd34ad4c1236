package io.flowkafka.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flowkafka.spec.ColumnType;
import io.flowkafka.spec.ComputationKind;
import io.flowkafka.spec.PipelineSpec;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.Map;
import java.util.Properties;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.streams.StreamsConfig;
import org.junit.jupiter.api.Test;

/** The output-limit gauges: one pair per limited stream, reading the runtime that registered them, removed on close. */
class FlowRuntimeOutputLimitGaugesTest {
    private static final Schema EVENT = SchemaBuilder.record("Event").namespace("test").fields()
            .requiredString("user").endRecord();

    private static PipelineSpec spec() {
        return PipelineSpec.builder("limits").stream("events", EVENT)
                .computation("read", c -> c.kind(ComputationKind.SOURCE)
                        .source("events", "KafkaSource", Map.of("topics", "in")).outputStreamIds("events"))
                .computation("count", c -> c.inputStreamIds("events")
                        .processingFunction(FlowRuntimeGuaranteeTest.Noop::new)
                        .groupBy("hash", ColumnType.UINT64, "farm_hash(user)"))
                .build();
    }

    private static Properties props() {
        Properties p = new Properties();
        p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "localhost:9");
        p.put("flow.output.limit.records.events", "5");
        return p;
    }

    private static Gauge blocked(MeterRegistry registry) {
        return registry.find("flow.output.blocked").tags("pipeline", "limits", "stream", "events").gauge();
    }

    @Test
    void shouldShowTheLimitedStreamsStateAndLeaveTheRegistryToTheNextRuntime() {
        MeterRegistry registry = new SimpleMeterRegistry();
        try (FlowRuntime first = FlowRuntime.create(spec(), props(), registry)) {
            assertThat(blocked(registry).value()).isZero();
            assertThat(registry.find("flow.output.backlog").tag("stream", "events").gauge().value()).isZero();
            first.blockOutputStream("events", true);
            assertThat(blocked(registry).value()).isEqualTo(1.0);
        }
        assertThat(blocked(registry)).as("removed with its runtime").isNull();
        try (FlowRuntime second = FlowRuntime.create(spec(), props(), registry)) {
            assertThat(blocked(registry).value()).as("the second runtime's, not blocked").isZero();
            second.blockOutputStream("events", true);
            assertThat(blocked(registry).value()).isEqualTo(1.0);
        }
    }

    @Test
    void shouldRejectALimitOfAStreamTheSpecDoesNotDeclare() {
        Properties p = props();
        p.put("flow.output.limit.records.event", "5");
        assertThatThrownBy(() -> FlowRuntime.create(spec(), p)).isInstanceOf(ConfigException.class)
                .hasMessageContaining("flow.output.limit.records.event: the spec declares no stream 'event'");
    }
}
