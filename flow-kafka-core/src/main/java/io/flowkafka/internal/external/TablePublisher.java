package io.flowkafka.internal.external;

import io.flowkafka.internal.state.KeyStates;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;

/**
 * Produces the committed writes of a call to the table topics of the rows they belong to: a manager's rows (state
 * rows under the manager's name) and the rows of a state another computation state-joins.
 *
 * <p>Rule kept: a row is published only by a call that returned normally, from the same buffer the state store
 * applies, and forwarded to the table's sink node by the task, so it commits in the task's Kafka transaction with
 * the call's state, outputs and consumed offsets (all or nothing). Record key = the encoded group-by key (hash
 * first, range-partitioned like internal topics), value = the row as stored (a manager's: Avro binary; a state's: its
 * writer schema's fingerprint, then Avro binary, see {@code StateRowCodec}), null = tombstone.
 *
 * <p>Threading: one per task attempt, used by its stream thread.
 */
public final class TablePublisher {
    private final Map<String, ExternalPlan.Published> published;
    private final KeyStates states;
    /** The published state names as the store key's suffix spells them. */
    private final Map<String, byte[]> names = new HashMap<>();

    /**
     * The publisher of a task.
     *
     * @param plan the computation's external plan
     * @param states the task's per-key states, whose call buffer holds the rows
     */
    public TablePublisher(ExternalPlan plan, KeyStates states) {
        this.published = plan.published();
        this.states = states;
        published.keySet().forEach(n -> names.put(n, n.getBytes(StandardCharsets.UTF_8)));
    }

    /**
     * A table record and the sink node that writes it.
     *
     * @param sinkNode the table topic's sink node
     * @param record key = encoded key, value = row or null
     */
    public record Row(String sinkNode, Record<byte[], byte[]> record) {
    }

    /**
     * The table records of the call's buffered writes, taken before the buffer is applied; empty when the
     * computation publishes nothing.
     *
     * @param timestampMs the records' timestamp
     * @return the records with their sink nodes
     */
    public List<Row> rows(long timestampMs) {
        if (published.isEmpty()) {
            return List.of();
        }
        List<Row> out = new ArrayList<>(2);
        states.forEachBuffered((storeKey, value) -> {
            String name = nameOf(storeKey.get());
            if (name != null) {
                out.add(new Row(published.get(name).sinkNode(),
                        new Record<>(KeyStates.encodedKeyOf(storeKey), value, timestampMs)));
            }
        });
        return out;
    }

    /** Forwards the records of {@link #rows} to their table topics. */
    public static void forward(List<Row> rows, ProcessorContext<byte[], byte[]> context) {
        for (Row r : rows) {
            context.forward(r.record(), r.sinkNode());
        }
    }

    private @org.jspecify.annotations.Nullable String nameOf(byte[] storeKey) {
        int n = storeKey.length;
        int len = ((storeKey[n - 2] & 0xff) << 8) | (storeKey[n - 1] & 0xff);
        for (Map.Entry<String, byte[]> e : names.entrySet()) {
            byte[] b = e.getValue();
            if (b.length == len && java.util.Arrays.equals(storeKey, n - 2 - len, n - 2, b, 0, len)) {
                return e.getKey();
            }
        }
        return null;
    }
}
