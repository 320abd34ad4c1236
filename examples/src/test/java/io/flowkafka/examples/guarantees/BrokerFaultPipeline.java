package io.flowkafka.examples.guarantees;

import io.flowkafka.api.Message;
import io.flowkafka.api.OutputCollector;
import io.flowkafka.api.RowFunction;
import io.flowkafka.api.RuntimeContext;
import io.flowkafka.api.StateAccessor;
import io.flowkafka.api.Timer;
import io.flowkafka.spec.ColumnType;
import io.flowkafka.spec.ComputationKind;
import io.flowkafka.spec.PipelineSpec;
import io.flowkafka.spec.WatermarkStrategy;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;

/**
 * The pipeline of the broker-fault ITs: a Kafka source computation writes an internal stream, read by a keyed
 * computation that counts each user's records (state) and sets, per record, an event-time timer {@link #WAIT_MS}
 * after it; the timer emits the record's one result, keyed by its id, to a Kafka sink. So every input has exactly one
 * output iff every timer fired once and no output was lost or written twice.
 *
 * <p>Record {@code i} has id {@code e-i}, user {@code u(i % USERS)} and event time {@code BASE_MS + i * STEP_MS}; it
 * is written to partition {@code i % PARTITIONS}, so each partition is in event-time order and each user's records
 * share one. Records whose id does not start with {@code e-} only move the watermark on (the end markers).
 */
final class BrokerFaultPipeline {
    static final int PARTITIONS = 4;
    static final int USERS = 12;
    static final long BASE_MS = 1_767_225_600_000L;
    static final long STEP_MS = 1_000;
    /** Event time a timer waits: never a whole number of steps, so no trigger ties a record. */
    static final long WAIT_MS = 10_500;
    static final long MS = 1_000_000L;

    static final Schema EVENT = SchemaBuilder.record("Event").namespace("brokerfault").fields()
            .requiredString("id").requiredString("user").requiredLong("ts").endRecord();
    static final Schema RESULT = SchemaBuilder.record("Result").namespace("brokerfault").fields()
            .requiredString("id").requiredString("user").requiredLong("count").endRecord();
    static final Schema TOTAL = SchemaBuilder.record("Total").namespace("brokerfault").fields()
            .requiredLong("count").endRecord();

    private BrokerFaultPipeline() {
    }

    static PipelineSpec spec(String name, String input, String output) {
        return PipelineSpec.builder(name)
                .stream("raw", EVENT).stream("events", EVENT).stream("results", RESULT)
                .computation("read", c -> c.kind(ComputationKind.SOURCE)
                        .source("raw", "KafkaSource", Map.of("topics", input))
                        .watermarkStrategy(WatermarkStrategy.DEFAULT.withTimestampColumn("ts")
                                .withOutOfOrdernessBound(Duration.ZERO))
                        .outputStreamIds("events"))
                .computation("wait", c -> c.inputStreamIds("events")
                        .groupBy("hash", ColumnType.UINT64, "farm_hash(user)").groupBy("user", ColumnType.STRING, null)
                        .state("total", TOTAL)
                        .timer("wait", Map.of("time_type", "event_time"))
                        .processingFunction(CountThenWait::new)
                        .outputStreamIds("results")
                        .sink("results_topic", "KafkaSink", List.of("results"),
                                Map.of("topic", output, "key_column", "id", "timestamp", "system")))
                .build();
    }

    static String id(long index) {
        return "e-" + index;
    }

    static String user(long index) {
        return "u" + (index % USERS);
    }

    static long eventTimeMs(long index) {
        return BASE_MS + index * STEP_MS;
    }

    /** The index of the record whose timer triggers at {@code triggerNanos}. */
    static long indexOfTrigger(long triggerNanos) {
        return (triggerNanos / MS - WAIT_MS - BASE_MS) / STEP_MS;
    }

    /** The number of {@code user(index)}'s records before the trigger of record {@code index}'s timer. */
    static long recordsBeforeTrigger(long index, long records) {
        long trigger = index * STEP_MS + WAIT_MS;
        long before = 0;
        for (long i = index % USERS; i < records && i * STEP_MS < trigger; i += USERS) {
            before++;
        }
        return before;
    }

    /** Counts each user's records; each record's timer emits its result with the user's count when it fired. */
    public static final class CountThenWait implements RowFunction {
        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
            if (!message.getPayload().get("id").toString().startsWith("e-")) {
                return; // an end marker: moves the watermark on only
            }
            StateAccessor<GenericRecord> total = context.getState("total");
            GenericRecord t = new GenericData.Record(TOTAL);
            t.put("count", count(context) + 1);
            total.set(t);
            long ts = (Long) message.getPayload().get("ts");
            output.addTimer((ts + WAIT_MS) * MS, ts * MS);
        }

        @Override
        public void onTimer(Timer timer, OutputCollector output, RuntimeContext context) {
            output.addMessage(context.createMessageBuilder("results")
                    .set("id", id(indexOfTrigger(timer.getTriggerTimestamp())))
                    .set("user", timer.getKey().get("user").toString()).set("count", count(context)).build());
        }

        private static long count(RuntimeContext context) {
            return context.getState("total").get().map(t -> (Long) t.get("count")).orElse(0L);
        }
    }
}
