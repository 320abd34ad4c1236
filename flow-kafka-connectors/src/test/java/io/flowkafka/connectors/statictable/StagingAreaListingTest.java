package io.flowkafka.connectors.statictable;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flowkafka.api.MessageId;
import io.flowkafka.connectors.statictable.ArrivalOrderTableSink.Staged;
import io.flowkafka.connectors.statictable.ArrivalOrderTableSink.StagedFile;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The publisher's listing of staged files never skips a batch of a partition while it takes a later one: the table
 * it writes records a frontier after the later batch, and the skipped batch's rows would then count as written
 * (the benchmark lost one 500-row outbox batch that way: a pool file was read while its batch was being written,
 * and the next pool file after that batch and the next were complete).
 */
class StagingAreaListingTest {
    @TempDir
    Path dir;

    private static List<Staged> batch(long first, int rows) {
        List<Staged> out = new ArrayList<>(rows);
        for (long o = first; o < first + rows; o++) {
            MessageId id = MessageId.of(ByteBuffer.allocate(12).putInt(7).putLong(o).array());
            out.add(new Staged(o, id, o * 1_000_000L, 10, new byte[] {2, 'x'}));
        }
        return out;
    }

    @Test
    void shouldListEachPartitionsStagedBatchesAsAGaplessPrefixWhileBatchesAreStaged() throws Exception {
        StagingArea area = new StagingArea(dir);
        int batches = 1500;
        int rows = 20;
        AtomicBoolean done = new AtomicBoolean();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread stager = new Thread(() -> {
            try {
                for (int b = 0; b < batches; b++) {
                    area.complete(area.prepare(0, batch((long) b * rows, rows)));
                }
            } catch (Throwable t) {
                failure.set(t);
            } finally {
                done.set(true);
            }
        }, "stager");
        stager.start();
        int listings = 0;
        while (!done.get()) {
            List<StagedFile> files = area.files();
            listings++;
            // batch k starts at offset k * rows: the listed batches must be 0, 1, ..., m-1
            List<Long> firsts = files.stream().map(f -> ByteBuffer.wrap(f.firstId().toBytes()).getLong(4)).toList();
            for (int i = 0; i < firsts.size(); i++) {
                assertThat(firsts.get(i)).as("listing %d: batch %d of %d listed (batches from %s on: %s)", listings, i,
                        firsts.size(), Math.max(0, i - 2), firsts.subList(Math.max(0, i - 2), Math.min(firsts.size(), i + 3)))
                        .isEqualTo((long) i * rows);
            }
        }
        stager.join();
        assertThat(failure.get()).isNull();
        assertThat(area.files()).hasSize(batches);
    }

    @Test
    void shouldForgetAFileOfOursThatAnotherInstancePublishedAndDeleted() throws Exception {
        // with two instances, a file one completes may be taken and deleted by the other before its own next
        // listing: it must not stay in the first one's set of files forever (one path leaked per epoch)
        StagingArea a = new StagingArea(dir);
        StagingArea b = new StagingArea(dir);
        StagingArea.Prepared prepared = a.prepare(0, batch(0, 5));
        a.complete(prepared);
        Path file = prepared.file().path();
        assertThat(b.files()).extracting(StagedFile::path).containsExactly(file);
        Files.delete(file); // b published it
        assertThat(a.files()).isEmpty();
        assertThat(a.ours(file)).isFalse();
    }

    private static List<Long> firsts(List<StagedFile> files) {
        return files.stream().map(f -> ByteBuffer.wrap(f.firstId().toBytes()).getLong(4)).toList();
    }

    @Test
    void shouldListAnEpochWhoseRenameFailedOnceThePartitionsNextOwnerMadeItVisible() throws Exception {
        // instance x commits epoch N but cannot rename it; the partition moves to y, which renames N from its record
        // and then N + 1: x's publisher must see N before it takes N + 1, or N + 1's frontier covers N's rows
        StagingArea x = new StagingArea(dir);
        StagingArea y = new StagingArea(dir);
        StagingArea.Prepared n = x.prepare(0, batch(0, 20));
        Path lock = dir.resolve(".listing-lock");
        Files.createDirectories(lock); // the rename's lock cannot be taken
        assertThatThrownBy(() -> x.complete(n)).isInstanceOf(IOException.class);
        Files.delete(lock);
        y.recover(0, List.of(n.pending().getFileName().toString()));
        y.complete(y.prepare(0, batch(20, 20)));
        assertThat(firsts(x.files())).containsExactly(0L, 20L);
        assertThat(firsts(y.files())).containsExactly(0L, 20L);
    }

    @Test
    void shouldTakeACommittedEpochThatWasRenamedAndPublishedElsewhereAsDone() throws Exception {
        // x's rename comes after the partition's next owner renamed the epoch and a publisher removed it: nothing to do
        StagingArea x = new StagingArea(dir);
        StagingArea.Prepared n = x.prepare(0, batch(0, 20));
        new StagingArea(dir).recover(0, List.of(n.pending().getFileName().toString()));
        Files.delete(n.file().path());
        x.complete(n);
        assertThat(x.files()).isEmpty();
        x.complete(x.prepare(0, batch(20, 20)));
        assertThat(firsts(x.files())).as("the partition's next epochs are made visible").containsExactly(20L);
    }
}
