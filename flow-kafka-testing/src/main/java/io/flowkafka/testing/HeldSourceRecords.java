package io.flowkafka.testing;

import io.flowkafka.spi.PipelineCodecs;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.BiConsumer;
import java.util.function.Supplier;
import org.apache.kafka.streams.test.TestRecord;

/**
 * The driver's side of the dynamic spec's {@code paused}, {@code stopped} and a computation's {@code draining}: on a
 * broker they stop the sources reading their topics, so on {@link FlowTestDriver} a record piped into a topic whose
 * reader is held waits here, and is piped, in the order it came, once the dynamic spec lets its reader go on.
 * Records of one topic never overtake one another. The held topics are worked out when the dynamic spec changes
 * ({@link #refresh}), not per piped record.
 */
final class HeldSourceRecords {
    private record Held(String topic, TestRecord<byte[], byte[]> record) {
    }

    private final PipelineCodecs codecs;
    private final List<String> computations;
    private final Supplier<Map<String, Object>> dynamicSpec;
    private final List<Held> held = new ArrayList<>();
    private Set<String> heldTopics = Set.of();

    HeldSourceRecords(PipelineCodecs codecs, List<String> computations, Supplier<Map<String, Object>> dynamicSpec) {
        this.codecs = codecs;
        this.computations = computations;
        this.dynamicSpec = dynamicSpec;
        refresh();
    }

    /** Pipes {@code record} with {@code pipe}, or keeps it while its topic's reader is held (or records wait). */
    void offer(String topic, TestRecord<byte[], byte[]> record, BiConsumer<String, TestRecord<byte[], byte[]>> pipe) {
        if (held.isEmpty() && !heldTopics.contains(topic)) {
            pipe.accept(topic, record);
            return;
        }
        if (heldTopics.contains(topic) || keeps(topic)) {
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
            if (stillHeld.contains(h.topic()) || heldTopics.contains(h.topic())) {
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

    /** Works out the held topics from the dynamic spec in effect; call it after each change. */
    void refresh() {
        Map<String, Object> doc = dynamicSpec.get();
        Set<String> topics = new HashSet<>();
        boolean all = Boolean.TRUE.equals(doc.get("paused")) || Boolean.TRUE.equals(doc.get("stopped"));
        Map<?, ?> byId = doc.get("computations") instanceof Map<?, ?> m ? m : Map.of();
        for (String c : computations) {
            if (all || byId.get(c) instanceof Map<?, ?> settings && Boolean.TRUE.equals(settings.get("draining"))) {
                topics.addAll(codecs.sourceTopicsOf(c));
            }
        }
        heldTopics = topics;
    }
}
