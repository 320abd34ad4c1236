package io.flowkafka.internal.timers;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.apache.kafka.common.utils.Bytes;
import org.junit.jupiter.api.Test;

/** Store order is firing order, bounds admit exactly what they claim, and keys never collide. */
class TimerKeysTest {
    private static final byte[] KEY = new byte[] {0, 0, 0, 0, 0, 0, 0, 1, 42};

    private static Bytes key(int stream, long trigger, byte[] key, byte[] id) {
        return Bytes.wrap(TimerKeys.timerKey(stream, trigger, key, id));
    }

    @Test
    void shouldSortTimestampsInSignedNumericOrder() {
        long[] ts = {Long.MIN_VALUE, Long.MIN_VALUE + 1, -1_000_000_000_000L, -1, 0, 1, 255, 256, 1L << 40, Long.MAX_VALUE};
        List<Bytes> keys = new ArrayList<>();
        for (long t : ts) {
            Bytes k = key(3, t, KEY, null);
            keys.add(k);
            assertThat(TimerKeys.firstTs(k.get())).isEqualTo(t);
            assertThat(TimerKeys.stream(k.get())).isEqualTo(3);
        }
        assertThat(keys).isSorted();
    }

    @Test
    void shouldSortByStreamThenTriggerThenKeyHash() {
        Bytes s0late = key(0, 100, new byte[] {9, 9, 9, 9, 9, 9, 9, 9}, null);
        Bytes s1early = key(1, -5, new byte[8], null);
        Bytes s1hashLow = key(1, 7, new byte[] {0, 0, 0, 0, 0, 0, 0, 1, 99, 99}, null);
        Bytes s1hashHigh = key(1, 7, new byte[] {(byte) 0x80, 0, 0, 0, 0, 0, 0, 0}, null);
        assertThat(List.of(s0late, s1early, s1hashLow, s1hashHigh)).isSorted();
    }

    @Test
    void shouldBoundStreamsAndWatermarksExactly() {
        Bytes below = key(2, 99, KEY, null);
        Bytes at = key(2, 100, KEY, null);
        Bytes bound = TimerKeys.dueBound(2, 100);
        assertThat(below.compareTo(bound)).isNegative();
        assertThat(at.compareTo(bound)).as("trigger == watermark is outside the due range").isPositive();
        assertThat(key(2, Long.MAX_VALUE, new byte[] {-1, -1, -1, -1, -1, -1, -1, -1, -1}, new byte[] {-1, -1})
                .compareTo(TimerKeys.streamEnd(2))).isNegative();
        assertThat(key(3, Long.MIN_VALUE, new byte[8], null).compareTo(TimerKeys.streamEnd(2))).isPositive();
        assertThat(TimerKeys.streamStart(2).compareTo(key(2, Long.MIN_VALUE, new byte[8], null))).isNegative();
    }

    @Test
    void shouldPutTheEventTimeFirstInHoldKeys() {
        byte[] timerKey = TimerKeys.timerKey(5, 1_000, KEY, new byte[] {7});
        Bytes early = TimerKeys.holdKey(-3, timerKey);
        Bytes late = TimerKeys.holdKey(2, TimerKeys.timerKey(5, -1_000, KEY, null));
        assertThat(TimerKeys.stream(early.get())).isEqualTo(5);
        assertThat(TimerKeys.firstTs(early.get())).isEqualTo(-3);
        assertThat(early.compareTo(late)).isNegative();
        assertThat(early.get()).hasSize(timerKey.length + 8);
    }

    /** Keys that are prefixes of each other, with and without message ids, never share a store key. */
    @Test
    void shouldNeverCollideWhateverTheKeyAndIdBytes() {
        Random random = new Random(1);
        Set<Bytes> seen = new HashSet<>();
        Set<String> pairs = new HashSet<>();
        for (int i = 0; i < 20_000; i++) {
            byte[] key = new byte[8 + random.nextInt(3)];
            byte[] id = new byte[1 + random.nextInt(3)];
            for (int j = 0; j < key.length; j++) {
                key[j] = (byte) random.nextInt(2);
            }
            for (int j = 0; j < id.length; j++) {
                id[j] = (byte) random.nextInt(2);
            }
            String pair = java.util.Arrays.toString(key) + java.util.Arrays.toString(id);
            if (pairs.add(pair)) {
                assertThat(seen.add(key(0, 1, key, id))).as("collision for %s", pair).isTrue();
            }
        }
        byte[] longKey = new byte[40_000];
        assertThat(key(0, 1, longKey, null).get()).hasSize(2 + 8 + 40_000 + 4);
        assertThat(key(0, 1, KEY, null).get()).hasSize(2 + 8 + KEY.length + 2);
    }
}
