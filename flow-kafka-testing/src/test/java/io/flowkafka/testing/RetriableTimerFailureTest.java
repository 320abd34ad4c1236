package io.flowkafka.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flowkafka.api.Message;
import io.flowkafka.api.OutputCollector;
import io.flowkafka.api.RowFunction;
import io.flowkafka.api.RuntimeContext;
import io.flowkafka.api.Timer;
import io.flowkafka.spec.ColumnType;
import io.flowkafka.spec.PipelineSpec;
import io.flowkafka.spec.WatermarkStrategy;
import java.time.Duration;
import java.util.Map;
import org.apache.kafka.common.errors.TimeoutException;
import org.junit.jupiter.api.Test;

/**
 * A timer whose call fails with a retriable error (an outage: {@code Failures.retriable}) is not a dead letter and
 * is not deleted: the task fails and fires it again from its last commit. On {@link FlowTestDriver}, whose stores
 * keep what was written, a deletion made before the retriable check would be visible as a lost timer.
 */
class RetriableTimerFailureTest {
    static final long MS = 1_000_000L;

    /** Sets a timer 10 ms after each message; the timer's call fails while the service is down. */
    public static final class RemindWhileDown implements RowFunction {
        static volatile boolean down = true;

        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
            output.addTimer(message.getEventTimestamp() + 10 * MS, message.getEventTimestamp());
        }

        @Override
        public void onTimer(Timer timer, OutputCollector output, RuntimeContext context) {
            if (down) {
                throw new TimeoutException("the service the timer calls does not answer");
            }
            output.addMessage(context.createMessageBuilder("out").set("user", timer.getKey().get("user").toString())
                    .set("what", "timer").set("at", timer.getTriggerTimestamp() / MS).build());
        }
    }

    private static PipelineSpec spec() {
        WatermarkStrategy exact = WatermarkStrategy.DEFAULT.withOutOfOrdernessBound(Duration.ZERO)
                .withTimestampColumn("ts");
        return PipelineSpec.builder("retry").stream("raw", TaskReviveTest.EVENT).stream("out", TaskReviveTest.OUT)
                .computation("remind", c -> c.watermarkStrategy(exact)
                        .source("raw", "KafkaSource", Map.of("topics", "in", "key_partitioned", true))
                        .groupBy("hash", ColumnType.UINT64, "farm_hash(user)").groupBy("user", ColumnType.STRING, null)
                        .processingFunction(RemindWhileDown::new).outputStreamIds("out").timer("remind", Map.of()))
                .build();
    }

    @Test
    void shouldKeepATimerWhoseCallFailsWithARetriableError() {
        RemindWhileDown.down = true;
        try (FlowTestDriver driver = FlowTestDriver.create(spec())) {
            driver.pipeSource("in", "ann", "{\"user\":\"ann\",\"ts\":100}");
            assertThatThrownBy(() -> driver.pipeSource("in", "bob", "{\"user\":\"bob\",\"ts\":200}"))
                    .as("the watermark passes ann's timer; its call fails with an outage").hasStackTraceContaining(
                            "the service the timer calls does not answer");
            assertThat(driver.readDeadLetters()).as("an outage is no dead letter").isEmpty();
            assertThat(driver.pendingTimers("remind")).extracting(t -> t.getKey().get("user").toString())
                    .as("ann's timer is still pending").contains("ann");

            RemindWhileDown.down = false;
            driver.pipeSource("in", "bob", "{\"user\":\"bob\",\"ts\":200}");
            assertThat(driver.readPayloads("out")).extracting(r -> r.get("user") + "@" + r.get("at"))
                    .contains("ann@110");
        } finally {
            RemindWhileDown.down = true;
        }
    }
}
