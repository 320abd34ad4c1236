package io.flowkafka.spi;

import io.flowkafka.spec.SourceSpec;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Supplier;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericRecord;
import org.jspecify.annotations.Nullable;

/**
 * A source that reads no Kafka topic: the runtime calls its {@link Reader} on a wall-clock punctuation of each task
 * of the Source computation, in bounded steps, and runs each message it emits through the computation in the step's
 * transaction. A {@link SourceProvider} returns one from {@link SourceProvider#punctuated()}.
 *
 * <p>Steps: each punctuation steps every reader once, then steps again the readers that are {@link Reader#ready()
 * ready} while the punctuation's time bound ({@code flow.key.visitor.max.punctuation.ms}) is left. Without a time
 * bound (FlowTestDriver's deterministic steps) each reader is stepped once per punctuation.
 *
 * <p>Rules the runtime keeps, which make reading exactly-once:
 * <ol>
 *   <li>the reader's {@link Progress} is a changelogged store of the task, written in the transaction of the
 *       messages it covers: after a crash, a rebalance or an aborted transaction the reader sees the progress of the
 *       last committed step, so it must decide what to emit from that progress alone (a rate limit may live on the
 *       heap: it decides when, never what);</li>
 *   <li>message ids are numbered by the runtime from a counter kept in the same store, so a replayed step emits the
 *       same ids;</li>
 *   <li>the computation has {@code desired_partition_count} tasks; a reader learns its partition and the count and
 *       reads its share.</li>
 * </ol>
 *
 * <p>Implementations are stateless and thread-safe; each reader is owned by one task's stream thread.
 */
public interface PunctuatedSource {
    /**
     * Opens the reader of one source in one task.
     *
     * @param context the task's view of the source; not null
     * @return a reader the runtime closes with the task
     */
    Reader open(Context context);

    /**
     * The parameters of the source that the dynamic spec may change
     * ({@code computations.<id>.source_streams.<stream>.<name>}); empty when none.
     *
     * @return the names of the dynamic parameters
     */
    default Set<String> dynamicParameterNames() {
        return Set.of();
    }

    /**
     * One task's view of a source.
     *
     * @param computationId the Source computation
     * @param source the source's spec
     * @param streamSchema the payload schema of the source's stream
     * @param partition this task's partition, from 0
     * @param partitionCount the computation's tasks
     * @param dynamicParameters the current dynamic parameters of the source (the static ones overridden by the
     *     dynamic spec); read it at each step
     * @param status where the reader reports a problem to the runtime's status
     */
    record Context(String computationId, SourceSpec source, Schema streamSchema, int partition, int partitionCount,
            Supplier<Map<String, Object>> dynamicParameters, Status status) {
        /**
         * Checks every component.
         *
         * @param computationId the Source computation
         * @param source the source's spec
         * @param streamSchema the payload schema of the source's stream
         * @param partition this task's partition, from 0
         * @param partitionCount the computation's tasks, at least 1
         * @param dynamicParameters the current dynamic parameters of the source
         * @param status where the reader reports a problem
         * @throws NullPointerException if a component is null
         * @throws IllegalArgumentException if the partition is outside {@code [0, partitionCount)}
         */
        public Context {
            Objects.requireNonNull(computationId, "computationId");
            Objects.requireNonNull(source, "source");
            Objects.requireNonNull(streamSchema, "streamSchema");
            Objects.requireNonNull(dynamicParameters, "dynamicParameters");
            Objects.requireNonNull(status, "status");
            if (partition < 0 || partition >= partitionCount) {
                throw new IllegalArgumentException("partition " + partition + " must lie in [0, " + partitionCount
                        + ")");
            }
        }
    }

    /** Reports problems of a source to the runtime's status ({@code FlowRuntime.status()}). Not thread-safe. */
    interface Status {
        /**
         * Reports (or replaces) an error under {@code path}.
         *
         * @param path what the error is about, e.g. {@code source_streams/reference/table/2026-12-03}
         * @param message what happened, what the source does about it and how to fix it
         */
        void report(String path, String message);

        /**
         * Clears the error under {@code path}, if any.
         *
         * @param path as reported
         */
        void clear(String path);
    }

    /** The changelogged progress of one source in one task: small byte values by key. Not thread-safe. */
    interface Progress {
        /**
         * The value under {@code key}.
         *
         * @param key the key
         * @return the committed or written value, or null
         */
        byte @Nullable [] get(String key);

        /**
         * Writes {@code value} under {@code key}, in the transaction of the current step.
         *
         * @param key the key
         * @param value the value
         */
        void put(String key, byte[] value);
    }

    /** Receives the messages of a step. Not thread-safe. */
    interface Emitter {
        /**
         * Runs one message through the computation, in the step's transaction.
         *
         * @param payload the message payload, of the stream's schema
         * @param timestampMs the message's SystemTimestamp and EventTimestamp, epoch milliseconds (may be in the
         *     future)
         * @param watermarkMs how far the source's event watermark may advance now: the earliest timestamp the
         *     source may still emit, less any delay; epoch milliseconds
         */
        void emit(GenericRecord payload, long timestampMs, long watermarkMs);

        /**
         * Moves the source's event watermark without a message: a task with nothing to emit (its share of a table
         * is empty) still lets the readers downstream go on. A watermark never goes back; a lower value is ignored.
         *
         * @param watermarkMs the earliest timestamp the source may still emit, less any delay; epoch milliseconds
         */
        default void advance(long watermarkMs) {
        }
    }

    /** Reads one source in one task. Owned by the task's stream thread. */
    interface Reader extends AutoCloseable {
        /**
         * Reads on from {@code progress}: a bounded amount of work, then returns.
         *
         * @param nowMs the wall clock (the test driver's in tests)
         * @param progress the source's changelogged progress in this task
         * @param emitter receives the messages, in order
         */
        void step(long nowMs, Progress progress, Emitter emitter);

        /**
         * Whether the last step stopped at its own bound with more to emit at once, no rate limit or missing input
         * holding it back: the runtime may then step again in the same punctuation, within its time bound. The
         * default, false, gives one step per punctuation.
         *
         * @return true if another step now would emit more
         */
        default boolean ready() {
            return false;
        }

        /**
         * Whether the source is finite and read everything (the task's sources then complete).
         *
         * @param progress the source's progress
         * @return true once nothing is left to read, ever; false for an endless source
         */
        boolean done(Progress progress);

        /** Releases what the reader holds; the default holds nothing. */
        @Override
        default void close() {
        }
    }
}
