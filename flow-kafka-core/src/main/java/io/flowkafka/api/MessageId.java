package io.flowkafka.api;

import java.util.Arrays;
import java.util.HexFormat;
import java.util.Objects;

/**
 * The deterministic id of a message, timer or visit.
 *
 * <p>Ids are derived from the parents' ids and the output position, never from a clock or a
 * random source, so a replay after an aborted transaction produces the same ids; sinks use them
 * as dedup tokens. Ids are compared as unsigned bytes; within one source partition the order of
 * ids follows the order of the source offsets, so "the largest message id of a batch" is
 * meaningful.
 *
 * <p>Immutable and thread-safe.
 */
public final class MessageId implements Comparable<MessageId> {
    private final byte[] bytes;
    private final int hash;

    private MessageId(byte[] bytes) {
        this.bytes = bytes;
        this.hash = Arrays.hashCode(bytes);
    }

    /**
     * Wraps a copy of the given bytes.
     *
     * @param bytes the id's bytes
     * @return the id
     * @throws IllegalArgumentException if {@code bytes} is empty
     */
    public static MessageId of(byte[] bytes) {
        Objects.requireNonNull(bytes, "bytes");
        if (bytes.length == 0) {
            throw new IllegalArgumentException("a message id must not be empty");
        }
        return new MessageId(bytes.clone());
    }

    /**
     * Parses the hexadecimal form produced by {@link #toString()}.
     *
     * @param hex the hexadecimal form
     * @return the id
     */
    public static MessageId fromHex(String hex) {
        return of(HexFormat.of().parseHex(hex));
    }

    /** {@return a copy of the id's bytes} */
    public byte[] toBytes() {
        return bytes.clone();
    }

    /** {@return the number of bytes of the id} */
    public int size() {
        return bytes.length;
    }

    @Override
    public int compareTo(MessageId other) {
        return Arrays.compareUnsigned(bytes, other.bytes);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof MessageId other && hash == other.hash && Arrays.equals(bytes, other.bytes);
    }

    @Override
    public int hashCode() {
        return hash;
    }

    /** Lowercase hexadecimal. */
    @Override
    public String toString() {
        return HexFormat.of().formatHex(bytes);
    }
}
