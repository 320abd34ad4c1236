package io.flowkafka.internal.outbox;

import org.apache.kafka.streams.errors.StreamsException;

/**
 * A synchronous external sink failed in a way no retry can fix (its target rejects a record for
 * good): the epoch must not commit, and replaying it would fail the same way forever, so the
 * runtime stops with this message instead of replacing the stream thread again and again.
 */
public final class FatalSinkException extends StreamsException {
    private static final long serialVersionUID = 1L;
    private final String sink;

    public FatalSinkException(String sink, String message, Throwable cause) {
        super(message, cause);
        this.sink = sink;
    }

    /** The sink id. */
    public String sink() {
        return sink;
    }

    /** The first {@code FatalSinkException} in a cause chain, or null. */
    public static FatalSinkException in(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof FatalSinkException f) {
                return f;
            }
            if (t.getCause() == t) {
                break;
            }
        }
        return null;
    }
}
