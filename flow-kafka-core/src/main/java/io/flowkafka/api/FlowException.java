package io.flowkafka.api;

/**
 * The root of flow-kafka's runtime failures. Subclasses say what the caller can do: fix the spec
 * or configuration, retry, or give up.
 */
public class FlowException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates an exception.
     *
     * @param message names the subject, the value and the fix
     */
    public FlowException(String message) {
        super(message);
    }

    /**
     * Creates an exception with a cause.
     *
     * @param message names the subject, the value and the fix
     * @param cause the underlying failure
     */
    public FlowException(String message, Throwable cause) {
        super(message, cause);
    }
}
