package io.flowkafka.internal.timers;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.junit.jupiter.api.Test;

class KeyTimersTest {
    private static final byte[] ALICE = key(1, "alice");
    private static final byte[] BOB = key(1, "bob");

    @Test
    void shouldFindOnlyTheKeysTimersAcrossStreamsAndSkipBookkeepingRows() {
        TreeMap<Bytes, byte[]> store = new TreeMap<>();
        put(store, timer(0, 10, ALICE, "m1"), true);
        put(store, timer(0, 20, BOB, "m2"), true);
        put(store, timer(0, 30, ALICE, "m3"), true);
        put(store, timer(1, 5, ALICE, "m4"), false);
        store.put(TimerKeys.streamEnd(0), new byte[0]);
        store.put(TimerKeys.floorMark(0), TimerKeys.timerKey(timer(0, 10, ALICE, "m1"), true).get());

        KeyTimers.Found found = KeyTimers.of(rows(store), ALICE, 100);

        assertThat(found.complete()).isTrue();
        assertThat(found.timers()).extracting(PendingTimer::streamIndex, PendingTimer::triggerTs)
                .containsExactly(org.assertj.core.groups.Tuple.tuple(0, 10L), org.assertj.core.groups.Tuple.tuple(0, 30L),
                        org.assertj.core.groups.Tuple.tuple(1, 5L));
        assertThat(KeyTimers.of(rows(store), key(1, "carol"), 100).timers()).isEmpty();
    }

    @Test
    void shouldStopAfterTheRowBoundAndSaySo() {
        TreeMap<Bytes, byte[]> store = new TreeMap<>();
        for (int i = 0; i < 10; i++) {
            put(store, timer(0, i, i % 2 == 0 ? ALICE : BOB, "m" + i), true);
        }
        KeyTimers.Found found = KeyTimers.of(rows(store), ALICE, 4);
        assertThat(found.complete()).isFalse();
        assertThat(found.rowsRead()).isEqualTo(4);
        assertThat(found.timers()).extracting(PendingTimer::triggerTs).containsExactly(0L, 2L);
    }

    private static PendingTimer timer(int stream, long trigger, byte[] key, String id) {
        return new PendingTimer(stream, trigger, trigger - 1, 0, key, id.getBytes(StandardCharsets.UTF_8), List.of());
    }

    private static void put(TreeMap<Bytes, byte[]> store, PendingTimer t, boolean withMessageId) {
        store.put(TimerKeys.timerKey(t, withMessageId), TimerValueCodec.encode(t,
                ("s" + t.streamIndex()).getBytes(StandardCharsets.UTF_8)));
    }

    private static java.util.Iterator<KeyValue<Bytes, byte[]>> rows(TreeMap<Bytes, byte[]> store) {
        List<KeyValue<Bytes, byte[]>> out = new ArrayList<>();
        store.forEach((k, v) -> out.add(KeyValue.pair(k, v)));
        return out.iterator();
    }

    private static byte[] key(long hash, String user) {
        byte[] name = user.getBytes(StandardCharsets.UTF_8);
        byte[] k = new byte[8 + name.length];
        for (int i = 0; i < 8; i++) {
            k[i] = (byte) (hash >>> (56 - 8 * i));
        }
        System.arraycopy(name, 0, k, 8, name.length);
        return k;
    }
}
