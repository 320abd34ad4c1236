package io.flowkafka.examples.guarantees;

import io.flowkafka.runtime.FlowRuntime;
import java.util.Properties;

/**
 * Runs one instance of {@link VisitPipeline} in a child JVM until it is stopped or killed.
 * Args: bootstrap pipeline input output stateDir period [haltAtVisit].
 */
public final class VisitMain {
    private VisitMain() {
    }

    public static void main(String[] args) throws Exception {
        Properties props = new Properties();
        props.put("bootstrap.servers", args[0]);
        props.put("state.dir", args[4]);
        props.put("commit.interval.ms", "100");
        props.put("num.stream.threads", "2");
        props.put("consumer.session.timeout.ms", "6000");
        props.put("consumer.heartbeat.interval.ms", "1000");
        if (args.length > 6) {
            VisitPipeline.haltAtVisit = Long.parseLong(args[6]);
        }
        FlowRuntime runtime = FlowRuntime.create(VisitPipeline.spec(args[1], args[2], args[3], args[5]), props);
        io.flowkafka.testing.PipelineMain.runUntilStopped(runtime);
    }
}
