package io.flowkafka.internal.outbox;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Cuts the records of outbox partitions into batches deterministically, from the layout of the
 * log alone: a batch ends where the next offset is not a record (a transaction marker, or records
 * of an aborted transaction, which a read_committed consumer skips: the end of an epoch) or after
 * {@code maxRecords} records. Since a log does not change once written, a delivery that resumes at
 * a batch boundary cuts the same batches again.
 *
 * <p>The last buffered record of a partition ends a batch only when the consumer's position is
 * past {@code offset + 1}; at exactly {@code offset + 1} the next record may still belong to the
 * same transaction, so the batcher waits for the next poll. Not thread-safe.
 *
 * @param <R> the record type
 */
public final class OutboxBatcher<R> {
    /** How to read a record's offset. */
    public interface Offsets<R> {
        long offset(R record);
    }

    /** A cut batch: its records and the offset after it. */
    public record Cut<R>(int partition, List<R> records, long nextOffset) {
    }

    private final int maxRecords;
    private final Offsets<R> offsets;
    private final Map<Integer, List<R>> pending = new HashMap<>();

    public OutboxBatcher(int maxRecords, Offsets<R> offsets) {
        if (maxRecords < 1) {
            throw new IllegalArgumentException("maxRecords must be >= 1 but was " + maxRecords);
        }
        this.maxRecords = maxRecords;
        this.offsets = offsets;
    }

    /** Buffers a partition's records, in log order, as polled. */
    public void add(int partition, List<R> records) {
        if (!records.isEmpty()) {
            pending.computeIfAbsent(partition, p -> new ArrayList<>()).addAll(records);
        }
    }

    /** The number of records buffered for a partition. */
    public int buffered(int partition) {
        List<R> l = pending.get(partition);
        return l == null ? 0 : l.size();
    }

    /** Forgets a partition's buffer (revoked, or re-seeked). */
    public void clear(int partition) {
        pending.remove(partition);
    }

    /**
     * The next complete batch of a partition, without removing it, or null.
     *
     * @param position the consumer's position in the partition (the next offset it will fetch)
     */
    public Cut<R> peek(int partition, long position) {
        List<Cut<R>> cuts = peek(partition, position, 1);
        return cuts.isEmpty() ? null : cuts.get(0);
    }

    /**
     * The next complete batches of a partition, at most {@code maxCuts}, in log order, without removing them: the
     * same batches that {@link #peek(int, long)} returns one at a time as each is removed.
     *
     * @param position the consumer's position in the partition (the next offset it will fetch)
     * @return the batches, empty when none is complete
     */
    public List<Cut<R>> peek(int partition, long position, int maxCuts) {
        List<R> l = pending.get(partition);
        if (l == null || l.isEmpty()) {
            return List.of();
        }
        List<Cut<R>> cuts = new ArrayList<>(Math.min(maxCuts, 8));
        int start = 0;
        while (cuts.size() < maxCuts && start < l.size()) {
            Cut<R> cut = cutFrom(partition, l, start, position);
            if (cut == null) {
                break;
            }
            cuts.add(cut);
            start += cut.records().size();
        }
        return cuts;
    }

    /** The complete batch starting at {@code l[start]}, or null. */
    private Cut<R> cutFrom(int partition, List<R> l, int start, long position) {
        int n = Math.min(l.size() - start, maxRecords);
        for (int i = 0; i < n; i++) {
            int at = start + i;
            long offset = offsets.offset(l.get(at));
            if (at + 1 < l.size()) {
                long next = offsets.offset(l.get(at + 1));
                if (next > offset + 1) {
                    return new Cut<>(partition, List.copyOf(l.subList(start, at + 1)), next);
                }
                if (i + 1 == maxRecords) {
                    return new Cut<>(partition, List.copyOf(l.subList(start, at + 1)), offset + 1);
                }
            } else if (i + 1 == maxRecords) {
                return new Cut<>(partition, List.copyOf(l.subList(start, at + 1)), offset + 1);
            } else if (position > offset + 1) {
                return new Cut<>(partition, List.copyOf(l.subList(start, at + 1)), position);
            }
        }
        return null;
    }

    /** Removes a batch that {@link #peek} returned and that was delivered (several: the first one first). */
    public void remove(Cut<R> cut) {
        List<R> l = pending.get(cut.partition());
        if (l != null) {
            l.subList(0, Math.min(cut.records().size(), l.size())).clear();
        }
    }
}
