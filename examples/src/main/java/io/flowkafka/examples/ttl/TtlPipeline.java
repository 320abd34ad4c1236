package io.flowkafka.examples.ttl;

import io.flowkafka.spec.ColumnType;
import io.flowkafka.spec.ComputationKind;
import io.flowkafka.spec.PipelineSpec;
import java.util.List;
import java.util.Map;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;

/**
 * The TTL-eviction pipeline: per-user state that a key visitor expires and reports on once a
 * period.
 *
 * <pre>
 *   topic user-spend (JSON {"user", "amount", "ts"}, ts in epoch ms)
 *     -> read (Source)                           source stream raw_events, output stream events
 *     -> ttl (Transform, key farm_hash(user), user;
 *             states last_seen, daily;
 *             key-visitor stream evict, period 1d;
 *             parameter ttl = 7d)                 stream daily_totals (from evict only)
 *     -> KafkaSink                               topic daily-totals (JSON {"user", "count", "sum", "pass", "visit_ts"}),
 *                                                record key = user
 * </pre>
 *
 * <p>The process function is {@link TtlEviction}: {@code onMessage} keeps {@code last_seen} and adds
 * the event to {@code daily}; {@code onVisit} deletes a key idle longer than the TTL, or else emits
 * and resets its {@code daily} aggregate.
 */
public final class TtlPipeline {
    /** The processing computation. */
    public static final String COMPUTATION = "ttl";
    /** The key-visitor stream of {@link #COMPUTATION}. */
    public static final String VISITOR = "evict";
    /** The computation parameter holding the TTL, a duration such as {@code "7d"}. */
    public static final String TTL_PARAMETER = "ttl";
    /** The output stream of the per-pass aggregates. */
    public static final String DAILY_TOTALS = "daily_totals";
    /** The default TTL: a key with no event for this long is deleted. */
    public static final String DEFAULT_TTL = "7d";
    /** The default visitor period: every key is visited once a day. */
    public static final String DEFAULT_PERIOD = "1d";

    private static final String NS = "io.flowkafka.examples.ttl";

    /** Payload of the {@code raw_events} and {@code events} streams; {@code ts} is the event time in epoch ms. */
    public static final Schema EVENT_SCHEMA = SchemaBuilder.record("SpendEvent").namespace(NS).fields()
            .requiredString("user").requiredLong("amount").requiredLong("ts").endRecord();
    /** Value of the {@code last_seen} state: the latest event time of the key, epoch ms. */
    public static final Schema LAST_SEEN_SCHEMA = SchemaBuilder.record("LastSeen").namespace(NS).fields()
            .requiredLong("ts").endRecord();
    /** Value of the {@code daily} state: the events of the key since its last visit. Absent means none. */
    public static final Schema DAILY_SCHEMA = SchemaBuilder.record("DailyAggregate").namespace(NS).fields()
            .requiredLong("count").requiredLong("sum").endRecord();
    /**
     * Payload of {@code daily_totals}: one key's events since its previous visit, emitted at visit
     * {@code pass}; {@code visit_ts} is the visit's event time in epoch ms.
     */
    public static final Schema DAILY_TOTAL_SCHEMA = SchemaBuilder.record("DailyTotal").namespace(NS).fields()
            .requiredString("user").requiredLong("count").requiredLong("sum").requiredLong("pass")
            .requiredLong("visit_ts").endRecord();

    private TtlPipeline() {
    }

    /** The spec with the defaults: TTL {@value #DEFAULT_TTL}, one pass a day ({@value #DEFAULT_PERIOD}). */
    public static PipelineSpec spec(String name, String eventsTopic, String totalsTopic, int partitions) {
        return spec(name, eventsTopic, totalsTopic, DEFAULT_TTL, DEFAULT_PERIOD, partitions);
    }

    /**
     * The spec, reading {@code eventsTopic} and writing {@code totalsTopic}.
     *
     * @param ttl how long a key may go without events before its state is deleted, e.g. {@code "7d"}
     * @param period how long one pass over all keys takes, e.g. {@code "1d"}; a dynamic setting,
     *     changeable on a running pipeline with {@code FlowRuntime.reconfigureKeyVisitor}
     * @throws IllegalArgumentException if {@code ttl} is not a positive duration
     */
    public static PipelineSpec spec(String name, String eventsTopic, String totalsTopic, String ttl, String period,
            int partitions) {
        TtlEviction.parseDuration(ttl, TTL_PARAMETER); // fail here rather than at every visit
        // tag::spec[]
        return PipelineSpec.builder(name)
                .stream("raw_events", EVENT_SCHEMA)
                .stream("events", EVENT_SCHEMA)
                .stream(DAILY_TOTALS, DAILY_TOTAL_SCHEMA)
                .computation("read", c -> c.kind(ComputationKind.SOURCE)
                        .source("raw_events", "KafkaSource", Map.of("topics", eventsTopic, "event_timestamp_column", "ts"))
                        .outputStreamIds("events"))
                .computation(COMPUTATION, c -> c.inputStreamIds("events")
                        .groupBy("hash", ColumnType.UINT64, "farm_hash(user)") // key visitors need the uint64 first
                        .groupBy("user", ColumnType.STRING, null)
                        .state("last_seen", LAST_SEEN_SCHEMA)
                        .state("daily", DAILY_SCHEMA)
                        .parameter(TTL_PARAMETER, ttl)
                        .keyVisitorStream(VISITOR, Map.of("period", period))
                        // onVisit emits daily_totals: Flow requires the visitor stream listed as its parent
                        .streamsDependency(DAILY_TOTALS, List.of(VISITOR))
                        .processingFunction(TtlEviction::new)
                        .outputStreamIds(DAILY_TOTALS)
                        .sink("totals_topic", "KafkaSink", List.of(DAILY_TOTALS),
                                Map.of("topic", totalsTopic, "key_column", "user"))
                        .desiredPartitionCount(partitions))
                .build();
        // end::spec[]
    }
}
