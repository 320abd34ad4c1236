package io.flowkafka.internal.dlq;

import io.flowkafka.api.FlowException;

/**
 * Wraps a failure of one input's processing (undecodable record, exception from user code) so the
 * dead-letter handler can name the computation. Thrown only after the call's effects were dropped.
 */
public final class FlowProcessingException extends FlowException {
    private static final long serialVersionUID = 1L;
    private final String computation;
    private final String stage;

    public FlowProcessingException(String computation, String stage, Throwable cause) {
        super("computation '" + computation + "' failed to " + stage + ": " + cause.getClass().getName()
                + (cause.getMessage() == null ? "" : ": " + cause.getMessage()), cause);
        this.computation = computation;
        this.stage = stage;
    }

    /** The computation whose input failed. */
    public String computation() {
        return computation;
    }

    /** What failed: {@code decode the record} or {@code process the message} (etc). */
    public String stage() {
        return stage;
    }
}
