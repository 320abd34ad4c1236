package io.flowkafka.examples.guarantees;

import io.flowkafka.runtime.FlowRuntime;
import io.flowkafka.spec.PipelineSpec;
import io.flowkafka.testing.PipelineMain;
import java.util.Properties;

/**
 * Runs one instance of a crash test's pipeline in a child JVM until it is stopped or killed.
 * Args: pipelineKind (batching | timers) bootstrap pipeline input output stateDir.
 */
public final class CrashTestMain {
    private CrashTestMain() {
    }

    public static void main(String[] args) throws Exception {
        Properties props = new Properties();
        props.put("bootstrap.servers", args[1]);
        props.put("state.dir", args[5]);
        props.put("commit.interval.ms", "100");
        // a killed instance's tasks move after 6 s instead of the default 45 s
        props.put("consumer.session.timeout.ms", "6000");
        props.put("consumer.heartbeat.interval.ms", "1000");
        PipelineSpec spec = switch (args[0]) {
            case "batching" -> BatchingPipeline.spec(args[2], args[3], args[4]);
            case "timers" -> TimersPipeline.spec(args[2], args[3], args[4]);
            default -> throw new IllegalArgumentException("unknown pipeline kind " + args[0]);
        };
        PipelineMain.runUntilStopped(FlowRuntime.create(spec, props));
    }
}
