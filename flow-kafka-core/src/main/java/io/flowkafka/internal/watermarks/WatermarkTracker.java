package io.flowkafka.internal.watermarks;

import io.flowkafka.avro.ControlRecord;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.StoreBuilder;
import org.apache.kafka.streams.state.Stores;

/**
 * A task's view of time: the last watermarks heard from every upstream producer, the input
 * watermarks derived from them, and the output watermark this task last sent.
 *
 * <p>Model. Every task sends {@link ControlRecord}s in-band to every partition of its output
 * topics, so a consuming task hears every producer of each input stream, in order with that
 * producer's data. The input event watermark of a stream is the minimum over the producers the
 * compiled spec expects ({@code computation} × its partition count); a producer never heard from
 * holds the stream back ({@link Long#MIN_VALUE}); a completed producer counts as +∞; producers
 * flagged idle may be skipped, at most {@code max_idle_producers} of them (the idle ones with the
 * smallest watermarks are skipped first, since they are the ones holding the stream back), and never
 * all of the producers that have not completed: as in Flow, idleness may let a watermark advance but
 * never make it +∞ (Flow raises an ignored idle partition's watermark to a finite value, and
 * {@code max_ratio} leaves at least one partition gating).
 *
 * <p>Invariants. Per producer, a newer record replaces an older one only field by field upwards
 * (watermarks never go back, completion is sticky), so a duplicated or reordered control record
 * cannot move a watermark back. A skipped idle producer that turns active again is raised to the watermark it was
 * skipped at, so its return (or its task's restart, which starts active) does not move the stream's back. The task's output watermark is persisted when sent and never
 * decreases, including after a restore on another instance.
 *
 * <p>Storage: a small changelogged store {@code <computation>.watermarks} with one entry per
 * (input stream, producer) and one for the task's own output; the heap holds a mirror of it,
 * rebuilt from the store when the task is initialised. Its size is bounded by the number of
 * upstream partitions, not by data.
 *
 * <p>Threading: owned by the task's stream thread.
 */
public final class WatermarkTracker {
    /** Producers of one input stream as the compiled spec expects them. */
    public record ExpectedProducers(String computation, int partitions) {
    }

    /** What a producer last said. */
    public record ProducerState(long eventWatermark, long systemWatermark, boolean completed, boolean idle,
            int maxIdleProducers) {
    }

    /** The task's own output, as last sent. */
    public record Output(long eventWatermark, long systemWatermark, boolean completed) {
        static final Output NONE = new Output(Long.MIN_VALUE, Long.MIN_VALUE, false);
    }

    private static final Bytes OUTPUT_KEY = Bytes.wrap("o|output".getBytes(StandardCharsets.UTF_8));
    private static final Bytes ALIGN_KEY = Bytes.wrap(AlignmentReader.KEY.getBytes(StandardCharsets.UTF_8));
    private long alignedWatermark = Long.MIN_VALUE;
    private boolean alignedIdle;

    private final KeyValueStore<Bytes, byte[]> store;
    private final Map<String, ExpectedProducers> expected;
    private final Map<String, Map<Integer, ProducerState>> heard = new HashMap<>();
    private Output output = Output.NONE;
    /** Outputs of streams with their own streams_dependency, by stream. */
    private final Map<String, Output> streamOutputs = new HashMap<>();

    /**
     * A tracker over {@code store}, expecting {@code expected} producers per internal input stream.
     * Restores its mirror from the store.
     */
    public WatermarkTracker(KeyValueStore<Bytes, byte[]> store, Map<String, ExpectedProducers> expected) {
        this.store = store;
        this.expected = new LinkedHashMap<>(expected);
        restore();
    }

    /** The name of a computation's watermark store. */
    public static String storeName(String computationId) {
        return computationId + ".watermarks";
    }

    /** The store builder (changelogged, small, cached). */
    public static StoreBuilder<KeyValueStore<Bytes, byte[]>> storeBuilder(String computationId, boolean persistent) {
        return Stores.keyValueStoreBuilder(persistent
                        ? Stores.persistentKeyValueStore(storeName(computationId))
                        : Stores.inMemoryKeyValueStore(storeName(computationId)),
                Serdes.Bytes(), Serdes.ByteArray()).withLoggingEnabled(Map.of());
    }

    private void restore() {
        try (KeyValueIterator<Bytes, byte[]> it = store.all()) {
            while (it.hasNext()) {
                var kv = it.next();
                String k = new String(kv.key.get(), StandardCharsets.UTF_8);
                java.nio.ByteBuffer v = java.nio.ByteBuffer.wrap(kv.value);
                if (k.equals(AlignmentReader.KEY)) {
                    alignedWatermark = v.getLong();
                    alignedIdle = v.get() != 0;
                } else if (k.equals("o|output")) {
                    output = new Output(v.getLong(), v.getLong(), v.get() != 0);
                } else if (k.startsWith("o|output|")) {
                    streamOutputs.put(k.substring("o|output|".length()), new Output(v.getLong(), v.getLong(), v.get() != 0));
                } else if (k.startsWith("p|")) {
                    String[] parts = k.split("\\|", 4);
                    heard.computeIfAbsent(parts[1], s -> new HashMap<>()).put(Integer.parseInt(parts[3]),
                            new ProducerState(v.getLong(), v.getLong(), v.get() != 0, v.get() != 0, v.getInt()));
                }
            }
        }
    }

    /**
     * Records a control record heard on {@code stream}.
     *
     * @return whether anything changed
     */
    public boolean onControl(String stream, ControlRecord r) {
        ExpectedProducers ex = expected.get(stream);
        if (ex == null || !ex.computation().equals(r.getComputation()) || r.getPartition() < 0
                || r.getPartition() >= ex.partitions()) {
            return false; // not a producer this task waits for (e.g. a stale partition count): ignored
        }
        Map<Integer, ProducerState> m = heard.computeIfAbsent(stream, s -> new HashMap<>());
        ProducerState old = m.get(r.getPartition());
        ProducerState merged = old == null
                ? new ProducerState(r.getEventWatermark(), r.getSystemWatermark(), r.getCompleted(), r.getIdle(),
                        r.getMaxIdleProducers())
                : new ProducerState(Math.max(old.eventWatermark(), r.getEventWatermark()),
                        Math.max(old.systemWatermark(), r.getSystemWatermark()), old.completed() || r.getCompleted(),
                        r.getIdle() && !(old.completed() || r.getCompleted()), r.getMaxIdleProducers());
        if (old != null && old.idle() && !merged.idle() && !merged.completed()) {
            // an idle producer comes back (or its task restarted elsewhere, which starts active): as Flow raises an
            // ignored idle partition's watermark, it resumes at the stream's watermark it was skipped at, so that
            // watermark does not go back; its records behind it are late
            merged = new ProducerState(Math.max(merged.eventWatermark(), watermark(stream, true)),
                    Math.max(merged.systemWatermark(), watermark(stream, false)), false, false,
                    merged.maxIdleProducers());
        }
        if (merged.equals(old)) {
            return false;
        }
        m.put(r.getPartition(), merged);
        java.nio.ByteBuffer v = java.nio.ByteBuffer.allocate(8 + 8 + 1 + 1 + 4).putLong(merged.eventWatermark())
                .putLong(merged.systemWatermark()).put((byte) (merged.completed() ? 1 : 0))
                .put((byte) (merged.idle() ? 1 : 0)).putInt(merged.maxIdleProducers());
        store.put(Bytes.wrap(("p|" + stream + "|" + r.getComputation() + "|" + r.getPartition())
                .getBytes(StandardCharsets.UTF_8)), v.array());
        return true;
    }

    /** The event watermark of an internal input stream (see the class comment). */
    public long eventWatermark(String stream) {
        return watermark(stream, true);
    }

    /** The system watermark of an internal input stream. */
    public long systemWatermark(String stream) {
        return watermark(stream, false);
    }

    private long watermark(String stream, boolean event) {
        ExpectedProducers ex = expected.get(stream);
        if (ex == null) {
            throw new IllegalArgumentException("no internal input stream '" + stream + "'");
        }
        Map<Integer, ProducerState> m = heard.getOrDefault(stream, Map.of());
        if (m.size() < ex.partitions()) {
            return Long.MIN_VALUE;
        }
        List<ProducerState> idle = new ArrayList<>();
        long min = Long.MAX_VALUE;
        int maxIdle = 0;
        boolean activeCounted = false;
        for (ProducerState p : m.values()) {
            maxIdle = Math.max(maxIdle, p.maxIdleProducers());
            if (p.completed()) {
                continue;
            }
            if (p.idle()) {
                idle.add(p);
            } else {
                activeCounted = true;
                min = Math.min(min, event ? p.eventWatermark() : p.systemWatermark());
            }
        }
        // at least one producer that has not completed always counts: skipping every one of them would
        // leave the minimum at +infinity, and every later record of theirs would be late
        int skip = activeCounted ? maxIdle : Math.max(0, Math.min(maxIdle, idle.size() - 1));
        if (idle.size() > skip) {
            idle.sort(Comparator.comparingLong(p -> event ? p.eventWatermark() : p.systemWatermark()));
            for (ProducerState p : idle.subList(skip, idle.size())) {
                min = Math.min(min, event ? p.eventWatermark() : p.systemWatermark());
            }
        }
        return min;
    }

    /** Whether every producer of an internal input stream completed. */
    public boolean completed(String stream) {
        ExpectedProducers ex = expected.get(stream);
        Map<Integer, ProducerState> m = heard.getOrDefault(stream, Map.of());
        if (ex == null || m.size() < ex.partitions()) {
            return false;
        }
        return m.values().stream().allMatch(ProducerState::completed);
    }

    /** The internal input streams this task tracks. */
    public java.util.Set<String> streams() {
        return expected.keySet();
    }

    /** The output as last sent (persisted). */
    public Output output() {
        return output;
    }

    /**
     * Records a newly sent output, never letting it go back.
     *
     * @return the output actually recorded (the monotonic maximum of the old and the new)
     */
    public Output recordOutput(long eventWatermark, long systemWatermark, boolean completed) {
        Output next = new Output(Math.max(output.eventWatermark(), eventWatermark),
                Math.max(output.systemWatermark(), systemWatermark), output.completed() || completed);
        if (!next.equals(output)) {
            output = next;
            store.put(OUTPUT_KEY, java.nio.ByteBuffer.allocate(17).putLong(next.eventWatermark())
                    .putLong(next.systemWatermark()).put((byte) (next.completed() ? 1 : 0)).array());
        }
        return output;
    }

    /** The output of a stream with its own dependencies as last sent (persisted); NONE before the first. */
    public Output output(String stream) {
        return streamOutputs.getOrDefault(stream, Output.NONE);
    }

    /**
     * Records a newly sent output of one output stream that has its own {@code streams_dependency},
     * never letting it go back.
     *
     * @return the output actually recorded
     */
    public Output recordOutput(String stream, long eventWatermark, long systemWatermark, boolean completed) {
        Output old = output(stream);
        Output next = new Output(Math.max(old.eventWatermark(), eventWatermark),
                Math.max(old.systemWatermark(), systemWatermark), old.completed() || completed);
        if (!next.equals(old)) {
            streamOutputs.put(stream, next);
            store.put(Bytes.wrap(("o|output|" + stream).getBytes(StandardCharsets.UTF_8)),
                    java.nio.ByteBuffer.allocate(17).putLong(next.eventWatermark()).putLong(next.systemWatermark())
                            .put((byte) (next.completed() ? 1 : 0)).array());
        }
        return next;
    }

    /**
     * Records what {@code watermark_alignment} needs to know of this task on other instances (see
     * {@link AlignmentReader}): its sources' event watermark and whether it is idle; written when
     * either changed.
     */
    public void recordAlignment(long eventWatermark, boolean idle) {
        if (eventWatermark == alignedWatermark && idle == alignedIdle) {
            return;
        }
        alignedWatermark = eventWatermark;
        alignedIdle = idle;
        store.put(ALIGN_KEY, java.nio.ByteBuffer.allocate(9).putLong(eventWatermark).put((byte) (idle ? 1 : 0)).array());
    }

    /** The watermark {@link #recordAlignment} last recorded (restored with the store); {@code MIN_VALUE} before. */
    public long alignedWatermark() {
        return alignedWatermark;
    }

    /** A changelogged per-task value (e.g. a finite source's bound), or null. */
    public Long getLong(String name) {
        byte[] v = store.get(Bytes.wrap(("v|" + name).getBytes(StandardCharsets.UTF_8)));
        return v == null ? null : java.nio.ByteBuffer.wrap(v).getLong();
    }

    /** Stores a changelogged per-task value. */
    public void putLong(String name, long value) {
        store.put(Bytes.wrap(("v|" + name).getBytes(StandardCharsets.UTF_8)),
                java.nio.ByteBuffer.allocate(8).putLong(value).array());
    }
}
