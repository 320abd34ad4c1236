package io.flowkafka.internal.visitor;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowkafka.internal.partition.RangePartitioner;
import io.flowkafka.internal.state.KeyStates;
import io.flowkafka.internal.status.StatusBoard;
import io.flowkafka.runtime.StatusError;
import io.flowkafka.spec.KeyVisitorSettings;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.processor.api.MockProcessorContext;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The key-visitor engine on in-memory stores, without Kafka Streams around it. */
class KeyVisitorTest {
    private static final long SECOND = 1_000_000_000L;
    private KeyValueStore<Bytes, byte[]> states;
    private KeyValueStore<Bytes, byte[]> coverage;
    private final StatusBoard status = new StatusBoard();
    private final List<String> visited = new ArrayList<>();
    private final KeyVisitor.Handler handler = (key, pass, ets, rows) -> visited.add(pass + ":" + name(key));

    @BeforeEach
    void open() {
        states = store("c.state");
        coverage = store("c.key_visitor_states");
    }

    private static KeyValueStore<Bytes, byte[]> store(String name) {
        KeyValueStore<Bytes, byte[]> s = Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore(name), Serdes.Bytes(),
                Serdes.ByteArray()).withLoggingDisabled().build();
        s.init(new MockProcessorContext<>().getStateStoreContext(), s);
        return s;
    }

    private static byte[] key(long hash, String name) {
        return ByteBuffer.allocate(8 + name.length()).putLong(hash).put(name.getBytes()).array();
    }

    private static String name(byte[] key) {
        return new String(key, 8, key.length - 8);
    }

    private static void put(KeyValueStore<Bytes, byte[]> store, long hash, String name, String... stateNames) {
        for (String s : stateNames) {
            store.put(KeyStates.storeKey(key(hash, name), s), new byte[] {1});
        }
    }

    private KeyVisitor visitor(int partition, int partitions, List<ScanSource> sources) {
        return new KeyVisitor("c", "v", partition, partitions, 4, sources, coverage, status);
    }

    private static KeyVisitorSettings settings(String period) {
        return KeyVisitorSettings.DEFAULTS.with(Map.of("period", period), "test");
    }

    private static long far() {
        return System.nanoTime() + Duration.ofMinutes(1).toNanos();
    }

    @Test
    void shouldReportAFailingReadRetryItAndGoOnWhenTheSourceRecovers() {
        // Diagnostics: "If reading the state during a scan fails, the worker doesn't crash: an error is reported to
        // /key_visitor/<stream>/background_fill, and the read is automatically retried."
        put(states, 1L << 60, "a", "s");
        boolean[] broken = {true};
        ScanSource flaky = new ScanSource() {
            final ScanSource real = KeyVisitor.internalStates(states, null);

            @Override
            public String name() {
                return "flaky";
            }

            @Override
            public Read read(byte[] from, byte @Nullable [] to, int maxRows) {
                if (broken[0]) {
                    throw new IllegalStateException("table //home/x is missing");
                }
                return real.read(from, to, maxRows);
            }
        };
        KeyVisitor v = visitor(0, 1, List.of(flaky));
        assertThat(v.step(0, settings("10s"), false, 1000, far(), handler)).isEqualTo(KeyVisitor.Step.IDLE);
        assertThat(v.step(20 * SECOND, settings("10s"), false, 1000, far(), handler)).isEqualTo(KeyVisitor.Step.IDLE);
        assertThat(status.errors()).extracting(StatusError::path).containsExactly("/key_visitor/v/background_fill");
        assertThat(status.errors().get(0).message()).contains("table //home/x is missing").contains("retried");
        assertThat(visited).isEmpty();
        broken[0] = false;
        v.step(21 * SECOND, settings("10s"), false, 1000, far(), handler);
        assertThat(status.errors()).isEmpty();
        assertThat(visited).containsExactly("0:a");
    }

    /** A visitor of 400 keys of random hashes in the internal states. */
    private KeyVisitor randomKeysVisitor(long seed) {
        Random r = new Random(seed);
        for (int i = 0; i < 400; i++) {
            put(states, r.nextLong(), "k" + i, "s");
        }
        return visitor(0, 1, List.of(KeyVisitor.internalStates(states, null)));
    }

    /** A handler noting each visit dated behind {@code watermark[0]}. */
    private static KeyVisitor.Handler behindWatermark(long[] watermark, List<String> behind) {
        return (key, pass, ets, rows) -> {
            if (ets < watermark[0]) {
                behind.add(name(key) + " at " + ets + " < " + watermark[0]);
            }
        };
    }

    @Test
    void shouldNeverVisitBehindTheWatermarkItReportedWhileCatchingUp() {
        // the visitor stream's watermark: no later visit may carry an EventTimestamp below it, also while buckets
        // catch up one by one (the scan fell behind its period and reads one bucket per step)
        KeyVisitor v = randomKeysVisitor(11);
        long[] watermark = {Long.MIN_VALUE};
        List<String> behind = new ArrayList<>();
        KeyVisitor.Handler check = behindWatermark(watermark, behind);
        long now = 0;
        v.step(now, settings("100s"), false, 1, far(), check); // the pass starts
        now += 90 * SECOND; // far behind its period: each bucket has all its keys to catch up on
        for (int step = 0; step < 60 && v.pass() < 1; step++) {
            v.step(now, settings("100s"), false, 30, far(), check);
            watermark[0] = Math.max(watermark[0], v.lastEventTimestamp());
            now += SECOND / 10;
        }

        assertThat(behind).as("visits behind the reported watermark").isEmpty();
    }

    @Test
    void shouldNeverVisitBehindItsWatermarkWhenThePeriodShrinksMidPass() {
        // a dynamic spec change of period mid-pass (the final-pass status suggests a shorter one) dates the rest of
        // the pass by the new period: it must not date visits behind the watermark the visitor already reported
        KeyVisitor v = randomKeysVisitor(5);
        long[] watermark = {Long.MIN_VALUE};
        List<String> behind = new ArrayList<>();
        KeyVisitor.Handler check = behindWatermark(watermark, behind);
        v.step(0, settings("1000s"), false, 10_000, far(), check); // the pass starts
        v.step(500 * SECOND, settings("1000s"), false, 10_000, far(), check); // half of it, on schedule
        watermark[0] = v.lastEventTimestamp();
        assertThat(watermark[0]).as("the reported watermark, half a pass in").isGreaterThan(400 * SECOND);
        for (long now = 501 * SECOND; v.pass() < 1 && now < 600 * SECOND; now += SECOND) {
            v.step(now, settings("10s"), false, 10_000, far(), check);
            assertThat(v.lastEventTimestamp()).as("the watermark never goes back").isGreaterThanOrEqualTo(watermark[0]);
            watermark[0] = v.lastEventTimestamp();
        }
        assertThat(v.pass()).as("the pass ended").isEqualTo(1);
        assertThat(behind).as("visits behind the reported watermark").isEmpty();
    }

    @Test
    void shouldMergeSeveralSourcesInKeyOrderAndVisitEachKeyOnceEvenWithCappedReads() {
        // external_names: "Table keys take part in the scan on an equal footing with state keys"
        KeyValueStore<Bytes, byte[]> other = store("other");
        Random r = new Random(7);
        Map<String, Long> hashes = new HashMap<>();
        for (int i = 0; i < 500; i++) {
            long h = r.nextLong();
            String n = "k" + i;
            hashes.put(n, h);
            if (i % 3 != 0) {
                put(states, h, n, "a", "b");
            }
            if (i % 3 != 1) {
                put(other, h, n, "x");
            }
        }
        KeyVisitor v = visitor(0, 1, List.of(KeyVisitor.internalStates(states, null), KeyVisitor.internalStates(other, null)));
        KeyVisitorSettings s = settings("10s").with(Map.of("max_scan_rows_per_iteration", 7), "test");
        for (long t = 0; t <= 10 * SECOND; t += SECOND / 10) {
            v.step(t, s, false, 50, far(), handler);
        }
        assertThat(visited).hasSize(500).doesNotHaveDuplicates().allMatch(x -> x.startsWith("0:"));
        assertThat(status.errors()).isEmpty();
    }

    @Test
    void shouldVisitOnlyTheKeysOfItsPartitionsHashRange() {
        Random r = new Random(11);
        List<String> mine = new ArrayList<>();
        for (int i = 0; i < 400; i++) {
            long h = r.nextLong();
            put(states, h, "k" + i, "s");
            if (RangePartitioner.partition(h, 4) == 2) {
                mine.add("0:k" + i);
            }
        }
        KeyVisitor v = visitor(2, 4, List.of(KeyVisitor.internalStates(states, null)));
        v.step(0, settings("1s"), false, 10_000, far(), handler);
        v.step(SECOND + 1, settings("1s"), false, 10_000, far(), handler);
        assertThat(visited).containsExactlyInAnyOrderElementsOf(mine);
    }

    @Test
    void shouldDoBoundedWorkPerStep() {
        // "Every punctuation does a bounded amount of work (rows and time) and leaves the rest for the next one"
        for (int i = 0; i < 1000; i++) {
            put(states, (long) i << 50, "k" + i, "s");
        }
        KeyVisitor v = visitor(0, 1, List.of(KeyVisitor.internalStates(states, null)));
        KeyVisitorSettings s = settings("1s").with(Map.of("max_scan_rows_per_iteration", 10), "test");
        assertThat(v.step(0, s, false, 100, far(), handler)).as("the pass starts").isEqualTo(KeyVisitor.Step.IDLE);
        assertThat(v.step(2 * SECOND, s, false, 100, far(), handler)).isEqualTo(KeyVisitor.Step.MORE);
        assertThat(visited).hasSizeBetween(90, 110);
        int steps = 1;
        while (v.step(2 * SECOND, s, false, 100, far(), handler) == KeyVisitor.Step.MORE && visited.size() < 1000) {
            steps++;
        }
        assertThat(visited).hasSize(1000).doesNotHaveDuplicates();
        assertThat(steps).isGreaterThanOrEqualTo(9);
    }

    @Test
    void shouldReplayTheSameVisitsAfterAnAbortedStepAndKeepThePassOnACrashedRotation() {
        // "Worker restart | Coverage is preserved; rotation is atomic, and a crash keeps the old pass." A step's
        // visits and coverage advance commit together; an aborted transaction rolls the stores back, and the
        // replayed step, deciding from the stores alone, makes the same visits.
        Random r = new Random(3);
        for (int i = 0; i < 200; i++) {
            put(states, r.nextLong(), "k" + i, "s");
        }
        KeyVisitor v = visitor(0, 1, List.of(KeyVisitor.internalStates(states, null)));
        v.step(0, settings("10s"), false, 10_000, far(), handler);
        v.step(4 * SECOND, settings("10s"), false, 10_000, far(), handler);
        Map<Bytes, byte[]> snapshot = snapshot(coverage);
        int before = visited.size();
        v.step(7 * SECOND, settings("10s"), false, 10_000, far(), handler);
        List<String> firstAttempt = new ArrayList<>(visited.subList(before, visited.size()));
        assertThat(firstAttempt).isNotEmpty();
        restore(coverage, snapshot); // the transaction aborted
        KeyVisitor restored = visitor(0, 1, List.of(KeyVisitor.internalStates(states, null))); // a new task
        visited.subList(before, visited.size()).clear();
        restored.step(7 * SECOND, settings("10s"), false, 10_000, far(), handler);
        assertThat(visited.subList(before, visited.size())).containsExactlyElementsOf(firstAttempt);

        // the step that ends pass 0 also rotates to pass 1, in one write: abort it and the old pass is kept
        Map<Bytes, byte[]> beforeRotation = snapshot(coverage);
        int beforeEnd = visited.size();
        restored.step(11 * SECOND, settings("10s"), false, 10_000, far(), handler);
        List<String> tail = new ArrayList<>(visited.subList(beforeEnd, visited.size()));
        assertThat(KeyVisitor.coverage(coverage, "v").getPass()).isEqualTo(1L);
        restore(coverage, beforeRotation);
        assertThat(KeyVisitor.coverage(coverage, "v").getPass()).as("a crash keeps the old pass").isZero();
        visited.subList(beforeEnd, visited.size()).clear();
        visitor(0, 1, List.of(KeyVisitor.internalStates(states, null)))
                .step(11 * SECOND, settings("10s"), false, 10_000, far(), handler);
        assertThat(visited.subList(beforeEnd, visited.size())).containsExactlyElementsOf(tail);
        assertThat(KeyVisitor.coverage(coverage, "v").getPass()).isEqualTo(1L);
        assertThat(visited).hasSize(200).doesNotHaveDuplicates().allMatch(x -> x.startsWith("0:"));
    }

    private static Map<Bytes, byte[]> snapshot(KeyValueStore<Bytes, byte[]> store) {
        Map<Bytes, byte[]> m = new HashMap<>();
        try (KeyValueIterator<Bytes, byte[]> it = store.all()) {
            while (it.hasNext()) {
                KeyValue<Bytes, byte[]> kv = it.next();
                m.put(kv.key, Arrays.copyOf(kv.value, kv.value.length));
            }
        }
        return m;
    }

    private static void restore(KeyValueStore<Bytes, byte[]> store, Map<Bytes, byte[]> snapshot) {
        List<Bytes> keys = new ArrayList<>();
        try (KeyValueIterator<Bytes, byte[]> it = store.all()) {
            it.forEachRemaining(kv -> keys.add(kv.key));
        }
        keys.forEach(store::delete);
        snapshot.forEach(store::put);
    }

    @Test
    void shouldEstimateTheRequiredVisitRateFromTheDensityOfScannedRanges() {
        // Scheduled visit rate: "estimated distinct key count divided by the period in seconds"
        Random r = new Random(5);
        for (int i = 0; i < 2000; i++) {
            put(states, r.nextLong(), "k" + i, "s");
        }
        KeyVisitor v = visitor(0, 1, List.of(KeyVisitor.internalStates(states, null)));
        assertThat(v.requiredRate(settings("100s"))).isNaN();
        for (long t = 0; t <= 50 * SECOND; t += SECOND / 2) {
            v.step(t, settings("100s"), false, 10_000, far(), handler);
        }
        // 2000 keys per 100 s = 20 visits/s, estimated from the half of the range scanned so far
        assertThat(v.requiredRate(settings("100s"))).isBetween(16.0, 24.0);
    }

    @Test
    void shouldSplitACatchUpIntoReadsOfBoundedHashWidth() {
        // "each punctuation is bounded in rows and time ... even over tombstone-heavy ranges": RocksDB skips a
        // read's tombstones inside one call, so no read may span more than 1/SLICES of a bucket
        Random r = new Random(9);
        for (int i = 0; i < 300; i++) {
            put(states, r.nextLong(), "k" + i, "s");
        }
        List<String> ranges = new ArrayList<>();
        ScanSource real = KeyVisitor.internalStates(states, null);
        ScanSource counting = new ScanSource() {
            @Override
            public String name() {
                return "counting";
            }

            @Override
            public Read read(byte[] from, byte @Nullable [] to, int maxRows) {
                ranges.add(ByteBuffer.wrap(Arrays.copyOf(from, 8)).getLong() + ".." + (to == null ? "end"
                        : ByteBuffer.wrap(Arrays.copyOf(to, 8)).getLong()));
                return real.read(from, to, maxRows);
            }
        };
        KeyVisitor v = visitor(0, 1, List.of(counting));
        v.step(0, settings("1s"), false, 100_000, far(), handler);
        v.step(10 * SECOND, settings("1s"), false, 100_000, far(), handler); // far behind: the whole pass at once
        assertThat(visited).hasSize(300).doesNotHaveDuplicates();
        assertThat(ranges).as("4 buckets of 16 slices each").hasSizeGreaterThanOrEqualTo(4 * KeyVisitor.SLICES);
    }
}
