package io.flowkafka.internal.http;

import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.query.FailureReason;
import org.apache.kafka.streams.query.KeyQuery;
import org.apache.kafka.streams.query.QueryResult;
import org.apache.kafka.streams.query.StateQueryRequest;
import org.jspecify.annotations.Nullable;

/**
 * Reads rows of one partition of a computation's store (one key's states, a key visitor's coverage) from this
 * instance's active task with Kafka Streams' interactive queries (IQv2 {@link KeyQuery}, one per row). Keeps the rule that a read never touches what the stream thread
 * owns: the query goes below flow-kafka's write-back cache ({@code WriteBackStore} leaves {@code query} to the store
 * it wraps), so it sees the rows the task flushed before its last commit (and any it evicted since), read from
 * RocksDB, which is safe from any thread.
 *
 * <p>Threading: stateless; any thread.
 */
final class LocalStates {
    private LocalStates() {
    }

    /** What a read found. */
    sealed interface Read permits Found, Unavailable, PartitionStates.Range {
    }

    /**
     * The stored value of each row (null: none), in the order asked.
     *
     * @param values the values by name
     */
    record Found(Map<String, byte @Nullable []> values) implements Read {
    }

    /**
     * This instance cannot answer for the partition.
     *
     * @param moved true when the partition is not (or no longer) active here: a rebalance moves it
     * @param reason a sentence for the caller
     */
    record Unavailable(boolean moved, String reason) implements Read {
    }

    /**
     * Reads the rows at {@code storeKeys} in partition {@code partition} of {@code store}.
     *
     * @param storeKeys the store key of each row, by a name for the answer
     */
    static Read read(KafkaStreams streams, String store, int partition, Map<String, Bytes> storeKeys) {
        Map<String, byte @Nullable []> out = new LinkedHashMap<>();
        for (Map.Entry<String, Bytes> e : storeKeys.entrySet()) {
            StateQueryRequest<byte[]> request = StateQueryRequest.inStore(store)
                    .withQuery(KeyQuery.<Bytes, byte[]>withKey(e.getValue()))
                    .withPartitions(Set.of(partition)).requireActive();
            QueryResult<byte[]> result = streams.query(request).getPartitionResults().get(partition);
            Unavailable unavailable = unavailable(store, partition, result);
            if (unavailable != null) {
                return unavailable;
            }
            out.put(e.getKey(), result.getResult());
        }
        return new Found(out);
    }

    /** Why a query's result for {@code partition} is no answer, or null when it is one. */
    static @Nullable Unavailable unavailable(String store, int partition, @Nullable QueryResult<?> result) {
        if (result == null) {
            return new Unavailable(true, "partition " + partition + " of store '" + store + "' is not active on "
                    + "this instance");
        }
        if (!result.isFailure()) {
            return null;
        }
        FailureReason why = result.getFailureReason();
        boolean moved = why == FailureReason.NOT_ACTIVE || why == FailureReason.NOT_PRESENT
                || why == FailureReason.NOT_UP_TO_BOUND;
        return new Unavailable(moved, moved ? "partition " + partition + " of store '" + store + "' is not "
                + "active on this instance (" + why + "): a rebalance is moving it; retry"
                : why == FailureReason.UNKNOWN_QUERY_TYPE ? "store '" + store + "' does not answer this query: "
                + "state queries need flow.state.stores=rocksdb (the default)"
                : "store '" + store + "' failed the query (" + why + "): " + result.getFailureMessage());
    }

    /** Whether every value read is absent. */
    static boolean allAbsent(Collection<byte @Nullable []> values) {
        return values.stream().allMatch(v -> v == null);
    }
}
