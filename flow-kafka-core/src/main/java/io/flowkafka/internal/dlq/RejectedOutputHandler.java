package io.flowkafka.internal.dlq;

import java.util.Map;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.streams.errors.ErrorHandlerContext;
import org.apache.kafka.streams.errors.ProductionExceptionHandler;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * flow-kafka's production-exception handler: a record its topic rejects for good (too large, a timestamp out of
 * bounds, invalid for the topic, e.g. no key on a compacted topic) is remembered in the runtime's
 * {@link RejectedOutputs}, and the task fails, since under exactly-once the transaction cannot commit. The task
 * replays from its last commit, and the input whose call produces that record again goes to the dead-letter topic
 * instead, with the reason; everything else goes on. This holds for outputs, for the rows of a computation's
 * state store, whose changelog records are the rows as the function set them, and for the rows of its timers and
 * timer-holds stores, remembered by their key (a timer's value holds the wall-clock time it was added, which a
 * replay does not repeat), for a {@code real_time} or {@code system_time} timer stream by its key without its times
 * (its trigger is often the clock plus a delay), unless the rejection is about the record's timestamp; the call
 * adding that timer again fails. A rejected record of another store (watermarks, batches, key-visitor progress) or
 * a changelog record rejected for its timestamp is remembered too but matches no call, and a fired timer's
 * tombstone or a stream's end marks are not remembered (a hold rebuilt from the stored timers matches only a call
 * adding that timer again), so the task keeps failing, as it does for every other failure, as Kafka Streams'
 * default handler does. A dead letter its topic rejects goes again without the input's bytes ({@link DeadLetterFit}).
 */
public final class RejectedOutputHandler implements ProductionExceptionHandler {
    private static final Logger LOG = LoggerFactory.getLogger(RejectedOutputHandler.class);

    private @Nullable RejectedOutputs rejected;
    private String changelogPrefix = "\u0000";
    private @Nullable String deadLetterTopic;

    @Override
    public void configure(Map<String, ?> configs) {
        Object r = configs.get(RejectedOutputs.CONFIG);
        rejected = r instanceof RejectedOutputs ro ? ro : null;
        Object app = configs.get(org.apache.kafka.streams.StreamsConfig.APPLICATION_ID_CONFIG);
        if (app != null) {
            changelogPrefix = app + "-";
        }
        Object dlq = configs.get(DeadLetterHandler.TOPIC_CONFIG);
        deadLetterTopic = dlq == null ? null : dlq.toString();
    }

    /** How the changelog topics of every computation's timers and timer-holds stores end. */
    private static final String TIMERS_CHANGELOG_SUFFIX =
            io.flowkafka.internal.timers.TimerStore.timersStoreName("") + "-changelog";
    private static final String HOLDS_CHANGELOG_SUFFIX =
            io.flowkafka.internal.timers.TimerStore.holdsStoreName("") + "-changelog";

    /** Kafka Streams' changelog topics are {@code <application.id>-<store>-changelog}. */
    private boolean changelog(String topic) {
        return topic.startsWith(changelogPrefix) && topic.endsWith("-changelog");
    }

    @Override
    public Response handleError(ErrorHandlerContext context, ProducerRecord<byte[], byte[]> record, Exception exception) {
        RejectedOutputs r = rejected;
        if (r != null && forGood(exception)) {
            boolean deadLetter = record.topic().equals(deadLetterTopic);
            boolean changelog = !deadLetter && changelog(record.topic());
            boolean timers = changelog && record.topic().endsWith(TIMERS_CHANGELOG_SUFFIX);
            boolean holds = changelog && record.topic().endsWith(HOLDS_CHANGELOG_SUFFIX);
            // a timer row a call adds (not a fired timer's tombstone), rejected for itself, not for its timestamp;
            // any other record of a timer store is not remembered: no call could be told by it
            boolean timerRow = record.key() != null && record.value() != null
                    && !io.flowkafka.spi.OutboxDeliveryException.aboutTimestamp(exception);
            String target = "topic " + record.topic();
            if (timers || holds) {
                if (timerRow) {
                    r.rejectTimerRow(target, record.key(), timers
                            ? io.flowkafka.internal.timers.TimerStore.timelessTimerKey(record.key())
                            : io.flowkafka.internal.timers.TimerStore.timelessHoldKey(record.key()),
                            record.value(), exception);
                }
            } else if (deadLetter || changelog) {
                // records whose timestamp the call that writes them does not choose
                r.rejectAtAnyTime(target, record.key(), record.value(), exception);
            } else {
                r.reject(target, record.key(), record.value(), record.timestamp() == null ? -1L : record.timestamp(),
                        exception);
            }
            if (deadLetter) {
                LOG.warn("task {}: the dead-letter topic {} rejected a dead letter for good ({}); the task restarts from "
                        + "its last commit, and the dead letter goes again without the input's bytes", context.taskId(),
                        record.topic(), exception.toString());
            } else if (changelog) {
                LOG.warn("task {}: changelog topic {} rejected a store row for good ({}); the task restarts from its "
                        + "last commit, and the input whose call sets this row again goes to the dead-letter topic",
                        context.taskId(), record.topic(), exception.toString());
            } else {
                LOG.warn("task {}: topic {} rejected an output for good ({}); the task restarts from its last commit, "
                        + "and the input that produces this output again goes to the dead-letter topic",
                        context.taskId(), record.topic(), exception.toString());
            }
        }
        return Response.fail();
    }

    /** A rejection no retry can change: the record itself does not suit the topic. */
    static boolean forGood(Throwable e) {
        return io.flowkafka.spi.OutboxDeliveryException.recordRejection(e) != null;
    }
}
