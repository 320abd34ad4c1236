package io.flowkafka.internal.timers;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;

/**
 * Finds one key's pending timers among the rows of a timers store, for state queries. Keeps the bound: the store is
 * ordered by trigger time, not by key, so a key's timers are found by reading rows, at most {@code maxRows} of them;
 * the answer says whether it read them all.
 *
 * <p>Stateless and thread-safe.
 */
public final class KeyTimers {
    private KeyTimers() {
    }

    /**
     * What a scan found.
     *
     * @param timers the key's timers, in store order (by stream, then trigger)
     * @param rowsRead the rows read
     * @param complete whether every row of the store was read
     */
    public record Found(List<PendingTimer> timers, long rowsRead, boolean complete) {
    }

    /**
     * Reads rows from {@code rows} (a timers store's, in store order) until done or {@code maxRows} are read, and
     * returns the timers of {@code encodedKey}.
     */
    public static Found of(Iterator<KeyValue<Bytes, byte[]>> rows, byte[] encodedKey, long maxRows) {
        List<PendingTimer> out = new ArrayList<>();
        long read = 0;
        while (rows.hasNext()) {
            if (read == maxRows) {
                return new Found(out, read, false);
            }
            KeyValue<Bytes, byte[]> row = rows.next();
            read++;
            byte[] k = row.key.get();
            if (k.length <= TimerKeys.TIMER_PREFIX || (k[1] & 1) == 1 || row.value == null) {
                continue; // an end mark or another bookkeeping row (odd region)
            }
            int keyLength = keyLength(k);
            if (keyLength == encodedKey.length && TimerKeys.TIMER_PREFIX + keyLength <= k.length && Arrays.equals(k, TimerKeys.TIMER_PREFIX,
                    TimerKeys.TIMER_PREFIX + keyLength, encodedKey, 0, keyLength)) {
                out.add(TimerValueCodec.decode(TimerKeys.stream(k), row.value));
            }
        }
        return new Found(out, read, true);
    }

    /** The key length written at the end of a timer key (2 bytes {@code len << 1}, or 4 bytes {@code len << 1 | 1}). */
    private static int keyLength(byte[] k) {
        int last = k[k.length - 1] & 0xff;
        if ((last & 1) == 0) {
            return (((k[k.length - 2] & 0xff) << 8) | last) >>> 1;
        }
        return (((k[k.length - 4] & 0xff) << 24) | ((k[k.length - 3] & 0xff) << 16) | ((k[k.length - 2] & 0xff) << 8)
                | last) >>> 1;
    }
}
