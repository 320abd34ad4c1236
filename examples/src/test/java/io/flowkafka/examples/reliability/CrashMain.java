package io.flowkafka.examples.reliability;

import io.flowkafka.runtime.FlowRuntime;
import io.flowkafka.testing.CommitFaults;
import io.flowkafka.testing.PipelineMain;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;

/**
 * One instance of {@link CrashPipeline} in a child JVM, taking faults from a control directory until it is killed.
 * Args: bootstrap pipeline input output stateDir controlDir instance visitorPeriod.
 *
 * <p>A daemon thread polls {@code controlDir} every 50 ms and consumes (deletes) the files meant for this instance:
 * {@code <instance>.thread} makes the next process call throw once (the stream thread dies and is replaced, see
 * {@code flow.stream.thread.failure=replace}); {@code <instance>.revive} fails the next commit of a stream thread
 * and its retry, as a commit that times out would, so Kafka Streams aborts the transaction and revives the tasks.
 * It prints a {@code FAULT} line for each, one when a triggered commit fails and one when its transaction
 * was aborted (the tasks are then revived).
 */
public final class CrashMain {
    static final String THREAD = "thread";
    static final String REVIVE = "revive";

    private CrashMain() {
    }

    public static void main(String[] args) throws Exception {
        Properties props = new Properties();
        props.put("bootstrap.servers", args[0]);
        props.put("state.dir", args[4]);
        props.put("commit.interval.ms", "100");
        props.put("num.stream.threads", "1");
        // a killed instance's tasks move after 6 s instead of the default 45 s
        props.put("consumer.session.timeout.ms", "6000");
        props.put("consumer.heartbeat.interval.ms", "1000");
        props.put("flow.internal.topics.purge.interval.ms", "2000");
        // an injected failure kills the stream thread instead of going to the dead-letter topic
        props.put("flow.dead.letter.enabled", "false");
        props.put("flow.stream.thread.failure", "replace");
        CommitFaults commitFaults = CommitFaults.onDemand(true);
        commitFaults.install(props);
        Path control = Path.of(args[5]);
        String instance = args[6];
        Thread poller = new Thread(() -> poll(control, instance, commitFaults), "crash-control-" + instance);
        poller.setDaemon(true);
        poller.start();
        FlowRuntime runtime = FlowRuntime.create(CrashPipeline.spec(args[1], args[2], args[3], args[7]), props);
        PipelineMain.runUntilStopped(runtime);
    }

    private static void poll(Path control, String instance, CommitFaults commitFaults) {
        int injected = 0;
        int aborted = 0;
        try {
            while (true) {
                if (Files.deleteIfExists(control.resolve(instance + "." + THREAD))) {
                    CrashPipeline.throwNext.set(true);
                    print("FAULT thread armed");
                }
                if (Files.deleteIfExists(control.resolve(instance + "." + REVIVE))) {
                    commitFaults.trigger();
                    print("FAULT revive armed");
                }
                if (commitFaults.injected() > injected) {
                    injected = commitFaults.injected();
                    print("FAULT revive commit failed (" + injected + " failed commits so far)");
                }
                if (commitFaults.aborted() > aborted) {
                    aborted = commitFaults.aborted();
                    print("FAULT revive aborted (" + aborted + " transactions aborted so far)");
                }
                Thread.sleep(50); // the child polls its control directory for the driver's next fault: not a wait
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void print(String line) {
        System.out.println(line);
        System.out.flush();
    }
}
