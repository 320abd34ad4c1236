package io.flowkafka.examples.waitclick;

import io.flowkafka.api.Message;
import io.flowkafka.api.OutputCollector;
import io.flowkafka.api.RowFunction;
import io.flowkafka.api.RuntimeContext;
import io.flowkafka.api.StateAccessor;
import io.flowkafka.api.Timer;
import io.flowkafka.spec.ColumnType;
import io.flowkafka.spec.ComputationKind;
import io.flowkafka.spec.ComputationSpec;
import io.flowkafka.spec.PipelineSpec;
import io.flowkafka.spec.WatermarkStrategy;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.avro.generic.GenericRecordBuilder;
import org.apache.avro.generic.GenericRecord;

/**
 * Flow's flagship example: an impression waits up to 30 minutes of event time for its click and
 * then emits {@code joined} or {@code no_click}, exactly once per impression.
 *
 * <pre>
 *   topic impressions (JSON {"impression_id", "user", "ts"})  -> read_impressions -> stream impressions --+
 *   topic clicks      (JSON {"impression_id", "ts"})          -> read_clicks      -> stream clicks -------+
 *                                                                                                          |
 *      join (Transform, key impression_id, states impression/click, event-time timer "timeout") <---------+
 *        -> stream results -> KafkaSink topic results (JSON {"impression_id", "user", "result", ...})
 * </pre>
 *
 * <p>The timer fires when the event watermark of both inputs exceeds impression time + 30 min: by
 * then every click up to that time was processed, so the result does not depend on arrival order.
 */
public final class WaitClickJoin implements RowFunction {
    /** How long an impression waits for its click, in event time. */
    public static final Duration WAIT = Duration.ofMinutes(30);

    public static final Schema IMPRESSION = SchemaBuilder.record("Impression").namespace("io.flowkafka.examples")
            .fields().requiredString("impression_id").requiredString("user").requiredLong("ts").endRecord();
    public static final Schema CLICK = SchemaBuilder.record("Click").namespace("io.flowkafka.examples")
            .fields().requiredString("impression_id").requiredLong("ts").endRecord();
    public static final Schema RESULT = SchemaBuilder.record("JoinResult").namespace("io.flowkafka.examples")
            .fields().requiredString("impression_id").requiredString("user").requiredString("result")
            .requiredLong("impression_ts").optionalLong("click_ts").endRecord();
    /** Per impression id: what has been seen so far. */
    public static final Schema JOIN_STATE = SchemaBuilder.record("JoinState").namespace("io.flowkafka.examples")
            .fields().optionalString("user").optionalLong("impression_ts").optionalLong("click_ts")
            .name("joined").type().booleanType().booleanDefault(false).endRecord();

    /**
     * How far in event time one source may read ahead of the other ({@code watermark_alignment}'s
     * {@code drift_bound}, Flow's default). Clicks are sparser than impressions, so without alignment
     * the clicks source runs ahead (by hours in a backlog) and every early click waits in the join's
     * state, with a timer, for its impression.
     */
    public static final Duration ALIGNMENT_DRIFT = WatermarkStrategy.DEFAULT_DRIFT_BOUND;

    private static final long MS = 1_000_000L;

    /**
     * The pipeline spec, its two sources aligned within {@link #ALIGNMENT_DRIFT}.
     *
     * @param finite whether the sources stop at the end offsets seen at start (backfills, tests)
     */
    public static PipelineSpec spec(String name, String impressionsTopic, String clicksTopic, String resultsTopic,
            int partitions, boolean finite) {
        return spec(name, impressionsTopic, clicksTopic, resultsTopic, partitions, finite, ALIGNMENT_DRIFT);
    }

    /**
     * The pipeline spec with another alignment of its sources.
     *
     * @param alignmentDrift the sources' {@code watermark_alignment.drift_bound}; null for no alignment
     */
    public static PipelineSpec spec(String name, String impressionsTopic, String clicksTopic, String resultsTopic,
            int partitions, boolean finite, Duration alignmentDrift) {
        WatermarkStrategy byTs = alignmentDrift == null ? WatermarkStrategy.DEFAULT.withTimestampColumn("ts")
                : WatermarkStrategy.DEFAULT.withTimestampColumn("ts").withAlignment("impressions-and-clicks", alignmentDrift);
        // tag::spec[]
        return PipelineSpec.builder(name)
                .stream("raw_impressions", IMPRESSION).stream("impressions", IMPRESSION)
                .stream("raw_clicks", CLICK).stream("clicks", CLICK)
                .stream("results", RESULT)
                .computation("read_impressions", c -> c.kind(ComputationKind.SOURCE).watermarkStrategy(byTs)
                        .source("raw_impressions", "KafkaSource", Map.of("topics", impressionsTopic, "finite", finite))
                        .outputStreamIds("impressions"))
                .computation("read_clicks", c -> c.kind(ComputationKind.SOURCE).watermarkStrategy(byTs)
                        .source("raw_clicks", "KafkaSource", Map.of("topics", clicksTopic, "finite", finite))
                        .outputStreamIds("clicks"))
                .computation("join", c -> join(c.inputStreamIds("impressions", "clicks"), resultsTopic)
                        .desiredPartitionCount(partitions))
                .build();
        // end::spec[]
    }

    /** The join computation's key, state, timer stream, function and sink, whatever it reads. */
    private static ComputationSpec.Builder join(ComputationSpec.Builder c, String resultsTopic) {
        return c.groupBy("hash", ColumnType.UINT64, "farm_hash(impression_id)")
                .groupBy("impression_id", ColumnType.STRING, null)
                .state("join", JOIN_STATE)
                .timer("timeout", Map.of("time_type", "event_time"))
                .processingFunction(WaitClickJoin::new)
                .outputStreamIds("results")
                .sink("results_topic", "KafkaSink", List.of("results"),
                        // system time: results of a backfill carry old event times, which the broker's
                        // time-based retention would delete from the topic within minutes
                        Map.of("topic", resultsTopic, "key_column", "impression_id", "timestamp", "system"));
    }

    /**
     * The same join reading both topics directly as key-partitioned sources (both topics keyed by
     * impression id, with the same partition count): one sub-topology, no internal streams. The
     * source streams are named {@code impressions} and {@code clicks}, so the function is the same.
     * A task's timers follow the watermark of its own partitions of the two topics (see README,
     * "Keyed sources").
     */
    public static PipelineSpec keyedSpec(String name, String impressionsTopic, String clicksTopic, String resultsTopic,
            boolean finite) {
        WatermarkStrategy byTs = WatermarkStrategy.DEFAULT.withTimestampColumn("ts");
        return PipelineSpec.builder(name)
                .stream("impressions", IMPRESSION).stream("clicks", CLICK).stream("results", RESULT)
                .computation("join", c -> join(c.watermarkStrategy(byTs)
                        .source("impressions", "KafkaSource",
                                Map.of("topics", impressionsTopic, "finite", finite, "key_partitioned", true))
                        .source("clicks", "KafkaSource",
                                Map.of("topics", clicksTopic, "finite", finite, "key_partitioned", true)), resultsTopic))
                .build();
    }

    // tag::function[]
    @Override
    public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
        StateAccessor<GenericRecord> state = context.getState("join");
        GenericRecord s = state.get().orElseGet(() -> new GenericRecordBuilder(JOIN_STATE).build());
        String id = message.getPayload().get("impression_id").toString();
        long ts = (Long) message.getPayload().get("ts");
        if (message.getStreamId().equals("impressions")) {
            if (s.get("impression_ts") != null) {
                return; // a duplicate impression: the first one already waits
            }
            s.put("user", message.getPayload().get("user").toString());
            s.put("impression_ts", ts);
            Long click = (Long) s.get("click_ts");
            if (click != null && clickCounts(ts, click)) { // the click was processed first
                output.addMessage(result(context, id, s, "joined"));
                s.put("joined", true);
            }
            output.addTimer(ts * MS + WAIT.toNanos(), ts * MS);
        } else if (s.get("impression_ts") != null) {
            if (!(Boolean) s.get("joined") && clickCounts((Long) s.get("impression_ts"), ts)) {
                s.put("click_ts", ts);
                output.addMessage(result(context, id, s, "joined"));
                s.put("joined", true);
            }
        } else if (s.get("click_ts") == null) {
            s.put("click_ts", ts); // a click ahead of its impression: wait for it, then forget it
            output.addTimer(ts * MS + WAIT.toNanos(), ts * MS);
        }
        state.set(s);
    }

    @Override
    public void onTimer(Timer timer, OutputCollector output, RuntimeContext context) {
        StateAccessor<GenericRecord> state = context.getState("join");
        GenericRecord s = state.get().orElse(null);
        if (s == null) {
            return;
        }
        Long impressionTs = (Long) s.get("impression_ts");
        if (impressionTs == null) {
            state.clear(); // an orphan click's wait is over
        } else if (timer.getTriggerTimestamp() == impressionTs * MS + WAIT.toNanos()) {
            if (!(Boolean) s.get("joined")) {
                output.addMessage(result(context, timer.getKey().get("impression_id").toString(), s, "no_click"));
            }
            state.clear();
        }
        // else: the orphan-click timer of an impression that arrived since; its own timer decides
    }

    /** A click counts when it comes within the wait after the impression. */
    public static boolean clickCounts(long impressionTs, long clickTs) {
        return clickTs >= impressionTs && clickTs - impressionTs <= WAIT.toMillis();
    }
    // end::function[]

    private static io.flowkafka.api.Message result(RuntimeContext context, String id, GenericRecord s, String result) {
        return context.createMessageBuilder("results")
                .set("impression_id", id)
                .set("user", s.get("user").toString())
                .set("result", result)
                .set("impression_ts", s.get("impression_ts"))
                .set("click_ts", "joined".equals(result) ? s.get("click_ts") : null)
                .build();
    }
}
