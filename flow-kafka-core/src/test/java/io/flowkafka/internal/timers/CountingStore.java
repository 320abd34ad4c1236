package io.flowkafka.internal.timers;

import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.common.serialization.Serializer;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.internals.WrappedStateStore;
import org.jspecify.annotations.Nullable;

/**
 * A timer store as {@link TimerStore} sees it, with what it asks of it counted: where each forward scan
 * starts, and how many timer or hold rows it writes (bookkeeping rows not counted). A
 * {@link WrappedStateStore}, so that a write-back cache below is still found. Not thread-safe.
 */
final class CountingStore extends WrappedStateStore<KeyValueStore<Bytes, byte[]>, Bytes, byte[]>
        implements KeyValueStore<Bytes, byte[]> {
    /** The {@code from} of every {@link #range} call, in order (null: from the store's start). */
    final List<@Nullable Bytes> rangeStarts = new ArrayList<>();
    /** Puts of a timer or hold row with a value. */
    long rowPuts;

    CountingStore(KeyValueStore<Bytes, byte[]> inner) {
        super(inner);
    }

    @Override
    public void put(Bytes key, byte @Nullable [] value) {
        if (value != null && !TimerKeys.isEndMark(key.get())) {
            rowPuts++;
        }
        wrapped().put(key, value);
    }

    @Override
    public byte @Nullable [] putIfAbsent(Bytes key, byte @Nullable [] value) {
        byte[] old = wrapped().get(key);
        if (old == null) {
            put(key, value);
        }
        return old;
    }

    @Override
    public void putAll(List<KeyValue<Bytes, byte[]>> entries) {
        entries.forEach(e -> put(e.key, e.value));
    }

    @Override
    public byte @Nullable [] delete(Bytes key) {
        return wrapped().delete(key);
    }

    @Override
    public byte @Nullable [] get(Bytes key) {
        return wrapped().get(key);
    }

    @Override
    public KeyValueIterator<Bytes, byte[]> range(@Nullable Bytes from, @Nullable Bytes to) {
        rangeStarts.add(from);
        return wrapped().range(from, to);
    }

    @Override
    public KeyValueIterator<Bytes, byte[]> reverseRange(Bytes from, Bytes to) {
        return wrapped().reverseRange(from, to);
    }

    @Override
    public KeyValueIterator<Bytes, byte[]> all() {
        return range(null, null);
    }

    @Override
    public KeyValueIterator<Bytes, byte[]> reverseAll() {
        return wrapped().reverseAll();
    }

    @Override
    public <PS extends Serializer<P>, P> KeyValueIterator<Bytes, byte[]> prefixScan(P prefix, PS prefixKeySerializer) {
        return wrapped().prefixScan(prefix, prefixKeySerializer);
    }

    @Override
    public long approximateNumEntries() {
        return wrapped().approximateNumEntries();
    }

    /** The scans that started inside stream {@code stream}'s region below {@code floor}: from its start, or below. */
    List<Bytes> scansBelow(int stream, Bytes floor) {
        List<Bytes> out = new ArrayList<>();
        for (Bytes from : rangeStarts) {
            if (from == null || (TimerKeys.stream(from.get()) == stream && from.compareTo(floor) < 0)) {
                out.add(from);
            }
        }
        return out;
    }
}
