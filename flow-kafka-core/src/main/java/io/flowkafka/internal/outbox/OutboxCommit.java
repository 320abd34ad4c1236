package io.flowkafka.internal.outbox;

import java.util.OptionalLong;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.jspecify.annotations.Nullable;

/**
 * What the outbox delivery group commits for a partition: the offset to resume from and, when watermark records
 * ({@link OutboxWatermarks}) were passed after the last delivered batch, the offset after that batch in the commit's
 * metadata ({@value #MESSAGES_NEXT}{@code <offset>}, or {@code none} before any batch; every commit carries it, so
 * that an offset set by an operator is told apart). A deliverer keeping its own
 * progress (TKafkaSink's marker) then compares it with the offset after the last batch, not with the watermarks'.
 * Stateless.
 */
final class OutboxCommit {
    static final String MESSAGES_NEXT = "flow.messages_next=";

    private OutboxCommit() {
    }

    /**
     * The commit after a cut.
     *
     * @param nextOffset the offset after the cut
     * @param messagesNext the offset after the last delivered batch (this cut's if it held messages), if any
     */
    static OffsetAndMetadata of(long nextOffset, OptionalLong messagesNext) {
        return new OffsetAndMetadata(nextOffset, MESSAGES_NEXT
                + (messagesNext.isPresent() ? Long.toString(messagesNext.getAsLong()) : "none"));
    }

    /**
     * Whether the committed offset was set by someone else than the delivery service (an operator's reset with
     * {@code kafka-consumer-groups --reset-offsets}, which writes no metadata, or a flow-kafka version before every
     * commit carried it): the service then tells its deliverer of no delivered batch, and resumes at the offset.
     */
    static boolean setElsewhere(@Nullable OffsetAndMetadata committed) {
        return committed != null && (committed.metadata() == null || !committed.metadata().startsWith(MESSAGES_NEXT));
    }

    /**
     * The offset after the last delivered batch, as committed: the committed offset itself unless watermark records
     * followed the batch.
     */
    static OptionalLong messagesNext(@Nullable OffsetAndMetadata committed) {
        if (committed == null) {
            return OptionalLong.empty();
        }
        String m = committed.metadata();
        if (m == null || !m.startsWith(MESSAGES_NEXT)) {
            return OptionalLong.of(committed.offset());
        }
        String v = m.substring(MESSAGES_NEXT.length());
        return v.equals("none") ? OptionalLong.empty() : OptionalLong.of(Long.parseLong(v));
    }

    /**
     * Where to resume when the deliverer chose {@code resume}: past the watermark records, since between the last
     * delivered batch and the committed offset there are only those.
     */
    static long resumeAt(long resume, OptionalLong messagesNext, @Nullable OffsetAndMetadata committed) {
        if (committed == null || resume >= committed.offset()) {
            return resume;
        }
        return resume >= messagesNext.orElse(0) ? committed.offset() : resume;
    }
}
