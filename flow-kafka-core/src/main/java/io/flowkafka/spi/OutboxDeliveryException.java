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
}
