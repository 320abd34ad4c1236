package io.flowkafka.internal.processor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flowkafka.api.Message;
import io.flowkafka.api.OutputCollector;
import io.flowkafka.api.RowFunction;
import io.flowkafka.api.RuntimeContext;
import io.flowkafka.runtime.FlowRuntime;
import io.flowkafka.spec.ColumnType;
import io.flowkafka.spec.ComputationKind;
import io.flowkafka.spec.PipelineSpec;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Path;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.kafka.streams.TopologyTestDriver;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A task whose init fails (here the process function's {@code open} throws) releases what it had registered: Kafka
 * Streams never calls {@code close()} on a processor whose {@code init()} threw, and a task failing at every retry
 * must not leave one set of gauges (and its sources' resources) per attempt.
 */
class FailedTaskInitTest {
    private static final Schema EVENT = SchemaBuilder.record("E").namespace("init").fields()
            .requiredString("user").endRecord();

    @TempDir
    Path stateDir;

    /** Cannot open. */
    public static final class Unopenable implements RowFunction {
        @Override
        public void open(RuntimeContext context) {
            throw new IllegalStateException("the function's resource is down");
        }

        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
        }
    }

    /** Opens. */
    public static final class Openable implements RowFunction {
        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
        }
    }

    private PipelineSpec spec(Supplier<RowFunction> function) {
        return PipelineSpec.builder("init").stream("raw", EVENT).stream("events", EVENT)
                .computation("read", c -> c.kind(ComputationKind.SOURCE)
                        .source("raw", "KafkaSource", Map.of("topics", "init-in")).outputStreamIds("events"))
                .computation("count", c -> c.inputStreamIds("events")
                        .groupBy("hash", ColumnType.UINT64, "farm_hash(user)").groupBy("user", ColumnType.STRING, null)
                        .state("n", EVENT).timer("t", Map.of("time_type", "event_time"))
                        .processingFunction(function))
                .build();
    }

    @Test
    void shouldReportATaskThatCannotStartInTheStatus() {
        // before: a task failing at every retry showed only in the log
        Properties props = new Properties();
        props.put("bootstrap.servers", "unused:9092");
        props.put("flow.topology.test.driver", "true");
        props.put("state.dir", stateDir.resolve("status").toString());
        FlowRuntime runtime = FlowRuntime.create(spec(Unopenable::new), props);
        assertThatThrownBy(() -> new TopologyTestDriver(runtime.topology(), runtime.streamsProperties()).close())
                .hasStackTraceContaining("the function's resource is down");
        assertThat(runtime.status()).anySatisfy(e -> {
            assertThat(e.computation()).isEqualTo("count");
            assertThat(e.message()).contains("of computation 'count' cannot start",
                    "IllegalStateException: the function's resource is down", "Fix the cause");
        });
    }

    /** The meters of computation 'count' left in the runtime's registry once its task is closed or failed. */
    private Set<String> metersLeft(PipelineSpec spec, boolean initFails) {
        Properties props = new Properties();
        props.put("bootstrap.servers", "unused:9092");
        props.put("flow.topology.test.driver", "true");
        props.put("state.dir", stateDir.resolve(initFails ? "failed" : "closed").toString());
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        FlowRuntime runtime = FlowRuntime.create(spec, props, registry);
        if (initFails) {
            assertThatThrownBy(() -> new TopologyTestDriver(runtime.topology(), runtime.streamsProperties()).close())
                    .hasStackTraceContaining("the function's resource is down");
        } else {
            new TopologyTestDriver(runtime.topology(), runtime.streamsProperties()).close();
        }
        return registry.getMeters().stream().filter(m -> "count".equals(m.getId().getTag("computation")))
                .map(m -> m.getId().toString()).collect(Collectors.toCollection(TreeSet::new));
    }

    @Test
    void shouldRemoveTheTasksMetersWhenItsInitFails() {
        Set<String> closed = metersLeft(spec(Openable::new), false);
        Set<String> failed = metersLeft(spec(Unopenable::new), true);
        assertThat(failed).as("meters left by a task whose init failed, beyond those a closed task leaves")
                .isSubsetOf(closed);
    }
}
