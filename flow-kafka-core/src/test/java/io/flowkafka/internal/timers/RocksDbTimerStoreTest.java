package io.flowkafka.internal.timers;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.rocksdb.Options;
import org.rocksdb.PerfContext;
import org.rocksdb.PerfLevel;
import org.rocksdb.RocksDB;

/** {@link TimerStore}'s contract over Kafka Streams' RocksDB key-value stores, reopened from disk. */
class RocksDbTimerStoreTest extends AbstractTimerStoreTest {
    @Override
    TimerTestStores open(File dir) {
        return TimerTestStores.rocksDb(dir);
    }

    /**
     * "Scans over stores that see many deletes ... resume from a remembered position instead of
     * walking tombstones from the start" (DESIGN.md): with 200k fresh tombstones at the start of
     * stream 1, a stream 0 that empties after every timer fires quickly, because its seeks stop at
     * its end mark instead of walking stream 1's tombstones (seconds when they did).
     */
    @Test
    void shouldNotWalkTheNextStreamsTombstonesWhenAStreamEmpties() {
        for (int i = 0; i < 200_000; i++) {
            timers.add(timer(ALL_STREAM, "k" + (i % 100), i, i));
        }
        timers.commitCall();
        assertThat(fireAll(ALL_STREAM, Long.MAX_VALUE, 1_000)).hasSize(200_000);
        addAndCommit(timer(ALL_STREAM, "live", 1_000_000, 1_000_000));

        try (Options options = new Options().setCreateIfMissing(true);
                RocksDB probe = RocksDB.open(options, new File(stateDir, "perf-probe-empties").getPath())) {
            probe.setPerfLevel(PerfLevel.ENABLE_COUNT); // the calling thread's counters, whichever database it reads
            PerfContext perf = probe.getPerfContext();
            perf.reset();
            for (int i = 0; i < 1_000; i++) {
                addAndCommit(timer(DEDUP_STREAM, "k", i, i));
                List<PendingTimer> due = timers.due(DEDUP_STREAM, Long.MAX_VALUE, 10);
                assertThat(due).hasSize(1);
                timers.delete(due.get(0));
                timers.commitCall();
                assertThat(timers.minPendingEventTimestamp()).isEqualTo(1_000_000);
                assertThat(timers.due(DEDUP_STREAM, Long.MAX_VALUE, 10)).isEmpty();
            }
            long walked = perf.getInternalDeleteSkippedCount();
            probe.setPerfLevel(PerfLevel.DISABLE);
            // about 201,000 here: the next stream's 200,000 tombstones once, then one per round; walking them in
            // every round would be 200,000,000 (counted, not timed: a loaded machine makes any time bound flaky)
            assertThat(walked).as("tombstones walked by 1000 add-fire rounds on an emptying stream")
                    .isLessThan(1_000_000);
        } catch (org.rocksdb.RocksDBException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * A new object over reopened stores (a restore, a task revive) resumes its scans at the floors the
     * firing left in the stores: it walks a few batches of the fired timers' tombstones, not all of them
     * (RocksDB's count of deletes skipped by the calling thread's seeks).
     */
    @Test
    void shouldNotWalkTheFiredTimersTombstonesInANewObject() {
        int count = 100_000;
        for (int i = 0; i < count; i++) {
            timers.add(timer(DEDUP_STREAM, "k" + i, i, i));
        }
        timers.commitCall();
        int fired = 0;
        for (List<PendingTimer> due = timers.due(DEDUP_STREAM, 90_000, 1_000); !due.isEmpty();
                due = timers.due(DEDUP_STREAM, 90_000, 1_000)) {
            for (PendingTimer t : due) {
                timers.delete(t);
                timers.commitCall();
            }
            fired += due.size();
            assertThat(timers.minPendingEventTimestamp()).isEqualTo(fired);
        }
        assertThat(fired).isEqualTo(90_000);
        stores.reopen();

        try (Options options = new Options().setCreateIfMissing(true);
                RocksDB probe = RocksDB.open(options, new File(stateDir, "perf-probe").getPath())) {
            probe.setPerfLevel(PerfLevel.ENABLE_COUNT); // the calling thread's counters, whichever database it reads
            PerfContext perf = probe.getPerfContext();
            perf.reset();
            TimerStore restored = newTimerStore();
            assertThat(restored.minPendingEventTimestamp()).isEqualTo(90_000);
            assertThat(restored.due(DEDUP_STREAM, 90_010, 1_000)).hasSize(10);
            long walked = perf.getInternalDeleteSkippedCount();
            probe.setPerfLevel(PerfLevel.DISABLE);
            assertThat(walked).as("tombstones walked by a new object's first scans").isLessThan(5_000);
        } catch (org.rocksdb.RocksDBException e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    void shouldNotWalkAnEmptiedStreamsTombstonesOnTheFirstAddOfANewObject() {
        int count = 50_000;
        for (int i = 0; i < count; i++) {
            timers.add(timer(DEDUP_STREAM, "k" + i, i, i));
        }
        timers.commitCall();
        for (List<PendingTimer> due = timers.due(DEDUP_STREAM, Long.MAX_VALUE, 1_000); !due.isEmpty();
                due = timers.due(DEDUP_STREAM, Long.MAX_VALUE, 1_000)) {
            for (PendingTimer t : due) {
                timers.delete(t);
            }
            timers.commitCall();
        }
        assertThat(timers.minPendingEventTimestamp()).as("every timer fired").isEqualTo(Long.MAX_VALUE);
        stores.reopen();

        try (Options options = new Options().setCreateIfMissing(true);
                RocksDB probe = RocksDB.open(options, new File(stateDir, "perf-probe-add").getPath())) {
            probe.setPerfLevel(PerfLevel.ENABLE_COUNT);
            PerfContext perf = probe.getPerfContext();
            TimerStore restored = newTimerStore();
            perf.reset();
            restored.add(timer(DEDUP_STREAM, "new", 100_000, 100_000)); // asks whether it is above every stored timer
            restored.commitCall();
            long walked = perf.getInternalDeleteSkippedCount();
            probe.setPerfLevel(PerfLevel.DISABLE);
            assertThat(walked).as("tombstones walked by a new object's first add").isLessThan(5_000);
            assertThat(restored.due(DEDUP_STREAM, Long.MAX_VALUE, 10)).hasSize(1);
        } catch (org.rocksdb.RocksDBException e) {
            throw new IllegalStateException(e);
        }
    }
}
