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
 * The arrival-order sink's {@code .staging/} directory: one Avro file per task epoch ({@link StagedFileFormat}
 * layout), its header holding the arrival stamp, partition, first and last id, row count and weight. An epoch is
 * {@link #prepare prepared} into a hidden {@link StagingPool} file, fsynced, before its transaction commits; once it
 * committed, {@link #complete} renames it to its staged name, which listings take. A tail rewrite writes a new file
 * and renames it.
 *
 * <p>Thread-safety: {@link #prepare}, {@link #complete} and {@link #recover} concurrently for different partitions;
 * {@link #files} from any thread.
 */
final class StagingArea {
    private final Path staging;
    private final StagingPool pool;
    private final ListingLock listingLock;
    /** Metadata of complete staged files by path, with the order in which this instance completed them. */
    private final Map<Path, Known> cache = new ConcurrentHashMap<>();
    /** How many files this instance has staged completely: a listing takes those it counted when it began. */
    private final AtomicLong completed = new AtomicLong();

    /** A complete staged file; {@code sequence} 0 for one read from disk (staged by another owner or before a restart). */
    private record Known(StagedFile file, long sequence) {
    }

    /** An epoch's rows written durably to a hidden pool file, to be renamed to {@code file.path()} once committed. */
    record Prepared(Path pending, StagedFile file) {
    }

    StagingArea(Path staging) throws IOException {
        this.staging = staging;
        Files.createDirectories(staging);
        this.pool = new StagingPool(staging);
        this.listingLock = new ListingLock(staging);
    }

    /**
     * Writes an epoch's messages of one task partition durably into a hidden file; returns once they survive a
     * crash. Nothing lists them until {@link #complete}.
     *
     * @param partition the task partition
     * @param rows the messages, in order, with increasing ids; not empty
     */
    Prepared prepare(int partition, List<Staged> rows) throws IOException {
        // one fsync: the pool file's directory entry is durable already
        Path file = pool.take(partition);
        long stamp = System.currentTimeMillis();
        boolean written = false;
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
            writeStaged(ch, stamp, partition, rows);
            written = true;
        } finally {
            if (!written) {
                Files.deleteIfExists(file); // this epoch fails: nothing of it is staged
                pool.forget(file);
            }
        }
        long weight = 0;
        for (Staged r : rows) {
            weight += r.weight();
        }
        return new Prepared(file, new StagedFile(staging.resolve(stagedName(stamp, partition, rows.get(0).offset())),
                stamp, partition, rows.get(0).messageId(), rows.get(rows.size() - 1).messageId(), rows.size(),
                weight));
    }

    /**
     * Makes a prepared epoch visible: renames it to its staged name, durably. Idempotent: a file renamed already (by
     * this instance, or by the partition's next owner at {@link #recover}) stays as it is.
     */
    void complete(Prepared prepared) throws IOException {
        Path target = prepared.file().path();
        pool.claim(target); // a listing meanwhile skips it until it is counted below
        boolean moved = listingLock.renaming(() -> {
            try {
                Files.move(prepared.pending(), target, StandardCopyOption.ATOMIC_MOVE);
                return true;
            } catch (NoSuchFileException e) {
                return Files.exists(target);
            }
        });
        if (!moved) {
            pool.forget(target);
            throw new IOException("the committed epoch " + prepared.pending() + " of partition "
                    + prepared.file().partition() + " is neither staged nor pending: it was removed");
        }
        StagingPool.forceDirectory(staging);
        pool.forget(prepared.pending());
        cache.put(target, new Known(prepared.file(), completed.incrementAndGet()));
    }

    /**
     * When a task partition opens: completes the epochs its last committed transaction recorded, by their pending
     * names, and deletes every other pending file of the partition (aborted epochs, or an owner's that lost it), but
     * this pool's unused ones.
     */
    void recover(int partition, List<String> committed) throws IOException {
        for (String name : committed) {
            Path pending = staging.resolve(name);
            if (StagingPool.partitionOf(pending) != partition) {
                throw new IOException("the epoch recorded for partition " + partition + " names " + name
                        + ", no pending file of it");
            }
            if (!Files.exists(pending)) {
                continue; // completed before (its staged file published, maybe)
            }
            ByteBuffer bytes = ByteBuffer.wrap(Files.readAllBytes(pending));
            StagedFileFormat.Header h = StagedFileFormat.header(pending, bytes);
            long present = StagedFileFormat.countRows(bytes, h);
            if (present != h.rows()) {
                throw new IOException("the committed epoch " + pending + " holds " + present + " rows but its header "
                        + "says " + h.rows() + ": it was fsynced before its commit, so the file was damaged");
            }
            long firstOffset;
            try (StagedRowReader r = new StagedRowReader(pending)) {
                if (!r.next()) {
                    throw new IOException("the committed epoch " + pending + " holds no row");
                }
                firstOffset = r.offset();
            }
            complete(new Prepared(pending, new StagedFile(staging.resolve(stagedName(h.stamp(), h.partition(),
                    firstOffset)), h.stamp(), h.partition(), h.firstId(), h.lastId(), h.rows(), h.weight())));
        }
        List<Path> left;
        try (Stream<Path> s = Files.list(staging)) {
            left = s.filter(p -> StagingPool.partitionOf(p) == partition && !pool.free(partition, p)).toList();
        }
        for (Path p : left) {
            // prepared by an epoch that never committed: its rows are replayed
            Files.deleteIfExists(p);
            pool.forget(p);
        }
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
        // next listing, as does every later epoch of its partition. Else a listing could pass over an epoch being
        // renamed and take the next one, whose frontier would then cover the first: its rows were lost.
        long horizon = completed.get();
        List<Path> paths = listingLock.listing(() -> {
            try (Stream<Path> s = Files.list(staging)) {
                return s.filter(p -> !p.getFileName().toString().startsWith(".")).toList();
            }
        });
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
                continue; // ours, being made visible or completed after the listing began (the next one takes it)
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

    /** A staged file's metadata, or null when it was deleted meanwhile; visible files are complete (renamed). */
    private @Nullable StagedFile readStagedFile(Path p) throws IOException {
        StagedFile f;
        long present;
        try {
            ByteBuffer bytes = ByteBuffer.wrap(Files.readAllBytes(p));
            StagedFileFormat.Header h = StagedFileFormat.header(p, bytes);
            f = new StagedFile(p, h.stamp(), h.partition(), h.firstId(), h.lastId(), h.rows(), h.weight());
            present = StagedFileFormat.countRows(bytes, h);
        } catch (NoSuchFileException e) {
            return null; // deleted meanwhile
        }
        if (present != f.rows()) {
            throw new IOException("staged file " + p + " holds " + present + " rows but its header says " + f.rows());
        }
        return f;
    }
}
