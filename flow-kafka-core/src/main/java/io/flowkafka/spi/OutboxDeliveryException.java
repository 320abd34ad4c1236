package io.flowkafka.spi;

/**
 * A delivery problem of an async sink. A retryable one makes the outbox service offer the same
 * batch again after a backoff; a {@link #fatal() fatal} one stops the sink (its outbox keeps
 * filling) and is shown in {@code FlowRuntime.status()} until the runtime restarts.
 */
public class OutboxDeliveryException extends Exception {
    private static final long serialVersionUID = 1L;
    private final boolean fatal;

    /** A retryable problem. */
    public OutboxDeliveryException(String message, Throwable cause) {
        super(message, cause);
        this.fatal = false;
    }

    private OutboxDeliveryException(String message, boolean fatal) {
        super(message);
        this.fatal = fatal;
    }

    /** A retryable problem without a cause. */
    public static OutboxDeliveryException retryable(String message) {
        return new OutboxDeliveryException(message, false);
    }

    /** A problem that retrying cannot fix: the sink stops, with {@code message} as its status. */
    public static OutboxDeliveryException fatal(String message) {
        return new OutboxDeliveryException(message, true);
    }

    /** Whether the sink must stop. */
    public boolean fatal() {
        return fatal;
    }

    private byte @org.jspecify.annotations.Nullable [] rejectedKey;
    private byte @org.jspecify.annotations.Nullable [] rejectedValue;
    private boolean rejected;

    /**
     * The target rejected this record for good (too large for the topic, a timestamp out of its bounds): retrying
     * it cannot help, but the pipeline need not stop. For a synchronous sink ({@code SyncSinkWriter#flush}), the
     * epoch is replayed, and the call that produces a record with the same key and value bytes again fails before
     * writing it: its input goes to the dead-letter topic with {@code message} as the reason.
     */
    public static OutboxDeliveryException rejected(String message, byte @org.jspecify.annotations.Nullable [] key,
            byte @org.jspecify.annotations.Nullable [] value, Throwable cause) {
        OutboxDeliveryException e = new OutboxDeliveryException(message, cause);
        e.rejected = true;
        e.rejectedKey = key;
        e.rejectedValue = value;
        return e;
    }

    /** Whether the target rejected one record for good ({@link #rejected}). */
    public boolean rejectedRecord() {
        return rejected;
    }

    /** The key of the record the target rejected, if {@link #rejectedRecord()}. */
    public byte @org.jspecify.annotations.Nullable [] rejectedKey() {
        return rejectedKey;
    }

    /** The value of the record the target rejected, if {@link #rejectedRecord()}. */
    public byte @org.jspecify.annotations.Nullable [] rejectedValue() {
        return rejectedValue;
    }
}
