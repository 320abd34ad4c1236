package io.flowkafka.connectors.statictable;

import io.flowkafka.connectors.statictable.ArrivalOrderTableSink.Staged;
import io.flowkafka.connectors.statictable.ArrivalOrderTableSink.StagedFile;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;

/**
 * The arrival-order sink's {@code .staging/} directory: one Avro file per delivered batch ({@link StagedFileFormat}
 * layout), its header holding the arrival stamp, partition, first and last id, row count and weight. A delivery
 * writes into a {@link StagingPool} file and fsyncs it; a tail rewrite writes a new file and renames it.
 *
 * <p>Thread-safety: {@link #stage} concurrently for different partitions; {@link #files} from any thread.
 */
final class StagingArea {
    private final Path staging;
    private final StagingPool pool;
    /** Metadata of complete staged files by path, with the order in which this instance completed them. */
    private final Map<Path, Known> cache = new ConcurrentHashMap<>();
    /** How many files this instance has staged completely: a listing takes those it counted when it began. */
    private final AtomicLong completed = new AtomicLong();

    /** A complete staged file; {@code sequence} 0 for one read from disk (staged by another owner or before a restart). */
    private record Known(StagedFile file, long sequence) {
    }

    StagingArea(Path staging) throws IOException {
        this.staging = staging;
        Files.createDirectories(staging);
        this.pool = new StagingPool(staging);
    }

    /**
     * Stages messages of one outbox partition durably; returns once they survive a crash.
     *
     * @param partition the outbox partition
     * @param rows the messages, in outbox order, with increasing ids; none already covered
     */
    void stage(int partition, List<Staged> rows) throws IOException {
        if (rows.isEmpty()) {
            return;
        }
        // one fsync: the pool file's directory entry is durable already
        Path file = pool.take(partition);
        long stamp = System.currentTimeMillis();
        boolean written = false;
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
            writeStaged(ch, stamp, partition, rows);
            written = true;
        } finally {
            if (!written) {
                Files.deleteIfExists(file); // this delivery fails: nothing of it is staged
                pool.forget(file);
            }
        }
        // complete and durable: its metadata is known without reading it back
        cache.put(file, new Known(new StagedFile(file, stamp, partition, rows.get(0).messageId(),
                rows.get(rows.size() - 1).messageId(), rows.size(), rows.stream().mapToLong(Staged::weight).sum()),
                completed.incrementAndGet()));
    }

    /** Deletes the partition's unused pool files (the partition is released). */
    void release(int partition) throws IOException {
        pool.release(partition);
    }

    /** Writes a staged file durably under its own name: a tail rewrite, by the publisher under the lock. */
    void writeTail(long stamp, int partition, List<Staged> rows) throws IOException {
        Path tmp = staging.resolve(".tmp-" + UUID.randomUUID());
        try {
            try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
                writeStaged(ch, stamp, partition, rows);
            }
            for (long st = stamp;; st++) {
                try {
                    Files.move(tmp, staging.resolve(stagedName(st, partition, rows.get(0).offset())),
                            StandardCopyOption.ATOMIC_MOVE);
                    break;
                } catch (FileAlreadyExistsException e) {
                    // the same first offset staged in the same millisecond (a replay): keep both, dedup at publish
                }
            }
            StagingPool.forceDirectory(staging);
        } finally {
            Files.deleteIfExists(tmp);
        }
    }

    /**
     * Writes a staged file: the header (its arrival stamp, partition, first and last id, row count and weight), the
     * rows, then an fsync of its data; a file cut short holds fewer rows than its header says.
     */
    private static void writeStaged(FileChannel ch, long stamp, int partition, List<Staged> rows) throws IOException {
        ByteBuffer bytes = StagedFileFormat.encode(stamp, partition, rows);
        while (bytes.hasRemaining()) {
            ch.write(bytes);
        }
        ch.force(false); // data and size; the directory entry is made durable by the caller
    }

    static String stagedName(long stamp, int partition, long firstOffset) {
        return String.format("%013d-%05d-%019d.avro", stamp, partition, firstOffset);
    }

    /**
     * The complete staged files, in arrival order (by stamp), except that each partition's files come in the order of
     * their ids: a stamp of a clock that went back (on this instance or the partition's next owner) never makes a
     * later batch cover an earlier one.
     */
    List<StagedFile> files() throws IOException {
        // Only the files this instance completed before the listing began: one it completes meanwhile waits for the
        // next listing, as does every later batch of its partition. Else a listing could pass over a batch still being
        // written and take the next one, whose frontier would then cover the first: its rows were lost.
        long horizon = completed.get();
        List<Path> paths;
        try (Stream<Path> s = Files.list(staging)) {
            paths = s.filter(p -> !p.getFileName().toString().startsWith(".")).toList();
        }
        Set<Path> listed = new HashSet<>(paths);
        cache.entrySet().removeIf(e -> e.getValue().sequence() <= horizon && !listed.contains(e.getKey()));
        List<StagedFile> out = new ArrayList<>();
        for (Path p : paths) {
            Known k = cache.get(p); // a complete staged file never changes
            StagedFile f;
            if (k != null && k.sequence() <= horizon) {
                f = k.file();
                pool.forget(p);
            } else if (k != null || pool.created(p)) {
                continue; // ours: unused, being written, or completed after the listing began (the next one takes it)
            } else {
                f = readStagedFile(p); // staged by another owner, or before a restart
                if (f == null) {
                    continue;
                }
                cache.put(p, new Known(f, 0));
            }
            out.add(f);
        }
        out.sort(Comparator.comparingLong(StagedFile::stamp).thenComparing(StagedFile::path));
        return idOrderPerPartition(out);
    }

    private static List<StagedFile> idOrderPerPartition(List<StagedFile> files) {
        Map<Integer, List<StagedFile>> byPartition = new HashMap<>();
        for (StagedFile f : files) {
            byPartition.computeIfAbsent(f.partition(), k -> new ArrayList<>()).add(f);
        }
        Map<Integer, Iterator<StagedFile>> inIdOrder = new HashMap<>();
        byPartition.forEach((p, list) -> inIdOrder.put(p, list.stream()
                .sorted(Comparator.comparing(StagedFile::firstId)).iterator()));
        List<StagedFile> out = new ArrayList<>(files.size());
        for (StagedFile f : files) {
            out.add(inIdOrder.get(f.partition()).next());
        }
        return out;
    }

    /**
     * A staged file's metadata, or null while it is incomplete: a pool file not written yet, being written, or cut
     * short by a crash (its delivery did not return, so the outbox delivers its rows again).
     */
    private @Nullable StagedFile readStagedFile(Path p) throws IOException {
        boolean pooled = StagingPool.partitionOf(p) >= 0;
        StagedFile f;
        long present;
        try {
            if (pooled && Files.size(p) == 0) {
                return null;
            }
            ByteBuffer bytes = ByteBuffer.wrap(Files.readAllBytes(p));
            StagedFileFormat.Header h = StagedFileFormat.header(p, bytes);
            f = new StagedFile(p, h.stamp(), h.partition(), h.firstId(), h.lastId(), h.rows(), h.weight());
            present = StagedFileFormat.countRows(bytes, h);
        } catch (NoSuchFileException e) {
            return null; // deleted meanwhile
        } catch (StagedRowReader.FormatException e) {
            throw e;
        } catch (IOException | RuntimeException e) {
            if (pooled) {
                return null; // a header cut short
            }
            throw e;
        }
        if (present != f.rows()) {
            if (pooled) {
                return null;
            }
            throw new IOException("staged file " + p + " holds " + present + " rows but its header says " + f.rows());
        }
        return f;
    }

    /** Deletes the incomplete pool files of a partition, but this sink's unused ones: only at the partition's open. */
    void removeIncomplete(int partition) throws IOException {
        List<Path> paths;
        try (Stream<Path> s = Files.list(staging)) {
            paths = s.filter(p -> StagingPool.partitionOf(p) == partition && !pool.created(p)).toList();
        }
        for (Path p : paths) {
            if (!cache.containsKey(p) && readStagedFile(p) == null) {
                // left by a crash or by an owner that lost the partition: whatever it writes now is never committed
                Files.deleteIfExists(p);
            }
        }
    }
}
