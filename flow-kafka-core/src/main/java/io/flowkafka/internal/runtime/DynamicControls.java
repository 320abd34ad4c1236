package io.flowkafka.internal.runtime;

import io.flowkafka.internal.config.DynamicSpec;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Makes a running instance follow the dynamic spec's pipeline controls: {@code paused} (pause when it turns true,
 * resume when it turns false; the application's own {@code pause()} and the spec's pause each last until their own
 * resume, so the instance runs only when neither pauses it) and
 * {@code stopped} (Flow's stopped pipeline: drain and stop once, on a thread of its own). {@link #follow()} is
 * called by the thread that applied a document, and once at start for the document read then; the application's
 * pause and resume come through {@link #applicationPause} and {@link #applicationResume}, under the same lock.
 */
public final class DynamicControls {
    private static final Logger LOG = LoggerFactory.getLogger(DynamicControls.class);

    /** What the controls act on: the runtime's own operations. */
    public interface Target {
        /** Whether the instance runs and can still be paused or stopped. */
        boolean canAct();

        /** Whether processing is paused now (by the application's own {@code pause()}, or by these controls). */
        boolean paused();

        /** Pauses processing, as {@code FlowRuntime.pause()}. */
        void pause();

        /** Resumes processing, as {@code FlowRuntime.resume()}. */
        void resume();

        /** Drains and stops (or stops, where draining is impossible); blocks until done. */
        void drainAndStop();
    }

    private final String pipeline;
    private final DynamicSpec dynamicSpec;
    private final Target target;
    private boolean pausedBySpec;
    private boolean pausedByApplication;
    private boolean stopping;

    /**
     * @param pipeline the pipeline's name, for the log
     * @param dynamicSpec the instance's dynamic spec
     * @param target the runtime's operations
     */
    public DynamicControls(String pipeline, DynamicSpec dynamicSpec, Target target) {
        this.pipeline = pipeline;
        this.dynamicSpec = dynamicSpec;
        this.target = target;
    }

    /** Applies the controls of the document in effect. */
    public synchronized void follow() {
        if (!target.canAct()) {
            return;
        }
        if (dynamicSpec.stopped()) {
            stop();
            return;
        }
        boolean want = dynamicSpec.paused();
        if (want && !pausedBySpec) {
            pausedBySpec = true;
            if (!target.paused()) {
                target.pause();
            }
            LOG.info("pipeline '{}': paused by the dynamic spec", pipeline);
        } else if (!want && pausedBySpec) {
            pausedBySpec = false;
            if (pausedByApplication) {
                LOG.info("pipeline '{}': the dynamic spec no longer pauses it; it stays paused until the application "
                        + "resumes it", pipeline);
                return; // the application's own pause: the spec's end must not resume it
            }
            target.resume();
            LOG.info("pipeline '{}': resumed by the dynamic spec", pipeline);
        }
    }

    /**
     * The application pauses the instance ({@code FlowRuntime.pause()}): the spec's resume must not end that.
     * Under this object's lock, so that a document applied meanwhile sees the pause.
     *
     * @param pause pauses processing
     */
    public synchronized void applicationPause(Runnable pause) {
        pausedByApplication = true;
        pause.run();
    }

    /**
     * The application resumes the instance ({@code FlowRuntime.resume()}); processing resumes unless the dynamic
     * spec pauses the pipeline. Under this object's lock, so that a pause the spec asks for meanwhile is not lost.
     *
     * @param resume resumes processing
     * @return whether it resumed: false while the dynamic spec pauses the pipeline
     */
    public synchronized boolean applicationResume(Runnable resume) {
        pausedByApplication = false;
        if (pausedBySpec) {
            return false;
        }
        resume.run();
        return true;
    }

    private void stop() {
        if (stopping) {
            return;
        }
        stopping = true;
        LOG.warn("pipeline '{}' is stopped in its dynamic spec (flow-kafka stop): this instance drains and stops; "
                + "run flow-kafka start before starting instances again", pipeline);
        Thread t = new Thread(() -> {
            try {
                target.drainAndStop();
            } catch (RuntimeException e) {
                LOG.warn("pipeline '{}': stopping as the dynamic spec asks failed: {}", pipeline, e.toString());
            }
        }, "flow-" + pipeline + "-stop");
        t.setDaemon(true);
        t.start();
    }
}
