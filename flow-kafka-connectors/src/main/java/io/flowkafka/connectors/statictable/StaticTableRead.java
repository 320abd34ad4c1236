package io.flowkafka.connectors.statictable;

import io.flowkafka.spi.PunctuatedSource;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.avro.Schema;
import org.apache.avro.SchemaCompatibility;
import org.apache.avro.generic.GenericRecord;
import org.jspecify.annotations.Nullable;

/**
 * Reads one static-table source in one task of its Source computation (reference 001, "Static tables").
 *
 * <p>Model. The source reads a sequence of tables: in {@code sequence} mode every table of {@code tables_path} in
 * locator order (timestamp, then name), or the {@code tables} list in its order; in {@code newest} mode the newest
 * table, again whenever a newer one appears ("A new table appearing in the directory automatically triggers a new
 * run"). A table is cut into ranges of {@code range_row_count} rows; range {@code i} belongs to partition
 * {@code i % partitionCount}, so the tasks share every table and read it in parallel. A task's share is read in
 * order, at most {@code max_rows_per_iteration} rows per step, within the rows/s and bytes/s limits; while a step
 * reads rows and the limits allow more it is {@link #ready()}, and the runtime steps again as long as its time bound
 * per punctuation lasts. The part file being read stays open between steps ({@link OpenRange}).
 *
 * <p>Invariants. Everything that decides what is emitted is in the changelogged {@link PunctuatedSource.Progress}
 * (key {@code state}): the last finished table, the table being read with its {@link TableReadPlan} (fixed when the
 * table starts: "Process restarts preserve the schedule") and how many rows of the share were read; and (key
 * {@code range_row_count}) the range size the task started its first table with, kept for every table. It is written at
 * the end of every step, in the transaction of the step's messages, so a restart or a rebalance resumes after the
 * last committed row: every row is emitted once ("exactly-once — deduplication by read ranges", reference 002). The
 * rate limit alone is on the heap: it decides when, never what.
 *
 * <p>Timestamps. A row's SystemTimestamp and EventTimestamp are the table's locator timestamp or, with
 * {@code use_planned_timestamps}, the planned start of its range, proportional to the rows of the share assigned
 * before it; the option is read when a table starts, so a change takes effect from the next table. The watermark
 * advances to the earliest timestamp still to be emitted (the current range's, or the table's) less
 * {@code watermark_delay}; a task with an empty share of a table moves it without a row.
 *
 * <p>A task with nothing left to read lists its tables at most once a second; one waiting for a listed table's
 * publication looks at every tick.
 *
 * <p>A table that disappears while read: the rows read so far stay emitted, the rest of the share is skipped, the
 * status reports an error naming the table and the rows skipped, and the source goes on with the next table.
 *
 * <p>Threading: owned by the task's stream thread.
 */
final class StaticTableRead implements PunctuatedSource.Reader {
    private static final String STATE = "state";
    /** The progress key of the range size this task started its first table with (see {@link #rangeRowCount}). */
    private static final String RANGE_ROW_COUNT = "range_row_count";

    private final PunctuatedSource.Context context;
    private final StaticTableSourceParameters fixed;
    private final Schema streamSchema;
    private final Map<Path, TablesDirectory> directories = new HashMap<>();
    private final Map<String, StaticTableReader> readers = new HashMap<>();
    private double rowTokens;
    private double byteTokens;
    private long refilledAtMs = Long.MIN_VALUE;
    private final OpenRange open = new OpenRange();
    private boolean progressed;
    /** Whether the last {@link #next} found a table to wait for (listed but not published or not complete). */
    private boolean waiting;
    /**
     * When a task with nothing to read lists its tables again: a listing reads the whole directory (and, with the
     * attribute locator, every table's attributes), so a caught-up task lists once per {@value #IDLE_LISTING_MS} ms,
     * not at every tick. On the heap: it decides when, never what.
     */
    private long nextListingMs = Long.MIN_VALUE;
    static final long IDLE_LISTING_MS = 1_000;
    /** The wait after a table that could not be read, before the next try. */
    static final long READ_RETRY_MS = 5_000;
    private long readRetryAtMs = Long.MIN_VALUE;
    private @Nullable StaticTableSourceParameters limitsNow;
    private double lastRowBytes;

    /** A table of the sequence: where it is, its name, its id in the progress, its located timestamp. */
    record Candidate(String id, TablesDirectory directory, String name, Instant timestamp) {
    }

    /** The progress of the source in this task (see the class doc). */
    record State(@Nullable String lastId, @Nullable Instant lastTimestamp, @Nullable TableReadPlan plan,
            @Nullable String currentId, long readRows, long rangeRows, long rowCount, boolean finished) {
        byte[] toBytes() {
            ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            try (DataOutputStream out = new DataOutputStream(bytes)) {
                out.writeByte(1);
                out.writeBoolean(lastId != null);
                if (lastId != null) {
                    out.writeUTF(lastId);
                    out.writeLong(lastTimestamp.getEpochSecond());
                    out.writeInt(lastTimestamp.getNano());
                }
                out.writeBoolean(plan != null);
                if (plan != null) {
                    out.writeUTF(currentId);
                    byte[] p = plan.toBytes();
                    out.writeInt(p.length);
                    out.write(p);
                    out.writeLong(readRows);
                    out.writeLong(rangeRows);
                    out.writeLong(rowCount);
                }
                out.writeBoolean(finished);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            return bytes.toByteArray();
        }

        static State fromBytes(byte @Nullable [] bytes) {
            if (bytes == null) {
                return new State(null, null, null, null, 0, 0, 0, false);
            }
            try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes))) {
                if (in.readByte() != 1) {
                    throw new IllegalStateException("unknown static-table source progress version " + bytes[0]);
                }
                String lastId = null;
                Instant lastTs = null;
                if (in.readBoolean()) {
                    lastId = in.readUTF();
                    lastTs = Instant.ofEpochSecond(in.readLong(), in.readInt());
                }
                TableReadPlan plan = null;
                String currentId = null;
                long read = 0;
                long range = 0;
                long count = 0;
                if (in.readBoolean()) {
                    currentId = in.readUTF();
                    byte[] p = new byte[in.readInt()];
                    in.readFully(p);
                    plan = TableReadPlan.fromBytes(p);
                    read = in.readLong();
                    range = in.readLong();
                    count = in.readLong();
                }
                return new State(lastId, lastTs, plan, currentId, read, range, count, in.readBoolean());
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        State finishTable(Instant timestamp) {
            return new State(currentId, timestamp, null, null, 0, 0, 0, finished);
        }
    }

    StaticTableRead(PunctuatedSource.Context context, StaticTableSourceParameters fixed) {
        this.context = context;
        this.fixed = fixed;
        this.streamSchema = context.streamSchema();
    }

    /** The parameters now: the static ones with the dynamic spec's changes. */
    private StaticTableSourceParameters current() {
        StaticTableSourceParameters p = StaticTableSourceParameters.parse(context.dynamicParameters().get(), "", new ArrayList<>());
        return p == null ? fixed : p;
    }

    @Override
    public void step(long nowMs, PunctuatedSource.Progress progress, PunctuatedSource.Emitter emitter) {
        StaticTableSourceParameters now = current();
        limitsNow = now;
        progressed = false;
        State s = State.fromBytes(progress.get(STATE));
        if (s.plan() == null) {
            if (s.finished()) {
                return;
            }
            if (nowMs < nextListingMs) {
                return;
            }
            long range = rangeRowCount(progress);
            State started = start(s, now, nowMs, range);
            if (started == null) {
                return;
            }
            s = started;
            progressed = true;
            progress.put(STATE, s.toBytes());
            if (progress.get(RANGE_ROW_COUNT) == null) {
                progress.put(RANGE_ROW_COUNT, Long.toString(range).getBytes(StandardCharsets.UTF_8));
            }
            if (s.plan() == null) {
                return; // skipped a table that vanished, or finished
            }
        }
        if (nowMs < readRetryAtMs) {
            return; // the current table could not be read: wait before the next try
        }
        State before = s;
        s = read(s, now, nowMs, emitter);
        progressed |= s.readRows() != before.readRows() || s.plan() != before.plan();
        progress.put(STATE, s.toBytes());
    }

    /**
     * Whether the last step read rows or moved to another table and the rate limits allow another row now: a
     * table's share is read in iterations of {@code max_rows_per_iteration} rows while the runtime's time bound
     * lasts.
     */
    @Override
    public boolean ready() {
        if (!progressed || limitsNow == null) {
            return false;
        }
        boolean rows = limitsNow.limits().rowsPerSecond() <= 0 || rowTokens >= 1;
        boolean bytes = limitsNow.limits().bytesPerSecond() <= 0 || lastRowBytes <= 0 || byteTokens >= lastRowBytes;
        return rows && bytes;
    }

    @Override
    public void close() {
        open.close();
    }

    /**
     * The range size of the next table: the one this task started its first table with. The tasks of a source share
     * a table by cutting it at the same size, and those that started a table before a restart keep its size, so a
     * new {@code range_row_count} would cut tables differently in different tasks (rows read twice or not at all);
     * the change is reported in the status instead.
     */
    private long rangeRowCount(PunctuatedSource.Progress progress) {
        byte[] recorded = progress.get(RANGE_ROW_COUNT);
        long configured = fixed.rangeRowCount();
        if (recorded == null) {
            return configured;
        }
        long range = Long.parseLong(new String(recorded, StandardCharsets.UTF_8));
        if (range == configured) {
            context.status().clear(RANGE_ROW_COUNT);
        } else {
            context.status().report(RANGE_ROW_COUNT, "range_row_count is " + configured + " in the spec, but source '"
                    + context.source().streamId() + "' started with " + range + ": it keeps " + range + ", since its "
                    + "tasks share each table by cutting it at one size and a task inside a table keeps that table's "
                    + "size. Fix: set range_row_count back to " + range + ", or read with the new size under a new "
                    + "computation id (a new source progress)");
        }
        return range;
    }

    /** Starts the next table, cut in ranges of {@code range} rows; null when there is none yet (progress unchanged). */
    private @Nullable State start(State s, StaticTableSourceParameters now, long nowMs, long range) {
        Optional<Candidate> next;
        try {
            next = next(s);
        } catch (IOException e) {
            context.status().report("tables", "static-table source cannot list its tables: " + e
                    + "; it retries at the next step. Fix: check that " + describeWhere() + " is readable");
            return null;
        }
        context.status().clear("tables");
        if (next.isEmpty()) {
            if (fixed.finite() && !waiting) {
                return new State(s.lastId(), s.lastTimestamp(), null, null, 0, 0, 0, true);
            }
            if (!waiting) {
                nextListingMs = nowMs + IDLE_LISTING_MS; // caught up: nothing listed after the last table
            }
            return null;
        }
        Candidate c = next.get();
        if (!complete(c)) {
            return null;
        }
        StaticTableReader reader;
        try {
            reader = reader(c);
        } catch (java.nio.file.NoSuchFileException e) {
            reportDisappeared(c.name(), 0, -1);
            return new State(c.id(), c.timestamp(), null, null, 0, 0, 0, s.finished());
        } catch (IOException e) {
            context.status().report("table/" + c.name(), "static-table source cannot open table '" + c.name()
                    + "': " + e + "; it retries at the next step");
            return null;
        }
        String schemaProblem = schemaProblem(c, reader);
        if (schemaProblem != null) {
            context.status().report("table/" + c.name() + "/schema", schemaProblem);
            readers.remove(c.id()); // the fix may publish the table again under its name: read it afresh then
            return null;
        }
        context.status().clear("table/" + c.name() + "/schema");
        long rows = reader.rowCount();
        long share = shareRows(rows, range, context.partition(), context.partitionCount());
        long weight = rows == 0 ? 0 : (long) ((double) reader.dataWeight() * share / rows);
        TableReadPlan plan = TableReadPlan.start(new LocatedTable(c.name(), c.timestamp()),
                now.usePlannedTimestamps(), share, weight, Instant.ofEpochMilli(nowMs), now.limits());
        return new State(s.lastId(), s.lastTimestamp(), plan, c.id(), 0, range, rows, s.finished());
    }

    /** Reads on in the current table; finishes it at the end of the share. */
    private State read(State s, StaticTableSourceParameters now, long nowMs, PunctuatedSource.Emitter emitter) {
        TableReadPlan plan = s.plan();
        long share = shareRows(s.rowCount(), s.rangeRows(), context.partition(), context.partitionCount());
        long read = s.readRows();
        Candidate c;
        try {
            c = candidate(s.currentId(), plan);
        } catch (UncheckedIOException e) {
            if (!(e.getCause() instanceof NoSuchFileException)) {
                throw e;
            }
            reportDisappeared(plan.table(), read, share); // its directory went away with it
            return s.finishTable(plan.locatorTimestamp());
        }
        StaticTableReader reader;
        try {
            reader = reader(c);
        } catch (IOException e) {
            if (stillListed(c)) {
                context.status().report(readFailurePath(c), "static-table source of stream '"
                        + context.source().streamId() + "' cannot open table '" + c.name() + "': " + e + ". It "
                        + "retries every " + READ_RETRY_MS / 1000 + " s; the tables after it wait. Fix: make the "
                        + "table readable, or remove it to skip it");
                readRetryAtMs = nowMs + READ_RETRY_MS;
                return s;
            }
            reportDisappeared(c.name(), read, share);
            return s.finishTable(c.timestamp());
        }
        if (open.isOpenOn(c.id()) && !stillListed(c)) {
            // an open file outlives its table's removal: check once per step, as opening the range would
            open.close();
            readers.remove(c.id());
            reportDisappeared(c.name(), read, share);
            return s.finishTable(c.timestamp());
        }
        double rowBytes = s.rowCount() == 0 ? 0 : (double) reader.dataWeight() / s.rowCount();
        lastRowBytes = rowBytes;
        long budget = budget(now, nowMs, rowBytes);
        long delayMs = fixed.watermarkDelay().toMillis();
        boolean countRows = now.limits().rowsPerSecond() > 0;
        boolean countBytes = now.limits().bytesPerSecond() > 0;
        try {
            while (budget > 0 && read < share) {
                long inRange = read % s.rangeRows();
                long rangeStartInShare = read - inRange;
                long row = globalRow(read, s.rangeRows(), context.partition(), context.partitionCount());
                long rangeLeft = Math.min(s.rangeRows() - inRange, share - read);
                long n = Math.min(budget, rangeLeft);
                long ts = plan.timestampAt(Math.min(rangeStartInShare, planRows(plan, share))).toEpochMilli();
                long watermark = ts - delayMs;
                TableRowIterator it = open.at(c.id(), reader, row, row + rangeLeft);
                for (long i = 0; i < n; i++) {
                    GenericRecord r = open.next(it);
                    emitter.emit(r, ts, watermark);
                    read++;
                    budget--;
                    if (countRows) {
                        rowTokens--;
                    }
                    if (countBytes) {
                        byteTokens -= rowBytes;
                    }
                }
            }
        } catch (UncheckedIOException e) {
            open.close();
            readers.remove(c.id()); // a table published again is read afresh
            if (stillListed(c)) {
                // a cut or damaged file, or a passing I/O error: the source waits on the table, reporting it, and
                // retries from the row it reached (the rows emitted before stay in this step)
                context.status().report(readFailurePath(c), "static-table source of stream '"
                        + context.source().streamId() + "': " + e.getMessage() + ". It waits and retries every " + READ_RETRY_MS / 1000 + " s from "
                        + "row " + read + " of its share; the tables after it wait too. Fix: copy the table's files "
                        + "again in full, or remove the table to skip it");
                readRetryAtMs = nowMs + READ_RETRY_MS;
                return new State(s.lastId(), s.lastTimestamp(), plan, s.currentId(), read, s.rangeRows(),
                        s.rowCount(), s.finished());
            }
            reportDisappeared(c.name(), read, share);
            return s.finishTable(c.timestamp());
        }
        context.status().clear(readFailurePath(c));
        if (read >= share) {
            // a task whose share is empty (more partitions than ranges) emits no row: its watermark moves here, else
            // it would hold back the readers downstream
            emitter.advance(plan.timestampAt(0).toEpochMilli() - delayMs);
            open.close();
            readers.remove(c.id());
            return s.finishTable(c.timestamp());
        }
        return new State(s.lastId(), s.lastTimestamp(), plan, s.currentId(), read, s.rangeRows(), s.rowCount(),
                s.finished());
    }

    private static long planRows(TableReadPlan plan, long share) {
        return plan.schedule() == null ? share : plan.schedule().rowCount();
    }

    private static String readFailurePath(Candidate c) {
        return "table/" + c.name() + "/read";
    }

    private boolean stillListed(Candidate c) {
        try {
            return c.directory().tableNames().contains(c.name());
        } catch (IOException e) {
            return true;
        }
    }

    private void reportDisappeared(String table, long read, long share) {
        context.status().clear("table/" + table + "/read"); // removed to skip it: it no longer waits
        context.status().report("table/" + table, "static table '" + table + "' of source '"
                + context.source().streamId() + "' disappeared while being read: partition " + context.partition()
                + " had read " + read + (share < 0 ? "" : " of its " + share) + " rows; the rest are skipped and the "
                + "source goes on with the next table. Fix: keep a table until the source has read it (replace a "
                + "table by publishing a newer one, never by removing the one being read)");
    }

    /** Rows/s and bytes/s limits as token buckets of one second; the per-step limit. */
    private long budget(StaticTableSourceParameters now, long nowMs, double rowBytes) {
        long rowsLimit = now.limits().rowsPerSecond();
        long bytesLimit = now.limits().bytesPerSecond();
        if (refilledAtMs == Long.MIN_VALUE) {
            rowTokens = rowsLimit;
            byteTokens = bytesLimit;
        } else if (nowMs > refilledAtMs) {
            double secs = (nowMs - refilledAtMs) / 1000.0;
            rowTokens = Math.min(Math.max(rowsLimit, 1), rowTokens + rowsLimit * secs);
            byteTokens = Math.min(Math.max(bytesLimit, rowBytes), byteTokens + bytesLimit * secs);
        }
        refilledAtMs = Math.max(refilledAtMs, nowMs);
        // without a limit the bucket stays empty and rows read leave no debt: a limit set later applies at once
        if (rowsLimit <= 0) {
            rowTokens = 0;
        }
        if (bytesLimit <= 0) {
            byteTokens = 0;
        }
        long budget = now.maxRowsPerIteration();
        if (rowsLimit > 0) {
            budget = Math.min(budget, (long) Math.floor(Math.max(0, rowTokens)));
        }
        if (bytesLimit > 0 && rowBytes > 0) {
            budget = Math.min(budget, (long) Math.floor(Math.max(0, byteTokens) / rowBytes));
        }
        return budget;
    }

    /**
     * Whether the table is complete (a table of another tool's: once it holds {@code _SUCCESS}); if not, reported:
     * the source waits for it, in order.
     */
    private boolean complete(Candidate c) {
        String path = "table/" + c.name() + "/incomplete";
        boolean complete;
        try {
            complete = c.directory().complete(c.name());
        } catch (IOException e) {
            context.status().report(path, "static-table source cannot read table '" + c.name() + "': " + e
                    + "; it retries at the next step");
            return false;
        }
        if (complete) {
            context.status().clear(path);
            return true;
        }
        context.status().report(path, "static table '" + c.name() + "' is not complete: it has no _table.json (it "
                + "was not written by flow-kafka) and no _SUCCESS file, so its files may still be coming; the source "
                + "waits for it. Fix: let its writer finish (Spark and other Hadoop committers write _SUCCESS), or "
                + "publish tables by renaming a finished directory into place with a _SUCCESS file in it");
        return false;
    }

    /**
     * The next table after the last finished one; empty when none is listed yet, and then {@link #waiting} if a
     * listed table is still to be published.
     */
    private Optional<Candidate> next(State s) throws IOException {
        waiting = false;
        if (!fixed.tables().isEmpty()) {
            int from = 0;
            if (s.lastId() != null) {
                from = fixed.tables().stream().map(Path::toString).toList().indexOf(s.lastId()) + 1;
            }
            for (int i = from; i < fixed.tables().size(); i++) {
                Path p = fixed.tables().get(i);
                TablesDirectory dir = directory(p.toAbsolutePath().getParent());
                String name = p.getFileName().toString();
                if (!dir.tableNames().contains(name)) {
                    if (laterListedTablePublished(i)) {
                        // gone (removed after other tasks read it, or by retention): waiting would stop this task
                        // for good, a finite source never completing
                        context.status().report("table/" + name, "static table '" + name + "' is listed but gone "
                                + "while a later listed table is published: it is skipped, and the rows this task "
                                + "had still to read of it are not read");
                        continue;
                    }
                    waiting = true;
                    return Optional.empty(); // not published yet: wait for it, in order, even if finite
                }
                Optional<Instant> ts = fixed.locator().locate(dir, name);
                if (ts.isPresent()) {
                    return Optional.of(new Candidate(p.toString(), dir, name, ts.get()));
                }
                context.status().report("table/" + name, "static table '" + name + "' has no timestamp for "
                        + fixed.locator() + "; it is skipped. Fix: name it as ISO 8601 or set its table_timestamp");
            }
            return Optional.empty();
        }
        State last = s;
        TablesDirectory dir = directory(fixed.tablesPath());
        List<LocatedTable> located = fixed.locator().inOrder(dir);
        if (fixed.newest()) {
            if (located.isEmpty()) {
                return Optional.empty();
            }
            LocatedTable latest = located.get(located.size() - 1);
            return after(last, latest) ? Optional.of(new Candidate(latest.name(), dir, latest.name(), latest.timestamp()))
                    : Optional.empty();
        }
        return located.stream().filter(t -> after(last, t)).findFirst()
                .map(t -> new Candidate(t.name(), dir, t.name(), t.timestamp()));
    }

    /** Whether a table listed after the {@code index}-th in {@code tables} is published. */
    private boolean laterListedTablePublished(int index) throws IOException {
        for (int j = index + 1; j < fixed.tables().size(); j++) {
            Path later = fixed.tables().get(j);
            if (directory(later.toAbsolutePath().getParent()).tableNames().contains(later.getFileName().toString())) {
                return true;
            }
        }
        return false;
    }

    private static boolean after(State s, LocatedTable t) {
        if (s.lastId() == null) {
            return true;
        }
        int c = t.timestamp().compareTo(s.lastTimestamp());
        return c > 0 || c == 0 && t.name().compareTo(s.lastId()) > 0;
    }

    private Candidate candidate(String id, TableReadPlan plan) {
        try {
            if (!fixed.tables().isEmpty()) {
                Path p = Path.of(id);
                return new Candidate(id, directory(p.toAbsolutePath().getParent()), p.getFileName().toString(),
                        plan.locatorTimestamp());
            }
            return new Candidate(id, directory(fixed.tablesPath()), plan.table(), plan.locatorTimestamp());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot open the tables directory of table '" + plan.table() + "'", e);
        }
    }

    /** The tables directory at {@code path}, which must exist: a source never creates it (a mistyped path waits). */
    private TablesDirectory directory(Path path) throws IOException {
        TablesDirectory d = directories.get(path);
        if (d == null) {
            if (!Files.isDirectory(path)) {
                throw new NoSuchFileException(path.toString(), null, "no such directory");
            }
            d = LocalTablesDirectory.open(path);
            directories.put(path, d);
        }
        return d;
    }

    private StaticTableReader reader(Candidate c) throws IOException {
        StaticTableReader r = readers.get(c.id());
        if (r == null) {
            r = StaticTableReader.open(c.directory(), c.name(), streamSchema);
            readers.put(c.id(), r);
        }
        return r;
    }

    /** Whether the table's rows read as the stream's schema: null if so, else the error to report. */
    private @Nullable String schemaProblem(Candidate c, StaticTableReader reader) {
        if (reader.rowCount() == 0) {
            return null;
        }
        Schema writer;
        try (TableRowIterator it = StaticTableReader.open(c.directory(), c.name()).rows(0, 1)) {
            writer = it.next().getSchema();
        } catch (IOException | UncheckedIOException e) {
            return null; // unreadable now: reading reports it
        }
        SchemaCompatibility.SchemaPairCompatibility compat =
                SchemaCompatibility.checkReaderWriterCompatibility(streamSchema, writer);
        if (compat.getType() == SchemaCompatibility.SchemaCompatibilityType.COMPATIBLE) {
            return null;
        }
        return "static table '" + c.name() + "' cannot be read as the schema of stream '"
                + context.source().streamId() + "' (" + compat.getDescription() + "); the source waits. Fix: give "
                + "the stream a schema the table's rows resolve to (Avro schema resolution), or remove the table";
    }

    private String describeWhere() {
        return fixed.tablesPath() != null ? "tables_path " + fixed.tablesPath() : "tables " + fixed.tables();
    }

    @Override
    public boolean done(PunctuatedSource.Progress progress) {
        return fixed.finite() && State.fromBytes(progress.get(STATE)).finished();
    }

    /** The rows of a partition's share: its ranges {@code i % partitions == partition}. */
    static long shareRows(long rowCount, long rangeRows, int partition, int partitions) {
        long ranges = (rowCount + rangeRows - 1) / rangeRows;
        if (ranges <= partition) {
            return 0;
        }
        long mine = (ranges - 1 - partition) / partitions + 1;
        long rows = mine * rangeRows;
        if ((ranges - 1) % partitions == partition) {
            rows -= ranges * rangeRows - rowCount; // the last, short range is ours
        }
        return rows;
    }

    /** The table row of a partition's {@code k}-th row of its share. */
    static long globalRow(long k, long rangeRows, int partition, int partitions) {
        long m = k / rangeRows;
        return (partition + m * partitions) * rangeRows + k % rangeRows;
    }
}
