package io.flowkafka.testing;

import io.flowkafka.spi.PipelineCodecs;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;
import java.util.function.Supplier;
import org.apache.kafka.streams.test.TestRecord;

/**
 * The driver's side of the dynamic spec's {@code paused}, {@code stopped} and a computation's {@code draining}: on a
 * broker they stop the sources reading their topics, so on {@link FlowTestDriver} a record piped into a topic whose
 * reader is held waits here, and is piped, in the order it came, once the dynamic spec lets its reader go on.
 * Records of one topic never overtake one another.
 */
final class HeldSourceRecords {
    private record Held(String topic, TestRecord<byte[], byte[]> record) {
    }

    private final PipelineCodecs codecs;
    private final List<String> computations;
    private final Supplier<Map<String, Object>> dynamicSpec;
    private final List<Held> held = new ArrayList<>();

    HeldSourceRecords(PipelineCodecs codecs, List<String> computations, Supplier<Map<String, Object>> dynamicSpec) {
        this.codecs = codecs;
        this.computations = computations;
        this.dynamicSpec = dynamicSpec;
    }

    /** Pipes {@code record} with {@code pipe}, or keeps it while its topic's reader is held (or records wait). */
    void offer(String topic, TestRecord<byte[], byte[]> record, BiConsumer<String, TestRecord<byte[], byte[]>> pipe) {
        release(pipe);
        if (holds(topic) || keeps(topic)) {
            held.add(new Held(topic, record));
        } else {
            pipe.accept(topic, record);
        }
    }

    /** Pipes, in order, every kept record whose topic's reader is no longer held. */
    void release(BiConsumer<String, TestRecord<byte[], byte[]>> pipe) {
        List<String> stillHeld = new ArrayList<>();
        for (Iterator<Held> it = held.iterator(); it.hasNext();) {
            Held h = it.next();
            if (stillHeld.contains(h.topic()) || holds(h.topic())) {
                stillHeld.add(h.topic());
                continue;
            }
            it.remove();
            pipe.accept(h.topic(), h.record());
        }
    }

    /** Whether records piped into {@code topic} are kept. */
    boolean keeps(String topic) {
        return held.stream().anyMatch(h -> h.topic().equals(topic));
    }

    private boolean holds(String topic) {
        Map<String, Object> doc = dynamicSpec.get();
        if (Boolean.TRUE.equals(doc.get("paused")) || Boolean.TRUE.equals(doc.get("stopped"))) {
            return true;
        }
        if (!(doc.get("computations") instanceof Map<?, ?> byId)) {
            return false;
        }
        for (String c : computations) {
            if (byId.get(c) instanceof Map<?, ?> settings && Boolean.TRUE.equals(settings.get("draining"))
                    && codecs.sourceTopicsOf(c).contains(topic)) {
                return true;
            }
        }
        return false;
    }
}
