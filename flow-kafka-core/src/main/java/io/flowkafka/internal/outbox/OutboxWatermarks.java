package io.flowkafka.internal.outbox;

import io.flowkafka.spi.OutboxDeliverer;
import java.nio.ByteBuffer;
import java.util.List;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.jspecify.annotations.Nullable;

/**
 * Carries a task's input system watermark through its async sinks' outboxes: a watermark record (no key, no value,
 * header {@value #HEADER}) written to each of the task's outbox partitions inside its transaction, when the watermark
 * advanced and at most once per interval (a second at least), from the watermark punctuation too, so an idle input
 * still reports.
 * {@link OutboxService} reads such a record as no message: it hands it to
 * {@link OutboxDeliverer#onSystemWatermark} once every message before it was delivered.
 *
 * <p>The header's value: the system watermark (8 bytes, big-endian nanoseconds) and the writing computation's
 * partition count (4 bytes), so a deliverer knows how many partitions its input's watermark is the minimum over.
 * One per task attempt. Not thread-safe.
 */
public final class OutboxWatermarks {
    /** Header of an outbox watermark record. */
    public static final String HEADER = OutboxDeliverer.WATERMARK_HEADER;
    /**
     * At most one write per this many ms, whatever the watermark interval: each watermark record costs the delivery
     * service a group commit, and table periods are far longer.
     */
    public static final long MIN_INTERVAL_MS = 1_000;

    /** A watermark read from an outbox record: the input system watermark (ns) and the partition count. */
    public record Mark(long systemWatermarkNs, int partitionCount) {
    }

    private final List<String> outboxNodes;
    private final byte[] partitionHeader;
    private final int partitionCount;
    private final long intervalMs;
    private long lastWritten = Long.MIN_VALUE;
    private long lastWriteMs = Long.MIN_VALUE;

    /**
     * @param outboxNodes the sink nodes of the task's outbox topics; may be empty (nothing is written)
     * @param partition the task's partition (= its outbox partition)
     * @param partitionCount the computation's partition count
     * @param intervalMs at most one write per this interval (at least {@value #MIN_INTERVAL_MS})
     */
    public OutboxWatermarks(List<String> outboxNodes, int partition, int partitionCount, long intervalMs) {
        this.outboxNodes = List.copyOf(outboxNodes);
        this.partitionHeader = OutboxService.partitionHeader(partition);
        this.partitionCount = partitionCount;
        this.intervalMs = Math.max(intervalMs, MIN_INTERVAL_MS);
    }

    /**
     * Writes the watermark to every outbox of the task if it is known (positive), advanced since the last write,
     * and the interval passed.
     *
     * @param nowMs the wall clock
     * @param systemWatermarkNs the task's input system watermark
     * @param context forwards the records (inside the task's transaction)
     * @return whether it wrote
     */
    public boolean maybeWrite(long nowMs, long systemWatermarkNs, ProcessorContext<byte[], byte[]> context) {
        if (outboxNodes.isEmpty() || systemWatermarkNs <= 0 || systemWatermarkNs <= lastWritten
                || (lastWriteMs != Long.MIN_VALUE && nowMs - lastWriteMs < intervalMs)) {
            return false;
        }
        byte[] value = ByteBuffer.allocate(12).putLong(systemWatermarkNs).putInt(partitionCount).array();
        for (String node : outboxNodes) {
            Headers h = new RecordHeaders();
            h.add(OutboxService.PARTITION_HEADER, partitionHeader);
            h.add(HEADER, value);
            context.forward(new Record<>(null, null, nowMs, h), node);
        }
        lastWritten = systemWatermarkNs;
        lastWriteMs = nowMs;
        return true;
    }

    /** Whether an outbox record is a watermark record, not a message. */
    public static boolean isWatermark(Headers headers) {
        return headers.lastHeader(HEADER) != null;
    }

    /**
     * The watermark an outbox record carries.
     *
     * @param headers the record's headers
     * @return the mark, or null for a message (or a malformed mark)
     */
    public static @Nullable Mark read(Headers headers) {
        Header h = headers.lastHeader(HEADER);
        if (h == null || h.value() == null || h.value().length != 12) {
            return null;
        }
        ByteBuffer b = ByteBuffer.wrap(h.value());
        return new Mark(b.getLong(), b.getInt());
    }
}
