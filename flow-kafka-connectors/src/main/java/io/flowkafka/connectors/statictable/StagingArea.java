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
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
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
    private static final Pattern STAGED_NAME = Pattern.compile("\\d+-(\\d+)-\\d+\\.avro");
    /** A staged file's header is read from this many bytes, unless it is longer. */
    private static final int HEADER_READ = 8 << 10;
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
        FileChannel opened;
        try {
            opened = FileChannel.open(file, StandardOpenOption.WRITE);
        } catch (NoSuchFileException e) {
            // the partition's next owner removed this pool's unused files: the partition moved away and came back
            pool.forget(file);
            pool.release(partition);
            file = pool.take(partition);
            opened = FileChannel.open(file, StandardOpenOption.WRITE);
        }
        long stamp = System.currentTimeMillis();
        boolean written = false;
        try (FileChannel ch = opened) {
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
            weight = TableSlot.addWeights(weight, r.weight());
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
        count(prepared, makeVisible(prepared));
    }

    /**
     * The first half of {@link #complete}: renames the file to its staged name; a listing skips its partition until
     * {@link #count} says it is complete. Returns whether this call moved it.
     */
    boolean makeVisible(Prepared prepared) throws IOException {
        Path target = prepared.file().path();
        pool.claim(target); // a listing meanwhile skips the partition until the file is counted below
        try {
            return listingLock.renaming(() -> {
                try {
                    Files.move(prepared.pending(), target, StandardCopyOption.ATOMIC_MOVE);
                    return true;
                } catch (NoSuchFileException e) {
                    return false; // renamed before (here, or by the partition's next owner); published since, maybe
                }
            });
        } catch (IOException | RuntimeException e) {
            pool.forget(target); // whatever is there is read as anyone's
            throw e;
        }
    }

    /** The second half of {@link #complete}: the rename made durable, the file counted complete for listings. */
    void count(Prepared prepared, boolean moved) throws IOException {
        Path target = prepared.file().path();
        boolean counted = false;
        try {
            if (moved) {
                StagingPool.forceDirectory(staging);
                cache.put(target, new Known(prepared.file(), completed.incrementAndGet()));
                counted = true;
            }
            pool.forget(prepared.pending());
        } finally {
            if (!counted) {
                pool.forget(target); // whatever is there is read as anyone's
            }
        }
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

    /** Whether the pool still holds {@code file} as this instance's (for tests). */
    boolean ours(Path file) {
        return pool.created(file);
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

    /** The partition in a staged file's name ({@link #stagedName}), or -1 for another name. */
    static int partitionOfStaged(Path file) {
        Matcher m = STAGED_NAME.matcher(file.getFileName().toString());
        return m.matches() ? Integer.parseInt(m.group(1)) : -1;
    }

    /**
     * The partitions with a visible staged file on disk: complete, being made visible, or covered by a published table
     * and not deleted yet (what {@link #files} leaves out included).
     */
    Set<Integer> partitionsStaged() throws IOException {
        try (Stream<Path> s = Files.list(staging)) {
            return s.map(StagingArea::partitionOfStaged).filter(p -> p >= 0).collect(Collectors.toSet());
        }
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
        // A partition with a file of ours being made visible waits whole: its next epoch may be visible already (renamed
        // by the partition's next owner) and must not be taken before it.
        long[] horizon = new long[1];
        List<Path> paths = listingLock.listing(() -> {
            horizon[0] = completed.get(); // no rename of this instance runs while the lock is held
            try (Stream<Path> s = Files.list(staging)) {
                return s.filter(p -> !p.getFileName().toString().startsWith(".")).toList();
            }
        });
        Set<Path> listed = new HashSet<>(paths);
        cache.entrySet().removeIf(e -> {
            // complete before the listing and gone from it: published and deleted by another instance
            boolean gone = e.getValue().sequence() <= horizon[0] && !listed.contains(e.getKey());
            if (gone) {
                pool.forget(e.getKey());
            }
            return gone;
        });
        List<StagedFile> out = new ArrayList<>();
        Set<Integer> waiting = new HashSet<>();
        for (Path p : paths) {
            Known k = cache.get(p); // a complete staged file never changes
            StagedFile f;
            if (k != null && k.sequence() <= horizon[0]) {
                f = k.file();
                pool.forget(p);
            } else if (k != null || pool.created(p)) {
                // ours, being made visible or completed after the listing began: the next listing takes it
                waiting.add(k != null ? k.file().partition() : partitionOfStaged(p));
                continue;
            } else {
                f = readStagedFile(p); // staged by another owner, or before a restart
                if (f == null) {
                    continue;
                }
                cache.put(p, new Known(f, 0));
            }
            out.add(f);
        }
        out.removeIf(f -> waiting.contains(f.partition()));
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
     * A staged file's metadata from its header, or null when it was deleted meanwhile. A visible file is complete: it
     * was renamed into place after its data was fsynced.
     */
    private @Nullable StagedFile readStagedFile(Path p) throws IOException {
        StagedFileFormat.Header h;
        try (FileChannel ch = FileChannel.open(p, StandardOpenOption.READ)) {
            ByteBuffer head = ByteBuffer.allocate((int) Math.min(ch.size(), HEADER_READ));
            while (head.hasRemaining() && ch.read(head) >= 0) {
                // fill
            }
            head.flip();
            try {
                h = StagedFileFormat.header(p, head);
            } catch (RuntimeException e) {
                h = StagedFileFormat.header(p, ByteBuffer.wrap(Files.readAllBytes(p))); // a longer header
            }
        } catch (NoSuchFileException e) {
            return null; // deleted meanwhile
        }
        return new StagedFile(p, h.stamp(), h.partition(), h.firstId(), h.lastId(), h.rows(), h.weight());
    }
}
