package io.flowkafka.connectors.registry;

import io.flowkafka.api.FlowException;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A schema registry refused a request or could not be reached. The message names the request
 * URL, the subject, the HTTP status and the registry's {@code error_code} and message.
 *
 * <p>{@link #retriable()} tells a registry that may answer later (no answer, a timeout, 408, 429
 * or a 5xx status) from an answer that will not change (404 not found, 409 incompatible, 422
 * invalid schema, 401/403). A retriable one has a {@link SchemaRegistryUnavailableException} (a
 * Kafka {@code RetriableException}) as its cause, the contract by which flow-kafka's runtime tells
 * an outage from a bad record.
 */
public class SchemaRegistryException extends FlowException {
    private static final long serialVersionUID = 1L;

    /** Registry error code: the subject does not exist. */
    public static final int SUBJECT_NOT_FOUND = 40401;
    /** Registry error code: the subject has no such version. */
    public static final int VERSION_NOT_FOUND = 40402;
    /** Registry error code: no schema has this id, or the schema is not under the subject. */
    public static final int SCHEMA_NOT_FOUND = 40403;
    /** Registry error code of current registries for an incompatible schema (older ones use 409). */
    public static final int INCOMPATIBLE_SCHEMA = 40901;
    /** Registry error code: the schema is invalid. */
    public static final int INVALID_SCHEMA = 42201;
    /** {@link #status()} when no HTTP response arrived. */
    public static final int NO_RESPONSE = 0;
    /** {@link #errorCode()} when the registry gave none. */
    public static final int NO_ERROR_CODE = -1;

    /** The registry's base URL, without credentials (part of the serialized form). */
    private final String registry;
    /** The subject of the failed request; null when it had none (part of the serialized form). */
    private final @Nullable String subject;
    /** The HTTP status, or {@link #NO_RESPONSE} (part of the serialized form). */
    private final int status;
    /** The registry's error code, or {@link #NO_ERROR_CODE} (part of the serialized form). */
    private final int errorCode;

    /**
     * Creates an exception.
     *
     * @param message the whole message, naming the URL, subject, status and error code
     * @param registry the registry's base URL, such as {@code http://registry:8081} or
     *     {@code mock://tests}; never with credentials
     * @param subject the subject of the request; null when it had none
     * @param status the HTTP status, or {@link #NO_RESPONSE}
     * @param errorCode the registry's {@code error_code}, or {@link #NO_ERROR_CODE}
     * @param cause the I/O failure, if any; a retriable exception (see {@link #retriable()}) gets a
     *     {@link SchemaRegistryUnavailableException} wrapping it as its cause instead
     */
    public SchemaRegistryException(String message, String registry, @Nullable String subject, int status,
            int errorCode, @Nullable Throwable cause) {
        super(message, retriable(status) ? new SchemaRegistryUnavailableException(message, cause) : cause);
        this.registry = Objects.requireNonNull(registry, "registry");
        this.subject = subject;
        this.status = status;
        this.errorCode = errorCode;
    }

    /**
     * The registry that failed.
     *
     * @return the registry's base URL (or {@code mock://scope}), without credentials
     */
    public String registry() {
        return registry;
    }

    /**
     * The subject of the failed request.
     *
     * @return the subject; null when the request had none (a lookup by id)
     */
    public @Nullable String subject() {
        return subject;
    }

    /**
     * The HTTP status of the registry's answer.
     *
     * @return the status, or {@link #NO_RESPONSE} when none arrived
     */
    public int status() {
        return status;
    }

    /**
     * The registry's {@code error_code}.
     *
     * @return the code, such as {@link #SUBJECT_NOT_FOUND}, or {@link #NO_ERROR_CODE}
     */
    public int errorCode() {
        return errorCode;
    }

    /**
     * Whether the same request may succeed later: no answer, a timeout, 408, 429 or 5xx. A
     * retriable exception's cause is a {@link SchemaRegistryUnavailableException} (a Kafka
     * {@code RetriableException}) wrapping the I/O failure, if any: flow-kafka's runtime then
     * retries the record instead of dead-lettering it.
     *
     * @return true for a failure that may pass when retried
     */
    public boolean retriable() {
        return retriable(status);
    }

    private static boolean retriable(int status) {
        return status == NO_RESPONSE || status == 408 || status == 429 || status >= 500;
    }
}
