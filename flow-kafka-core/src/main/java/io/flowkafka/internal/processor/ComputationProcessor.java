package io.flowkafka.internal.processor;

import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.jspecify.annotations.Nullable;

/**
 * The main node of a computation's sub-topology: a thin Kafka Streams adapter over one
 * {@link ComputationTask} per task attempt.
 *
 * <p>DESIGN rule: per-task state lives in stores, or in one object built at {@code init()} and dropped at
 * {@code close()}, never in processor fields. Kafka Streams <em>revives</em> a task under exactly_once_v2 when
 * it cannot trust the task's uncommitted work (a {@code TaskCorruptedException}, e.g. a commit that timed
 * out): it closes the task dirty, aborts the transaction, wipes and restores its stores from the changelogs,
 * moves it back to CREATED and calls {@code init()} again on this <b>same</b> object. Anything a field kept
 * from the aborted attempt (a finite partition marked done, a source clock, a visitor's progress, a list of
 * nodes appended at init) would then steer the replay away from the first attempt: lost or early output. So
 * this class holds nothing but the immutable plan; {@link #init} builds a fresh task from the stores and
 * {@link #close} drops it.
 *
 * <p>Threading: one instance per task, used by its stream thread only.
 */
public final class ComputationProcessor implements Processor<byte[], byte[], byte[], byte[]> {
    private final ComputationPlan plan;
    private @Nullable ComputationTask task;

    public ComputationProcessor(ComputationPlan plan) {
        this.plan = plan;
    }

    @Override
    public void init(ProcessorContext<byte[], byte[]> context) {
        ComputationTask previous = task;
        task = null;
        if (previous != null) {
            previous.close(); // init() without close(): nothing of the old attempt may survive either
        }
        task = new ComputationTask(plan, context);
    }

    @Override
    public void process(Record<byte[], byte[]> record) {
        ComputationTask t = task;
        if (t == null) {
            throw new IllegalStateException("computation '" + plan.spec().id() + "' got a record before init()");
        }
        t.process(record);
    }

    @Override
    public void close() {
        ComputationTask t = task;
        task = null;
        if (t != null) {
            t.close();
        }
    }

    /** The task of the current attempt, or null between close() and init() (for tests). */
    @Nullable ComputationTask task() {
        return task;
    }
}
