package io.flowkafka.internal.source;

import io.flowkafka.api.MessageId;
import io.flowkafka.internal.message.MessageIds;
import io.flowkafka.spi.PunctuatedSource;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.function.LongSupplier;
import org.apache.avro.generic.GenericRecord;

/**
 * Steps the punctuated sources of one task in one punctuation, within a time bound (see {@link PunctuatedSource}).
 *
 * <p>Each source is stepped once (on the task's tick; a quicker punctuation steps only the ready ones); then, while a
 * time bound is set and left, the sources whose readers are {@link PunctuatedSource.Reader#ready() ready} are stepped
 * again, in turn. Without a time bound (deterministic steps) every source is stepped exactly once per tick, bounded by
 * its own rows per step.
 *
 * <p>Message ids: each source numbers its messages from a counter in its progress. The counter is read once per
 * punctuation, kept in a field while the steps run and written once at the end, in the punctuation's transaction
 * like the reader's own progress: a replay after an abort or a crash numbers the same messages alike.
 *
 * <p>Not thread-safe: owned by the task's stream thread.
 */
public final class PunctuatedSourceSteps {
    static final String EMITTED = "\u0000emitted";

    /** Runs one message of a source through the computation. */
    @FunctionalInterface
    public interface Rows {
        /**
         * Runs one message.
         *
         * @param id the message id
         * @param payload the payload
         * @param timestampMs the message's timestamp, epoch ms
         * @param watermarkMs how far the source's watermark may advance, epoch ms
         */
        void row(MessageId id, GenericRecord payload, long timestampMs, long watermarkMs);

        /**
         * Moves the source's watermark without a message ({@link PunctuatedSource.Emitter#advance}).
         *
         * @param watermarkMs how far the source's watermark may advance, epoch ms
         */
        default void advance(long watermarkMs) {
        }
    }

    private final List<Source> sources = new ArrayList<>();
    private final LongSupplier clockMs;
    private final long maxStepMs;

    /**
     * Creates the steps of a task.
     *
     * @param clockMs the task's wall clock, epoch ms
     * @param maxStepMs at most this long per punctuation; 0: one step per source (deterministic)
     */
    public PunctuatedSourceSteps(LongSupplier clockMs, long maxStepMs) {
        this.clockMs = clockMs;
        this.maxStepMs = maxStepMs;
    }

    /**
     * Adds a source.
     *
     * @param origin the origin of its message ids ({@link MessageIds#origin})
     * @param reader its reader
     * @param progress its progress
     * @param rows runs each of its messages
     */
    public void add(int origin, PunctuatedSource.Reader reader, PunctuatedSource.Progress progress, Rows rows) {
        sources.add(new Source(origin, reader, progress, rows));
    }

    /** Whether no source was added. */
    public boolean isEmpty() {
        return sources.isEmpty();
    }

    /** Whether every source is finite and read everything. */
    public boolean allDone() {
        return sources.stream().allMatch(s -> s.reader.done(s.progress));
    }

    /** Whether a source's reader is ready to emit more at once. */
    public boolean anyReady() {
        return sources.stream().anyMatch(s -> s.reader.ready());
    }

    /**
     * Steps the sources in one punctuation: each once ({@code all}) or the ready ones only, then the ready ones again
     * while the time bound lasts.
     *
     * @param all whether every source takes a first step, ready or not
     */
    public void punctuate(boolean all) {
        long deadline = maxStepMs > 0 ? System.nanoTime() + maxStepMs * 1_000_000L : 0;
        try {
            boolean first = all;
            boolean again;
            do {
                again = false;
                for (Source s : sources) {
                    if (first || s.reader.ready()) {
                        s.step();
                        again |= s.reader.ready();
                    }
                }
                first = false;
            } while (again && deadline != 0 && System.nanoTime() - deadline < 0);
        } finally {
            sources.forEach(Source::writeCounter);
        }
    }

    /** One source: its reader, progress and message counter. */
    private final class Source implements PunctuatedSource.Emitter {
        private final int origin;
        private final PunctuatedSource.Reader reader;
        private final PunctuatedSource.Progress progress;
        private final Rows rows;
        private long next = -1; // the next message index while a punctuation runs; -1 outside one
        private long written;

        Source(int origin, PunctuatedSource.Reader reader, PunctuatedSource.Progress progress, Rows rows) {
            this.origin = origin;
            this.reader = reader;
            this.progress = progress;
            this.rows = rows;
        }

        void step() {
            if (next < 0) {
                byte[] counter = progress.get(EMITTED);
                written = counter == null ? 0 : ByteBuffer.wrap(counter).getLong();
                next = written;
            }
            reader.step(clockMs.getAsLong(), progress, this);
        }

        @Override
        public void emit(GenericRecord payload, long timestampMs, long watermarkMs) {
            long index = next++;
            rows.row(MessageIds.source(origin, index), payload, timestampMs, watermarkMs);
        }

        @Override
        public void advance(long watermarkMs) {
            rows.advance(watermarkMs);
        }

        void writeCounter() {
            if (next > written) {
                progress.put(EMITTED, ByteBuffer.allocate(Long.BYTES).putLong(next).array());
            }
            next = -1;
        }
    }
}
