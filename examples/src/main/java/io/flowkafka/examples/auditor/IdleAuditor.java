package io.flowkafka.examples.auditor;

import io.flowkafka.api.Message;
import io.flowkafka.api.OutputCollector;
import io.flowkafka.api.RowFunction;
import io.flowkafka.api.RuntimeContext;
import io.flowkafka.api.Visit;

/**
 * The auditor: a computation without inputs whose only work is its key visitor over the sessions table (read
 * through a joiner, read-only). Each visit reads the user's row and, when the last login is older than the
 * {@value AuditorPipeline#IDLE_PARAMETER} parameter at the visit's time, emits an {@code idle_users} record. It never
 * writes the table: the table has one writer, {@link LoginTracker}.
 *
 * <p>Not thread-safe; the runtime makes one instance per task.
 */
public final class IdleAuditor implements RowFunction {
    /** A new auditor; it keeps nothing between calls. */
    public IdleAuditor() {
    }

    @Override
    public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
        throw new IllegalStateException("the auditor has no input stream, so it gets no message");
    }

    @Override
    public void onVisit(Visit visit, OutputCollector output, RuntimeContext context) {
        long idleMs = AuditorPipeline.parseDuration(String.valueOf(context.getParameters()
                .getOrDefault(AuditorPipeline.IDLE_PARAMETER, AuditorPipeline.DEFAULT_IDLE))).toMillis();
        long visitMs = visit.getEventTimestamp() / 1_000_000L;
        context.getExternalState(AuditorPipeline.SESSIONS).get().ifPresent(row -> {
            long last = (Long) row.get("last_login_ms");
            if (visitMs - last > idleMs) {
                output.addMessage(context.createMessageBuilder(AuditorPipeline.IDLE_USERS)
                        .set("user", row.get("user").toString()).set("last_login_ms", last)
                        .set("idle_ms", visitMs - last).set("pass", visit.getPass()).build());
            }
        });
    }
}
