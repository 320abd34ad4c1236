package io.flowkafka.testing;

import io.flowkafka.runtime.FlowRuntime;
import java.time.Duration;

/**
 * The body of a pipeline instance run as a {@link ChildJvm}: starts the runtime, prints
 * {@value #RUNNING_LINE} once it runs (await it with {@link ChildJvm#awaitOutputLine}), and keeps
 * the process alive until it is stopped ({@code SIGTERM}: the runtime closes cleanly) or killed.
 *
 * <pre>{@code
 * public static void main(String[] args) throws Exception {
 *     PipelineMain.runUntilStopped(FlowRuntime.create(MyPipeline.spec(...), props));
 * }
 * }</pre>
 */
public final class PipelineMain {
    /** The line printed once the runtime is running. */
    public static final String RUNNING_LINE = "RUNNING";

    private PipelineMain() {
    }

    /**
     * Starts {@code runtime} and blocks until the process ends; exits with status 1, after printing
     * {@code FAILED to reach RUNNING: <state>}, if it does not run within 2 minutes.
     *
     * @param runtime the pipeline's runtime, not started yet
     * @throws InterruptedException if the thread is interrupted while it waits
     */
    public static void runUntilStopped(FlowRuntime runtime) throws InterruptedException {
        runtime.start();
        if (!runtime.awaitState(FlowRuntime.State.RUNNING, Duration.ofMinutes(2))) {
            System.out.println("FAILED to reach RUNNING: " + runtime.state());
            System.out.flush();
            System.exit(1);
        }
        System.out.println(RUNNING_LINE);
        System.out.flush();
        Runtime.getRuntime().addShutdownHook(new Thread(runtime::close));
        Thread.currentThread().join();
    }
}
