package io.flowkafka.examples.guarantees;

import io.flowkafka.runtime.FlowRuntime;
import java.util.Properties;

/**
 * Runs one instance of {@link TwoHopPipeline} in a child JVM until it is stopped (SIGTERM: graceful close) or killed.
 * Args: bootstrap pipeline input output stateDir [throwOnceAt]; system property {@code flow.it.keyedSource=true}
 * selects the keyed-source shape of the pipeline.
 */
public final class TwoHopMain {
    private TwoHopMain() {
    }

    public static void main(String[] args) throws Exception {
        Properties props = new Properties();
        props.put("bootstrap.servers", args[0]);
        props.put("state.dir", args[4]);
        props.put("commit.interval.ms", "100");
        props.put("num.stream.threads", "2");
        // a killed instance's tasks move after 6 s instead of the default 45 s
        props.put("consumer.session.timeout.ms", "6000");
        props.put("consumer.heartbeat.interval.ms", "1000");
        props.put("flow.internal.topics.purge.interval.ms", "2000");
        if (args.length > 5) {
            TwoHopPipeline.throwOnceAt = args[5];
            props.put("flow.dead.letter.enabled", "false");
            props.put("flow.stream.thread.failure", "replace");
        }
        FlowRuntime runtime = FlowRuntime.create(TwoHopPipeline.spec(args[1], args[2], args[3],
                Boolean.getBoolean("flow.it.keyedSource")), props);
        io.flowkafka.testing.PipelineMain.runUntilStopped(runtime);
    }
}
