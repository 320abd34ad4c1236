package io.flowkafka.internal.timers;

import io.flowkafka.internal.streams.SortedMemoryStore;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.state.KeyValueBytesStoreSupplier;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.StoreBuilder;
import org.apache.kafka.streams.state.Stores;
import org.jspecify.annotations.Nullable;

/**
 * The pending timers of one computation's task: durable, deduplicated, fired in trigger order in
 * bounded steps, with the smallest pending event timestamp (the watermark hold) at the cost of one
 * seek.
 *
 * <h2>Model</h2>
 * Two changelogged key-value stores per computation hold everything; the heap holds only caches.
 * <ol>
 *   <li>{@code <computation>.timers}: one row per pending timer, keyed
 *       {@code (timer stream, trigger, encoded key[, message id])} (layout in {@link TimerKeys}),
 *       valued by the Avro {@code TimerValue}. Store order is firing order: per timer stream by
 *       trigger, then by key hash and key, which gives Flow's rule "within one timer stream, timers
 *       of a key fire in TriggerTimestamp order". With {@code deduplicate_equal_timestamps} (Flow's
 *       default) the message id is not part of the key, so one key has at most one timer per trigger
 *       in a stream; without it, equal triggers coexist.</li>
 *   <li>{@code <computation>.timer-holds}: an index with one empty-valued row per pending timer,
 *       keyed {@code (timer stream, event timestamp, rest of the timer key)}. The first row of a
 *       stream holds its smallest pending event timestamp. Every write to the timers store writes
 *       the matching hold in the same call, so both stores change in the same Kafka transaction
 *       (while an index is being built, only below its build cursor: see below).
 *       Only for a computation whose output watermark somebody reads (one that writes an internal
 *       stream): without a holds store ({@code null}) no hold is written, {@link #hasPending}
 *       seeks the timers store instead, and {@link #watermarkHold} is conservative.</li>
 * </ol>
 *
 * <h2>A holds store that is missing its index</h2>
 * A computation that gains a reader of its output (a new pipeline version) gets a holds store
 * while its timers store already holds timers, maybe millions. The constructor notices it (the timers
 * store has a stream's end mark, the holds store has not), and {@link #buildHoldsStep}, which the
 * timer punctuation calls, builds the stream's index in bounded steps: each writes the holds of at
 * most {@code maxRows} timers, in timers-store order from a <em>build cursor</em>, and the new cursor
 * in a row of the holds store ({@link TimerKeys#buildCursor}), so both change in the same
 * transaction and a new object (after a restore or a revive) resumes where the last committed step
 * stopped. The invariant: a timer has a hold if and only if its key is below the cursor. A committing
 * call keeps it and never builds: it writes or deletes the hold of a timer below the cursor, and
 * leaves one at or above it to the build (which reads the timer as it is then). A step starts at the
 * due floor when that is above the cursor (no timer lies between them). When a step's scan meets the
 * stream's end mark it writes the end mark to the holds store, which completes the index, and
 * deletes the cursor row. Until then the hold of the stream is {@link Long#MIN_VALUE} while it has
 * timers: the watermark waits, it never overtakes a pending timer and is never computed from a
 * partial index. Ten million pending timers, in steps of at most 10,000 holds and 50 ms: 1,054
 * steps, 29 ms at the median, 35 s in all, 5 MB of live heap ({@code HoldsBuildStressMain}).
 *
 * <h2>Invariants</h2>
 * <ul>
 *   <li>Call atomicity, as in {@code KeyStates}: {@link #add} and {@link #delete} only buffer;
 *       {@link #commitCall()} applies the buffer after the process-function call returned;
 *       {@link #abortCall()} drops it. A failed call leaves no timer, no hold, no changelog record.</li>
 *   <li>Deduplication is decided in {@link #commitCall()} against the store and within the buffer:
 *       of two timers with the same stream, key and trigger the one with the smaller event
 *       timestamp stays, the earlier one on a tie ("if you try to create a timer with the same key
 *       and trigger_timestamp, only one timer remains — the one with the smaller EventTimestamp
 *       value"). A replaced timer's hold is deleted with it. The decision reads only the store, so
 *       a replay decides the same.</li>
 *   <li>{@link #delete} removes the stored timer only: a timer that the same call adds under the
 *       same key is kept, whatever the order of the two (an {@code onTimer} that registers its own
 *       key and trigger again).</li>
 *   <li>Timers and holds are in one-to-one correspondence (while a stream's index is being built:
 *       its timers below the build cursor and its holds). A deletion finds the hold from the
 *       stored timer (read, or remembered from the scan), never from the caller's copy, which dedup
 *       may have replaced since it was handed out; a dangling hold would stop the watermark for
 *       good.</li>
 *   <li>A timer fires when its watermark exceeds its trigger: {@link #due} returns triggers
 *       {@code < watermark}, never {@code ==}.</li>
 * </ul>
 *
 * <h2>Caches, and why correctness never depends on them</h2>
 * Per timer stream the object keeps:
 * <ul>
 *   <li>a <em>due floor</em>: a timer key such that the stream has no committed timer below it.
 *       {@link #due} scans from it and then moves it to the first row it met (or to the scan's end
 *       when it met none); {@link #commitCall()} lowers it to any key it adds below it (a timer
 *       added in the past). Its absence means "the stream's first key". A copy is kept in the
 *       stores (see below), so that a new object starts from it;</li>
 *   <li>a <em>hold floor</em> with the same meaning for holds, and the stream's smallest hold
 *       key when known. Adding a hold lowers the minimum in place; deleting the minimum marks it
 *       unknown and moves the hold floor to the deleted key, so the next
 *       {@link #minPendingEventTimestamp} does one seek from there, not a scan;</li>
 *   <li>the lowest key added since the last {@link #due} of the stream, for {@link #overtaken};</li>
 *   <li>the stream's first committed timer as last sought, until the next committing call (the only
 *       writer of the timers store), so that {@link #hasPending} and {@link #minPendingTriggerTimestamp}
 *       asked again before then seek nothing;</li>
 *   <li>the event timestamps of the timers {@link #due} last handed out (at most 4096), exact
 *       because every write to one of their keys removes its entry: deleting a fired timer then
 *       needs no read to find its hold, which saves a RocksDB point lookup per fired timer.</li>
 * </ul>
 * Each cache states a fact about the committed stores that every write keeps true, so a fresh
 * object over restored stores (floors as kept in the stores, unknown minima) gives exactly the
 * answers of the object it replaces, only after a few more seeks. Every decision (what fires, in
 * which order, which duplicate stays, the hold) is thus derived from the changelogged stores, as
 * DESIGN.md's rules demand, and a replay after an aborted transaction repeats it.
 *
 * <h2>Kept floors</h2>
 * Each store has a floor row per stream ({@link TimerKeys#floorMark}, after the end mark, outside
 * the stream's scans) whose value is a floor with the same meaning as the cache: no committed timer
 * (hold) of the stream lies below it. The constructor and {@link #resetCaches()} start the floors
 * from these rows, so the first scans of a new object (after a restore, or a task revived after an
 * aborted transaction) walk the tombstones of a few batches of fired timers, not of every timer
 * fired since compaction last ran. The rows are written by {@link #commitCall()} only, in the same
 * writes as the timers, so they change in the same transaction: (1) in any call that adds a timer
 * or hold below its row, lowered to the floor in memory (which the add lowered below it): the row
 * stays a fact, and a replay gives the same answers; (2) otherwise at most once per {@link #due}
 * step of the stream, raised to the floor in memory, and only once {@link #FLOOR_KEPT_EVERY}
 * timers of the stream were deleted since the last write: one small write per step, not per timer.
 *
 * <h2>Tombstones, and bounded steps</h2>
 * RocksDB deletes are tombstones until compaction drops them, and a seek walks every tombstone
 * between its target and the first live key. Kafka's RocksDB range iterator sets no upper bound
 * and steps to the next live row eagerly after each row it returns, so the walk does not even stop
 * at the end of the range. Firing deletes timers in store order:
 * after a million fired timers, a scan from the stream's first key would walk a million tombstones
 * on every call (the long scan that got littlehorse's producer fenced). Three measures bound it:
 * <ol>
 *   <li>scans start at the floors. A floor moves up to the first live key a seek meets (for
 *       {@link #due}, even one past the watermark: it scans towards the stream's end and stops at
 *       the first such key) and only a timer added below it moves it down, so a tombstone is walked
 *       a bounded number of times before compaction drops it, more only after such an add:
 *       amortised O(1) per fired timer. For holds this assumes {@link #minPendingEventTimestamp} is
 *       asked once per fired batch, as the watermark code does, since deletions while the minimum
 *       is unknown cannot move the hold floor;</li>
 *   <li>a floor at or past the bound answers "nothing due" or "nothing pending" with no seek;</li>
 *   <li>each stream's region in each store ends with a live end mark of two rows
 *       ({@link TimerKeys}), so a seek in a stream with nothing left stops there instead of walking
 *       the next stream's tombstones (70 s instead of 0.05 s for 1000 add-fire rounds next to 200k
 *       tombstones, in {@code RocksDbTimerStoreTest}). End marks are written once, inside the first
 *       committing call of a new object, where they have a record context and join its
 *       transaction.</li>
 * </ol>
 * In-memory stores (tests) have no tombstones. The compiled topology's are {@link SortedMemoryStore}s, whose
 * scans seek and step like RocksDB's; Kafka's in-memory range iterator copies every key of the range into a new
 * sorted set before returning the first: on any in-memory store {@link #due} scans only up to the watermark's
 * bound (a scan meeting no key leaves the floor at the bound), not to the end mark, or every watermark step
 * would copy all pending timers.
 * {@link #due} returns at most {@code maxTimers} timers per call, so when the watermark jumps over
 * a large backlog, firing proceeds in steps of bounded size that the caller spreads over
 * punctuations, each far inside the transaction timeout. On persistent and sorted in-memory stores a scan also reads
 * the next 128 committed timers past the bound and keeps them, with the key up to
 * which they are complete: while the watermark stays below that key, the next steps hand timers out
 * from them without a seek (a watermark that moves a little per record would otherwise seek once
 * per record). Firing a timer pops the first; any other write below the limit drops them (adds are
 * normally far above: a timer waits). A new object after a restore starts at the kept floors (see
 * above) and walks the tombstones between them and the first live keys once.
 *
 * <h2>Memory</h2>
 * Nothing is proportional to the number of timers: per stream a few keys and at most
 * 1,024 rows read ahead, per call the buffer of that call's own writes, per batch at
 * most {@code maxTimers} decoded timers. Iterators are closed
 * before a method returns. Ten million pending timers in a task run in a 256 MiB heap
 * ({@code TimerStressMain}).
 *
 * <h2>Store options</h2>
 * Both stores are persistent RocksDB (in-memory for tests) and changelogged. Not with Kafka Streams'
 * record cache: a timer is typically written once, read once by a scan and deleted once, so it would
 * save no reads, and its flush writes a tombstone for every deleted key. A compiled topology puts the
 * RocksDB stores behind flow-kafka's {@link io.flowkafka.internal.streams.WriteBackStore} instead
 * ({@link #storeBuilders(String, boolean, boolean, io.flowkafka.internal.streams.WriteBackStore.Budget)}):
 * a timer added and fired between two commits, and its hold (written with
 * {@code WriteBackStore.putNew}: a new timer has no hold), then reach neither RocksDB nor the changelog;
 * its scans merge the unflushed timers in. Everything above holds of the merged view as of a store.
 *
 * <h2>Limitations</h2>
 * <ol>
 *   <li>A timer stream is identified by its position in the computation's {@code timers} list; a
 *       restart must keep the order (new timer streams go at the end). The constructor checks the
 *       stored timers against the ids and refuses a mismatch.</li>
 *   <li>{@link #due} and the holds see committed timers only, not the current call's buffer.</li>
 *   <li>A timer that a call adds with a trigger below timers already handed out by {@link #due}
 *       sorts before them; {@link #overtaken} tells the caller to fetch a fresh batch to keep
 *       per-key trigger order.</li>
 *   <li>Changing {@code deduplicate_equal_timestamps} of a stream with pending timers is allowed,
 *       but timers stored under the other setting are not deduplicated against new ones; {@link #delete}
 *       removes one that {@link #due} handed out by the key it is stored under.</li>
 *   <li>On in-memory stores (tests), whose range iterator copies the keys of its range, each
 *       {@link #buildHoldsStep} copies the keys from the cursor to the stream's end.</li>
 * </ol>
 *
 * <h2>Threading</h2>
 * Not thread-safe: owned by the stream thread of one task. Create it in {@code Processor#init},
 * after Kafka Streams has restored the stores, and drop it when the task closes; a task that is
 * re-initialised (after a corrupted task or an aborted transaction) creates a new one, or calls
 * {@link #resetCaches()}. The stores are owned and closed by Kafka Streams, never by this class.
 *
 * <p>Over 700 lines because the two stores keep one invariant (a timer has a hold iff its key is below
 * the build cursor) that every write, deletion, scan and build step must keep together; the key layout
 * is already apart in {@link TimerKeys} and the value codec in {@code TimerValueCodec}.
 */
public final class TimerStore {
    /** The largest number of timer streams a computation may have. */
    public static final int MAX_TIMER_STREAMS = 0x7FFF;

    private static final byte[] EMPTY = new byte[0];
    private static final int MAX_SCANNED = 4_096;
    /** A stream's floors are written to their rows once per {@link #due} step, once this many timers were deleted since the last write. */
    static final int FLOOR_KEPT_EVERY = 128;
    /** How many committed timers a scan of {@link #due} reads ahead, beyond those it hands out ({@link #readsAhead}). */
    static final int READ_AHEAD = 128;
    /** At most this many rows are kept read ahead (a batch larger than that is not kept). */
    private static final int READ_AHEAD_MAX = 1_024;

    private final KeyValueStore<Bytes, byte[]> timers;
    private final @Nullable KeyValueStore<Bytes, byte[]> holds;
    /**
     * The stores for the hot reads (the deduplication read, scans and seeks): the {@link SortedMemoryStore} under
     * a store's wrappers when it has one (a read there adds nothing but store metrics), else the store. Writes
     * always go through the wrappers (change logging).
     */
    private final KeyValueStore<Bytes, byte[]> timersReads;
    private final @Nullable KeyValueStore<Bytes, byte[]> holdsReads;
    /**
     * Whether {@link #due} scans to the end mark and keeps the next timers read ahead: persistent stores (their
     * tombstones) and a {@link SortedMemoryStore} (a seek costs a walk down the tree, the read-ahead none);
     * not Kafka's in-memory store, whose range copies every key of the range.
     */
    private final boolean readsAhead;
    /** The write-back cache of the holds store, when it has one (persistent stores of a compiled topology). */
    private final io.flowkafka.internal.streams.@Nullable WriteBackStore holdsCache;
    /** The write-back cache of the timers store, when it has one. */
    private final io.flowkafka.internal.streams.@Nullable WriteBackStore timersCache;
    /**
     * Per stream: a key at or above which the timers store holds no timer of the
     * stream (null: the stream holds none), when known. A timer added above it is new without a read:
     * event-time timers at a constant delay arrive in trigger order, so nearly every add skips the
     * deduplication read. Adds raise it; deletes leave it an upper bound.
     */
    private final @Nullable Bytes[] maxTimer;
    private final boolean[] maxTimerKnown;
    /**
     * Per stream ({@link #readsAhead}): the committed timers that {@link #due}'s last scan read, from the due
     * floor on, in key order; with {@link #aheadLimit} they are exactly the stream's timers below that key.
     * Firing pops the first; any other write below the limit drops the lot. Null when not known. Saves a
     * RocksDB seek per watermark step: the next due timers are usually already read.
     */
    private final java.util.ArrayDeque<KeyValue<Bytes, byte[]>>[] ahead;
    private final @Nullable Bytes[] aheadLimit;
    private final List<String> streamIds;
    private final byte[][] streamIdBytes;
    private final boolean[] deduplicate;
    private Map<Bytes, Op> buffer = new LinkedHashMap<>();

    private final @Nullable Bytes[] dueFloor;
    private final @Nullable Bytes[] holdFloor;
    /** Per stream: the due floor as its row in the timers store keeps it; null: no row (the stream's start). */
    private final @Nullable Bytes[] dueFloorKept;
    /** Per stream: the hold floor as its row in the holds store keeps it; null: no row. */
    private final @Nullable Bytes[] holdFloorKept;
    /** Per stream: timers deleted since its floors were last written to their rows. */
    private final int[] deletedSinceKept;
    /** Per stream: whether {@link #due} ran since its floors were last written to their rows. */
    private final boolean[] dueSinceKept;
    private final @Nullable Bytes[] minHold;
    private final boolean[] minKnown;
    /** Streams whose holds index is still to be built from their timers (see the class comment). */
    private final boolean[] holdsUnbuilt;
    /**
     * Per stream whose index is being built: the build cursor, as its row in the holds store keeps it. The
     * timers with a hold are exactly those below it; null: none yet (no row).
     */
    private final @Nullable Bytes[] buildCursor;
    /**
     * Per stream, its first committed timer as last sought ({@link #firstPendingTimer}), valid until the
     * next committing call: only {@link #commitCall()} writes the timers store.
     */
    private final @Nullable Bytes[] firstPending;
    private final boolean[] firstPendingKnown;
    private final @Nullable Bytes[] addedSinceDue;
    /** Event timestamps of stored timers that {@link #due} read, so that firing them reads nothing. */
    private final Map<Bytes, Long> scannedEvents = new HashMap<>();
    /**
     * Timers the last {@link #due} of their stream handed out that are stored under the other
     * {@code deduplicate_equal_timestamps} setting, with the key they are stored under; empty unless it changed.
     */
    private final Map<PendingTimer, Bytes> storedOtherwise = new HashMap<>();
    private boolean endMarksWritten;

    /** One buffered change of one timer key. */
    private static final class Op {
        boolean deleteStored;
        @Nullable PendingTimer add;

        Op(boolean deleteStored, @Nullable PendingTimer add) {
            this.deleteStored = deleteStored;
            this.add = add;
        }
    }

    /**
     * A timer store over a computation's two stores.
     *
     * @param timers the store named {@link #timersStoreName}
     * @param holds the store named {@link #holdsStoreName}, or null for a computation that keeps no
     *     watermark hold (nobody reads its output watermark)
     * @param timerStreamIds the ids of the computation's timer streams, in spec order; a timer's
     *     {@link PendingTimer#streamIndex()} is a position in this list
     * @param deduplicate {@code deduplicate_equal_timestamps} of each timer stream (copied)
     * @throws IllegalArgumentException if the lists' sizes differ or exceed
     *     {@link #MAX_TIMER_STREAMS}, or an id repeats
     * @throws IllegalStateException if the stores hold timers of a stream at another position (the
     *     spec's timer streams were reordered, renamed or removed)
     */
    public TimerStore(KeyValueStore<Bytes, byte[]> timers, @Nullable KeyValueStore<Bytes, byte[]> holds,
            List<String> timerStreamIds, boolean[] deduplicate) {
        this.timers = Objects.requireNonNull(timers, "timers");
        this.holds = holds;
        this.timersReads = readsOf(timers);
        this.holdsReads = holds == null ? null : readsOf(holds);
        this.readsAhead = timers.persistent() || timersReads instanceof SortedMemoryStore;
        this.holdsCache = holds == null ? null : io.flowkafka.internal.streams.WriteBackStore.find(holds);
        this.timersCache = io.flowkafka.internal.streams.WriteBackStore.find(timers);
        this.streamIds = List.copyOf(timerStreamIds);
        Objects.requireNonNull(deduplicate, "deduplicate");
        int n = streamIds.size();
        if (deduplicate.length != n) {
            throw new IllegalArgumentException("deduplicate has " + deduplicate.length + " entries but there are " + n
                    + " timer streams: give one per timer stream");
        }
        if (n > MAX_TIMER_STREAMS) {
            throw new IllegalArgumentException("a computation may have at most " + MAX_TIMER_STREAMS
                    + " timer streams but has " + n);
        }
        if (Set.copyOf(streamIds).size() != n) {
            throw new IllegalArgumentException("timer stream ids must be distinct but were " + streamIds);
        }
        this.deduplicate = deduplicate.clone();
        this.streamIdBytes = new byte[n][];
        for (int i = 0; i < n; i++) {
            streamIdBytes[i] = streamIds.get(i).getBytes(StandardCharsets.UTF_8);
        }
        this.dueFloor = new Bytes[n];
        this.holdFloor = new Bytes[n];
        this.minHold = new Bytes[n];
        this.minKnown = new boolean[n];
        this.addedSinceDue = new Bytes[n];
        this.holdsUnbuilt = new boolean[n];
        this.buildCursor = new Bytes[n];
        this.dueFloorKept = new Bytes[n];
        this.holdFloorKept = new Bytes[n];
        this.deletedSinceKept = new int[n];
        this.dueSinceKept = new boolean[n];
        this.firstPending = new Bytes[n];
        this.firstPendingKnown = new boolean[n];
        this.maxTimer = new Bytes[n];
        this.maxTimerKnown = new boolean[n];
        @SuppressWarnings("unchecked")
        java.util.ArrayDeque<KeyValue<Bytes, byte[]>>[] a = new java.util.ArrayDeque[n];
        this.ahead = a;
        this.aheadLimit = new Bytes[n];
        loadFromStores();
        checkNoRemovedStreams();
    }

    /**
     * Reads what the stores keep besides timers and holds: each stream's floors (and checks its first timer's
     * stream id), and which streams' holds index is still to be built, with its cursor. Reads only.
     */
    private void loadFromStores() {
        for (int s = 0; s < streamIds.size(); s++) {
            Bytes end = TimerKeys.streamEnd(s);
            holdsUnbuilt[s] = holds != null && timers.get(end) != null && holds.get(end) == null;
            buildCursor[s] = holdsUnbuilt[s] ? bytes(Objects.requireNonNull(holds).get(TimerKeys.buildCursor(s))) : null;
            dueFloorKept[s] = bytes(timers.get(TimerKeys.floorMark(s)));
            holdFloorKept[s] = holds == null || holdsUnbuilt[s] ? null : bytes(holds.get(TimerKeys.floorMark(s)));
            holdFloor[s] = holdFloorKept[s];
            deletedSinceKept[s] = 0;
            dueSinceKept[s] = false;
            checkStoredStream(s);
        }
    }

    private static KeyValueStore<Bytes, byte[]> readsOf(KeyValueStore<Bytes, byte[]> store) {
        SortedMemoryStore inner = SortedMemoryStore.find(store);
        return inner != null ? inner : store;
    }

    private static @Nullable Bytes bytes(byte @Nullable [] value) {
        return value == null ? null : Bytes.wrap(value);
    }

    /** The name of a computation's timer store (also names its changelog topic). */
    public static String timersStoreName(String computationId) {
        return computationId + ".timers";
    }

    /** The name of a computation's watermark-hold index store (also names its changelog topic). */
    public static String holdsStoreName(String computationId) {
        return computationId + ".timer-holds";
    }

    /**
     * Builders of a computation's two stores, timers first then holds: persistent (RocksDB) or in
     * memory, changelogged, not cached (see the class comment). Add both to the computation's
     * processor.
     */
    public static List<StoreBuilder<KeyValueStore<Bytes, byte[]>>> storeBuilders(String computationId,
            boolean persistent) {
        return storeBuilders(computationId, persistent, true);
    }

    /**
     * Builders of a computation's timer stores: the timers store, and the holds store when
     * {@code holds} (a computation whose output watermark is read: it writes an internal stream).
     */
    public static List<StoreBuilder<KeyValueStore<Bytes, byte[]>>> storeBuilders(String computationId,
            boolean persistent, boolean holds) {
        return storeBuilders(computationId, persistent, holds, null);
    }

    /**
     * As {@link #storeBuilders(String, boolean, boolean)}, with persistent stores behind a
     * {@link io.flowkafka.internal.streams.WriteBackStore} of {@code cache} (when not null): a timer added and
     * fired between two commits then never reaches RocksDB or the changelog.
     */
    public static List<StoreBuilder<KeyValueStore<Bytes, byte[]>>> storeBuilders(String computationId,
            boolean persistent, boolean holds, io.flowkafka.internal.streams.WriteBackStore.@Nullable Budget cache) {
        List<StoreBuilder<KeyValueStore<Bytes, byte[]>>> builders = holds
                ? List.of(builder(timersStoreName(computationId), persistent),
                        builder(holdsStoreName(computationId), persistent))
                : List.of(builder(timersStoreName(computationId), persistent));
        if (cache == null || !persistent) {
            return builders;
        }
        return builders.stream().map(b -> io.flowkafka.internal.streams.WriteBackStore.builder(b, cache, true)).toList();
    }

    private static StoreBuilder<KeyValueStore<Bytes, byte[]>> builder(String name, boolean persistent) {
        KeyValueBytesStoreSupplier supplier = persistent
                ? Stores.persistentKeyValueStore(name)
                : SortedMemoryStore.supplier(name); // scans without copying
        return Stores.keyValueStoreBuilder(supplier, Serdes.Bytes(), Serdes.ByteArray())
                .withCachingDisabled()
                .withLoggingEnabled(Map.of());
    }

    /** The number of timer streams. */
    public int streamCount() {
        return streamIds.size();
    }

    /**
     * The id of a timer stream.
     *
     * @throws IndexOutOfBoundsException if there is no such stream
     */
    public String streamId(int streamIndex) {
        return streamIds.get(streamIndex);
    }

    /**
     * Whether the timer stream merges timers of equal key and trigger.
     *
     * @throws IllegalArgumentException if there is no such stream
     */
    public boolean deduplicates(int streamIndex) {
        checkStream(streamIndex);
        return deduplicate[streamIndex];
    }

    // ---- writes: call-buffered ----

    /**
     * Buffers a new timer until {@link #commitCall()}. With deduplication, a timer of the same
     * stream, key and trigger, stored or buffered, is kept or replaced, whichever has the smaller
     * event timestamp (the first one on a tie).
     *
     * @throws IllegalArgumentException if the timer's stream index is not one of this store's
     */
    public void add(PendingTimer timer) {
        int s = timer.streamIndex();
        checkStream(s);
        Bytes key = TimerKeys.timerKey(timer, !deduplicate[s]);
        Op op = buffer.get(key);
        if (op == null) {
            buffer.put(key, new Op(false, timer));
        } else if (op.add == null || timer.eventTs() < op.add.eventTs()) {
            op.add = timer;
        }
    }

    /**
     * Buffers the deletion of a timer (normally a fired one) until {@link #commitCall()}: the
     * stored timer with the same stream, key and trigger (and message id where the stream does not
     * deduplicate) is removed with its hold. A timer that this call adds under the same key, before
     * or after the deletion, is kept and stored without deduplication against the deleted one (an
     * {@code onTimer} that registers its own key and trigger again). Deleting an absent timer does
     * nothing.
     *
     * @throws IllegalArgumentException if the timer's stream index is not one of this store's
     */
    public void delete(PendingTimer timer) {
        int s = timer.streamIndex();
        checkStream(s);
        Bytes key = storedOtherwise.isEmpty() ? null : storedOtherwise.remove(timer);
        if (key == null) {
            key = TimerKeys.timerKey(timer, !deduplicate[s]);
        }
        Op op = buffer.get(key);
        if (op == null) {
            buffer.put(key, new Op(true, null));
        } else {
            op.deleteStored = true;
        }
    }

    /** Applies the buffered adds and deletes of a call that returned normally, to both stores. */
    public void commitCall() {
        if (buffer.isEmpty()) {
            return;
        }
        if (!endMarksWritten) {
            writeEndMarks();
        }
        for (Map.Entry<Bytes, Op> e : buffer.entrySet()) {
            apply(e.getKey(), e.getValue());
        }
        clearBuffer();
        Arrays.fill(firstPendingKnown, false);
        keepFloors();
    }

    /**
     * Writes the floors of each stream to their rows where a write of this call put a timer or hold below
     * the row (the row must stay true), or where a {@link #due} step ran since the last write and
     * {@link #FLOOR_KEPT_EVERY} timers were deleted since: at most one write per row and firing step.
     */
    private void keepFloors() {
        for (int s = 0; s < streamIds.size(); s++) {
            boolean step = dueSinceKept[s] && deletedSinceKept[s] >= FLOOR_KEPT_EVERY;
            keepFloor(timers, s, dueFloor[s], dueFloorKept, step);
            if (holds != null && !holdsUnbuilt[s]) {
                keepFloor(holds, s, holdFloor[s], holdFloorKept, step);
            }
            if (step) {
                dueSinceKept[s] = false;
                deletedSinceKept[s] = 0;
            }
        }
    }

    private static void keepFloor(KeyValueStore<Bytes, byte[]> store, int s, @Nullable Bytes floor,
            @Nullable Bytes[] kept, boolean step) {
        Bytes row = kept[s];
        if (Objects.equals(floor, row)) {
            return;
        }
        boolean below = row != null && (floor == null || floor.compareTo(row) < 0); // null: the stream's start
        if (below || step) {
            store.put(TimerKeys.floorMark(s), floor == null ? null : floor.get());
            kept[s] = floor;
        }
    }

    /** Drops the buffered adds and deletes of a call that threw. */
    public void abortCall() {
        clearBuffer();
    }

    /**
     * Empties the buffer. {@code HashMap.clear()} walks the whole table, which keeps the capacity
     * of the largest call: after a call that added 200k timers, every later one-timer call would
     * pay for 256k slots. A buffer that grew is replaced instead.
     */
    private void clearBuffer() {
        if (buffer.size() > 12) {
            buffer = new LinkedHashMap<>();
        } else {
            buffer.clear();
        }
    }

    /**
     * The timers the current call added, as {@link #commitCall()} would store them: after merging
     * those of equal stream, key and trigger within the call (with deduplication), in the order
     * first added. Deduplication against stored timers is not applied here.
     */
    public List<PendingTimer> bufferedAdds() {
        List<PendingTimer> out = new ArrayList<>();
        for (Op op : buffer.values()) {
            if (op.add != null) {
                out.add(op.add);
            }
        }
        return out;
    }

    /**
     * Calls {@code visitor} with each timer the current call added and the key of its row in the timers store, as
     * {@link #bufferedAdds()} lists them: to refuse, before the call commits, a row its changelog cannot take.
     */
    public void forEachBufferedAdd(java.util.function.BiConsumer<Bytes, PendingTimer> visitor) {
        for (Map.Entry<Bytes, Op> e : buffer.entrySet()) {
            PendingTimer add = e.getValue().add;
            if (add != null) {
                visitor.accept(e.getKey(), add);
            }
        }
    }

    /** An upper bound of the size of {@link #encodeValue}, computed without encoding. */
    public int valueSizeBound(PendingTimer timer) {
        return TimerValueCodec.sizeBound(timer, streamIdBytes[timer.streamIndex()]);
    }

    /** The timers-store value of {@code timer}, as {@link #commitCall()} writes it. */
    public byte[] encodeValue(PendingTimer timer) {
        return TimerValueCodec.encode(timer, streamIdBytes[timer.streamIndex()]);
    }

    /**
     * A timers-store key with its trigger zeroed: what a replay repeats of the row of a {@code real_time} or
     * {@code system_time} timer, whose trigger is often the clock plus a delay (the row's size does not depend on
     * it). Recognises, on the replay, the call adding a timer whose row a changelog topic rejected.
     */
    public static byte[] timelessTimerKey(byte[] timerKey) {
        return zeroed(timerKey, TimerKeys.TIMER_PREFIX);
    }

    /** {@link #timelessTimerKey} for a timer-holds key: its event and trigger times zeroed. */
    public static byte[] timelessHoldKey(byte[] holdKey) {
        return zeroed(holdKey, TimerKeys.TIMER_PREFIX + TimerKeys.TS_BYTES);
    }

    /** The key of the timer-holds row of {@code timer}, whose timers-store key is {@code timerKey}. */
    public static byte[] holdKey(PendingTimer timer, byte[] timerKey) {
        return TimerKeys.holdKey(timer.eventTs(), timerKey).get();
    }

    /** {@code key} with its bytes after the timer stream, up to {@code end}, zeroed. */
    private static byte[] zeroed(byte[] key, int end) {
        byte[] out = key.clone();
        Arrays.fill(out, Math.min(out.length, TimerKeys.STREAM_BYTES), Math.min(out.length, end), (byte) 0);
        return out;
    }

    /** Whether adds or deletes are buffered and not yet committed. */
    public boolean hasBufferedWrites() {
        return !buffer.isEmpty();
    }

    private void apply(Bytes key, Op op) {
        int s = TimerKeys.stream(key.get());
        PendingTimer add = op.add;
        Long scanned = scannedEvents.remove(key);
        touchAhead(s, key, add == null);
        if (add == null) {
            deletedSinceKept[s]++;
            if (scanned != null) {
                timers.put(key, null);
                removeHold(s, scanned, key);
            } else {
                byte[] old = timers.delete(key);
                if (old != null) {
                    removeHold(s, TimerValueCodec.eventTs(old), key);
                }
            }
            return;
        }
        Long oldEvent = scanned;
        boolean known = oldEvent == null && aboveMaxTimer(s, key); // no stored timer can have this key
        if (oldEvent == null && !known) {
            byte[] old = timersReads.get(key);
            oldEvent = old == null ? null : TimerValueCodec.eventTs(old);
        }
        if (oldEvent != null) {
            if (!op.deleteStored && oldEvent <= add.eventTs()) {
                return; // deduplicated: the stored timer has the smaller event timestamp
            }
            removeHold(s, oldEvent, key);
        }
        if (known && timersCache != null) {
            timersCache.putNew(key, TimerValueCodec.encode(add, streamIdBytes[s]));
        } else {
            timers.put(key, TimerValueCodec.encode(add, streamIdBytes[s]));
        }
        if (maxTimerKnown[s] && (maxTimer[s] == null || TimerKeys.before(maxTimer[s], key))) {
            maxTimer[s] = key;
        }
        Bytes df = dueFloor[s];
        if (df != null && TimerKeys.before(key, df)) {
            dueFloor[s] = key;
        }
        Bytes lowest = addedSinceDue[s];
        if (lowest == null || TimerKeys.before(key, lowest)) {
            addedSinceDue[s] = key;
        }
        if (holds == null || !holdIndexed(s, key)) {
            return;
        }
        Bytes hold = TimerKeys.holdKey(add.eventTs(), key.get());
        if (oldEvent == null && holdsCache != null) {
            holdsCache.putNew(hold, EMPTY); // no timer, so no hold: a hold removed before the next commit costs nothing
        } else {
            holds.put(hold, EMPTY);
        }
        Bytes hf = holdFloor[s];
        if (hf != null && TimerKeys.before(hold, hf)) {
            holdFloor[s] = hold;
        }
        Bytes min = minHold[s];
        if (minKnown[s] && (min == null || TimerKeys.before(hold, min))) {
            minHold[s] = hold;
        }
    }

    /**
     * Keeps the read-ahead timers of stream {@code s} true to a write of {@code key}: deleting the first of them
     * pops it; any other write below the limit drops them.
     */
    private void touchAhead(int s, Bytes key, boolean deleting) {
        java.util.ArrayDeque<KeyValue<Bytes, byte[]>> a = ahead[s];
        if (a == null || key.compareTo(aheadLimit[s]) >= 0) {
            return;
        }
        if (deleting && !a.isEmpty() && a.peekFirst().key.equals(key)) {
            a.pollFirst();
        } else {
            ahead[s] = null;
        }
    }

    /** The smallest key above {@code key}. */
    private static Bytes successor(Bytes key) {
        byte[] k = key.get();
        return Bytes.wrap(Arrays.copyOf(k, k.length + 1));
    }

    /** Whether {@code key} is above every timer of stream {@code s} in the store. */
    private boolean aboveMaxTimer(int s, Bytes key) {
        if (!maxTimerKnown[s]) {
            maxTimer[s] = null;
            // once per stream and object: the last row before the end mark (the cache writes its rows through first).
            // No timer lies below the due floor; at the end mark the stream has none, and the backward step from the
            // end mark would walk the tombstones of every fired timer before it ends
            Bytes floor = dueFloor[s];
            Bytes end = TimerKeys.streamEnd(s);
            if (floor == null || !floor.equals(end)) {
                try (KeyValueIterator<Bytes, byte[]> it = timers.reverseRange(
                        floor != null ? floor : TimerKeys.streamStart(s), end)) {
                    while (it.hasNext()) {
                        Bytes k = it.next().key;
                        if (!TimerKeys.isEndMark(k.get())) {
                            maxTimer[s] = k;
                            break;
                        }
                    }
                }
            }
            maxTimerKnown[s] = true;
        }
        return maxTimer[s] == null || TimerKeys.before(maxTimer[s], key);
    }

    /** Whether some stream's holds index is still to be built ({@link #buildHoldsStep}); false without a holds store. */
    public boolean buildingHolds() {
        for (boolean b : holdsUnbuilt) {
            if (b) {
                return true;
            }
        }
        return false;
    }

    /**
     * Builds the next part of a missing holds index (see the class comment): writes the holds of the next
     * committed timers after the build cursor, at most {@code maxRows} of them and none once
     * {@code deadlineNanos} ({@link System#nanoTime()}) has passed, except that a step always writes one,
     * and keeps the cursor in the holds store with them. A stream's index completes with its end mark,
     * which the step writes when its scan meets the timers' end mark; only then does the stream's hold
     * leave {@link Long#MIN_VALUE}. Call it from a punctuation, between calls, until it returns false: its
     * writes need a record context to join the transaction. Nothing to do (false) without a holds store.
     *
     * @return whether some stream's index is still incomplete: call again
     * @throws IllegalArgumentException if {@code maxRows < 1}
     */
    public boolean buildHoldsStep(int maxRows, long deadlineNanos) {
        if (maxRows < 1) {
            throw new IllegalArgumentException("maxRows must be >= 1 but was " + maxRows);
        }
        int written = 0;
        for (int s = 0; s < streamIds.size(); s++) {
            if (!holdsUnbuilt[s]) {
                continue;
            }
            if (written >= maxRows || (written > 0 && System.nanoTime() - deadlineNanos >= 0)) {
                return true;
            }
            written += buildHolds(s, maxRows - written, deadlineNanos, written == 0);
        }
        return buildingHolds();
    }

    /**
     * One step of the build of stream {@code s}'s holds index; returns the holds written. Resumes at the
     * cursor, or at the due floor when that is higher (no timer below it); then the holds of the timers
     * below the new cursor exist, and {@link #apply} writes and deletes holds only below it.
     */
    private int buildHolds(int s, int maxRows, long deadlineNanos, boolean mustProgress) {
        KeyValueStore<Bytes, byte[]> h = Objects.requireNonNull(holds);
        Bytes end = TimerKeys.streamEnd(s);
        Bytes from = buildCursor[s] == null ? TimerKeys.streamStart(s) : buildCursor[s];
        Bytes df = dueFloor[s];
        if (df != null && df.compareTo(from) > 0) {
            from = df;
        }
        int written = 0;
        Bytes next = null;
        if (from.compareTo(end) < 0) {
            try (KeyValueIterator<Bytes, byte[]> it = timers.range(from, end)) {
                while (it.hasNext()) {
                    KeyValue<Bytes, byte[]> kv = it.next();
                    if (TimerKeys.isEndMark(kv.key.get())) {
                        break;
                    }
                    if (written >= maxRows
                            || ((written > 0 || !mustProgress) && System.nanoTime() - deadlineNanos >= 0)) {
                        next = kv.key;
                        break;
                    }
                    Bytes hold = TimerKeys.holdKey(TimerValueCodec.eventTs(kv.value), kv.key.get());
                    if (holdsCache != null) {
                        holdsCache.putNew(hold, EMPTY); // above the cursor, so no hold yet
                    } else {
                        h.put(hold, EMPTY);
                    }
                    written++;
                }
            }
        }
        if (next != null) {
            h.put(TimerKeys.buildCursor(s), next.get());
            buildCursor[s] = next;
            return written;
        }
        for (Bytes mark : List.of(TimerKeys.streamEnd(s), TimerKeys.streamEndGuard(s))) {
            h.put(mark, EMPTY);
        }
        if (buildCursor[s] != null) {
            h.put(TimerKeys.buildCursor(s), null);
            buildCursor[s] = null;
        }
        holdsUnbuilt[s] = false;
        minKnown[s] = false;
        minHold[s] = null;
        holdFloor[s] = null;
        holdFloorKept[s] = null;
        return written;
    }

    /**
     * Writes each stream's end mark to both stores where it is missing: once per object, inside
     * the first call that writes, so the writes have a record context and join its transaction.
     */
    private void writeEndMarks() {
        for (int s = 0; s < streamIds.size(); s++) {
            for (Bytes mark : List.of(TimerKeys.streamEnd(s), TimerKeys.streamEndGuard(s))) {
                if (timers.get(mark) == null) {
                    timers.put(mark, EMPTY);
                }
                if (holds != null && !holdsUnbuilt[s] && holds.get(mark) == null) {
                    holds.put(mark, EMPTY); // a stream being built gets it when its build completes
                }
            }
        }
        endMarksWritten = true;
    }

    /**
     * Whether the holds index has (or is to have) the hold of the timer at {@code timerKey}: always, unless
     * the stream's index is being built and the build has not reached the key yet (it will write the hold then).
     */
    private boolean holdIndexed(int s, Bytes timerKey) {
        if (!holdsUnbuilt[s]) {
            return true;
        }
        Bytes cursor = buildCursor[s];
        return cursor != null && timerKey.compareTo(cursor) < 0;
    }

    private void removeHold(int s, long event, Bytes timerKey) {
        if (holds == null || !holdIndexed(s, timerKey)) {
            return;
        }
        Bytes hold = TimerKeys.holdKey(event, timerKey.get());
        holds.put(hold, null);
        if (minKnown[s] && hold.equals(minHold[s])) {
            minKnown[s] = false;
            minHold[s] = null;
            holdFloor[s] = hold;
        }
    }

    // ---- firing ----

    /**
     * Up to {@code maxTimers} committed timers of a stream whose trigger is below the watermark, in
     * (trigger, key) order, starting with the first pending one. A timer fires when its watermark
     * exceeds its trigger, so a trigger equal to {@code watermarkExclusive} is not due; a watermark
     * of {@link Long#MAX_VALUE} stands for +infinity (completion) and makes every timer due.
     * Timers with a buffered deletion are skipped. The caller fires them in order, {@link #delete}s
     * each and commits with the call's other effects; timers returned but not deleted come back
     * first from the next call. One seek per call, walking at most the tombstones of the timers
     * fired since the previous call.
     *
     * @return a new modifiable list, empty when nothing is due
     * @throws IllegalArgumentException if there is no such stream or {@code maxTimers < 1}
     */
    public List<PendingTimer> due(int streamIndex, long watermarkExclusive, int maxTimers) {
        checkStream(streamIndex);
        if (maxTimers < 1) {
            throw new IllegalArgumentException("maxTimers must be >= 1 but was " + maxTimers);
        }
        addedSinceDue[streamIndex] = null;
        dueSinceKept[streamIndex] = true;
        if (!storedOtherwise.isEmpty()) {
            storedOtherwise.keySet().removeIf(t -> t.streamIndex() == streamIndex); // an older batch: not fired
        }
        Bytes end = TimerKeys.streamEnd(streamIndex);
        Bytes bound = watermarkExclusive == Long.MAX_VALUE ? end : TimerKeys.dueBound(streamIndex, watermarkExclusive);
        Bytes from = dueFloor[streamIndex];
        if (from == null) {
            from = TimerKeys.streamStart(streamIndex);
        } else if (from.compareTo(bound) >= 0) {
            return new ArrayList<>(); // no timer below the floor, and the floor is past the bound
        }
        List<PendingTimer> out = new ArrayList<>(); // sized as it fills: most steps hand out none or a few
        if (scannedEvents.size() > MAX_SCANNED - Math.min(maxTimers, MAX_SCANNED)) {
            scannedEvents.clear();
        }
        java.util.ArrayDeque<KeyValue<Bytes, byte[]>> a = ahead[streamIndex];
        if (a != null && bound.compareTo(aheadLimit[streamIndex]) <= 0) {
            // every timer below the bound was read ahead: no seek
            for (KeyValue<Bytes, byte[]> kv : a) {
                if (out.size() >= maxTimers || kv.key.compareTo(bound) >= 0) {
                    break;
                }
                handOut(streamIndex, kv, out);
            }
            dueFloor[streamIndex] = a.isEmpty() ? aheadLimit[streamIndex] : a.peekFirst().key;
            return out;
        }
        Bytes first = null;
        // reading ahead: up to the end mark rather than the bound, so that the first live key past the bound becomes
        // the next floor (tombstones), and the next READ_AHEAD timers are read on the way. Kafka's in-memory store
        // has no tombstones, but its range copies every key of the range: scan to the bound, and a scan that meets
        // no key leaves the floor at the bound
        boolean persistent = readsAhead;
        Bytes scanEnd = persistent ? end : bound;
        java.util.ArrayDeque<KeyValue<Bytes, byte[]>> read = persistent ? new java.util.ArrayDeque<>() : null;
        Bytes limit = null;
        boolean outDone = false;
        try (KeyValueIterator<Bytes, byte[]> it = timersReads.range(from, scanEnd)) {
            while (true) {
                if (!it.hasNext()) {
                    limit = successor(scanEnd); // every row up to the scan's end was read
                    break;
                }
                KeyValue<Bytes, byte[]> kv = it.next();
                if (first == null) {
                    first = kv.key;
                }
                if (TimerKeys.isEndMark(kv.key.get())) {
                    limit = kv.key;
                    break;
                }
                if (read != null) {
                    read.addLast(kv);
                }
                if (!outDone) {
                    if (kv.key.compareTo(bound) >= 0) {
                        outDone = true;
                    } else {
                        handOut(streamIndex, kv, out);
                        outDone = out.size() >= maxTimers;
                    }
                }
                if (read != null && read.size() > READ_AHEAD_MAX) {
                    read = null; // a batch too large to keep
                }
                if (outDone && (read == null || read.size() >= READ_AHEAD)) {
                    limit = read == null ? null : successor(kv.key);
                    break;
                }
            }
        }
        dueFloor[streamIndex] = first != null ? first : scanEnd;
        ahead[streamIndex] = read != null && limit != null ? read : null;
        aheadLimit[streamIndex] = limit;
        return out;
    }

    /** Hands a committed timer out of {@link #due}, unless the current call deleted it. */
    private void handOut(int streamIndex, KeyValue<Bytes, byte[]> kv, List<PendingTimer> out) {
        Op op = buffer.get(kv.key);
        if (op != null && op.deleteStored) {
            return;
        }
        PendingTimer t = TimerValueCodec.decode(streamIndex, kv.value);
        if (TimerKeys.hasMessageId(kv.key.get(), t) == deduplicate[streamIndex]) {
            storedOtherwise.put(t, kv.key); // stored before deduplicate_equal_timestamps changed
        }
        out.add(t);
        if (scannedEvents.size() < MAX_SCANNED) {
            scannedEvents.put(kv.key, t.eventTs());
        }
    }

    /**
     * Whether a timer handed out by {@link #due} should wait: since that call, a committed call
     * added a timer of the same stream that sorts at or before it (an earlier trigger, or a
     * replacement of the same key and trigger). Firing the rest of the old batch would then break
     * per-key trigger order; drop it and ask {@link #due} again. No store access.
     *
     * @throws IllegalArgumentException if the timer's stream index is not one of this store's
     */
    public boolean overtaken(PendingTimer timer) {
        int s = timer.streamIndex();
        checkStream(s);
        Bytes lowest = addedSinceDue[s];
        return lowest != null && lowest.compareTo(TimerKeys.timerKey(timer, !deduplicate[s])) <= 0;
    }

    /**
     * The smallest trigger of a stream's committed timers, {@link Long#MAX_VALUE} when it has none
     * (tell them apart with {@link #hasPending}). For scheduling system- and real-time timers. One
     * seek from the due floor.
     *
     * @throws IllegalArgumentException if there is no such stream
     */
    public long minPendingTriggerTimestamp(int streamIndex) {
        checkStream(streamIndex);
        Bytes first = firstPendingTimer(streamIndex);
        return first == null ? Long.MAX_VALUE : TimerKeys.firstTs(first.get());
    }

    /**
     * The key of a stream's first committed timer, null when it has none; one seek from the due floor,
     * none when asked again before the next committing call (a watermark step asks for the hold and
     * for completion).
     */
    private @Nullable Bytes firstPendingTimer(int streamIndex) {
        if (firstPendingKnown[streamIndex]) {
            return firstPending[streamIndex];
        }
        Bytes from = dueFloor[streamIndex];
        Bytes end = TimerKeys.streamEnd(streamIndex);
        if (from == null) {
            from = TimerKeys.streamStart(streamIndex);
        }
        java.util.ArrayDeque<KeyValue<Bytes, byte[]>> a = ahead[streamIndex];
        Bytes first;
        if (a != null && !a.isEmpty()) {
            first = a.peekFirst().key;
        } else if (a != null && aheadLimit[streamIndex].compareTo(end) >= 0) {
            first = null; // read ahead to the end mark: none
        } else {
            first = from.compareTo(end) >= 0 ? null : firstKey(timersReads, from, end);
        }
        dueFloor[streamIndex] = first != null ? first : end;
        firstPending[streamIndex] = first;
        firstPendingKnown[streamIndex] = true;
        return first;
    }

    /**
     * About how many timers are pending, for the status page: the store's own estimate (RocksDB's counts deletes
     * late), never a scan.
     */
    public long approximatePending() {
        return timers.approximateNumEntries();
    }

    // ---- the watermark hold ----

    /** Whether this store keeps the holds index (it was given a holds store). */
    public boolean tracksHolds() {
        return holds != null;
    }

    /**
     * What the task's output watermark is held back by: with the holds index, exactly
     * {@link #minPendingEventTimestamp()}; without it (or before a missing index is built),
     * {@link Long#MIN_VALUE} while any timer is pending, so that the watermark waits for them, and
     * {@link Long#MAX_VALUE} when none is.
     */
    public long watermarkHold() {
        if (holds == null) {
            return hasPending() ? Long.MIN_VALUE : Long.MAX_VALUE;
        }
        return minPendingEventTimestamp();
    }

    /**
     * The smallest event timestamp of all committed pending timers, {@link Long#MAX_VALUE} when
     * there are none: the task's watermark hold. Exact; at most one seek per stream whose minimum
     * was fired or replaced since the last call, none otherwise. {@link Long#MIN_VALUE} for a stream
     * with timers whose index is still to be built.
     *
     * @throws IllegalStateException if this store keeps no holds index ({@link #tracksHolds()})
     */
    public long minPendingEventTimestamp() {
        long min = Long.MAX_VALUE;
        for (int s = 0; s < streamIds.size(); s++) {
            min = Math.min(min, minPendingEventTimestamp(s));
        }
        return min;
    }

    /**
     * The smallest event timestamp of a stream's committed pending timers, {@link Long#MAX_VALUE}
     * when it has none.
     *
     * @throws IllegalArgumentException if there is no such stream
     */
    public long minPendingEventTimestamp(int streamIndex) {
        checkStream(streamIndex);
        if (holds == null) {
            throw new IllegalStateException("the timers of store " + timers.name() + " keep no watermark hold: its "
                    + "computation writes no internal stream, so nobody reads its output watermark");
        }
        if (holdsUnbuilt[streamIndex]) {
            return firstPendingTimer(streamIndex) != null ? Long.MIN_VALUE : Long.MAX_VALUE;
        }
        Bytes min = ensureMin(streamIndex);
        return min == null ? Long.MAX_VALUE : TimerKeys.firstTs(min.get());
    }

    /**
     * Whether a stream has committed pending timers. Cheap: answered by the cached minimum hold, or
     * without holds by one seek from the due floor.
     *
     * @throws IllegalArgumentException if there is no such stream
     */
    public boolean hasPending(int streamIndex) {
        checkStream(streamIndex);
        if (holds == null || holdsUnbuilt[streamIndex]) {
            return firstPendingTimer(streamIndex) != null;
        }
        return ensureMin(streamIndex) != null;
    }

    /** Whether any stream has committed pending timers. */
    public boolean hasPending() {
        for (int s = 0; s < streamIds.size(); s++) {
            if (hasPending(s)) {
                return true;
            }
        }
        return false;
    }

    /**
     * About the number of committed pending timers, for metrics: RocksDB's estimate (it may be off
     * after many deletes) for persistent stores, exact for in-memory ones, in both cases plus up to
     * three bookkeeping rows (the end mark, the kept floor) per timer stream.
     */
    public long count() {
        return timers.approximateNumEntries();
    }

    /**
     * Forgets every cache (floors, minima, overtaking marks) and reads the kept floors and the build
     * cursors again, as a new object would. For a task whose stores were restored or rolled back under
     * this object. Buffered writes are dropped.
     */
    public void resetCaches() {
        clearBuffer();
        Arrays.fill(dueFloor, null);
        Arrays.fill(holdFloor, null);
        Arrays.fill(minHold, null);
        Arrays.fill(minKnown, false);
        Arrays.fill(addedSinceDue, null);
        Arrays.fill(firstPendingKnown, false);
        Arrays.fill(maxTimerKnown, false);
        Arrays.fill(ahead, null);
        scannedEvents.clear();
        endMarksWritten = false;
        loadFromStores();
    }

    private @Nullable Bytes ensureMin(int s) {
        if (minKnown[s]) {
            return minHold[s];
        }
        Bytes from = holdFloor[s];
        Bytes end = TimerKeys.streamEnd(s);
        if (from == null) {
            from = TimerKeys.streamStart(s);
        }
        Bytes first = from.compareTo(end) >= 0 || holdsReads == null ? null : firstKey(holdsReads, from, end);
        minHold[s] = first;
        holdFloor[s] = first != null ? first : end;
        minKnown[s] = true;
        return first;
    }

    /** The first timer or hold key in {@code [from, end]}, not the end mark; one seek. */
    private static @Nullable Bytes firstKey(KeyValueStore<Bytes, byte[]> store, Bytes from, Bytes end) {
        // Kafka's in-memory store copies the range; a SortedMemoryStore seeks like RocksDB
        if (!store.persistent() && !(store instanceof SortedMemoryStore) && from.get().length >= TimerKeys.TIMER_PREFIX) {
            return firstKeyInMemory(store, from, end);
        }
        return firstKeyInRange(store, from, end);
    }

    /**
     * {@link #firstKey} on an in-memory store, whose range iterator copies every key of the range before
     * returning the first (all pending timers, from the floor to the end mark): probes windows of doubling
     * width in trigger or event time from {@code from}'s timestamp, 1 s first, up to the end mark.
     */
    private static @Nullable Bytes firstKeyInMemory(KeyValueStore<Bytes, byte[]> store, Bytes from, Bytes end) {
        int stream = TimerKeys.stream(from.get());
        long ts = TimerKeys.firstTs(from.get()); // the window [lo, keys below ts + width]
        Bytes lo = from;
        long width = 1_000_000_000L;
        while (true) {
            boolean last = ts > Long.MAX_VALUE - width;
            Bytes hi = last ? end : TimerKeys.dueBound(stream, ts + width);
            Bytes first = firstKeyInRange(store, lo, hi);
            if (first != null || last) {
                return first;
            }
            lo = hi;
            ts += width; // no overflow: not last
            width = width > Long.MAX_VALUE / 2 ? Long.MAX_VALUE : width * 2;
        }
    }

    private static @Nullable Bytes firstKeyInRange(KeyValueStore<Bytes, byte[]> store, Bytes from, Bytes end) {
        try (KeyValueIterator<Bytes, byte[]> it = store.range(from, end)) {
            if (it.hasNext()) {
                Bytes first = it.next().key;
                return TimerKeys.isEndMark(first.get()) ? null : first;
            }
        }
        return null;
    }

    private void checkStream(int streamIndex) {
        if (streamIndex < 0 || streamIndex >= streamIds.size()) {
            throw new IllegalArgumentException("timer stream index must be in [0, " + streamIds.size()
                    + ") but was " + streamIndex);
        }
    }

    /**
     * Sets stream {@code s}'s due floor to its first row from the kept floor on (one seek: the tombstones
     * below the kept floor are not walked) and refuses stores written under another order of timer streams,
     * whose timers would misfire.
     */
    private void checkStoredStream(int s) {
        Bytes kept = dueFloorKept[s];
        Bytes end = TimerKeys.streamEnd(s);
        Bytes first = firstKey(timers, kept == null ? TimerKeys.streamStart(s) : kept, end);
        dueFloor[s] = first == null ? end : first;
        byte[] value = first == null ? null : timers.get(first);
        if (value != null) {
            String stored = TimerValueCodec.streamId(value);
            if (!stored.equals(streamIds.get(s))) {
                throw new IllegalStateException("store " + timers.name() + " holds timers of timer stream '"
                        + stored + "' at position " + s + ", where the spec now has '" + streamIds.get(s)
                        + "': keep the order of a computation's timers and append new ones at the end");
            }
        }
    }

    /** Refuses stores holding timers of a stream the spec no longer has: they would never fire. */
    private void checkNoRemovedStreams() {
        int n = streamIds.size();
        if (n < MAX_TIMER_STREAMS) {
            try (KeyValueIterator<Bytes, byte[]> it = timers.range(TimerKeys.streamStart(n),
                    TimerKeys.streamStart(MAX_TIMER_STREAMS))) {
                while (it.hasNext()) {
                    KeyValue<Bytes, byte[]> kv = it.next();
                    if (!TimerKeys.isEndMark(kv.key.get())) {
                        throw new IllegalStateException("store " + timers.name() + " holds timers of timer stream '"
                                + TimerValueCodec.streamId(kv.value) + "' at position " + TimerKeys.stream(kv.key.get())
                                + ", which the spec no longer has (timer streams " + streamIds
                                + "): keep the computation's timer streams, or start a new pipeline version");
                    }
                }
            }
        }
    }
}
