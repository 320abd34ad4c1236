package io.flowkafka.examples.guarantees;

import io.flowkafka.api.Message;
import io.flowkafka.api.OutputCollector;
import io.flowkafka.api.RowFunction;
import io.flowkafka.api.RuntimeContext;
import io.flowkafka.api.Timer;
import io.flowkafka.spec.ColumnType;
import io.flowkafka.spec.ComputationKind;
import io.flowkafka.spec.PipelineSpec;
import java.util.List;
import java.util.Map;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;

/**
 * The pipeline of {@link TimersCrashIT} (run by {@link CrashTestMain}): source -> a computation that sets, for each
 * input {@code m<i>}, a {@code system_time} timer 0.5 to 5.4 s after the input's system time and a {@code real_time}
 * timer as long after the call's clock -> sink. A firing writes {@code sys-m<i>} or {@code wall-m<i>}: the input's index is the
 * nanosecond part of the trigger (triggers are whole milliseconds plus the index), so each timer names its input.
 */
final class TimersPipeline {
    static final Schema EVENT = SchemaBuilder.record("Event").namespace("it.timers").fields()
            .requiredString("id").requiredString("user").endRecord();
    static final Schema FIRED = SchemaBuilder.record("Fired").namespace("it.timers").fields()
            .requiredString("id").requiredString("user").endRecord();
    static final long DELAY_NS = 500_000_000L;
    private static final long MS = 1_000_000L;

    private TimersPipeline() {
    }

    static PipelineSpec spec(String name, String input, String output) {
        return PipelineSpec.builder(name)
                .stream("raw", EVENT).stream("events", EVENT).stream("fired", FIRED)
                .computation("read", c -> c.kind(ComputationKind.SOURCE)
                        .source("raw", "KafkaSource", Map.of("topics", input))
                        .outputStreamIds("events"))
                .computation("timed", c -> c.inputStreamIds("events")
                        .groupBy("hash", ColumnType.UINT64, "farm_hash(user)").groupBy("user", ColumnType.STRING, null)
                        .timer("sys", Map.of("time_type", "system_time"))
                        .timer("wall", Map.of("time_type", "real_time"))
                        .processingFunction(SetTimers::new)
                        .outputStreamIds("fired")
                        .sink("out", "KafkaSink", List.of("fired"), Map.of("topic", output, "key_column", "id")))
                .build();
    }

    /** Sets both timers of each input; a firing writes the input's id, prefixed by the timer stream. */
    public static final class SetTimers implements RowFunction {
        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
            long index = Long.parseLong(message.getPayload().get("id").toString().substring(1));
            long system = message.getSystemTimestamp() / MS * MS;
            long delay = DELAY_NS + index % 50 * 100 * MS + index; // firings spread over 5 s
            output.addTimer("sys", system + delay, system);
            output.addTimer("wall", context.currentTimeNanos() / MS * MS + delay, system);
        }

        @Override
        public void onTimer(Timer timer, OutputCollector output, RuntimeContext context) {
            output.addMessage(context.createMessageBuilder("fired")
                    .set("id", timer.getStreamId() + "-m" + timer.getTriggerTimestamp() % MS)
                    .set("user", timer.getKey().get("user").toString()).build());
        }
    }
}
