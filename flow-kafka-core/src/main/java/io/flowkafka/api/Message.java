package io.flowkafka.api;

import java.util.List;
import org.apache.avro.generic.GenericRecord;

/**
 * A message of a stream: metadata plus an Avro payload.
 *
 * <p>Instances handed to user code are immutable; they stay valid after the call returns.
 */
public interface Message {
    /** {@return the deterministic message id} */
    MessageId getMessageId();

    /** {@return business time in nanoseconds since the epoch} */
    long getEventTimestamp();

    /** {@return time the message was written, in nanoseconds since the epoch} */
    long getSystemTimestamp();

    /** {@return id of the stream the message belongs to} */
    String getStreamId();

    /**
     * The group-by key of the computation that reads the message: a record whose fields are the
     * columns of that computation's {@code group_by_schema}. Empty (a record without fields) for
     * computations without {@code group_by_schema}.
     *
     * @return the key
     */
    GenericRecord getKey();

    /** {@return the payload, a record of the stream's schema} */
    GenericRecord getPayload();

    /**
     * Ids of the messages, timers or visits this message was derived from; empty for source
     * messages. Several for an output of a batching SwiftMap computation, sorted.
     *
     * @return the parents' ids
     */
    List<MessageId> getParentIds();
}
