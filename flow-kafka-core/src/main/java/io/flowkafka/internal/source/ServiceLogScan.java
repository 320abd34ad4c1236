package io.flowkafka.internal.source;

import io.flowkafka.api.MessageId;
import io.flowkafka.internal.message.MessageIds;
import io.flowkafka.internal.partition.RangePartitioner;
import io.flowkafka.spec.SourceSpec;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Function;
import io.flowkafka.internal.serde.AvroCodec;
import io.flowkafka.internal.serde.KeyCodec;
import io.flowkafka.spec.GroupByColumn;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;
import org.apache.kafka.streams.state.StoreBuilder;
import org.jspecify.annotations.Nullable;

/**
 * Reads one task's service-log sources: each source's table, over the partition's hash range, in key order, cycle
 * after cycle, a bounded number of rows per step, and hands each row to the task's call path.
 *
 * <p>Rule kept: what is emitted next is decided only by the changelogged {@link ServiceLogProgress} (read at the
 * start of every step, written at its end, in the transaction of the step's calls), so a restart or an aborted
 * transaction resumes after the last committed row: every row once per cycle, with the same message ids. The rate
 * limit alone is kept on the heap (it decides when, never what). One per task attempt, built at init.
 *
 * <p>Threading: owned by the task's stream thread.
 */
public final class ServiceLogScan {
    /**
     * A service-log source as compiled.
     *
     * @param source the source's spec
     * @param topic the table's topic (its global store is read)
     * @param rowSchema the schema the table's rows were written with
     * @param streamSchema the schema of the source's stream: the payload of each message
     * @param keyColumns the group-by key of the table (its manager's computation), filling payload fields the row
     *     lacks; empty for a table without a manager in the pipeline
     * @param keyOwner the computation whose key codec encoded the table's keys (for messages)
     */
    public record Table(SourceSpec source, String topic, Schema rowSchema, Schema streamSchema,
            List<GroupByColumn> keyColumns, String keyOwner) {
    }

    /** Runs the call of one row (and its dead letter if it fails). */
    public interface Rows {
        /**
         * @param source the source
         * @param id the row's message id in this cycle
         * @param encodedKey the row's key (the table's encoded group-by key)
         * @param row the row's value (Avro binary of {@link Table#rowSchema()})
         * @param payload the message payload, or null with {@code failure} if the row cannot be read
         * @param failure why the row cannot be read; null when {@code payload} is set
         * @param cycle the cycle the row is read in
         * @param cycleStartMs when that cycle started (wall clock, from the progress store): the row's event time
         */
        void emit(Table source, MessageId id, byte[] encodedKey, byte[] row, @Nullable GenericRecord payload,
                @Nullable RuntimeException failure, long cycle, long cycleStartMs);
    }

    private final List<Source> sources = new ArrayList<>();
    private final ServiceLogProgress progress;
    private final byte[] lo;
    private final byte @Nullable [] hi;
    private final long maxPunctuationMs;

    private static final class Source {
        final Table table;
        final ReadOnlyKeyValueStore<Bytes, byte[]> store;
        final int origin;
        final double rate;
        final int maxRows;
        final long minCycleMs;
        final boolean finite;
        final AvroCodec rowCodec;
        final @Nullable KeyCodec keyCodec;
        double tokens;
        long refilledAtMs = Long.MIN_VALUE;
        /** As of the last step, for meters read on other threads. */
        volatile long cycle;
        volatile long emitted;

        Source(Table table, ReadOnlyKeyValueStore<Bytes, byte[]> store, int origin) {
            this.table = table;
            this.rowCodec = new AvroCodec(table.rowSchema());
            this.keyCodec = table.keyColumns().isEmpty() ? null : KeyCodec.of(table.keyColumns(), table.keyOwner());
            this.store = store;
            this.origin = origin;
            this.rate = ServiceLogSource.maxRowsPerSecond(table.source());
            this.maxRows = ServiceLogSource.maxRowsPerIteration(table.source());
            this.minCycleMs = ServiceLogSource.minCycleDuration(table.source()).toMillis();
            this.finite = ServiceLogSource.finite(table.source());
        }
    }

    /**
     * @param computationId the computation
     * @param partition this task's partition
     * @param partitionCount the computation's partition count: the task reads hashes
     *     {@code [⌈p·2^64/N⌉, ⌈(p+1)·2^64/N⌉)}
     * @param tables the service-log sources
     * @param progressStore the task's progress store
     * @param stores the global store of a table topic
     * @param maxPunctuationMs at most this long per step; 0: rows only
     */
    public ServiceLogScan(String computationId, int partition, int partitionCount, List<Table> tables,
            KeyValueStore<Bytes, byte[]> progressStore,
            Function<String, ReadOnlyKeyValueStore<Bytes, byte[]>> stores, long maxPunctuationMs) {
        this.progress = new ServiceLogProgress(progressStore);
        this.lo = ByteBuffer.allocate(8).putLong(RangePartitioner.lowerBound(partition, partitionCount)).array();
        this.hi = partition == partitionCount - 1 ? null
                : ByteBuffer.allocate(8).putLong(RangePartitioner.lowerBound(partition + 1, partitionCount)).array();
        this.maxPunctuationMs = maxPunctuationMs;
        for (Table t : tables) {
            ReadOnlyKeyValueStore<Bytes, byte[]> store = stores.apply(t.topic());
            if (store == null) {
                throw new IllegalStateException("service-log source '" + t.source().streamId() + "' of computation '"
                        + computationId + "' reads table topic " + t.topic() + ", whose store is not in the topology");
            }
            sources.add(new Source(t, store, MessageIds.origin("service_log:" + computationId + ":"
                    + t.source().streamId(), partition)));
        }
    }

    /** The name of a computation's progress store (also names its changelog topic). */
    public static String storeName(String computationId) {
        return ServiceLogProgress.storeName(computationId);
    }

    /** A builder of a computation's changelogged progress store. */
    public static StoreBuilder<KeyValueStore<Bytes, byte[]>> storeBuilder(String computationId,
            boolean persistent) {
        return ServiceLogProgress.storeBuilder(computationId, persistent);
    }

    /**
     * Reads on from each source's progress: at most {@code max_rows_per_iteration} rows, within the rate limit and
     * the time bound; a source whose cycle ended waits until {@code min_cycle_duration} after its start.
     *
     * @param nowMs the wall clock
     * @param rows runs each row's call
     */
    public void step(long nowMs, Rows rows) {
        long deadline = maxPunctuationMs <= 0 ? Long.MAX_VALUE : System.nanoTime() + maxPunctuationMs * 1_000_000L;
        for (Source s : sources) {
            String stream = s.table.source().streamId();
            ServiceLogProgress.Position p = progress.load(stream);
            if (p == null) {
                p = new ServiceLogProgress.Position(0, nowMs, 0, new byte[0]);
            }
            s.cycle = p.cycle();
            s.emitted = p.emitted();
            if (s.finite && p.cycle() >= 1) {
                continue; // finite: one cycle, read
            }
            if (nowMs < p.cycleStartMs()) {
                continue; // the next cycle has not started
            }
            int budget = budget(s, nowMs);
            if (budget == 0) {
                continue;
            }
            byte[] from = p.lastKey().length == 0 ? lo : Arrays.copyOf(p.lastKey(), p.lastKey().length + 1);
            long emitted = p.emitted();
            byte[] last = p.lastKey();
            boolean cycleEnded = true;
            try (KeyValueIterator<Bytes, byte[]> it = s.store.range(Bytes.wrap(from), hi == null ? null : Bytes.wrap(hi))) {
                while (it.hasNext()) {
                    KeyValue<Bytes, byte[]> kv = it.next();
                    byte[] k = kv.key.get();
                    if (hi != null && Arrays.compareUnsigned(k, hi) >= 0) {
                        break; // range() includes its upper bound
                    }
                    if (kv.value == null) {
                        continue;
                    }
                    if (budget == 0 || System.nanoTime() >= deadline) {
                        cycleEnded = false;
                        break;
                    }
                    GenericRecord payload = null;
                    RuntimeException failure = null;
                    try {
                        payload = payload(s, k, kv.value);
                    } catch (RuntimeException e) {
                        failure = e;
                    }
                    rows.emit(s.table, MessageIds.source(s.origin, emitted), k, kv.value, payload, failure, p.cycle(),
                            p.cycleStartMs());
                    emitted++;
                    last = k;
                    budget--;
                    s.tokens--;
                }
            }
            s.emitted = emitted;
            if (cycleEnded) {
                s.cycle = p.cycle() + 1;
                long next = Math.max(nowMs, p.cycleStartMs() + s.minCycleMs);
                progress.save(stream, new ServiceLogProgress.Position(p.cycle() + 1, next, emitted, new byte[0]));
            } else {
                progress.save(stream, new ServiceLogProgress.Position(p.cycle(), p.cycleStartMs(), emitted, last));
            }
        }
    }

    /**
     * The message payload of a row: the row itself when the stream has the row's schema, else a record of the
     * stream's schema whose fields come from the row's fields of the same name, then from the key's columns.
     */
    private static GenericRecord payload(Source s, byte[] encodedKey, byte[] value) {
        GenericRecord row = s.rowCodec.decode(value);
        Schema schema = s.table.streamSchema();
        if (schema.equals(row.getSchema())) {
            return row;
        }
        GenericRecord key = s.keyCodec == null ? null : s.keyCodec.decode(encodedKey);
        GenericData.Record out = new GenericData.Record(schema);
        for (Schema.Field f : schema.getFields()) {
            if (row.getSchema().getField(f.name()) != null) {
                out.put(f.name(), row.get(f.name()));
            } else if (key != null && key.getSchema().getField(f.name()) != null) {
                out.put(f.name(), key.get(f.name()));
            } else if (f.hasDefaultValue()) {
                out.put(f.name(), GenericData.get().getDefaultValue(f));
            }
        }
        return out;
    }

    /** The rows a source may read now: its per-step limit, within its rate limit (a token bucket of 1 s). */
    private static int budget(Source s, long nowMs) {
        if (s.rate <= 0) {
            return s.maxRows;
        }
        if (s.refilledAtMs == Long.MIN_VALUE) {
            s.tokens = Math.min(s.rate, s.maxRows);
        } else if (nowMs > s.refilledAtMs) {
            s.tokens = Math.min(Math.max(s.rate, 1), s.tokens + s.rate * (nowMs - s.refilledAtMs) / 1000.0);
        }
        s.refilledAtMs = nowMs;
        return (int) Math.min(s.maxRows, Math.floor(Math.max(0, s.tokens)));
    }

    /**
     * Registers the sources' meters, as of the last step (read on any thread): {@code flow.service_log.cycle} (the
     * cycle being read) and {@code flow.service_log.rows} (rows emitted by the task over all cycles).
     *
     * @param registry where to register
     * @param tags the task's tags (pipeline, computation, partition)
     * @return the meters, for the caller to remove at close
     */
    public List<Meter> registerMeters(MeterRegistry registry, Iterable<Tag> tags) {
        List<Meter> out = new ArrayList<>();
        for (Source s : sources) {
            String stream = s.table.source().streamId();
            out.add(Gauge.builder("flow.service_log.cycle", s, x -> x.cycle)
                    .description("The cycle a service-log source reads (from 0)").tags(tags).tag("stream", stream)
                    .register(registry));
            out.add(Gauge.builder("flow.service_log.rows", s, x -> x.emitted)
                    .description("Rows a service-log source emitted in this task, over all cycles").tags(tags)
                    .tag("stream", stream).register(registry));
        }
        return out;
    }

    /** Whether every source is finite and read its one cycle (from the progress store). */
    public boolean allDone() {
        for (Source s : sources) {
            if (!s.finite) {
                return false;
            }
            ServiceLogProgress.Position p = progress.load(s.table.source().streamId());
            if (p == null || p.cycle() < 1) {
                return false;
            }
        }
        return true;
    }

    /** Whether the task has service-log sources. */
    public boolean any() {
        return !sources.isEmpty();
    }

    /** The cycle {@code stream} is reading (from its progress store; 0 before the first read). */
    public long cycle(String stream) {
        ServiceLogProgress.Position p = progress.load(stream);
        return p == null ? 0 : p.cycle();
    }
}
