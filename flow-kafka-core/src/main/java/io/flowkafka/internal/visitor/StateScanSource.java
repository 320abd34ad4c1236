package io.flowkafka.internal.visitor;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.jspecify.annotations.Nullable;

/**
 * Scans a computation's internal states (the {@code KeyStates} store, keys
 * {@code encodedKey | stateName | nameLength(2)}), optionally only keys having one of
 * {@code names}, or else keys having a state not among {@code excluded} (the rows of external state
 * managers, which live in the same store under the manager's name).
 */
final class StateScanSource implements ScanSource {
    private final KeyValueStore<Bytes, byte[]> store;
    private final @Nullable Set<Bytes> names;
    private final Set<Bytes> excluded = new HashSet<>();

    /**
     * @param names the state names to match; null or empty: every state not {@code excluded}
     * @param excluded state names that alone do not make a key match when {@code names} is null or empty
     */
    StateScanSource(KeyValueStore<Bytes, byte[]> store, @Nullable List<String> names, Set<String> excluded) {
        this.store = store;
        excluded.forEach(n -> this.excluded.add(Bytes.wrap(n.getBytes(StandardCharsets.UTF_8))));
        if (names == null || names.isEmpty()) {
            this.names = null;
        } else {
            Set<Bytes> s = new HashSet<>();
            names.forEach(n -> s.add(Bytes.wrap(n.getBytes(StandardCharsets.UTF_8))));
            this.names = s;
        }
    }

    /** Whether the state row {@code k} (of a key of {@code keyLen} bytes) makes its key match. */
    private boolean matches(byte[] k, int keyLen) {
        Bytes name = Bytes.wrap(Arrays.copyOfRange(k, keyLen, k.length - 2));
        return names == null ? !excluded.contains(name) : names.contains(name);
    }

    @Override
    public String name() {
        return "internal states";
    }

    @Override
    public Read read(byte[] from, byte @Nullable [] to, int maxRows) {
        List<byte[]> keys = new ArrayList<>();
        List<java.util.Map<Bytes, byte[]>> values = new ArrayList<>();
        java.util.Map<Bytes, byte[]> currentRows = new java.util.HashMap<>(4);
        byte[] current = null;
        boolean currentMatches = false;
        byte[] lastComplete = null;
        int rows = 0;
        boolean capped = false;
        try (KeyValueIterator<Bytes, byte[]> it = store.range(Bytes.wrap(from), to == null ? null : Bytes.wrap(to))) {
            while (it.hasNext()) {
                if (rows == maxRows) {
                    capped = true;
                    break;
                }
                KeyValue<Bytes, byte[]> kv = it.next();
                byte[] k = kv.key.get();
                if (to != null && Arrays.compareUnsigned(k, to) >= 0) {
                    break; // range() is inclusive of its upper bound
                }
                rows++;
                int nameLen = ((k[k.length - 2] & 0xff) << 8) | (k[k.length - 1] & 0xff);
                int keyLen = k.length - 2 - nameLen;
                if (keyLen < 8) {
                    throw new IllegalStateException("malformed state row of " + k.length + " bytes: its name length "
                            + nameLen + " leaves no room for an 8-byte key hash");
                }
                if (current == null || !Arrays.equals(current, 0, current.length, k, 0, keyLen)) {
                    if (current != null) {
                        if (currentMatches) {
                            keys.add(current);
                            values.add(currentRows);
                        }
                        lastComplete = current;
                    }
                    current = Arrays.copyOf(k, keyLen);
                    currentMatches = false;
                    currentRows = new java.util.HashMap<>(4);
                }
                currentRows.put(kv.key, kv.value);
                if (!currentMatches) {
                    currentMatches = names == null && excluded.isEmpty() || matches(k, keyLen);
                }
            }
        }
        if (current != null && !capped) {
            if (currentMatches) {
                keys.add(current);
                values.add(currentRows);
            }
            lastComplete = current;
        }
        return new Read(keys, rows, capped, lastComplete, values);
    }
}
