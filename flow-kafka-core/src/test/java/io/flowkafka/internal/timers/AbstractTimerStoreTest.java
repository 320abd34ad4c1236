package io.flowkafka.internal.timers;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flowkafka.internal.message.MessageIds;
import java.io.File;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The contract of {@link TimerStore}, run over each store backend (Kafka's
 * {@code AbstractKeyValueStoreTest} pattern). Rules quoted from the YTsaurus Flow timers page
 * (reference 003) are the ones under test.
 *
 * <p>Timer stream 0 ({@code "dedup"}) deduplicates, stream 1 ({@code "all"}) does not.
 */
abstract class AbstractTimerStoreTest {
    static final List<String> STREAMS = List.of("dedup", "all");
    static final boolean[] DEDUP = {true, false};
    static final int DEDUP_STREAM = 0;
    static final int ALL_STREAM = 1;

    @TempDir
    File stateDir;

    TimerTestStores stores;
    TimerStore timers;
    private long nextId;

    abstract TimerTestStores open(File dir);

    @BeforeEach
    void openStores() {
        stores = open(stateDir);
        timers = newTimerStore();
    }

    @AfterEach
    void closeStores() {
        stores.close();
    }

    TimerStore newTimerStore() {
        return new TimerStore(stores.timers, stores.holds, STREAMS, DEDUP);
    }

    /** A key like KeyCodec's: an 8-byte hash, then 4 bytes of the name. */
    static byte[] key(String name) {
        byte[] n = Arrays.copyOf(name.getBytes(StandardCharsets.UTF_8), 4);
        return ByteBuffer.allocate(12).putLong(name.hashCode() * 0x9E3779B97F4A7C15L).put(n).array();
    }

    PendingTimer timer(int stream, String key, long trigger, long event) {
        byte[] id = MessageIds.source(7, nextId++).toBytes();
        return new PendingTimer(stream, trigger, event, 1_000 + nextId, key(key), id, List.of(new byte[] {1, 2}));
    }

    void addAndCommit(PendingTimer... ts) {
        for (PendingTimer t : ts) {
            timers.add(t);
        }
        timers.commitCall();
    }

    /** Fires everything due below the watermark, a timer per committed call; returns what fired. */
    List<PendingTimer> fireAll(int stream, long watermark, int batch) {
        List<PendingTimer> fired = new ArrayList<>();
        for (List<PendingTimer> due = timers.due(stream, watermark, batch); !due.isEmpty();
                due = timers.due(stream, watermark, batch)) {
            for (PendingTimer t : due) {
                timers.delete(t);
                timers.commitCall();
                fired.add(t);
            }
        }
        return fired;
    }

    static List<Long> triggers(List<PendingTimer> ts) {
        return ts.stream().map(PendingTimer::triggerTs).toList();
    }

    /** The number of timers (or holds) in a store, end marks not counted. */
    static long rows(KeyValueStore<Bytes, byte[]> store) {
        long n = 0;
        try (KeyValueIterator<Bytes, byte[]> it = store.all()) {
            while (it.hasNext()) {
                if (!TimerKeys.isEndMark(it.next().key.get())) {
                    n++;
                }
            }
        }
        return n;
    }

    /** The smallest event timestamp by a full scan of the timers store (the brute-force truth). */
    long bruteMinEvent(int stream) {
        long min = Long.MAX_VALUE;
        try (KeyValueIterator<Bytes, byte[]> it = stores.timers.all()) {
            while (it.hasNext()) {
                KeyValue<Bytes, byte[]> kv = it.next();
                if (TimerKeys.stream(kv.key.get()) == stream && !TimerKeys.isEndMark(kv.key.get())) {
                    min = Math.min(min, TimerValueCodec.eventTs(kv.value));
                }
            }
        }
        return min;
    }

    // ---- deduplication ----

    /**
     * "deduplicate_equal_timestamps — merges timers in the same stream with the same key and
     * TriggerTimestamp, keeping the smallest EventTimestamp."
     */
    @Test
    void shouldKeepTheSmallerEventTimestampWhenDeduplicating() {
        PendingTimer first = timer(DEDUP_STREAM, "k", 100, 50);
        addAndCommit(first);
        addAndCommit(timer(DEDUP_STREAM, "k", 100, 60));
        assertThat(timers.due(DEDUP_STREAM, 101, 10)).as("a larger event timestamp is dropped").containsExactly(first);

        PendingTimer smaller = timer(DEDUP_STREAM, "k", 100, 40);
        addAndCommit(smaller);
        assertThat(timers.due(DEDUP_STREAM, 101, 10)).as("a smaller one replaces the stored timer").containsExactly(smaller);
        assertThat(timers.minPendingEventTimestamp()).isEqualTo(40);
        assertThat(rows(stores.timers)).isOne();
        assertThat(rows(stores.holds)).as("the replaced timer's hold is gone").isOne();

        addAndCommit(timer(DEDUP_STREAM, "k", 100, 40));
        assertThat(timers.due(DEDUP_STREAM, 101, 10)).as("the first one stays on a tie").containsExactly(smaller);
    }

    @Test
    void shouldDeduplicateWithinOneCall() {
        PendingTimer keep = timer(DEDUP_STREAM, "k", 100, 30);
        addAndCommit(timer(DEDUP_STREAM, "k", 100, 90), keep, timer(DEDUP_STREAM, "k", 100, 30),
                timer(DEDUP_STREAM, "k", 100, 70));
        assertThat(timers.due(DEDUP_STREAM, 101, 10)).containsExactly(keep);
        assertThat(rows(stores.holds)).isOne();
        assertThat(timers.minPendingEventTimestamp()).isEqualTo(30);
    }

    @Test
    void shouldDeduplicatePerTimerStreamAndKeyOnly() {
        PendingTimer a = timer(DEDUP_STREAM, "a", 100, 5);
        PendingTimer b = timer(DEDUP_STREAM, "b", 100, 6);
        PendingTimer a101 = timer(DEDUP_STREAM, "a", 101, 7);
        PendingTimer otherStream = timer(ALL_STREAM, "a", 100, 8);
        addAndCommit(a, b, a101, otherStream);
        assertThat(timers.due(DEDUP_STREAM, 200, 10)).containsExactlyInAnyOrder(a, b, a101);
        assertThat(timers.due(ALL_STREAM, 200, 10)).containsExactly(otherStream);
    }

    @Test
    void shouldFireEachTimerOnceAfterDeduplicationIsSwitched() {
        // "Changing deduplicate_equal_timestamps of a stream with pending timers is allowed": timers stored under
        // the other setting fire once and are deleted like the others, their holds with them
        PendingTimer stored = timer(ALL_STREAM, "k", 100, 50);
        PendingTimer storedDedup = timer(DEDUP_STREAM, "j", 100, 40);
        addAndCommit(stored, storedDedup);
        timers = new TimerStore(stores.timers, stores.holds, STREAMS, new boolean[] {false, true}); // a restart

        List<PendingTimer> fired = new ArrayList<>();
        for (int step = 0; step < 3; step++) { // a timer that is not deleted is handed out again at every step
            for (int stream : new int[] {ALL_STREAM, DEDUP_STREAM}) {
                for (PendingTimer t : timers.due(stream, 101, 10)) {
                    timers.delete(t);
                    timers.commitCall();
                    fired.add(t);
                }
            }
        }

        assertThat(fired).containsExactly(stored, storedDedup);

        assertThat(rows(stores.timers)).as("both deleted").isZero();
        assertThat(timers.watermarkHold()).as("and their holds").isEqualTo(Long.MAX_VALUE);
    }

    @Test
    void shouldKeepEqualTimersWhenDeduplicationIsOff() {
        PendingTimer first = timer(ALL_STREAM, "k", 100, 50);
        PendingTimer second = timer(ALL_STREAM, "k", 100, 60);
        PendingTimer third = timer(ALL_STREAM, "k", 100, 40);
        addAndCommit(first, second);
        addAndCommit(third);
        assertThat(timers.due(ALL_STREAM, 101, 10)).containsExactly(first, second, third);
        assertThat(rows(stores.holds)).isEqualTo(3);
        assertThat(timers.minPendingEventTimestamp()).isEqualTo(40);
    }

    // ---- order and the watermark ----

    /** "Within one timer stream, timers for the same key are processed in TriggerTimestamp order." */
    @Test
    void shouldFireTimersOfAKeyInTriggerOrder() {
        Random random = new Random(42);
        List<PendingTimer> added = new ArrayList<>();
        for (int i = 0; i < 500; i++) {
            long trigger = random.nextInt(2_000) - 1_000; // negative timestamps sort before positive ones
            added.add(timer(i % 2, "key" + random.nextInt(13), trigger, trigger - random.nextInt(100)));
        }
        for (PendingTimer t : added) {
            addAndCommit(t);
        }
        for (int stream = 0; stream < 2; stream++) {
            List<PendingTimer> fired = fireAll(stream, Long.MAX_VALUE, 7);
            Map<String, Long> lastTrigger = new HashMap<>();
            for (PendingTimer t : fired) {
                String k = Arrays.toString(t.encodedKey());
                Long last = lastTrigger.put(k, t.triggerTs());
                assertThat(last == null || last < t.triggerTs() || (last == t.triggerTs() && stream == ALL_STREAM))
                        .as("key %s fired %s after %s", k, t.triggerTs(), last).isTrue();
            }
            assertThat(triggers(fired)).as("the whole stream fires in trigger order").isSorted();
            int s = stream;
            long expected = added.stream().filter(t -> t.streamIndex() == s)
                    .map(t -> s == ALL_STREAM ? HexFormat.of().formatHex(t.messageId()) : t.triggerTs() + "/" + Arrays.toString(t.encodedKey()))
                    .distinct().count();
            assertThat(fired).hasSize((int) expected);
        }
        assertThat(rows(stores.timers)).isZero();
        assertThat(rows(stores.holds)).isZero();
        assertThat(timers.minPendingEventTimestamp()).isEqualTo(Long.MAX_VALUE);
    }

    /** "When the EventWatermark ... exceeds TriggerTimestamp, the timer is delivered." */
    @Test
    void shouldFireOnlyWhenTheWatermarkExceedsTheTrigger() {
        PendingTimer at100 = timer(DEDUP_STREAM, "k", 100, 1);
        PendingTimer at99 = timer(DEDUP_STREAM, "j", 99, 1);
        addAndCommit(at100, at99);
        assertThat(timers.due(DEDUP_STREAM, 99, 10)).isEmpty();
        assertThat(timers.due(DEDUP_STREAM, 100, 10)).as("trigger == watermark does not fire").containsExactly(at99);
        assertThat(timers.due(DEDUP_STREAM, 101, 10)).containsExactly(at99, at100);
        assertThat(timers.due(DEDUP_STREAM, Long.MIN_VALUE, 10)).isEmpty();
    }

    @Test
    void shouldFireEveryTimerWhenTheWatermarkIsInfinite() {
        PendingTimer max = timer(DEDUP_STREAM, "k", Long.MAX_VALUE, 1);
        PendingTimer min = timer(DEDUP_STREAM, "k", Long.MIN_VALUE, 1);
        addAndCommit(max, min);
        assertThat(timers.due(DEDUP_STREAM, Long.MAX_VALUE, 10)).containsExactly(min, max);
        assertThat(timers.due(DEDUP_STREAM, Long.MAX_VALUE - 1, 10)).containsExactly(min);
    }

    // ---- bounded steps ----

    @Test
    void shouldFireALargeBacklogInBoundedBatchesThatResume() {
        for (int i = 0; i < 2_500; i++) {
            timers.add(timer(DEDUP_STREAM, "k" + (i % 50), i, i));
        }
        timers.commitCall();

        List<PendingTimer> first = timers.due(DEDUP_STREAM, 10_000, 1_000);
        assertThat(first).hasSize(1_000);
        assertThat(triggers(first)).isSorted().startsWith(0L, 1L).endsWith(999L);
        assertThat(timers.due(DEDUP_STREAM, 10_000, 1_000)).as("nothing deleted: the same batch again").isEqualTo(first);

        for (PendingTimer t : first.subList(0, 600)) {
            timers.delete(t);
            timers.commitCall();
        }
        List<PendingTimer> second = timers.due(DEDUP_STREAM, 10_000, 1_000);
        assertThat(triggers(second)).as("resumes at the first timer not fired").startsWith(600L).endsWith(1_599L).isSorted();

        List<PendingTimer> rest = fireAll(DEDUP_STREAM, 10_000, 1_000);
        assertThat(rest).hasSize(1_900);
        assertThat(triggers(rest)).isSorted().startsWith(600L).endsWith(2_499L);
        assertThat(timers.hasPending(DEDUP_STREAM)).isFalse();
    }

    @Test
    void shouldSkipTimersWhoseDeletionIsBuffered() {
        PendingTimer a = timer(DEDUP_STREAM, "a", 1, 1);
        PendingTimer b = timer(DEDUP_STREAM, "b", 2, 1);
        addAndCommit(a, b);
        timers.delete(a);
        assertThat(timers.due(DEDUP_STREAM, 10, 10)).containsExactly(b);
        timers.abortCall();
        assertThat(timers.due(DEDUP_STREAM, 10, 10)).as("the aborted deletion left a pending").containsExactly(a, b);
    }

    @Test
    void shouldFireATimerAddedBelowTheResumePositionInTheNextBatch() {
        for (int i = 10; i < 20; i++) {
            timers.add(timer(DEDUP_STREAM, "k", i, i));
        }
        timers.commitCall();
        List<PendingTimer> batch = timers.due(DEDUP_STREAM, 100, 3);
        for (PendingTimer t : batch) {
            timers.delete(t);
            timers.commitCall();
        }
        assertThat(timers.due(DEDUP_STREAM, 100, 1)).extracting(PendingTimer::triggerTs).containsExactly(13L);

        PendingTimer late = timer(DEDUP_STREAM, "k", 5, 5);
        addAndCommit(late);
        assertThat(timers.due(DEDUP_STREAM, 100, 2)).as("a timer added in the past fires first")
                .extracting(PendingTimer::triggerTs).containsExactly(5L, 13L);
    }

    @Test
    void shouldTellWhenATimerOfTheBatchWasOvertaken() {
        PendingTimer k10 = timer(DEDUP_STREAM, "k", 10, 10);
        PendingTimer k20 = timer(DEDUP_STREAM, "k", 20, 20);
        addAndCommit(k10, k20);
        List<PendingTimer> batch = timers.due(DEDUP_STREAM, 100, 10);
        assertThat(batch).containsExactly(k10, k20);

        timers.delete(k10);
        timers.add(timer(DEDUP_STREAM, "k", 30, 30)); // onTimer sets a later timer: order unharmed
        timers.commitCall();
        assertThat(timers.overtaken(k20)).isFalse();

        addAndCommit(timer(DEDUP_STREAM, "k", 15, 15)); // an earlier one: k20 must wait
        assertThat(timers.overtaken(k20)).isTrue();
        assertThat(timers.due(DEDUP_STREAM, 100, 10)).extracting(PendingTimer::triggerTs).containsExactly(15L, 20L, 30L);
        assertThat(timers.overtaken(k20)).as("a fresh batch is in order").isFalse();
    }

    // ---- call atomicity ----

    @Test
    void shouldLeaveNothingWhenTheCallAborts() {
        timers.add(timer(DEDUP_STREAM, "k", 10, 1));
        timers.add(timer(ALL_STREAM, "k", 10, 1));
        assertThat(timers.hasBufferedWrites()).isTrue();
        timers.abortCall();
        timers.commitCall();
        assertThat(rows(stores.timers)).isZero();
        assertThat(rows(stores.holds)).isZero();
        assertThat(timers.hasPending()).isFalse();
        assertThat(timers.minPendingEventTimestamp()).isEqualTo(Long.MAX_VALUE);

        PendingTimer kept = timer(DEDUP_STREAM, "k", 10, 1);
        addAndCommit(kept);
        timers.delete(kept);
        timers.add(timer(DEDUP_STREAM, "j", 11, 0));
        timers.abortCall();
        assertThat(timers.due(DEDUP_STREAM, 100, 10)).containsExactly(kept);
        assertThat(timers.minPendingEventTimestamp()).isEqualTo(1);
    }

    /** onTimer registers its own key and trigger again: the fired timer goes, the new one stays. */
    @Test
    void shouldKeepATimerAddedAgainByTheCallThatDeletesIt() {
        PendingTimer old = timer(DEDUP_STREAM, "k", 10, 1);
        addAndCommit(old);
        timers.delete(old);
        PendingTimer again = timer(DEDUP_STREAM, "k", 10, 5);
        timers.add(again);
        timers.commitCall();
        assertThat(timers.due(DEDUP_STREAM, 100, 10)).as("no dedup against the deleted timer").containsExactly(again);
        assertThat(timers.minPendingEventTimestamp()).isEqualTo(5);
        assertThat(rows(stores.holds)).isOne();

        PendingTimer third = timer(DEDUP_STREAM, "k", 10, 7);
        timers.add(third); // added before the runtime buffers the fired timer's deletion
        timers.delete(again);
        timers.commitCall();
        assertThat(timers.due(DEDUP_STREAM, 100, 10)).as("the order within the call does not matter").containsExactly(third);
        assertThat(timers.minPendingEventTimestamp()).isEqualTo(7);
        assertThat(rows(stores.holds)).isOne();
    }

    @Test
    void shouldDeleteTheStoredHoldEvenFromAStaleCopy() {
        PendingTimer stale = timer(DEDUP_STREAM, "k", 10, 50);
        addAndCommit(stale);
        assertThat(timers.due(DEDUP_STREAM, 100, 10)).containsExactly(stale);
        addAndCommit(timer(DEDUP_STREAM, "k", 10, 20)); // replaces it after it was handed out
        timers.delete(stale);
        timers.commitCall();
        assertThat(rows(stores.timers)).isZero();
        assertThat(rows(stores.holds)).as("no dangling hold stops the watermark").isZero();
        assertThat(timers.minPendingEventTimestamp()).isEqualTo(Long.MAX_VALUE);
    }

    // ---- the watermark hold ----

    @Test
    void shouldTrackTheSmallestPendingEventTimestamp() {
        assertThat(timers.minPendingEventTimestamp()).isEqualTo(Long.MAX_VALUE);
        PendingTimer a = timer(DEDUP_STREAM, "a", 100, 30);
        PendingTimer b = timer(DEDUP_STREAM, "b", 50, 40);
        PendingTimer c = timer(ALL_STREAM, "c", 10, 35);
        addAndCommit(a, b, c);
        assertThat(timers.minPendingEventTimestamp()).isEqualTo(30);
        assertThat(timers.minPendingEventTimestamp(DEDUP_STREAM)).isEqualTo(30);
        assertThat(timers.minPendingEventTimestamp(ALL_STREAM)).isEqualTo(35);

        timers.delete(b); // not the minimum
        timers.commitCall();
        assertThat(timers.minPendingEventTimestamp()).isEqualTo(30);

        timers.delete(a); // the minimum: one seek finds the next
        timers.commitCall();
        assertThat(timers.minPendingEventTimestamp()).isEqualTo(35);
        assertThat(timers.minPendingEventTimestamp(DEDUP_STREAM)).isEqualTo(Long.MAX_VALUE);
        assertThat(timers.hasPending(DEDUP_STREAM)).isFalse();
        assertThat(timers.hasPending(ALL_STREAM)).isTrue();

        PendingTimer d = timer(DEDUP_STREAM, "d", 70, 60);
        addAndCommit(d);
        addAndCommit(timer(DEDUP_STREAM, "d", 70, 12)); // replace-by-dedup lowers the hold
        assertThat(timers.minPendingEventTimestamp()).isEqualTo(12);
        assertThat(timers.minPendingEventTimestamp(DEDUP_STREAM)).isEqualTo(12);
        assertThat(timers.minPendingTriggerTimestamp(DEDUP_STREAM)).isEqualTo(70);
        assertThat(timers.minPendingTriggerTimestamp(ALL_STREAM)).isEqualTo(10);

        timers.delete(c);
        timers.delete(d);
        timers.commitCall();
        assertThat(timers.minPendingEventTimestamp()).isEqualTo(Long.MAX_VALUE);
        assertThat(timers.hasPending()).isFalse();
        assertThat(timers.minPendingTriggerTimestamp(DEDUP_STREAM)).isEqualTo(Long.MAX_VALUE);
    }

    /**
     * Pending timestamps far apart, of both signs: the next smallest hold and trigger are found
     * whatever the gap (the in-memory store looks for them in windows of doubling width).
     */
    @Test
    @org.junit.jupiter.api.Timeout(value = 60, threadMode = org.junit.jupiter.api.Timeout.ThreadMode.SEPARATE_THREAD)
    void shouldFindTheNextMinimumAcrossWideGaps() {
        fireInOrder(Long.MIN_VALUE + 1, -4_000_000_000_000_000_000L, -1, 0, 1, 999_999_999, 1_000_000_000,
                3_000_000_007L, 86_400_000_000_000L, 1_767_225_600_000_000_000L, Long.MAX_VALUE - 2);
        // the last search for what follows starts at or below 0 and finds nothing up to the end
        fireInOrder(-4_000_000_000_000_000_000L, -7);
        fireInOrder(Long.MIN_VALUE, 0);
        fireInOrder(1_000, 1_767_225_600_000_000_000L);
    }

    /**
     * A computation whose output watermark nobody reads keeps no holds index: the timers fire as
     * with it, {@code hasPending} answers from the timers store, and the hold is conservative
     * (minus infinity while anything is pending), never above a pending timer.
     */
    @Test
    void shouldFireAndTellPendingTimersWithoutAHoldsIndex() {
        timers = new TimerStore(stores.timers, null, STREAMS, DEDUP);
        assertThat(timers.tracksHolds()).isFalse();
        assertThat(timers.hasPending()).isFalse();
        assertThat(timers.watermarkHold()).isEqualTo(Long.MAX_VALUE);
        addAndCommit(timer(DEDUP_STREAM, "a", 100, 30), timer(DEDUP_STREAM, "b", 50, 40),
                timer(ALL_STREAM, "c", 10, 35));
        addAndCommit(timer(DEDUP_STREAM, "a", 100, 20)); // dedup still keeps the smaller event timestamp
        assertThat(timers.hasPending(DEDUP_STREAM)).isTrue();
        assertThat(timers.hasPending(ALL_STREAM)).isTrue();
        assertThat(timers.watermarkHold()).isEqualTo(Long.MIN_VALUE);
        assertThatThrownBy(() -> timers.minPendingEventTimestamp())
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("keep no watermark hold");

        List<PendingTimer> fired = fireAll(DEDUP_STREAM, 101, 1);
        assertThat(triggers(fired)).containsExactly(50L, 100L);
        assertThat(fired.get(1).eventTs()).isEqualTo(20);
        assertThat(timers.hasPending(DEDUP_STREAM)).isFalse();
        assertThat(timers.hasPending()).isTrue();
        assertThat(triggers(fireAll(ALL_STREAM, 11, 5))).containsExactly(10L);
        assertThat(timers.hasPending()).isFalse();
        assertThat(timers.watermarkHold()).isEqualTo(Long.MAX_VALUE);
        assertThat(rows(stores.holds)).isZero();
        assertThat(rows(stores.timers)).isZero();
    }

    /**
     * A computation that gains a reader of its output (a new pipeline version) gets a holds store
     * while timers are pending: build steps make the index from the timers, and until it is complete
     * the hold keeps the watermark below every pending timer.
     */
    @Test
    void shouldBuildAMissingHoldsIndexFromThePendingTimers() {
        timers = new TimerStore(stores.timers, null, STREAMS, DEDUP); // the version without readers
        addAndCommit(timer(DEDUP_STREAM, "a", 100, 30), timer(DEDUP_STREAM, "b", 50, 40),
                timer(ALL_STREAM, "c", 10, 35), timer(ALL_STREAM, "d", 10, 25));
        assertThat(rows(stores.holds)).isZero();

        timers = newTimerStore(); // the new version, with the holds store (empty)
        assertThat(timers.tracksHolds()).isTrue();
        assertThat(timers.minPendingEventTimestamp()).isEqualTo(Long.MIN_VALUE);
        assertThat(timers.watermarkHold()).isEqualTo(Long.MIN_VALUE);
        assertThat(timers.hasPending(DEDUP_STREAM)).isTrue();

        addAndCommit(timer(DEDUP_STREAM, "e", 200, 33)); // a committing call builds nothing
        assertThat(rows(stores.holds)).isZero();
        assertThat(timers.watermarkHold()).isEqualTo(Long.MIN_VALUE);
        assertThat(timers.buildHoldsStep(2, Long.MAX_VALUE)).isTrue();
        assertThat(rows(stores.holds)).isEqualTo(2);
        assertThat(timers.watermarkHold()).isEqualTo(Long.MIN_VALUE);
        while (timers.buildHoldsStep(2, Long.MAX_VALUE)) {
            assertThat(timers.watermarkHold()).isEqualTo(Long.MIN_VALUE);
        }
        assertThat(rows(stores.holds)).isEqualTo(5);
        assertThat(timers.minPendingEventTimestamp(DEDUP_STREAM)).isEqualTo(30).isEqualTo(bruteMinEvent(DEDUP_STREAM));
        assertThat(timers.minPendingEventTimestamp(ALL_STREAM)).isEqualTo(25).isEqualTo(bruteMinEvent(ALL_STREAM));
        assertThat(triggers(fireAll(ALL_STREAM, 11, 1))).containsExactly(10L, 10L);
        assertThat(timers.minPendingEventTimestamp(ALL_STREAM)).isEqualTo(Long.MAX_VALUE);
        assertThat(triggers(fireAll(DEDUP_STREAM, 101, 1))).containsExactly(50L, 100L);
        assertThat(timers.minPendingEventTimestamp()).isEqualTo(33);

        timers = newTimerStore(); // built once: a restart finds the index complete
        assertThat(timers.minPendingEventTimestamp()).isEqualTo(33);
        assertThat(rows(stores.holds)).isEqualTo(1);
    }

    /**
     * A computation that gains a reader of its output gets an empty holds store while many timers are
     * pending: the index is built in bounded steps ({@link TimerStore#buildHoldsStep}), never by a committing
     * call, from a cursor kept in the holds store, so a new object resumes there. Until a stream's index is
     * complete its hold stays at the minimum; timers fired, added and replaced meanwhile, below or above the
     * cursor, keep the index consistent, and the result is the index a full build gives.
     */
    @Test
    void shouldBuildAMissingHoldsIndexInBoundedStepsThatResume() {
        timers = new TimerStore(stores.timers, null, STREAMS, DEDUP); // the version without readers
        Random random = new Random(99);
        for (int i = 0; i < 3_000; i++) {
            long trigger = random.nextInt(10_000);
            timers.add(timer(i % 2, "k" + i, trigger, trigger - random.nextInt(500)));
            if (i % 100 == 99) {
                timers.commitCall();
            }
        }
        assertThat(rows(stores.holds)).isZero();

        CountingStore holds = new CountingStore(stores.holds);
        timers = new TimerStore(stores.timers, holds, STREAMS, DEDUP); // the new version, with an empty holds store
        addAndCommit(timer(DEDUP_STREAM, "new", 5_000, 4_000));
        assertThat(holds.rowPuts).as("a committing call builds no index").isZero();
        assertThat(timers.buildingHolds()).isTrue();
        assertThat(timers.watermarkHold()).isEqualTo(Long.MIN_VALUE);

        int budget = 250;
        long toBuild = rows(stores.timers);
        long builtRows = 0;
        long watermark = 0;
        int steps = 0;
        boolean more = true;
        while (more) {
            assertThat(timers.watermarkHold()).as("hold before step %d", steps).isEqualTo(Long.MIN_VALUE);
            long before = holds.rowPuts;
            // the first step's deadline has passed already: it still makes progress, one row
            more = timers.buildHoldsStep(budget, steps == 0 ? System.nanoTime() : Long.MAX_VALUE);
            long written = holds.rowPuts - before;
            assertThat(written).as("holds written by step %d", steps).isLessThanOrEqualTo(steps == 0 ? 1 : budget);
            builtRows += written;
            steps++;
            for (int s = 0; s < 2; s++) {
                assertThat(timers.minPendingEventTimestamp(s)).as("hold of stream %d after step %d", s, steps)
                        .isIn(Long.MIN_VALUE, bruteMinEvent(s));
            }
            // meanwhile timers fire (their holds go where written) and calls add timers below and above the cursor
            watermark += 300;
            for (int s = 0; s < 2; s++) {
                for (PendingTimer t : timers.due(s, watermark, 40)) {
                    timers.delete(t);
                    if (random.nextInt(3) == 0) {
                        long trigger = random.nextInt(12_000);
                        timers.add(timer(s, "k" + random.nextInt(3_000), trigger, trigger - random.nextInt(500)));
                        toBuild++;
                    }
                    timers.commitCall();
                }
            }
            if (steps == 4) {
                timers = new TimerStore(stores.timers, holds, STREAMS, DEDUP); // a restart: resumes at the cursor
            }
        }
        assertThat(timers.buildingHolds()).isFalse();
        assertThat(builtRows).as("no timer's hold built twice, none after the restart").isLessThanOrEqualTo(toBuild);
        assertThat(holdKeys(stores.holds)).as("the index a full build gives").isEqualTo(fullHoldsIndex());
        for (int s = 0; s < 2; s++) {
            assertThat(timers.minPendingEventTimestamp(s)).isEqualTo(bruteMinEvent(s));
        }
        assertThat(timers.watermarkHold()).isEqualTo(Math.min(bruteMinEvent(0), bruteMinEvent(1)));
        assertThat(timers.buildHoldsStep(budget, Long.MAX_VALUE)).isFalse();
        assertThat(newTimerStore().buildingHolds()).as("a restart finds the index complete").isFalse();
        assertThatThrownBy(() -> timers.buildHoldsStep(0, Long.MAX_VALUE))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("maxRows must be >= 1 but was 0");
    }

    /**
     * "Scans over stores that see many deletes ... resume from a remembered position" (DESIGN.md), also in a
     * new object (after a restore or a task revive): the floors that firing moved up are kept in the stores,
     * so a new object's scans start a few batches behind the first pending timer and hold, not at the
     * stream's first key, where the fired timers' tombstones lie; a timer added below a kept floor moves it
     * down in the same call.
     */
    @Test
    void shouldResumeScansAtThePersistedFloorsInANewObject() {
        for (int i = 0; i < 2_000; i++) {
            timers.add(timer(DEDUP_STREAM, "k" + i, i, i + 10));
        }
        timers.commitCall();
        int batch = 100;
        int fired = 0;
        for (List<PendingTimer> due = timers.due(DEDUP_STREAM, 1_500, batch); !due.isEmpty();
                due = timers.due(DEDUP_STREAM, 1_500, batch)) {
            for (PendingTimer t : due) {
                timers.delete(t);
                timers.commitCall();
            }
            fired += due.size();
            assertThat(timers.minPendingEventTimestamp()).isEqualTo(fired + 10); // the watermark code asks after each batch
        }
        assertThat(fired).isEqualTo(1_500);

        stores.reopen();
        CountingStore t = new CountingStore(stores.timers);
        CountingStore h = new CountingStore(stores.holds);
        timers = new TimerStore(t, h, STREAMS, DEDUP); // as after a restore
        assertThat(timers.minPendingEventTimestamp()).isEqualTo(1_510);
        assertThat(timers.minPendingTriggerTimestamp(DEDUP_STREAM)).isEqualTo(1_500);
        assertThat(triggers(timers.due(DEDUP_STREAM, 1_510, batch))).hasSize(10).startsWith(1_500L);
        Bytes floor = TimerKeys.dueBound(DEDUP_STREAM, 1_500 - 3 * batch); // a few batches behind at most
        assertThat(t.scansBelow(DEDUP_STREAM, floor)).as("timer scans starting below the floor").isEmpty();
        assertThat(h.scansBelow(DEDUP_STREAM, TimerKeys.dueBound(DEDUP_STREAM, 1_510 - 3 * batch)))
                .as("hold scans starting below the floor").isEmpty();

        addAndCommit(timer(DEDUP_STREAM, "late", 7, 3)); // below both floors
        timers = newTimerStore();
        assertThat(timers.minPendingEventTimestamp()).isEqualTo(3);
        assertThat(triggers(timers.due(DEDUP_STREAM, 1_502, batch))).containsExactly(7L, 1_500L, 1_501L);
    }

    /** The keys of a holds store's holds, in store order. */
    static List<Bytes> holdKeys(KeyValueStore<Bytes, byte[]> store) {
        List<Bytes> out = new ArrayList<>();
        try (KeyValueIterator<Bytes, byte[]> it = store.all()) {
            while (it.hasNext()) {
                Bytes k = it.next().key;
                if (!TimerKeys.isEndMark(k.get())) {
                    out.add(k);
                }
            }
        }
        return out;
    }

    /** The holds index a full build from the timers store gives, in store order. */
    List<Bytes> fullHoldsIndex() {
        java.util.TreeSet<Bytes> out = new java.util.TreeSet<>();
        try (KeyValueIterator<Bytes, byte[]> it = stores.timers.all()) {
            while (it.hasNext()) {
                KeyValue<Bytes, byte[]> kv = it.next();
                if (!TimerKeys.isEndMark(kv.key.get())) {
                    out.add(TimerKeys.holdKey(TimerValueCodec.eventTs(kv.value), kv.key.get()));
                }
            }
        }
        return new ArrayList<>(out);
    }

    /** Adds one timer per timestamp (ascending; trigger = event), then fires them one by one, checking the minima. */
    private void fireInOrder(long... ts) {
        List<PendingTimer> pending = new ArrayList<>();
        for (int i = ts.length - 1; i >= 0; i--) {
            PendingTimer t = timer(DEDUP_STREAM, "k" + i, ts[i], ts[i]);
            pending.add(0, t);
            addAndCommit(t);
        }
        for (int i = 0; i < ts.length; i++) {
            assertThat(timers.minPendingEventTimestamp(DEDUP_STREAM)).as("hold %d", i).isEqualTo(ts[i]);
            assertThat(timers.minPendingTriggerTimestamp(DEDUP_STREAM)).as("trigger %d", i).isEqualTo(ts[i]);
            assertThat(timers.due(DEDUP_STREAM, ts[i] + 1, 10)).as("due %d", i).containsExactly(pending.get(i));
            timers.delete(pending.get(i));
            timers.commitCall();
        }
        assertThat(timers.minPendingEventTimestamp(DEDUP_STREAM)).isEqualTo(Long.MAX_VALUE);
        assertThat(timers.minPendingTriggerTimestamp(DEDUP_STREAM)).isEqualTo(Long.MAX_VALUE);
        assertThat(timers.due(DEDUP_STREAM, Long.MAX_VALUE, 10)).isEmpty();
    }

    // ---- restore ----

    @Test
    void shouldGiveTheSameAnswersAfterReopening() {
        Random random = new Random(7);
        for (int i = 0; i < 300; i++) {
            long trigger = random.nextInt(1_000);
            timers.add(timer(i % 2, "k" + random.nextInt(40), trigger, trigger - random.nextInt(500)));
            timers.commitCall();
        }
        fireAll(DEDUP_STREAM, 200, 16);
        timers.due(ALL_STREAM, 300, 5);
        List<PendingTimer> due0 = timers.due(DEDUP_STREAM, 700, 1_000);
        List<PendingTimer> due1 = timers.due(ALL_STREAM, 700, 1_000);
        long min = timers.minPendingEventTimestamp();
        long min0 = timers.minPendingEventTimestamp(DEDUP_STREAM);
        long trigger1 = timers.minPendingTriggerTimestamp(ALL_STREAM);
        long count = timers.count();

        stores.reopen();
        TimerStore restored = newTimerStore();
        assertThat(restored.due(DEDUP_STREAM, 700, 1_000)).isEqualTo(due0);
        assertThat(restored.due(ALL_STREAM, 700, 1_000)).isEqualTo(due1);
        assertThat(restored.minPendingEventTimestamp()).isEqualTo(min).isEqualTo(
                Math.min(bruteMinEvent(DEDUP_STREAM), bruteMinEvent(ALL_STREAM)));
        assertThat(restored.minPendingEventTimestamp(DEDUP_STREAM)).isEqualTo(min0);
        assertThat(restored.minPendingTriggerTimestamp(ALL_STREAM)).isEqualTo(trigger1);
        if (!stores.persistent()) {
            assertThat(restored.count()).isEqualTo(count);
        }
    }

    /**
     * A random mix of calls (adds, aborted adds, fired batches cut short, timers added from
     * onTimer, restarts), checked after every step against a plain model of the pending timers.
     */
    @Test
    void shouldMatchAModelOfPendingTimers() {
        Random random = new Random(2024);
        Map<String, PendingTimer> model = new HashMap<>();
        long watermark = -50;
        for (int step = 0; step < 3_000; step++) {
            int op = random.nextInt(10);
            if (op < 5) {
                List<PendingTimer> call = new ArrayList<>();
                for (int i = random.nextInt(3); i >= 0; i--) {
                    long trigger = random.nextInt(300) - 100;
                    call.add(timer(random.nextInt(2), "k" + random.nextInt(15), trigger, trigger - random.nextInt(60)));
                }
                call.forEach(timers::add);
                if (random.nextInt(10) == 0) {
                    timers.abortCall();
                } else {
                    timers.commitCall();
                    call.forEach(t -> modelAdd(model, t));
                }
            } else if (op < 9) {
                int stream = random.nextInt(2);
                watermark += random.nextInt(8);
                int max = 1 + random.nextInt(6);
                List<PendingTimer> due = timers.due(stream, watermark, max);
                assertThat(due).as("step %d", step).isEqualTo(modelDue(model, stream, watermark, max));
                int fire = random.nextInt(due.size() + 1);
                for (PendingTimer t : due.subList(0, fire)) {
                    if (timers.overtaken(t)) {
                        break;
                    }
                    timers.delete(t);
                    PendingTimer added = null;
                    if (random.nextInt(4) == 0) {
                        long trigger = watermark - 20 + random.nextInt(40); // possibly in the past
                        added = timer(stream, "k" + random.nextInt(15), trigger, trigger - random.nextInt(60));
                        timers.add(added);
                    }
                    if (random.nextInt(12) == 0) {
                        timers.abortCall();
                    } else {
                        timers.commitCall();
                        model.remove(modelKey(t));
                        if (added != null) {
                            modelAdd(model, added);
                        }
                    }
                }
            } else {
                timers = newTimerStore(); // a restart: caches gone
            }
            for (int s = 0; s < 2; s++) {
                int stream = s;
                long expected = model.values().stream().filter(t -> t.streamIndex() == stream)
                        .mapToLong(PendingTimer::eventTs).min().orElse(Long.MAX_VALUE);
                assertThat(timers.minPendingEventTimestamp(s)).as("step %d stream %d", step, s).isEqualTo(expected);
                assertThat(timers.hasPending(s)).isEqualTo(expected != Long.MAX_VALUE);
            }
            assertThat(rows(stores.holds)).isEqualTo(model.size());
        }
        assertThat(rows(stores.timers)).isEqualTo(model.size());
    }

    private static String modelKey(PendingTimer t) {
        return t.streamIndex() + "/" + t.triggerTs() + "/" + Arrays.toString(t.encodedKey())
                + (DEDUP[t.streamIndex()] ? "" : "/" + HexFormat.of().formatHex(t.messageId()));
    }

    private static void modelAdd(Map<String, PendingTimer> model, PendingTimer t) {
        model.merge(modelKey(t), t, (old, neu) -> neu.eventTs() < old.eventTs() ? neu : old);
    }

    private static List<PendingTimer> modelDue(Map<String, PendingTimer> model, int stream, long watermark, int max) {
        Comparator<PendingTimer> order = Comparator.comparingLong(PendingTimer::triggerTs)
                .thenComparing(PendingTimer::encodedKey, Arrays::compareUnsigned)
                .thenComparing(PendingTimer::messageId, Arrays::compareUnsigned);
        return model.values().stream().filter(t -> t.streamIndex() == stream && t.triggerTs() < watermark)
                .sorted(order).limit(max).toList();
    }

    // ---- misuse and spec changes ----

    @Test
    void shouldRefuseAnUnknownTimerStream() {
        assertThatThrownBy(() -> timers.add(timer(0, "k", 1, 1).withStreamIndex(2)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("must be in [0, 2) but was 2");
        assertThatThrownBy(() -> timers.due(0, 1, 0)).hasMessageContaining("maxTimers must be >= 1 but was 0");
    }

    @Test
    void shouldRefuseStoresWrittenUnderAnotherOrderOfTimerStreams() {
        addAndCommit(timer(ALL_STREAM, "k", 1, 1));
        assertThatThrownBy(() -> new TimerStore(stores.timers, stores.holds, List.of("all", "dedup"), DEDUP))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("holds timers of timer stream 'all' at position 1, where the spec now has 'dedup'");
        assertThatThrownBy(() -> new TimerStore(stores.timers, stores.holds, List.of("dedup"), new boolean[] {true}))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("'all' at position 1, which the spec no longer has");
        assertThat(new TimerStore(stores.timers, stores.holds, List.of("dedup", "all", "new"), new boolean[] {true, false, true})
                .due(ALL_STREAM, 2, 10)).hasSize(1);
    }
}
