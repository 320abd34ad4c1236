package io.flowkafka.internal.processor;

import io.flowkafka.avro.BatchedInput;
import io.flowkafka.avro.FlowAvroClasses;
import io.flowkafka.internal.dlq.RecordSizeLimit;
import io.flowkafka.internal.dlq.RejectedRecordException;
import io.flowkafka.internal.message.FlowMessage;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.apache.avro.io.BinaryDecoder;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.DecoderFactory;
import org.apache.avro.io.EncoderFactory;
import org.apache.avro.specific.SpecificDatumReader;
import org.apache.avro.specific.SpecificDatumWriter;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.StoreBuilder;
import org.apache.kafka.streams.state.Stores;
import org.jspecify.annotations.Nullable;

/**
 * The input buffer of a SwiftMap computation with {@code allow_batching_with_relaxed_guarantees}:
 * the messages read since the last batch was cut, in read order.
 *
 * <p>Model. A Kafka Streams processor sees one record at a time, and Kafka Streams commits the
 * offset of every record handed to it, whether or not the processor has used it yet; it has no
 * hook before a commit. A batch held only on the heap would be lost by a crash after such a
 * commit, and dropped by every rebalance. So every buffered input is also a row of a changelogged
 * store ({@code <computation>.batch}, an 8-byte big-endian sequence number to a
 * {@link BatchedInput}), written in the transaction that commits its offset; cutting a batch
 * deletes its rows in the transaction that carries the batch's outputs. A restart restores the
 * buffer exactly as committed and goes on filling it: no input is lost, none is processed twice.
 *
 * <p>Cut rules (applied by {@link ComputationTask}):
 * <ol>
 *   <li>size: as soon as {@code max_batch_size} messages are buffered. The buffer at the last
 *       commit and the order of an input partition are both fixed, so a replay cuts at the same
 *       records when the computation reads one input stream; with several, Kafka Streams
 *       interleaves their partitions by timestamp and fetch timing, which a replay need not
 *       repeat;</li>
 *   <li>delay: when the oldest buffered message has waited {@code max_batch_delay} of wall-clock
 *       time (a punctuator; the wait restarts when a task is restored). Timing decides these
 *       cuts, so a replay may cut elsewhere;</li>
 *   <li>completion: when every input stream has completed, so a finite pipeline completes.</li>
 * </ol>
 *
 * <p>Invariants: the rows of the store are exactly the buffered entries; their sequence numbers
 * are consecutive and start above every sequence number ever deleted in this store.
 * {@link #minEventTimestamp()} is the smallest event timestamp buffered, which holds the task's
 * output event watermark, so a batch's outputs are never behind the watermark sent before them.
 *
 * <p>Memory: at most {@code max_batch_size} decoded messages on the heap, and the store is an
 * in-memory store of at most as many rows, whatever {@code flow.state.stores} says.
 *
 * <p>Threading: owned by the task's stream thread.
 */
public final class BatchBuffer {
    static {
        FlowAvroClasses.trust();
    }

    /**
     * One buffered input.
     *
     * @param storeKey its row in the store
     * @param message the decoded message, or null if it could not be decoded after a restore
     * @param record the record as read, for the dead-letter topic
     * @param decodeError why {@code message} is null
     */
    record Entry(Bytes storeKey, @Nullable FlowMessage message, BatchedInput record,
            @Nullable RuntimeException decodeError) {
    }

    private final KeyValueStore<Bytes, byte[]> store;
    private final List<Entry> entries = new ArrayList<>();
    private final SpecificDatumWriter<BatchedInput> writer = new SpecificDatumWriter<>(BatchedInput.class);
    private final SpecificDatumReader<BatchedInput> reader = new SpecificDatumReader<>(BatchedInput.class);
    private final ByteArrayOutputStream buffer = new ByteArrayOutputStream(256);
    private @Nullable BinaryEncoder encoder;
    private @Nullable BinaryDecoder decoder;
    private long nextSequence;
    private long minEventTimestamp = Long.MAX_VALUE;
    private long firstBufferedWallMs = Long.MIN_VALUE;

    private final @Nullable RecordSizeLimit limit;

    BatchBuffer(KeyValueStore<Bytes, byte[]> store) {
        this(store, null);
    }

    /** @param limit the largest record the producer sends, which a row of the store's changelog must not pass */
    BatchBuffer(KeyValueStore<Bytes, byte[]> store, @Nullable RecordSizeLimit limit) {
        this.store = store;
        this.limit = limit;
    }

    /** The store of {@code computationId}'s buffer. */
    public static String storeName(String computationId) {
        return computationId + ".batch";
    }

    /** An in-memory, changelogged store: it never holds more than one batch. */
    public static StoreBuilder<KeyValueStore<Bytes, byte[]>> storeBuilder(String computationId) {
        return Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore(storeName(computationId)), Serdes.Bytes(),
                Serdes.ByteArray()).withLoggingEnabled(Map.of());
    }

    /**
     * Rebuilds the buffer from the store (after a restore, or on a fresh store: empty).
     *
     * @param decode decodes a buffered record into its message
     * @param nowMs the wall clock: a restored buffer waits {@code max_batch_delay} from now
     */
    void restore(Function<BatchedInput, FlowMessage> decode, long nowMs) {
        entries.clear();
        minEventTimestamp = Long.MAX_VALUE;
        nextSequence = 0;
        try (KeyValueIterator<Bytes, byte[]> it = store.all()) {
            while (it.hasNext()) {
                var kv = it.next();
                BatchedInput r = decodeRecord(kv.value);
                FlowMessage m = null;
                RuntimeException error = null;
                try {
                    m = decode.apply(r);
                    minEventTimestamp = Math.min(minEventTimestamp, m.eventTimestamp());
                } catch (RuntimeException e) {
                    error = e;
                }
                entries.add(new Entry(kv.key, m, r, error));
                nextSequence = Math.max(nextSequence, ByteBuffer.wrap(kv.key.get()).getLong() + 1);
            }
        }
        firstBufferedWallMs = entries.isEmpty() ? Long.MIN_VALUE : nowMs;
    }

    /** Buffers a decoded input and its record (a row of the store). */
    void add(FlowMessage message, BatchedInput record, long nowMs) {
        Bytes key = Bytes.wrap(ByteBuffer.allocate(8).putLong(nextSequence).array());
        byte[] row = encodeRecord(record);
        if (limit != null && !limit.fits(key.get(), row, null)) {
            // the changelog send would fail the task's commit on every replay: the input is refused instead
            throw new RejectedRecordException(limit.tooLarge("this input buffered for its batch (a row of the "
                    + "changelog of store " + store.name() + ")", key.get(), row, null) + "; " + limit.raiseAdvice());
        }
        nextSequence++;
        store.put(key, row);
        if (entries.isEmpty()) {
            firstBufferedWallMs = nowMs;
        }
        entries.add(new Entry(key, message, record, null));
        minEventTimestamp = Math.min(minEventTimestamp, message.eventTimestamp());
    }

    /** Removes every buffered entry (and its row) and returns them in read order. */
    List<Entry> drain() {
        List<Entry> batch = List.copyOf(entries);
        for (Entry e : batch) {
            store.delete(e.storeKey());
        }
        entries.clear();
        minEventTimestamp = Long.MAX_VALUE;
        firstBufferedWallMs = Long.MIN_VALUE;
        return batch;
    }

    int size() {
        return entries.size();
    }

    boolean isEmpty() {
        return entries.isEmpty();
    }

    /** The smallest event timestamp buffered; {@link Long#MAX_VALUE} when empty. */
    long minEventTimestamp() {
        return minEventTimestamp;
    }

    /** Wall-clock ms when the oldest entry was buffered (or the buffer restored); MIN_VALUE when empty. */
    long firstBufferedWallMs() {
        return firstBufferedWallMs;
    }

    private byte[] encodeRecord(BatchedInput r) {
        buffer.reset();
        encoder = EncoderFactory.get().directBinaryEncoder(buffer, encoder);
        try {
            writer.write(r, encoder);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return buffer.toByteArray();
    }

    private BatchedInput decodeRecord(byte[] bytes) {
        decoder = DecoderFactory.get().binaryDecoder(bytes, decoder);
        try {
            return reader.read(null, decoder);
        } catch (IOException | RuntimeException e) {
            throw new IllegalStateException("a row of a SwiftMap batch store is not a BatchedInput: " + e, e);
        }
    }
}
