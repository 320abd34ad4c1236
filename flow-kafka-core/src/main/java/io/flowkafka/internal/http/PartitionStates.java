package io.flowkafka.internal.http;

import io.flowkafka.internal.state.KeyStates;
import io.flowkafka.internal.timers.KeyTimers;
import io.flowkafka.internal.timers.TimerStore;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.query.QueryResult;
import org.apache.kafka.streams.query.RangeQuery;
import org.apache.kafka.streams.query.StateQueryRequest;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.jspecify.annotations.Nullable;

/**
 * Reads the rows of a hash range, and a key's pending timers, in one partition of a computation's stores on this
 * instance's active task (IQv2 {@link RangeQuery}, below flow-kafka's write-back cache like {@link LocalStates}).
 * Keeps the bounds: a range read stops after {@code limit} keys, a timer search after {@link #MAX_TIMER_ROWS} rows.
 *
 * <p>Threading: stateless; any thread.
 */
final class PartitionStates {
    /** Timer rows a key's timer search reads at most. */
    static final long MAX_TIMER_ROWS = 100_000;

    private PartitionStates() {
    }

    /**
     * One key's rows of a range.
     *
     * @param encodedKey the key as stored
     * @param rows the value of each state found, by state name
     */
    record KeyRows(byte[] encodedKey, Map<String, byte[]> rows) {
    }

    /**
     * What a range read found.
     *
     * @param keys the keys found, in store order
     * @param nextHash the hash of the first key left out when the limit was reached, or null when the range was read
     *     to its end
     */
    record Range(List<KeyRows> keys, @Nullable Long nextHash) implements LocalStates.Read {
    }

    /**
     * Reads up to {@code limit} keys' rows of {@code states} in {@code range} of partition {@code partition} of
     * {@code store}.
     */
    static LocalStates.Read range(KafkaStreams streams, String store, int partition, HashRange range, int limit,
            Set<String> states) {
        RangeQuery<Bytes, byte[]> query = range.to() == null ? RangeQuery.withLowerBound(hashBytes(range.from()))
                : RangeQuery.withRange(hashBytes(range.from()), hashBytes(range.to()));
        StateQueryRequest<KeyValueIterator<Bytes, byte[]>> request = StateQueryRequest.inStore(store)
                .withQuery(query).withPartitions(Set.of(partition)).requireActive();
        QueryResult<KeyValueIterator<Bytes, byte[]>> result = streams.query(request).getPartitionResults()
                .get(partition);
        LocalStates.Unavailable unavailable = LocalStates.unavailable(store, partition, result);
        if (unavailable != null) {
            return unavailable;
        }
        Map<Bytes, KeyRows> keys = new LinkedHashMap<>();
        try (KeyValueIterator<Bytes, byte[]> it = result.getResult()) {
            while (it.hasNext()) {
                KeyValue<Bytes, byte[]> row = it.next();
                String name;
                byte[] encodedKey;
                try {
                    name = KeyStates.stateNameOf(row.key);
                    encodedKey = KeyStates.encodedKeyOf(row.key);
                } catch (RuntimeException notAStateRow) {
                    continue;
                }
                if (!states.contains(name) || encodedKey.length < 8 || row.value == null) {
                    continue; // another kind of row of the store (an external table's), or a tombstone
                }
                Bytes k = Bytes.wrap(encodedKey);
                KeyRows rows = keys.get(k);
                if (rows == null) {
                    if (keys.size() == limit) {
                        return new Range(List.copyOf(keys.values()), ByteBuffer.wrap(encodedKey).getLong());
                    }
                    rows = new KeyRows(encodedKey, new LinkedHashMap<>());
                    keys.put(k, rows);
                }
                rows.rows().put(name, row.value);
            }
        }
        return new Range(new ArrayList<>(keys.values()), null);
    }

    /** Finds the pending timers of {@code encodedKey} in partition {@code partition} of the computation's timers. */
    static KeyTimers.Found timers(KafkaStreams streams, String computation, int partition, byte[] encodedKey) {
        StateQueryRequest<KeyValueIterator<Bytes, byte[]>> request = StateQueryRequest
                .inStore(TimerStore.timersStoreName(computation))
                .withQuery(RangeQuery.<Bytes, byte[]>withNoBounds()).withPartitions(Set.of(partition)).requireActive();
        QueryResult<KeyValueIterator<Bytes, byte[]>> result = streams.query(request).getPartitionResults()
                .get(partition);
        if (result == null || result.isFailure()) {
            return new KeyTimers.Found(List.of(), 0, false);
        }
        try (KeyValueIterator<Bytes, byte[]> it = result.getResult()) {
            return KeyTimers.of(it, encodedKey, MAX_TIMER_ROWS);
        }
    }

    private static Bytes hashBytes(long hash) {
        return Bytes.wrap(ByteBuffer.allocate(8).putLong(hash).array());
    }
}
