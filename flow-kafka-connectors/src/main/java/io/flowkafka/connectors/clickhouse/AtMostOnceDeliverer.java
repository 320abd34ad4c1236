package io.flowkafka.connectors.clickhouse;

import io.flowkafka.spi.OutboxBatch;
import io.flowkafka.spi.OutboxDeliverer;
import io.flowkafka.spi.OutboxDeliveryException;
import io.flowkafka.spi.OutboxRecord;
import io.flowkafka.spi.SinkContext;
import io.micrometer.core.instrument.Counter;
import java.io.IOException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Delivers a {@code TAtMostOnceClickHouseSink}, one {@code INSERT} per message, in both strategy modes (reference
 * 002: "In either mode, once INSERT has started, a failed insert is acknowledged instead of retried. Each message
 * generates a separate INSERT"). Keeps that rule: a message whose request never reached the server (connection
 * refused, connect timeout) or whose writer session could not start is retried (the batch fails retryably and is
 * offered again; the messages of it already attempted are skipped); any other failure is acknowledged, counted in
 * {@code flow.sink.dropped} and logged as a warning.
 *
 * <p>With the default {@code at_most_once_strategy.enabled = false} the messages come from the outbox in order
 * ("pending messages stay in output_messages and use ordered delivery"), and {@link StartedMarkers} keeps the rule
 * across crashes. With the strategy enabled they come from the runtime's bounded in-memory queue (partition -1),
 * which drops on overflow; a crash loses what is queued. Threading: called only by the delivery thread.
 */
final class AtMostOnceDeliverer implements OutboxDeliverer {
    private static final Logger LOG = LoggerFactory.getLogger(AtMostOnceDeliverer.class);

    private final DirectTarget target;
    private final StartedMarkers markers;
    private final Counter dropped;
    /** Per partition: the outbox offset from which no INSERT started (in this process). */
    private final Map<Integer, Long> startedUpTo = new HashMap<>();
    /** Per partition: the offset the durable marker says. */
    private final Map<Integer, Long> marked = new HashMap<>();

    AtMostOnceDeliverer(SinkContext context) {
        this.target = new DirectTarget(context);
        this.markers = new StartedMarkers(context.applicationId(), context.sink().id(),
                context.pipelineClientProperties());
        this.dropped = Counter.builder("flow.sink.dropped")
                .description("messages an at-most-once sink dropped (queue full, or a failed INSERT that started)")
                .tags("pipeline", context.pipeline(), "sink", context.sink().id()).register(context.meters());
    }

    @Override
    public OptionalLong open(int partition, OptionalLong committedOffset) throws OutboxDeliveryException {
        startedUpTo.remove(partition);
        marked.remove(partition);
        if (partition < 0) {
            return OptionalLong.empty(); // the in-memory queue: no progress to keep
        }
        OptionalLong marker;
        try {
            marker = markers.read(partition);
        } catch (Exception e) {
            throw new OutboxDeliveryException(target.name() + ": cannot read its started markers from "
                    + markers.topic() + ": " + e, e);
        }
        if (marker.isEmpty()) {
            return OptionalLong.empty();
        }
        marked.put(partition, marker.getAsLong());
        startedUpTo.put(partition, marker.getAsLong());
        return committedOffset.isPresent() && committedOffset.getAsLong() >= marker.getAsLong()
                ? OptionalLong.empty() : marker;
    }

    @Override
    public void deliver(OutboxBatch batch) throws OutboxDeliveryException {
        int partition = batch.partition();
        try {
            target.start();
        } catch (TargetTable.RejectedTarget e) {
            throw OutboxDeliveryException.fatal(target.name() + ": " + e.getMessage());
        } catch (IOException e) {
            if (InsertErrorKind.of(e) == InsertErrorKind.PERMANENT) {
                throw OutboxDeliveryException.fatal(target.name() + ": checking the target table failed: "
                        + e.getMessage());
            }
            throw new OutboxDeliveryException(target.name() + ": the writer session did not start, no INSERT "
                    + "started, retrying: " + e, e);
        }
        if (partition >= 0 && batch.nextOffset() > marked.getOrDefault(partition, -1L)) {
            try {
                markers.write(partition, batch.nextOffset());
            } catch (Exception e) {
                throw new OutboxDeliveryException(target.name() + ": cannot write its started marker to "
                        + markers.topic() + ", no INSERT started, retrying: " + e, e);
            }
            marked.put(partition, batch.nextOffset());
        }
        long from = startedUpTo.getOrDefault(partition, -1L);
        for (OutboxRecord r : batch.records()) {
            if (r.offset() < from) {
                continue; // attempted before this batch was offered again: never a second INSERT
            }
            insertOnce(partition, r);
            startedUpTo.put(partition, r.offset() + 1);
        }
    }

    /** One INSERT of one message; returns when it succeeded or failed after it started. */
    private void insertOnce(int partition, OutboxRecord r) throws OutboxDeliveryException {
        byte[] row;
        try {
            row = target.rows(List.of(r));
        } catch (RuntimeException e) {
            throw OutboxDeliveryException.fatal(target.name() + ": cannot encode message " + r.messageId() + ": "
                    + e.getMessage());
        }
        try {
            target.insert(row);
        } catch (IOException e) {
            if (InsertErrorKind.notSent(e)) {
                lowerMarker(partition, r.offset());
                throw new OutboxDeliveryException(target.name() + ": message " + r.messageId() + " did not reach "
                        + "ClickHouse, its INSERT did not start, retrying: " + e, e);
            }
            dropped.increment();
            LOG.warn("{}: the INSERT of message {} failed after it started and is not retried (at most once; "
                    + "counted in flow.sink.dropped): {}", target.name(), r.messageId(), e.getMessage());
        }
    }

    /**
     * Moves the started marker of {@code partition} back to {@code offset}, the first message whose INSERT did not
     * start: written ahead for the whole batch, it would otherwise make the partition's next owner (after a rebalance
     * or a restart during an outage) skip messages that never reached ClickHouse. Only while the marker is still the one
     * this deliverer wrote. Best effort: if the marker cannot be read or written, those messages are lost only if the
     * partition moves before a retry succeeds.
     */
    private void lowerMarker(int partition, long offset) {
        long mine = marked.getOrDefault(partition, -1L);
        if (partition < 0 || mine <= offset) {
            return;
        }
        try {
            // only the marker this deliverer wrote: another owner (this one evicted mid-batch) may have moved it on,
            // and moving it back under that owner would start its messages again
            OptionalLong now = markers.read(partition);
            if (now.isEmpty() || now.getAsLong() != mine) {
                return;
            }
            markers.write(partition, offset);
            marked.put(partition, offset);
        } catch (Exception e) {
            LOG.warn("{}: cannot move its started marker of partition {} back to {} after an INSERT that did not "
                    + "start: {}", target.name(), partition, offset, e.toString());
        }
    }

    @Override
    public void release(int partition) {
        startedUpTo.remove(partition);
        marked.remove(partition);
    }

    @Override
    public void close() {
        markers.close();
        target.close();
    }
}
