package io.flowkafka.connectors.statictable;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import io.flowkafka.api.MessageId;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;
import org.apache.avro.Schema;
import org.jspecify.annotations.Nullable;

/**
 * The arrival-order table sink's engine on a {@link LocalTablesDirectory}, free of Kafka: it stages delivered
 * messages and turns them into the directory's one table sequence.
 *
 * <p>How several task partitions write one shared sequence: per-partition staging, merged at publish. Each task's
 * writer {@link #prepare prepares} its epoch's messages durably in {@code <output_directory>/.staging/} (one Avro
 * file per epoch, stamped with its arrival time, hidden until the epoch committed; never listed as a table; see
 * {@link StagingArea}). Any
 * instance may {@link #publish}: under a lock (a JVM lock plus a file lock on {@code .sink-lock}) it reads the
 * progress, decides the open slot with {@link TableSlot#decide}, writes the slot's table from the staged files in
 * arrival order, and publishes it with one rename.
 *
 * <p>Atomicity: the table carries the new progress in its own {@code progress} attribute, so the rename that makes
 * the table visible also advances the progress: that rename is the commit point. The directory's {@code progress}
 * attribute is replaced right after it; if a crash falls between the two, the next load takes the newer of the
 * directory's and the newest table's progress and repairs the directory. Staged rows that the frontier covers are
 * then deleted (a partly covered staged file is rewritten as its uncovered tail).
 *
 * <p>Thread-safety: {@link #prepare} and {@link #complete} may run concurrently for different partitions and with
 * {@link #publish}; publish,
 * {@link #load} and {@link #coverage} serialize on the lock.
 */
final class ArrivalOrderTableSink {
    static final String STAGING = ".staging";
    /** The directory under {@link #STAGING} of the input watermarks ({@link InputWatermark}). */
    static final String WATERMARKS = ".watermarks";
    static final String LOCK = ".sink-lock";
    static final String EXPIRATION_TIME = "expiration_time";
    static final String CREATION_TIME = "creation_time";
    /** At most this many tables per {@link #publish} call: each call does a bounded amount of work. */
    static final int MAX_TABLES_PER_PUBLISH = 64;
    private static final ConcurrentHashMap<Path, ReentrantLock> JVM_LOCKS = new ConcurrentHashMap<>();

    private final LocalTablesDirectory directory;
    private final ArrivalOrderSinkParameters parameters;
    private final Schema rowSchema;
    private final SinkProgress.Owner owner;
    private final String sinkName;
    private final Path staging;
    private final Path lockFile;
    private final ReentrantLock jvmLock;
    private final Map<String, TableAttributes> tables = new HashMap<>();
    /** Whether {@link #publish} removed what crashed publishers left behind; guarded by the lock. */
    private boolean sweptAbandoned;
    private final StagingArea stagingArea;

    ArrivalOrderTableSink(LocalTablesDirectory directory, ArrivalOrderSinkParameters parameters, Schema rowSchema,
            SinkProgress.Owner owner) throws IOException {
        this.directory = Objects.requireNonNull(directory, "directory");
        this.parameters = Objects.requireNonNull(parameters, "parameters");
        this.rowSchema = Objects.requireNonNull(rowSchema, "rowSchema");
        this.owner = Objects.requireNonNull(owner, "owner");
        this.sinkName = "TArrivalOrderTableSink '" + owner.sink() + "'";
        this.staging = directory.root().resolve(STAGING);
        this.stagingArea = new StagingArea(staging);
        this.lockFile = directory.root().resolve(LOCK);
        this.jvmLock = JVM_LOCKS.computeIfAbsent(directory.root(), p -> new ReentrantLock());
    }

    /**
     * A message to stage: its staging sequence number (unique in its partition), id, system timestamp (ns), weight and payload, the Avro binary of a row
     * of the table's schema (written to the table as is).
     */
    record Staged(long offset, MessageId messageId, long systemTimestamp, long weight, byte[] row) {
    }

    /** A directory state the sink refuses: another owner's progress, children without a table timestamp. */
    static final class DirectoryRefusedException extends Exception {
        private static final long serialVersionUID = 1L;

        DirectoryRefusedException(String message) {
            super(message);
        }
    }

    /** Writes an epoch's messages of one task partition durably, invisible until {@link #complete}. */
    StagingArea.Prepared prepare(int partition, List<Staged> rows) throws IOException {
        return stagingArea.prepare(partition, rows);
    }

    /** Makes a committed epoch visible to {@link #publish}. */
    void complete(StagingArea.Prepared prepared) throws IOException {
        stagingArea.complete(prepared);
    }

    /** The staging area, for tests that stop {@link #complete} half-way ({@link StagingArea#makeVisible}). */
    StagingArea stagingArea() {
        return stagingArea;
    }

    /** Deletes the partition's unused pool files (the partition's task closed). */
    void release(int partition) throws IOException {
        stagingArea.release(partition);
    }

    /**
     * The last message id of a partition that is staged or written to a table: a replayed message up to it is a
     * duplicate. Also checks the directory ({@link #load}), completes the epochs of the partition its last committed
     * transaction recorded and removes its other pending files ({@link StagingArea#recover}): call it when the
     * partition's task opens.
     *
     * @param committed the pending file names of the epochs the task's last committed transaction recorded
     * @return the id, or null when nothing of the partition was delivered
     */
    @Nullable MessageId coverage(int partition, List<String> committed, Instant now) throws IOException,
            DirectoryRefusedException {
        return locked(() -> {
            SinkProgress progress = load(now);
            stagingArea.recover(partition, committed);
            MessageId covered = progress.covered(partition);
            for (StagedFile f : stagedFiles()) {
                if (f.partition() == partition && (covered == null || f.lastId().compareTo(covered) > 0)) {
                    covered = f.lastId();
                }
            }
            return covered;
        });
    }

    /**
     * Closes what is due (by limit, by time, empty slots under the empty-slot rule), at most
     * {@value #MAX_TABLES_PER_PUBLISH} tables, then removes expired tables.
     *
     * @param now the wall clock
     * @param inputSystemWatermark the input stream's system watermark, or null when unknown
     * @return the names of the tables written
     */
    List<String> publish(Instant now, @Nullable Instant inputSystemWatermark) throws IOException,
            DirectoryRefusedException {
        // the lock is taken per table: a task opening a partition (coverage) waits for one table at most
        List<String> written = new ArrayList<>();
        while (written.size() < MAX_TABLES_PER_PUBLISH) {
            String table = locked(() -> publishOne(now, inputSystemWatermark));
            if (table == null) {
                break;
            }
            written.add(table);
        }
        locked(() -> expire(now));
        return written;
    }

    /** Writes the open slot's table if it is due; returns its name, or null. Under the lock. */
    private @Nullable String publishOne(Instant now, @Nullable Instant inputSystemWatermark) throws IOException,
            DirectoryRefusedException {
        SinkProgress progress = load(now);
        if (!sweptAbandoned) {
            // tables are written only under this lock, so no writer is running: what is pending was abandoned by
            // a publisher that crashed mid-table
            directory.removeAbandoned();
            sweptAbandoned = true;
        }
        List<StagedFile> files = normalize(progress);
        long rows = 0;
        long weight = 0;
        for (StagedFile f : files) {
            rows += f.rows();
            weight = TableSlot.addWeights(weight, f.weight());
        }
        TableSlot slot = new TableSlot(progress.nextTableTimestamp(), rows, weight);
        SlotClose close = slot.decide(parameters, now, inputSystemWatermark);
        if (close == SlotClose.NONE) {
            return null;
        }
        progress = writeTable(progress, close == SlotClose.EMPTY ? List.of() : files, close == SlotClose.BY_LIMIT,
                now, inputSystemWatermark);
        directory.replaceDirectoryAttributes(withProgress(directory.directoryAttributes(), progress));
        return tableName(slot.start());
    }

    /**
     * The progress, checked: the owner must be this sink's, and every child must have a table timestamp.
     */
    SinkProgress load(Instant now) throws IOException, DirectoryRefusedException {
        ObjectNode dirAttributes = directory.directoryAttributes();
        JsonNode dp = dirAttributes.get(SinkProgress.ATTRIBUTE);
        SinkProgress progress = dp == null ? null : SinkProgress.fromJson(dp, directory.root() + "/_attributes.json");
        if (progress != null && !progress.owner().equals(owner)) {
            throw new DirectoryRefusedException(sinkName + ": output_directory " + directory.root()
                    + " holds the progress of another owner (" + progress.owner() + "); each sink needs its own "
                    + "output_directory. To hand the directory over, stop the other pipeline and remove the '"
                    + SinkProgress.ATTRIBUTE + "' attribute from " + directory.root().resolve("_attributes.json"));
        }
        refreshTables();
        List<String> untimestamped = tables.entrySet().stream().filter(e -> e.getValue().tableTimestamp() == null)
                .map(Map.Entry::getKey).sorted().toList();
        if (!untimestamped.isEmpty()) {
            throw new DirectoryRefusedException(sinkName + ": output_directory " + directory.root()
                    + " has children without a table_timestamp attribute: " + untimestamped + "; the sink does not "
                    + "accept them: remove them (or move them elsewhere)");
        }
        Map.Entry<String, TableAttributes> newest = tables.entrySet().stream()
                .max(Comparator.comparing(e -> e.getValue().tableTimestamp())).orElse(null);
        SinkProgress fromTable = null;
        SinkProgress.@Nullable Owner previous = null;
        if (newest != null && newest.getValue().custom().containsKey(SinkProgress.ATTRIBUTE)) {
            SinkProgress p = SinkProgress.fromJson(newest.getValue().custom().get(SinkProgress.ATTRIBUTE),
                    "table " + newest.getKey());
            if (p.owner().equals(owner)) {
                fromTable = p;
            } else {
                previous = p.owner();
            }
        }
        if (fromTable != null && (progress == null || fromTable.nextTableTimestamp().isAfter(
                progress.nextTableTimestamp()))) {
            // the table was published but the directory attribute was not replaced yet (a crash between the two)
            progress = fromTable;
            directory.replaceDirectoryAttributes(withProgress(dirAttributes, progress));
        }
        if (progress == null) {
            // a new directory, or one handed over: "the new owner continues the grid after the most recent table"
            handOver(previous);
            Instant next = newest == null ? TableSlot.first(now, parameters.tablePeriod()).start()
                    : TableSlot.after(newest.getValue().tableTimestamp(), parameters.tablePeriod()).start();
            progress = new SinkProgress(owner, next, Map.of());
            directory.replaceDirectoryAttributes(withProgress(dirAttributes, progress));
        }
        return progress;
    }

    /**
     * Takes the directory over from a previous writer (the progress was removed), or starts a new one. Refused while
     * {@code .staging/} holds staged rows: a new directory has none (the first load comes before any staging), so they
     * are a previous writer's, their only copy, and their message ids (another input's) would count as covered for
     * this writer's partitions, which would then skip its own messages. The previous writer's input watermarks are
     * removed: they are not this input's.
     *
     * @param previous the owner of the newest table's progress when it is not this sink, or null
     */
    private void handOver(SinkProgress.@Nullable Owner previous) throws IOException, DirectoryRefusedException {
        List<StagedFile> left = stagedFiles();
        if (!left.isEmpty()) {
            throw new DirectoryRefusedException(sinkName + ": output_directory " + directory.root() + " has no '"
                    + SinkProgress.ATTRIBUTE + "' attribute but " + left.size() + " staged file(s) in " + staging
                    + " of its previous writer" + (previous == null ? "" : " (" + previous + ")") + ", not in a table "
                    + "yet; they are their rows' only copy. Run that pipeline again until " + staging + " holds no "
                    + "staged file (it gets its progress back from its newest table), stop it, then start this one; "
                    + "if it never published a table, or those rows are not wanted, delete " + staging + " (they are "
                    + "lost)");
        }
        Path watermarks = staging.resolve(WATERMARKS);
        if (Files.isDirectory(watermarks)) {
            try (var files = Files.list(watermarks)) {
                for (Path f : files.toList()) {
                    Files.deleteIfExists(f);
                }
            }
        }
    }

    private void refreshTables() throws IOException {
        List<String> names = directory.tableNames();
        tables.keySet().retainAll(names);
        for (String name : names) {
            if (!tables.containsKey(name)) {
                try {
                    tables.put(name, directory.attributes(name));
                } catch (NoSuchFileException e) {
                    // removed meanwhile
                }
            }
        }
    }

    private static ObjectNode withProgress(ObjectNode attributes, SinkProgress progress) {
        ObjectNode copy = attributes.deepCopy();
        copy.set(SinkProgress.ATTRIBUTE, progress.toJson());
        return copy;
    }

    static String tableName(Instant tableTimestamp) {
        return DateTimeFormatter.ISO_INSTANT.format(tableTimestamp);
    }

    /**
     * Writes the open slot's table from {@code files} (all their rows, or up to the limit) and publishes it with the
     * progress after it; returns that progress.
     */
    private SinkProgress writeTable(SinkProgress progress, List<StagedFile> files, boolean byLimit, Instant now,
            @Nullable Instant inputSystemWatermark) throws IOException {
        Instant t = progress.nextTableTimestamp();
        String name = tableName(t);
        StaticTableWriter.Builder builder = StaticTableWriter.builder(directory, name, rowSchema).tableTimestamp(t)
                .attribute(EXPIRATION_TIME, new TextNode(parameters.expirationOf(t, now).toString()))
                .attribute(CREATION_TIME, new TextNode(now.toString()));
        try (StaticTableWriter w = builder.open()) {
            // one pass: the rows go to the table as staged (never decoded), the frontiers after them into its
            // attributes, so that the rename publishing the table also commits the progress
            Map<Integer, SinkProgress.Frontier> frontiers = take(progress, files, byLimit, w::appendEncoded);
            collectFrontiers(frontiers, stagingArea.partitionsStaged(), inputSystemWatermark);
            SinkProgress next = progress.withNext(t.plus(parameters.tablePeriod()), frontiers);
            w.attribute(SinkProgress.ATTRIBUTE, next.toJson());
            try {
                tables.put(name, w.publish());
            } catch (FileAlreadyExistsException e) {
                throw new IOException(sinkName + ": table " + name + " of the open slot already exists in "
                        + directory.root() + " although the progress says it is not written yet; the directory was "
                        + "changed outside the sink", e);
            }
            return next;
        }
    }

    /**
     * Drops the frontiers the input system watermark passed: "A partition's frontier is deleted as soon as its
     * system_timestamp drops below the system watermark of the input stream: by that moment the partition has
     * certainly delivered everything it produced". A partition with staged files keeps it, also those the table
     * takes: they are deleted only after it is published, and without the frontier they would be written again.
     * These are all its files on disk, not only those the table's listing took: a listing skips a partition while
     * one of its files is being made visible, and a covered file may still be there.
     *
     * @param staged the partitions with a staged file on disk
     */
    static void collectFrontiers(Map<Integer, SinkProgress.Frontier> frontiers, Set<Integer> staged,
            @Nullable Instant inputSystemWatermark) {
        if (inputSystemWatermark == null || inputSystemWatermark.equals(Instant.EPOCH)) {
            return;
        }
        long watermark = inputSystemWatermark.getEpochSecond() * 1_000_000_000L + inputSystemWatermark.getNano();
        frontiers.entrySet().removeIf(e -> e.getValue().systemTimestamp() >= 0
                && e.getValue().systemTimestamp() < watermark
                && !staged.contains(e.getKey()));
    }

    /** Where {@link #take} puts a row, its Avro binary. */
    private interface RowSink {
        void accept(ByteBuffer row) throws IOException;
    }

    /**
     * Visits the rows of the open slot's table in arrival order: every uncovered staged row, or, closing by limit,
     * rows until {@code max_row_count} or {@code max_data_weight} is reached; returns the frontiers after them.
     */
    private Map<Integer, SinkProgress.Frontier> take(SinkProgress progress, List<StagedFile> files, boolean byLimit,
            RowSink sink) throws IOException {
        Map<Integer, SinkProgress.Frontier> frontiers = new LinkedHashMap<>(progress.frontiers());
        long rows = 0;
        long weight = 0;
        for (StagedFile f : files) {
            try (StagedRowReader r = new StagedRowReader(f.path())) {
                // ids increase within a file: once a row is past the frontier, so are all after it
                boolean covered = true;
                boolean taken = false;
                while (r.next()) {
                    if (covered) {
                        SinkProgress.Frontier fr = frontiers.get(f.partition());
                        if (fr != null && r.messageId().compareTo(fr.messageId()) <= 0) {
                            continue; // staged twice (a replayed input): written once
                        }
                        covered = false;
                    }
                    sink.accept(r.row());
                    taken = true;
                    rows++;
                    weight = TableSlot.addWeights(weight, r.weight());
                    if (byLimit && parameters.limitReached(rows, weight)) {
                        break;
                    }
                }
                if (taken) {
                    frontiers.put(f.partition(), new SinkProgress.Frontier(r.systemTimestamp(), r.messageId()));
                }
                if (byLimit && parameters.limitReached(rows, weight)) {
                    return frontiers;
                }
            }
        }
        return frontiers;
    }

    /** A staged file and its metadata. */
    record StagedFile(Path path, long stamp, int partition, MessageId firstId, MessageId lastId, long rows,
            long weight) {
    }

    /** The complete staged files, in the order their rows go to tables. */
    List<StagedFile> stagedFiles() throws IOException {
        return stagingArea.files();
    }

    /**
     * Deletes staged files the progress covers and rewrites partly covered ones as their uncovered tail, so that every
     * staged row that remains is still to be written.
     */
    private List<StagedFile> normalize(SinkProgress progress) throws IOException {
        for (StagedFile f : stagedFiles()) {
            MessageId covered = progress.covered(f.partition());
            if (covered == null || f.firstId().compareTo(covered) > 0) {
                continue;
            }
            if (f.lastId().compareTo(covered) > 0) {
                List<Staged> tail = new ArrayList<>();
                try (StagedRowReader r = new StagedRowReader(f.path())) {
                    while (r.next()) {
                        MessageId id = r.messageId();
                        if (id.compareTo(covered) > 0) {
                            tail.add(new Staged(r.offset(), id, r.systemTimestamp(), r.weight(), r.rowBytes()));
                        }
                    }
                }
                // same arrival stamp, so the tail keeps its place; an existing file of that name is this tail,
                // written before a crash cut the rewrite short
                if (!Files.exists(staging.resolve(StagingArea.stagedName(f.stamp(), f.partition(),
                        tail.get(0).offset())))) {
                    stagingArea.writeTail(f.stamp(), f.partition(), tail);
                }
            }
            Files.deleteIfExists(f.path());
        }
        return uncovered(stagedFiles(), progress);
    }

    /**
     * The files of a listing still to be written: those the progress does not cover, except every file of a partition
     * with a partly covered one. The listing that {@link #normalize} rewrote can have skipped such a partition (one of
     * its files was being made visible then); its files wait for the next table, where the partly covered one is cut
     * to its tail first. Taking the partition's later files now would move its frontier past that tail, which the next
     * normalization would then delete unwritten.
     */
    static List<StagedFile> uncovered(List<StagedFile> files, SinkProgress progress) {
        Set<Integer> unsettled = new HashSet<>();
        for (StagedFile f : files) {
            MessageId covered = progress.covered(f.partition());
            if (covered != null && f.firstId().compareTo(covered) <= 0 && f.lastId().compareTo(covered) > 0) {
                unsettled.add(f.partition());
            }
        }
        List<StagedFile> out = new ArrayList<>();
        for (StagedFile f : files) {
            MessageId covered = progress.covered(f.partition());
            if (!unsettled.contains(f.partition()) && (covered == null || f.firstId().compareTo(covered) > 0)) {
                out.add(f);
            }
        }
        return out;
    }

    /**
     * Removes the tables this sink wrote whose {@code expiration_time}, {@code max(table_timestamp, creation time) +
     * table_ttl}, has passed.
     *
     * @return the names removed
     */
    List<String> expire(Instant now) throws IOException {
        List<String> removed = new ArrayList<>();
        for (Map.Entry<String, TableAttributes> e : List.copyOf(tables.entrySet())) {
            JsonNode exp = e.getValue().custom().get(EXPIRATION_TIME);
            if (exp != null && !Instant.parse(exp.asText()).isAfter(now)) {
                if (directory.removeTable(e.getKey())) {
                    removed.add(e.getKey());
                }
                tables.remove(e.getKey());
            }
        }
        return removed;
    }

    /** Work under the lock. */
    private interface LockedWork<T> {
        T run() throws IOException, DirectoryRefusedException;
    }

    private <T> T locked(LockedWork<T> work) throws IOException, DirectoryRefusedException {
        jvmLock.lock();
        try (FileChannel ch = FileChannel.open(lockFile, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
                FileLock ignored = ch.lock()) {
            return work.run();
        } finally {
            jvmLock.unlock();
        }
    }

}
