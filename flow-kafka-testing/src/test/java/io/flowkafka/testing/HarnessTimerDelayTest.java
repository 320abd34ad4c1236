package io.flowkafka.testing;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowkafka.api.Message;
import io.flowkafka.api.OutputCollector;
import io.flowkafka.api.RowFunction;
import io.flowkafka.api.RuntimeContext;
import io.flowkafka.api.Timer;
import io.flowkafka.spec.ColumnType;
import io.flowkafka.spec.ComputationKind;
import io.flowkafka.spec.PipelineSpec;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.junit.jupiter.api.Test;

/**
 * Parity audit: the harness level dropped a {@code system_time} timer stream's {@code streams_with_delays}, which
 * the runtime subtracts from the system watermark as from the event one, so the harness fired such timers early.
 */
class HarnessTimerDelayTest {
    static final Schema EVENT = SchemaBuilder.record("E").namespace("hd").fields().requiredString("key").endRecord();

    /** Sets a system-time timer one minute behind the clock and reports it when it fires. */
    public static final class Waiter implements RowFunction {
        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
            output.addTimer("later", context.currentTimeNanos() - Duration.ofMinutes(1).toNanos(), 0L);
        }

        @Override
        public void onTimer(Timer timer, OutputCollector output, RuntimeContext context) {
            output.addMessage(context.createMessageBuilder("fired").set("key", timer.getKey().get("key").toString())
                    .build());
        }
    }

    @Test
    void shouldHoldASystemTimeTimerByItsStreamsDelayOnTheHarnessAsOnTheDriver() {
        PipelineSpec spec = PipelineSpec.builder("hd").stream("raw", EVENT).stream("in", EVENT).stream("fired", EVENT)
                .computation("read", c -> c.kind(ComputationKind.SOURCE)
                        .source("raw", "KafkaSource", Map.of("topics", "hd-in")).outputStreamIds("in"))
                .computation("wait", c -> c.inputStreamIds("in")
                        .groupBy("hash", ColumnType.UINT64, "farm_hash(key)").groupBy("key", ColumnType.STRING, null)
                        .processingFunction(Waiter::new).outputStreamIds("fired")
                        .timer("later", Map.of("time_type", "system_time",
                                "streams_with_delays", Map.of("in", "10m"))))
                .build();
        for (FlowTestLevel level : List.of(FlowTestLevel.HARNESS, FlowTestLevel.DRIVER)) {
            try (PipelineUnderTest p = level.open(spec, "wait", new Properties())) {
                p.pipe("in", Map.of("key", "a"), 0L);
                p.advanceWatermark("in", 1L);
                assertThat(p.readPayloads("fired")).as(level + ": the system watermark less 10 minutes is behind "
                        + "the trigger, one minute behind the clock").isEmpty();
            }
        }
    }
}
