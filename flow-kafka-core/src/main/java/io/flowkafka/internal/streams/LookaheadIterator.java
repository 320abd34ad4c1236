package io.flowkafka.internal.streams;

import java.util.NoSuchElementException;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.jspecify.annotations.Nullable;

/**
 * A store iterator that finds its next row ahead of {@link #next()}: subclasses say how ({@link #fetch()}).
 * Shared by {@link WriteBackStore}'s merged scans and the state package's in-memory store; it uses only
 * Kafka Streams' public store API (it lives here so that the state package depends on this one, not both
 * ways).
 */
public abstract class LookaheadIterator implements KeyValueIterator<Bytes, byte[]> {
    private @Nullable KeyValue<Bytes, byte[]> next;

    /** The next row, or null when there is none. */
    protected abstract @Nullable KeyValue<Bytes, byte[]> fetch();

    @Override
    public final boolean hasNext() {
        if (next == null) {
            next = fetch();
        }
        return next != null;
    }

    @Override
    public final KeyValue<Bytes, byte[]> next() {
        if (!hasNext()) {
            throw new NoSuchElementException();
        }
        KeyValue<Bytes, byte[]> r = next;
        next = null;
        return r;
    }

    @Override
    public final Bytes peekNextKey() {
        if (!hasNext()) {
            throw new NoSuchElementException();
        }
        return next.key;
    }
}
