package io.flowkafka.connectors.registry;

import org.apache.kafka.common.errors.RetriableException;
import org.jspecify.annotations.Nullable;

/**
 * The cause of every retriable {@link SchemaRegistryException}: the registry did not answer, or
 * answered 408, 429 or 5xx. It is a Kafka {@link RetriableException}, which is how flow-kafka's
 * runtime recognises an outage anywhere in a failure's cause chain: a record whose (de)serializing
 * failed this way is not dead-lettered; the task fails and retries it from its last commit once
 * the registry answers again. Its own cause is the I/O failure, if any.
 *
 * <p>Not thrown on its own: catch {@link SchemaRegistryException} and ask
 * {@link SchemaRegistryException#retriable()}.
 */
public class SchemaRegistryUnavailableException extends RetriableException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates the cause of a retriable registry failure.
     *
     * @param message the message of the {@link SchemaRegistryException} it explains
     * @param cause the I/O failure, or null when the registry answered with an error status
     */
    public SchemaRegistryUnavailableException(String message, @Nullable Throwable cause) {
        super(message, cause);
    }
}
