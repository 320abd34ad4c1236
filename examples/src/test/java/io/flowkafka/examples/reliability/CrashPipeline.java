package io.flowkafka.examples.reliability;

import io.flowkafka.api.Message;
import io.flowkafka.api.OutputCollector;
import io.flowkafka.api.RowFunction;
import io.flowkafka.api.RuntimeContext;
import io.flowkafka.api.Timer;
import io.flowkafka.api.Visit;
import io.flowkafka.examples.guarantees.RoundedCount;
import io.flowkafka.spec.ColumnType;
import io.flowkafka.spec.ComputationKind;
import io.flowkafka.spec.PipelineSpec;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;

/**
 * The pipeline the random-crash driver breaks: source {@code {"id", "user", "ts"}} -> {@code work} (grouped by user,
 * 4 partitions) -> one {@code TKafkaSink} (exactly_once) that receives every kind of output, keyed by a unique id:
 * <ul>
 *   <li>each input {@code m-i} gives the output {@code m-i} with the user's running count ({@link RoundedCount}:
 *       state {@code total}, deleted every 4 inputs, and {@code rounds});</li>
 *   <li>each input sets an event-time timer 2 s after its event time; firing gives {@code t-m-i} (the input's index
 *       is the nanosecond part of its event time, so the timer names its input);</li>
 *   <li>the key visitor {@code audit} visits every user once per pass and gives {@code v-<user>-<pass>}.</li>
 * </ul>
 * Users named {@code tail-*} only carry the watermark past every timer at the end of a run: they set no timer.
 *
 * <p>One fault lives in the process function: {@link #throwNext}, set by the driver through the child's control
 * directory, makes the next message call throw once, which kills the stream thread (dead letters are off in the
 * child, so the failure is not diverted).
 */
final class CrashPipeline {
    static final Schema EVENT = SchemaBuilder.record("Event").namespace("crash").fields()
            .requiredString("id").requiredString("user").requiredLong("ts").endRecord();
    static final Schema OUT = SchemaBuilder.record("Out").namespace("crash").fields()
            .requiredString("id").requiredString("kind").requiredString("user").requiredLong("count")
            .requiredLong("pass").requiredInt("partition").requiredLong("calledMs").endRecord();

    /** Event time from an input's event time to its timer. */
    static final long TIMER_DELAY_NS = 2_000_000_000L;
    /** The part of an event time (ns) that holds the input's index. */
    static final long INDEX_MODULUS = 1_000_000L;
    static final String TAIL_PREFIX = "tail-";

    /** Set by the child's control poller: the next message call throws, once. */
    static final AtomicBoolean throwNext = new AtomicBoolean();

    private CrashPipeline() {
    }

    static PipelineSpec spec(String name, String input, String output, String visitorPeriod) {
        return PipelineSpec.builder(name)
                .stream("raw", EVENT).stream("events", EVENT).stream("out", OUT).stream("audits", OUT)
                .computation("read", c -> c.kind(ComputationKind.SOURCE)
                        .source("raw", "KafkaSource", Map.of("topics", input, "event_timestamp_column", "ts",
                                "event_timestamp_unit", "ns"))
                        .outputStreamIds("events"))
                .computation("work", c -> c.inputStreamIds("events").desiredPartitionCount(4)
                        .groupBy("hash", ColumnType.UINT64, "farm_hash(user)").groupBy("user", ColumnType.STRING, null)
                        .state(RoundedCount.TOTAL, RoundedCount.STATE).state(RoundedCount.ROUNDS, RoundedCount.STATE)
                        .timer("expire", Map.of("time_type", "event_time"))
                        .keyVisitorStream("audit", Map.of("period", visitorPeriod, "bucket_count", 4,
                                "background_fill_period", "200ms", "finite", false))
                        .processingFunction(Work::new)
                        .outputStreamIds("out", "audits")
                        .streamsDependency("audits", List.of("audit"))
                        .sink("target", "TKafkaSink", List.of("out", "audits"), Map.of("topic", output,
                                "key_column", "id", "message_id_header", "flow-message-id", "timestamp", "system",
                                "delivery_guarantee", "exactly_once")))
                .build();
    }

    /** Counts per user, sets one timer per input, reports timers and visits. */
    public static final class Work implements RowFunction {
        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
            long n = RoundedCount.next(context);
            String user = message.getPayload().get("user").toString();
            String id = message.getPayload().get("id").toString();
            output.addMessage(out(context, "out", id, "message", user, n, 0));
            if (!user.startsWith(TAIL_PREFIX)) {
                long ts = message.getEventTimestamp();
                output.addTimer(ts + TIMER_DELAY_NS, ts);
            }
            if (throwNext.compareAndSet(true, false)) {
                System.out.println("FAULT thread thrown at " + id);
                System.out.flush();
                throw new IllegalStateException("crash driver: injected failure at " + id);
            }
        }

        @Override
        public void onTimer(Timer timer, OutputCollector output, RuntimeContext context) {
            long index = (timer.getTriggerTimestamp() - TIMER_DELAY_NS) % INDEX_MODULUS;
            output.addMessage(out(context, "out", "t-m-" + index, "timer", timer.getKey().get("user").toString(),
                    count(context), 0));
        }

        @Override
        public void onVisit(Visit visit, OutputCollector output, RuntimeContext context) {
            String user = visit.getKey().get("user").toString();
            output.addMessage(out(context, "audits", "v-" + user + "-" + visit.getPass(), "visit", user,
                    count(context), visit.getPass()));
        }

        private static long count(RuntimeContext context) {
            return RoundedCount.current(context);
        }

        private static Message out(RuntimeContext context, String stream, String id, String kind, String user,
                long count, long pass) {
            return context.createMessageBuilder(stream).set("id", id).set("kind", kind).set("user", user)
                    .set("count", count).set("pass", pass).set("partition", context.getPartition())
                    // the wall clock of the call (every instance runs on this machine): orders a task's committed calls,
                    // where the target's append times do not (one delivery transaction spans target partitions)
                    .set("calledMs", System.currentTimeMillis()).build();
        }
    }
}
