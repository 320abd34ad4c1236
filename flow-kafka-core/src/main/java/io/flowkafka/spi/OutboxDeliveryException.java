package io.flowkafka.spi;

/**
 * A delivery problem of an async sink. A retryable one makes the outbox service offer the same
 * batch again after a backoff; a {@link #fatal() fatal} one stops the sink (its outbox keeps
 * filling) and is shown in {@code FlowRuntime.status()} until the runtime restarts.
 */
public class OutboxDeliveryException extends Exception {
    private static final long serialVersionUID = 1L;
    /** Whether the sink must stop. */
    private final boolean fatal;
    /** Whether the deliverer only ran out of its time for one call: the batch is offered again at once. */
    private final boolean unfinished;
    /** Whether the target rejected one record for good. */
    private final boolean rejected;
    /** The key of the rejected record, or null. */
    private final byte @org.jspecify.annotations.Nullable [] rejectedKey;
    /** The value of the rejected record, or null. */
    private final byte @org.jspecify.annotations.Nullable [] rejectedValue;
    /** The timestamp, in milliseconds, of the rejected record; -1 if no record was rejected. */
    private final long rejectedTimestamp;

    /**
     * A retryable problem.
     *
     * @param message what went wrong
     * @param cause the exception the target's client threw
     */
    public OutboxDeliveryException(String message, Throwable cause) {
        super(message, cause);
        this.fatal = false;
        this.unfinished = false;
        this.rejected = false;
        this.rejectedKey = null;
        this.rejectedValue = null;
        this.rejectedTimestamp = -1;
    }

    private OutboxDeliveryException(String message, boolean fatal, boolean unfinished) {
        super(message);
        this.fatal = fatal;
        this.unfinished = unfinished;
        this.rejected = false;
        this.rejectedKey = null;
        this.rejectedValue = null;
        this.rejectedTimestamp = -1;
    }

    /**
     * A retryable problem without a cause.
     *
     * @param message what went wrong
     * @return a retryable exception
     */
    public static OutboxDeliveryException retryable(String message) {
        return new OutboxDeliveryException(message, false, false);
    }

    /**
     * Not a problem: the deliverer delivered part of the batches and stopped, so that the service polls its outbox
     * in time ({@code max.poll.interval.ms}); the service offers the same batches again at once, without a backoff
     * or a status error, and the deliverer goes on where it stopped.
     *
     * @param message how far it got, for the debug log
     * @return an unfinished-delivery exception
     */
    public static OutboxDeliveryException unfinished(String message) {
        return new OutboxDeliveryException(message, false, true);
    }

    /**
     * Whether the deliverer only ran out of its time for one call ({@link #unfinished(String)}).
     *
     * @return true if the batches are to be offered again at once
     */
    public boolean unfinished() {
        return unfinished;
    }

    /**
     * A problem that retrying cannot fix: the sink stops, with {@code message} as its status.
     *
     * @param message what went wrong and how to fix it
     * @return a fatal exception
     */
    public static OutboxDeliveryException fatal(String message) {
        return new OutboxDeliveryException(message, true, false);
    }

    /**
     * Whether the sink must stop.
     *
     * @return true if retrying cannot fix the problem
     */
    public boolean fatal() {
        return fatal;
    }

    private OutboxDeliveryException(String message, byte @org.jspecify.annotations.Nullable [] key,
            byte @org.jspecify.annotations.Nullable [] value, long timestamp, Throwable cause) {
        super(message, cause);
        this.fatal = false;
        this.unfinished = false;
        this.rejected = true;
        this.rejectedKey = key;
        this.rejectedValue = value;
        this.rejectedTimestamp = timestamp;
    }

    /**
     * The target rejected this record for good (too large for the topic, a timestamp out of its bounds): retrying
     * it cannot help, but the pipeline need not stop. For a synchronous sink ({@code SyncSinkWriter#flush}), the
     * epoch is replayed, and the call that produces the same record again (same key and value bytes; for a
     * rejected timestamp, the same timestamp) fails before writing it: its input goes to the dead-letter topic with
     * {@code message} as the reason. A record with neither key nor value cannot be told apart: it stops the
     * pipeline, as a {@link #fatal} problem does.
     *
     * @param message why the target rejected the record: the dead-letter reason
     * @param key the record's key as written, or null
     * @param value the record's value as written, or null
     * @param timestampMs the record's timestamp as written
     * @param cause the exception the target's client threw
     * @return an exception for which {@link #rejectedRecord()} is true
     */
    public static OutboxDeliveryException rejected(String message, byte @org.jspecify.annotations.Nullable [] key,
            byte @org.jspecify.annotations.Nullable [] value, long timestampMs, Throwable cause) {
        return new OutboxDeliveryException(message, key, value, timestampMs, cause);
    }

    /**
     * The cause in {@code e}'s chain that says a broker rejected the record itself for good: too large for the
     * topic ({@code RecordTooLargeException}), a timestamp out of its bounds ({@code InvalidTimestampException}),
     * invalid for the topic ({@code InvalidRecordException}, e.g. no key on a compacted topic); or null. Retrying
     * such a record cannot help, but the pipeline can go on without it.
     *
     * @param e a send or flush failure
     * @return the rejection in {@code e}'s cause chain, or null if there is none
     */
    public static @org.jspecify.annotations.Nullable Throwable recordRejection(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof org.apache.kafka.common.errors.RecordTooLargeException
                    || t instanceof org.apache.kafka.common.errors.InvalidTimestampException
                    || t instanceof org.apache.kafka.common.InvalidRecordException) {
                return t;
            }
        }
        return null;
    }

    /**
     * Whether a rejection ({@link #recordRejection}) is about the record's timestamp (outside the topic's
     * {@code message.timestamp.*} bounds): the same record with another timestamp may be taken.
     *
     * @param rejection a rejection found by {@link #recordRejection}
     * @return true if the rejection is about the timestamp
     */
    public static boolean aboutTimestamp(Throwable rejection) {
        for (Throwable t = rejection; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof org.apache.kafka.common.errors.InvalidTimestampException) {
                return true;
            }
            if (t instanceof org.apache.kafka.common.InvalidRecordException && t.getMessage() != null
                    && t.getMessage().toLowerCase(java.util.Locale.ROOT).contains("timestamp")) {
                return true;
            }
        }
        return false;
    }

    /**
     * Whether the target rejected one record for good ({@link #rejected}).
     *
     * @return true for an exception made by {@link #rejected}
     */
    public boolean rejectedRecord() {
        return rejected;
    }

    /**
     * The key of the record the target rejected, if {@link #rejectedRecord()}.
     *
     * @return the key bytes, or null (no key, or no rejected record)
     */
    public byte @org.jspecify.annotations.Nullable [] rejectedKey() {
        return rejectedKey;
    }

    /**
     * The timestamp of the record the target rejected, if {@link #rejectedRecord()}.
     *
     * @return the timestamp in milliseconds, or -1 if no record was rejected
     */
    public long rejectedTimestamp() {
        return rejectedTimestamp;
    }

    /**
     * The value of the record the target rejected, if {@link #rejectedRecord()}.
     *
     * @return the value bytes, or null (no value, or no rejected record)
     */
    public byte @org.jspecify.annotations.Nullable [] rejectedValue() {
        return rejectedValue;
    }
}
