package io.flowkafka.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import io.flowkafka.api.FlowException;
import io.flowkafka.api.Message;
import io.flowkafka.api.OutputCollector;
import io.flowkafka.api.RowFunction;
import io.flowkafka.api.RuntimeContext;
import io.flowkafka.runtime.FlowRuntime.State;
import io.flowkafka.spec.ColumnType;
import io.flowkafka.spec.ComputationKind;
import io.flowkafka.spec.PipelineSpec;
import java.nio.file.Files;
import java.time.Duration;
import java.util.Map;
import java.util.Properties;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.kafka.common.config.ConfigException;
import org.junit.jupiter.api.Test;

/**
 * A cluster nobody answers at: start() and prepareTopics() fail after {@code flow.bootstrap.timeout.ms} with one
 * sentence naming bootstrap.servers and what to check, not after the Admin client's minute of retries.
 */
class FlowRuntimeUnreachableClusterTest {
    private static final Schema EVENT = SchemaBuilder.record("Event").namespace("test").fields()
            .requiredString("user").endRecord();

    /** Does nothing. */
    public static final class Noop implements RowFunction {
        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
        }
    }

    private static FlowRuntime runtime(String bootstrap) throws Exception {
        PipelineSpec spec = PipelineSpec.builder("unreachable").stream("events", EVENT)
                .computation("read", c -> c.kind(ComputationKind.SOURCE)
                        .source("events", "KafkaSource", Map.of("topics", "in")).outputStreamIds("events"))
                .computation("count", c -> c.inputStreamIds("events").processingFunction(Noop::new)
                        .groupBy("hash", ColumnType.UINT64, "farm_hash(user)"))
                .build();
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("flow.bootstrap.timeout.ms", "1500");
        p.put("state.dir", Files.createTempDirectory("flow-unreachable").toString());
        return FlowRuntime.create(spec, p);
    }

    @Test
    void shouldFailToStartWithOneSentenceAfterTheBoundWhenNoBrokerListens() throws Exception {
        try (FlowRuntime r = runtime("localhost:1")) {
            long started = System.nanoTime();
            // nothing listens on port 1: the Admin client would retry for default.api.timeout.ms (60 s)
            FlowException e = assertTimeoutPreemptively(Duration.ofSeconds(10),
                    () -> org.junit.jupiter.api.Assertions.assertThrows(FlowException.class, r::start));
            assertThat(Duration.ofNanos(System.nanoTime() - started)).isGreaterThanOrEqualTo(Duration.ofMillis(1400));
            assertThat(e.getMessage()).contains("pipeline 'unreachable'", "bootstrap.servers=localhost:1",
                    "within 1500 ms", "flow.bootstrap.timeout.ms", "reachable").doesNotContain("\n");
            assertThat(r.state()).isEqualTo(State.FAILED);
        }
    }

    @Test
    void shouldFailToPrepareTopicsWithTheSameSentence() throws Exception {
        try (FlowRuntime r = runtime("localhost:1")) {
            FlowException e = assertTimeoutPreemptively(Duration.ofSeconds(10),
                    () -> org.junit.jupiter.api.Assertions.assertThrows(FlowException.class, r::prepareTopics));
            assertThat(e.getMessage()).contains("cannot reach Kafka at bootstrap.servers=localhost:1");
        }
    }

    @Test
    void shouldNameAnUnresolvableBootstrapServerWithinTheBound() throws Exception {
        try (FlowRuntime r = runtime("no-such-broker.invalid:9092")) {
            FlowException e = assertTimeoutPreemptively(Duration.ofSeconds(10),
                    () -> org.junit.jupiter.api.Assertions.assertThrows(FlowException.class, r::start));
            assertThat(e.getMessage()).contains("no-such-broker.invalid:9092", "bootstrap.servers")
                    .doesNotContain("\n");
            assertThat(r.state()).isEqualTo(State.FAILED);
        }
    }

    @Test
    void shouldDefineTheBoundAsAFlowProperty() {
        FlowConfig defaults = new FlowConfig(new Properties());
        assertThat(defaults.getLong(FlowConfig.BOOTSTRAP_TIMEOUT_MS_CONFIG)).isEqualTo(15_000L);
        assertThat(FlowConfig.configDef().configKeys().get("flow.bootstrap.timeout.ms").documentation)
                .contains("bootstrap.servers");
        Properties bad = new Properties();
        bad.put("flow.bootstrap.timeout.ms", "0");
        assertThatThrownBy(() -> new FlowConfig(bad)).isInstanceOf(ConfigException.class)
                .hasMessageContaining("flow.bootstrap.timeout.ms");
    }
}
