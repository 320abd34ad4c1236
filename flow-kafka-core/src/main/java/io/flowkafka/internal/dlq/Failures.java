package io.flowkafka.internal.dlq;

import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Set;
import org.apache.kafka.common.errors.RetriableException;
import org.jspecify.annotations.Nullable;

/**
 * Tells a bad input from a passing outage of a service the pipeline depends on.
 *
 * <p>The contract: a failure with a {@link RetriableException} anywhere in its cause chain is
 * <em>retriable</em>. So is one caused by a network failure to reach a remote service
 * ({@link java.net.ConnectException}, {@link java.net.NoRouteToHostException},
 * {@link java.net.UnknownHostException}, {@link java.net.SocketTimeoutException},
 * {@link java.net.http.HttpTimeoutException}), since bytes of a record never cause those. A
 * retriable failure is never a dead letter: the task fails, its transaction aborts, and a new
 * stream thread restores it and retries the input from the last commit; the pipeline stalls
 * until the service answers again, and loses nothing. Everything else thrown while decoding or
 * processing an input (a {@code SerializationException}, an exception from user code) is the
 * input's fault and goes to the dead-letter topic.
 *
 * <p>Pluggable serdes keep the contract by throwing (or wrapping) a {@code RetriableException}
 * for an outage, as flow-kafka-connectors' schema-registry serde does.
 *
 * <p>Thread-safe: stateless.
 */
public final class Failures {
    private Failures() {
    }

    /** Whether {@code failure} is retriable (see the class comment); false for null. */
    public static boolean retriable(@Nullable Throwable failure) {
        Set<Throwable> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        for (Throwable t = failure; t != null && seen.add(t); t = t.getCause()) {
            if (t instanceof RetriableException || t instanceof java.net.ConnectException
                    || t instanceof java.net.NoRouteToHostException || t instanceof java.net.UnknownHostException
                    || t instanceof java.net.SocketTimeoutException || t instanceof java.net.http.HttpTimeoutException) {
                return true;
            }
        }
        return false;
    }

    /**
     * Whether {@code failure} is the failure of one input (a {@link FlowProcessingException} in
     * its cause chain) and not retriable; such a failure is a dead letter, or stops the thread
     * when dead letters are disabled.
     */
    public static boolean causedByInput(@Nullable Throwable failure) {
        if (retriable(failure)) {
            return false;
        }
        Set<Throwable> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        for (Throwable t = failure; t != null && seen.add(t); t = t.getCause()) {
            if (t instanceof FlowProcessingException) {
                return true;
            }
        }
        return false;
    }
}
