package io.flowkafka.api;

/**
 * Common supertype of {@link RowFunction} and {@link BatchFunction}.
 *
 * <p>A new instance is created per partition (task); an instance is used by one thread at a time.
 * Instances must keep no per-key data in fields: use state, which survives restarts.
 */
public sealed interface ProcessFunction permits RowFunction, BatchFunction {
    /**
     * Called once before the first call of a task, with the computation's parameters.
     *
     * @param context the task's context ({@link RuntimeContext#getParameters()} and the like)
     */
    default void open(RuntimeContext context) {
    }

    /** Called when the task closes; release resources here. */
    default void close() {
    }
}
