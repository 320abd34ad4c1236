package io.flowkafka.internal.external;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import org.apache.kafka.common.utils.Bytes;
import org.jspecify.annotations.Nullable;

/**
 * The rows one task looked up in one external table, reused for up to {@code cache.ttl}: a bounded LRU.
 *
 * <p>Rule kept (the staleness bound): a row served from the cache was read from the table's store at most
 * {@code ttl} before, by the task's clock; a row of another version than the call's pinned one is never served.
 * Absent rows are cached too. The cache is a cache: dropping it changes only how often the store is read.
 *
 * <p>Threading: one per task, used by its stream thread.
 */
final class RowCache {
    private record Entry(@Nullable String version, byte @Nullable [] value, long readAtNanos) {
    }

    private final long ttlNanos;
    private final Map<Bytes, Entry> rows;

    RowCache(long ttlNanos, int maxEntries) {
        this.ttlNanos = ttlNanos;
        this.rows = new LinkedHashMap<>(16, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<Bytes, Entry> eldest) {
                return size() > maxEntries;
            }
        };
    }

    /** The row of {@code encodedKey} at {@code version}, from the cache if fresh, else read from {@code view}. */
    byte @Nullable [] get(TableView view, byte[] encodedKey, long nowNanos) {
        Bytes k = Bytes.wrap(encodedKey);
        Entry e = rows.get(k);
        if (e != null && Objects.equals(e.version, view.version()) && nowNanos - e.readAtNanos < ttlNanos) {
            return e.value == null ? null : Arrays.copyOf(e.value, e.value.length);
        }
        byte[] v = view.get(encodedKey);
        rows.put(k, new Entry(view.version(), v, nowNanos));
        return v;
    }

    /** {@return how many rows are cached} */
    int size() {
        return rows.size();
    }
}
