package io.flowkafka.examples.docs;

import io.flowkafka.api.Message;
import io.flowkafka.api.OutputCollector;
import io.flowkafka.api.RowFunction;
import io.flowkafka.api.RuntimeContext;
import io.flowkafka.api.StateAccessor;
import io.flowkafka.api.Visit;
import io.flowkafka.spec.ColumnType;
import io.flowkafka.spec.ComputationKind;
import io.flowkafka.spec.PipelineSpec;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;

/**
 * The docs' example of event time in a process function: late messages are dropped by comparing
 * their event timestamp with the input watermark, and a key visitor expires keys by the input
 * watermark rather than by {@link Visit#getEventTimestamp()}, which is wall-clock time. Judged by
 * the watermark, a replay of old data (a backfill) keeps its keys for their TTL in event time.
 */
public final class ReplayAwareTtl implements RowFunction {
    /** A key with no event for this long, in event time, is deleted. */
    public static final Duration TTL = Duration.ofDays(7);

    static final Schema EVENT = SchemaBuilder.record("DocEvent").namespace("io.flowkafka.examples.docs")
            .fields().requiredString("user").requiredLong("ts").endRecord();
    static final Schema LAST_SEEN = SchemaBuilder.record("DocLastSeen").namespace("io.flowkafka.examples.docs")
            .fields().requiredLong("ts").endRecord();

    /** Source {@code read} of {@code eventsTopic}, then {@code ttl} keyed by user, writing {@code on_time}. */
    public static PipelineSpec spec(String name, String eventsTopic, String outputTopic) {
        return PipelineSpec.builder(name)
                .stream("raw_events", EVENT).stream("events", EVENT).stream("on_time", EVENT)
                .computation("read", c -> c.kind(ComputationKind.SOURCE)
                        .source("raw_events", "KafkaSource", Map.of("topics", eventsTopic, "event_timestamp_column", "ts"))
                        .outputStreamIds("events"))
                .computation("ttl", c -> c.inputStreamIds("events")
                        .groupBy("hash", ColumnType.UINT64, "farm_hash(user)")
                        .groupBy("user", ColumnType.STRING, null)
                        .state("last_seen", LAST_SEEN)
                        .keyVisitorStream("evict", Map.of("period", "1h"))
                        .processingFunction(ReplayAwareTtl::new)
                        .outputStreamIds("on_time")
                        .sink("on_time_topic", "KafkaSink", List.of("on_time"), Map.of("topic", outputTopic)))
                .build();
    }

    // tag::late-data[]
    @Override
    public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
        if (message.getEventTimestamp() < context.getInputWatermark(message.getStreamId())) {
            return; // late: every message of its stream up to the watermark was processed already
        }
        GenericRecord seen = new GenericData.Record(LAST_SEEN);
        seen.put("ts", message.getEventTimestamp());
        context.getState("last_seen").set(seen);
        output.addMessage(context.createMessageBuilder("on_time")
                .set("user", message.getPayload().get("user").toString())
                .set("ts", message.getPayload().get("ts"))
                .build());
    }
    // end::late-data[]

    // tag::visit[]
    @Override
    public void onVisit(Visit visit, OutputCollector output, RuntimeContext context) {
        // not visit.getEventTimestamp(): that is wall-clock time, far ahead of replayed data
        long now = context.getMinInputWatermark();
        StateAccessor<GenericRecord> lastSeen = context.getState("last_seen");
        lastSeen.get().filter(s -> now > (Long) s.get("ts") + TTL.toNanos())
                .ifPresent(s -> lastSeen.clear());
    }
    // end::visit[]
}
