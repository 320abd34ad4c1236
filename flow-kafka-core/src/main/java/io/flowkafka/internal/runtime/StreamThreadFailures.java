package io.flowkafka.internal.runtime;

import io.flowkafka.internal.dlq.Failures;
import io.flowkafka.internal.outbox.FatalSinkException;
import io.flowkafka.internal.status.StatusBoard;
import java.time.Instant;
import java.util.function.Supplier;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What becomes of a stream thread that died: a sink that fails for good, or the broker refusing the principal (a
 * missing ACL, rejected credentials), stops the pipeline with the reason on the status board; a failure of the machinery (a send error, a broker outage) gets the thread replaced, which restores
 * its tasks and replays from the last commit; one input's failure with dead letters disabled replaces the thread or
 * stops the pipeline, as {@code flow.stream.thread.failure} says.
 *
 * <p>Thread-safe: called by the dying stream thread.
 */
public final class StreamThreadFailures implements StreamsUncaughtExceptionHandler {
    private static final Logger LOG = LoggerFactory.getLogger(StreamThreadFailures.class);

    private final String pipeline;
    private final StatusBoard status;
    private final boolean replaceOnInputFailure;
    private final @Nullable PrincipalAcls acls;
    private final Supplier<@Nullable Admin> admin;

    /** @param replaceOnInputFailure whether a thread that died of one input's failure is replaced (else: shutdown) */
    public StreamThreadFailures(String pipeline, StatusBoard status, boolean replaceOnInputFailure) {
        this(pipeline, status, replaceOnInputFailure, null, () -> null);
    }

    /**
     * @param acls names the ACL a refused client lacks; null treats a refusal as any other runtime failure
     * @param admin the runtime's Admin, asked which operations the principal lacks; may supply null
     */
    public StreamThreadFailures(String pipeline, StatusBoard status, boolean replaceOnInputFailure,
            @Nullable PrincipalAcls acls, Supplier<@Nullable Admin> admin) {
        this.pipeline = pipeline;
        this.status = status;
        this.replaceOnInputFailure = replaceOnInputFailure;
        this.acls = acls;
        this.admin = admin;
    }

    @Override
    public StreamThreadExceptionResponse handle(Throwable e) {
        var fatalSink = FatalSinkException.in(e);
        if (fatalSink != null) {
            // replaying would fail the same way forever: stop with the reason rather than loop
            LOG.error("pipeline '{}' stops: {}", pipeline, fatalSink.getMessage());
            status.report("*", -1, "/sinks/" + fatalSink.sink() + "/stopped", fatalSink.getMessage(), Instant.now());
            return StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
        }
        String refused = acls == null ? null : acls.explain(e, admin.get());
        if (refused != null) {
            // the broker refuses the principal: a new thread would be refused the same way, forever
            LOG.error(refused);
            status.report("*", -1, "/acls", refused, Instant.now());
            return StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
        }
        if (!Failures.causedByInput(e)) {
            // a failure of the machinery (a send error, a broker problem): the transaction was aborted, a new
            // thread restores the tasks from their changelogs and replays from the last commit
            LOG.warn("pipeline '{}': a stream thread died of a runtime failure, replacing it: {}", pipeline,
                    e.toString());
            return StreamThreadExceptionResponse.REPLACE_THREAD;
        }
        LOG.error("pipeline '{}': a stream thread died processing an input with dead letters disabled: {}",
                pipeline, e.toString());
        return replaceOnInputFailure ? StreamThreadExceptionResponse.REPLACE_THREAD
                : StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
    }
}
