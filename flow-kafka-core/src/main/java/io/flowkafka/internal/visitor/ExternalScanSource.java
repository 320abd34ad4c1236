package io.flowkafka.internal.visitor;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;
import org.jspecify.annotations.Nullable;

/**
 * Scans an external table a joiner reads, in the key order of the state scan: the table's store is keyed by the
 * encoded group-by key (8-byte hash first), one row per key, so a partition's hash range is one range read.
 *
 * <p>Rule kept: a table key is visited like a state key, even when the computation has no state for it (reference
 * 000, "Static table joiner": "a visit arrives even for a key that isn't yet in the computation's own state"). The
 * row itself is not handed over: the visit reads it through the joiner ({@code getExternalState}), read-only.
 */
final class ExternalScanSource implements ScanSource {
    private final String joiner;
    private final ReadOnlyKeyValueStore<Bytes, byte[]> table;

    /**
     * @param joiner the joiner's name, for diagnostics
     * @param table the table's store (encoded key to row)
     */
    ExternalScanSource(String joiner, ReadOnlyKeyValueStore<Bytes, byte[]> table) {
        this.joiner = joiner;
        this.table = table;
    }

    @Override
    public String name() {
        return "external table " + joiner;
    }

    @Override
    public Read read(byte[] from, byte @Nullable [] to, int maxRows) {
        List<byte[]> keys = new ArrayList<>();
        byte[] lastComplete = null;
        int rows = 0;
        boolean capped = false;
        try (KeyValueIterator<Bytes, byte[]> it = table.range(Bytes.wrap(from), to == null ? null : Bytes.wrap(to))) {
            while (it.hasNext()) {
                KeyValue<Bytes, byte[]> kv = it.next();
                byte[] k = kv.key.get();
                if (to != null && Arrays.compareUnsigned(k, to) >= 0) {
                    break; // range() is inclusive of its upper bound
                }
                if (kv.value == null) {
                    continue;
                }
                if (rows == maxRows) {
                    capped = true;
                    break;
                }
                rows++;
                keys.add(k);
                lastComplete = k;
            }
        }
        return new Read(keys, rows, capped, lastComplete, null);
    }
}
