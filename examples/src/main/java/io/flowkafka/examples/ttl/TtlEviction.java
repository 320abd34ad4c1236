package io.flowkafka.examples.ttl;

import io.flowkafka.api.Message;
import io.flowkafka.api.OutputCollector;
import io.flowkafka.api.RowFunction;
import io.flowkafka.api.RuntimeContext;
import io.flowkafka.api.StateAccessor;
import io.flowkafka.api.Visit;
import java.time.Duration;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.jspecify.annotations.Nullable;

/**
 * Per-key TTL and a periodic per-key aggregate, both driven by a key visitor: two uses that the
 * Flow key-visitor page lists, "TTL / eviction: iterate over all keys and delete outdated
 * records" and "Periodic aggregates: emit the current value for each key once a day".
 *
 * <p>Why a key visitor. Nothing happens to a key between its messages, so a key that stops
 * receiving events would keep its state forever, and a per-key total would only ever be emitted
 * when the next event arrives. A per-key timer would do both but costs one timer per key, always
 * pending. A key-visitor stream ({@code key_visitor_streams.evict} of {@link TtlPipeline}) instead
 * scans every key of the computation's state in the background, once per {@code period}, and calls
 * {@link #onVisit} for each: within one pass, each key present for the whole pass is visited
 * exactly once, and its visits one pass after another come about one period apart.
 *
 * <p>The function ({@link TtlPipeline} computation {@code ttl}, keyed by user):
 * <ul>
 *   <li>{@link #onMessage}: {@code last_seen} := the latest event time {@code ts} seen for the key
 *       (out-of-order events do not move it back); {@code daily} += the event (count + 1,
 *       sum + amount).</li>
 *   <li>{@link #onVisit}, with "now" = the visit's {@link Visit#getEventTimestamp() event timestamp}:
 *       <ol type="a">
 *         <li>if {@code now − last_seen > ttl}, deletes every state of the key ({@code last_seen}
 *             and {@code daily}), emits nothing, and the key is gone: later passes do not visit it;
 *             a later event for the user starts from scratch;</li>
 *         <li>otherwise emits one {@code daily_totals} message {@code {user, count, sum, pass,
 *             visit_ts}} with the events since the key's previous visit (zeros if there were none),
 *             and deletes {@code daily}, so the next visit reports the next period.</li>
 *       </ol></li>
 * </ul>
 *
 * <p>Points of the pattern:
 * <ul>
 *   <li>The TTL is the computation parameter {@code ttl}, read with
 *       {@link RuntimeContext#getParameters()}: a Flow-style duration ({@code "7d"}, {@code "12h"},
 *       {@code "90s"}) or a number of milliseconds.</li>
 *   <li>The visit's event timestamp is the time the throttled scan was scheduled to reach the key
 *       ({@code now − max(0, elapsed − scannedFraction · period)}), so a scan that falls behind its
 *       schedule judges keys as of their scheduled time and errs on the side of keeping them.
 *       {@link RuntimeContext#currentTimeNanos()} would judge them as of the actual visit.</li>
 *   <li>{@code last_seen} is event time (the payload's {@code ts}), "now" is the visitor's wall
 *       clock: the TTL is "no event whose own time is within the TTL", so an event that is already
 *       older than the TTL when it arrives (a backfill) is counted, then deleted with its key at the
 *       next visit without being emitted. Keep the TTL well above the period, and route backfills
 *       elsewhere.</li>
 *   <li>An aggregate row covers the events processed between two visits of its key, which are one
 *       period apart: with the default period of a day it is a daily total, but its boundaries are
 *       the key's position in the scan, not midnight; {@code visit_ts} dates it and {@code pass}
 *       numbers it (per partition). Emitting from {@code onVisit} requires
 *       {@code streams_dependency: {daily_totals: [evict]}} in the spec.</li>
 *   <li>A visit is one call like any other: its effects (the deletion, or the output and the reset)
 *       apply only if it returns normally, and commit in the same Kafka transaction as the scan's
 *       progress past the key.</li>
 * </ul>
 *
 * <p>Not thread-safe: the runtime creates one instance per task.
 */
public final class TtlEviction implements RowFunction {
    private static final long MS = 1_000_000L;

    private @Nullable Duration ttl;

    // tag::function[]
    @Override
    public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
        GenericRecord event = message.getPayload();
        long ts = (Long) event.get("ts");
        long amount = (Long) event.get("amount");

        StateAccessor<GenericRecord> lastSeen = context.getState("last_seen");
        long latest = lastSeen.get().map(s -> Math.max((Long) s.get("ts"), ts)).orElse(ts);
        GenericRecord seen = new GenericData.Record(TtlPipeline.LAST_SEEN_SCHEMA);
        seen.put("ts", latest);
        lastSeen.set(seen);

        StateAccessor<GenericRecord> daily = context.getState("daily");
        GenericRecord aggregate = daily.get().orElseGet(TtlEviction::emptyAggregate);
        aggregate.put("count", (Long) aggregate.get("count") + 1);
        aggregate.put("sum", (Long) aggregate.get("sum") + amount);
        daily.set(aggregate);
    }

    @Override
    public void onVisit(Visit visit, OutputCollector output, RuntimeContext context) {
        long now = visit.getEventTimestamp();
        StateAccessor<GenericRecord> lastSeen = context.getState("last_seen");
        StateAccessor<GenericRecord> daily = context.getState("daily");
        long ttlNanos = ttl(context).toNanos();
        boolean outdated = lastSeen.get().map(s -> now - (Long) s.get("ts") * MS > ttlNanos).orElse(true);
        if (outdated) { // a key without last_seen cannot be judged: it goes too
            // (a) outdated: delete every state of the key; a key without state is not visited again
            lastSeen.clear();
            daily.clear();
            return;
        }
        // (b) live: emit the key's aggregate since its previous visit, then start the next one
        GenericRecord aggregate = daily.get().orElseGet(TtlEviction::emptyAggregate);
        output.addMessage(context.createMessageBuilder(TtlPipeline.DAILY_TOTALS)
                .set("user", visit.getKey().get("user").toString())
                .set("count", aggregate.get("count"))
                .set("sum", aggregate.get("sum"))
                .set("pass", visit.getPass())
                .set("visit_ts", Math.floorDiv(now, MS))
                .setEventTimestamp(now)
                .build());
        daily.clear();
    }
    // end::function[]

    private static GenericRecord emptyAggregate() {
        GenericRecord r = new GenericData.Record(TtlPipeline.DAILY_SCHEMA);
        r.put("count", 0L);
        r.put("sum", 0L);
        return r;
    }

    /** The computation's {@code ttl} parameter, parsed once. */
    private Duration ttl(RuntimeContext context) {
        if (ttl == null) {
            ttl = parseDuration(context.getParameters().get(TtlPipeline.TTL_PARAMETER), TtlPipeline.TTL_PARAMETER);
        }
        return ttl;
    }

    /**
     * Parses a positive Flow-style duration with {@link io.flowkafka.spec.Durations}: a number with an
     * optional unit ({@code ns}, {@code us}, {@code ms}, {@code s}, {@code m}, {@code h}, {@code d};
     * none means milliseconds), a {@link Number} of milliseconds or a {@link Duration}.
     *
     * @param name the parameter, for the error message
     * @throws IllegalArgumentException naming the parameter if the value is missing, malformed or not positive
     */
    public static Duration parseDuration(@Nullable Object value, String name) {
        Duration d = io.flowkafka.spec.Durations.parse(value, "parameter '" + name + "'");
        if (d.isNegative() || d.isZero()) {
            throw new IllegalArgumentException("parameter '" + name + "' must be a positive duration but was '" + value
                    + "'");
        }
        return d;
    }
}
