package io.flowkafka.internal.message;

import com.google.common.hash.Hashing;
import io.flowkafka.api.MessageId;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Derives deterministic, compact and ordered message ids.
 *
 * <p>Layout (big-endian, compared as unsigned bytes):
 * <ul>
 *   <li>a source message: {@code origin(4) | offset(8)}, where {@code origin} is a fingerprint of
 *       the source topic and partition, so ids of one source partition sort by offset;</li>
 *   <li>a derived message: {@code origin(4) | offset(8) | lineage(8) | position(4)}: the origin and
 *       offset of the root source message, a fingerprint of the path (parent lineage, parent
 *       position, computation) and the output's position within the call.</li>
 * </ul>
 * Nothing comes from a clock or a random source, so a replay after an aborted transaction yields
 * the same ids. Ids of siblings sort by output position; ids descending from one source partition
 * sort by the source offset first.
 *
 * <p>Stateless and thread-safe.
 */
public final class MessageIds {
    /** Size of a source message id. */
    public static final int SOURCE_ID_SIZE = 12;
    /** Size of a derived message id. */
    public static final int DERIVED_ID_SIZE = 24;

    private MessageIds() {
    }

    /** The fingerprint of a source partition, the first 4 bytes of its ids. */
    public static int origin(String topic, int partition) {
        return (int) Hashing.farmHashFingerprint64()
                .hashString(topic + "#" + partition, StandardCharsets.UTF_8).asLong();
    }

    /** The id of the source message at {@code offset}. */
    public static MessageId source(int origin, long offset) {
        return MessageId.of(ByteBuffer.allocate(SOURCE_ID_SIZE).putInt(origin).putLong(offset).array());
    }

    /** A 64-bit tag of a computation, part of the lineage of its outputs. */
    public static long computationTag(String computationId) {
        return Hashing.farmHashFingerprint64().hashString(computationId, StandardCharsets.UTF_8).asLong();
    }

    /** The id of output number {@code position} of a call whose main parent is {@code parent}. */
    public static MessageId derive(MessageId parent, long computationTag, int position) {
        byte[] p = parent.toBytes();
        int origin;
        long offset;
        long parentLineage;
        int parentPosition;
        if (p.length == SOURCE_ID_SIZE || p.length == DERIVED_ID_SIZE) {
            ByteBuffer in = ByteBuffer.wrap(p);
            origin = in.getInt();
            offset = in.getLong();
            parentLineage = p.length == DERIVED_ID_SIZE ? in.getLong() : 0L;
            parentPosition = p.length == DERIVED_ID_SIZE ? in.getInt() : -1;
        } else {
            // a foreign id (from a timer, a visit or a batch): keep its ordering prefix, fold all of it into the lineage
            origin = prefixInt(p);
            offset = prefixLong(p);
            parentLineage = Hashing.farmHashFingerprint64().hashBytes(p).asLong();
            parentPosition = p.length;
        }
        long lineage = mix(mix(parentLineage, parentPosition), computationTag);
        return MessageId.of(ByteBuffer.allocate(DERIVED_ID_SIZE)
                .putInt(origin).putLong(offset).putLong(lineage).putInt(position).array());
    }

    /** The first 4 bytes as an int, zero-padded when shorter. */
    private static int prefixInt(byte[] p) {
        int v = 0;
        for (int i = 0; i < 4; i++) {
            v = (v << 8) | (i < p.length ? p[i] & 0xff : 0);
        }
        return v;
    }

    /** Bytes 4..12 as a long, zero-padded when shorter. */
    private static long prefixLong(byte[] p) {
        long v = 0;
        for (int i = 4; i < 12; i++) {
            v = (v << 8) | (i < p.length ? p[i] & 0xff : 0);
        }
        return v;
    }

    /**
     * The id of output number {@code position} of a call: {@link #derive} from its one parent, or
     * {@link #deriveFromSet} from several ({@code OutputCollector.withParentIds}).
     */
    public static MessageId output(List<MessageId> parents, long computationTag, int position) {
        return parents.size() == 1
                ? derive(parents.get(0), computationTag, position)
                : deriveFromSet(parents, computationTag, position);
    }

    /**
     * The id of output number {@code position} of a call on one input ({@code input}: a message, a timer or a
     * visit): {@link #output(List, long, int)}, except that parents given without the call's input
     * ({@code OutputCollector.withParentIds} naming messages of earlier calls) are joined by it. Else two calls naming
     * the same earlier messages would give their outputs equal ids, and deduplication by id would drop the later
     * one.
     */
    public static MessageId output(List<MessageId> parents, MessageId input, long computationTag, int position) {
        if (parents.size() == 1 && (parents.get(0) == input || parents.get(0).equals(input))) {
            return derive(input, computationTag, position);
        }
        if (parents.contains(input)) {
            return deriveFromSet(parents, computationTag, position);
        }
        List<MessageId> withInput = new ArrayList<>(parents.size() + 1);
        withInput.addAll(parents);
        withInput.add(input);
        return deriveFromSet(withInput, computationTag, position);
    }

    /** The lineage tag of the timers a computation adds (their ids derive from the call's input). */
    public static long timerTag(String computationId) {
        return computationTag(computationId + "#timers");
    }

    /** The origin of the visits of one key-visitor stream in one partition. */
    public static int visitOrigin(String computationId, String visitorStreamId, int partition) {
        return origin(computationId + "#visit#" + visitorStreamId, partition);
    }

    /**
     * The id of the visit of a key in a pass: the same key in the same pass always gets the same
     * id, so a replayed visit writes the same output ids.
     *
     * @param visitOrigin {@link #visitOrigin} of the visitor stream and partition
     * @param encodedKey the key as encoded in the state store
     */
    public static MessageId visit(int visitOrigin, long pass, byte[] encodedKey) {
        return derive(source(visitOrigin, pass), Hashing.farmHashFingerprint64().hashBytes(encodedKey).asLong(), 0);
    }

    /**
     * The id of output number {@code position} among the outputs of one call that share the parent
     * set {@code parents} (SwiftMap batching).
     *
     * <p>A function of the <em>set</em>: the order of {@code parents} and repeated ids do not
     * matter, any other set gives another id (up to a 64-bit fingerprint collision). Layout as a
     * derived id, {@code origin(4) | offset(8) | lineage(8) | position(4)}, where origin and offset
     * are those of the set's largest id (so the output sorts beside its newest parent) and the
     * lineage folds the fingerprints of all parent ids, in sorted order, into the computation tag. A
     * set of one parent gives {@link #derive}'s id, so an output with one parent has the same id
     * whether or not it was computed in a batch.
     *
     * @throws IllegalArgumentException if {@code parents} is empty
     */
    public static MessageId deriveFromSet(List<MessageId> parents, long computationTag, int position) {
        if (parents.isEmpty()) {
            throw new IllegalArgumentException("a message id needs at least one parent id");
        }
        List<MessageId> set = parents.stream().sorted().distinct().toList();
        if (set.size() == 1) {
            return derive(set.get(0), computationTag, position);
        }
        long lineage = computationTag;
        for (MessageId m : set) {
            lineage = mix(lineage, Hashing.farmHashFingerprint64().hashBytes(m.toBytes()).asLong());
        }
        byte[] p = set.get(set.size() - 1).toBytes();
        return MessageId.of(ByteBuffer.allocate(DERIVED_ID_SIZE)
                .putInt(prefixInt(p)).putLong(prefixLong(p)).putLong(lineage).putInt(position).array());
    }

    private static long mix(long a, long b) {
        // YTsaurus' 128-to-64 fingerprint: a good, cheap and stable mix
        final long k = 0x9ddfea08eb382d69L;
        long x = (a ^ b) * k;
        x ^= x >>> 47;
        long y = (b ^ x) * k;
        y ^= y >>> 44;
        y *= k;
        y ^= y >>> 41;
        return y * k;
    }
}
