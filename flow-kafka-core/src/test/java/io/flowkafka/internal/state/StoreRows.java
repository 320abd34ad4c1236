package io.flowkafka.internal.state;

import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.state.KeyValueIterator;

/** Keys and scan results of the store tests. */
public final class StoreRows {
    private StoreRows() {
    }

    /** A key of the given unsigned bytes. */
    public static Bytes key(int... b) {
        byte[] k = new byte[b.length];
        for (int i = 0; i < b.length; i++) {
            k[i] = (byte) b[i];
        }
        return Bytes.wrap(k);
    }

    /** Every row of a scan as {@code key=value}, the iterator closed. */
    public static List<String> drain(KeyValueIterator<Bytes, byte[]> it) {
        List<String> out = new ArrayList<>();
        try (it) {
            while (it.hasNext()) {
                KeyValue<Bytes, byte[]> kv = it.next();
                out.add(kv.key + "=" + Bytes.wrap(kv.value));
            }
        }
        return out;
    }
}
