package io.flowkafka.internal.dlq;

/**
 * A record the current call writes cannot be stored: its topic rejected the same record before (see
 * {@link RejectedOutputs}), or it is larger than any record the producer sends ({@link RecordSizeLimit}). The call
 * fails before anything is written, and its input goes to the dead-letter topic with this message.
 */
public final class RejectedRecordException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public RejectedRecordException(String message) {
        super(message);
    }
}
