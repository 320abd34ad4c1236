package io.flowkafka.examples.guarantees;

import io.flowkafka.runtime.FlowRuntime;
import io.flowkafka.testing.PipelineMain;
import java.util.Properties;

/** Runs one instance of {@link TimersPipeline} in a child JVM. Args: bootstrap pipeline input output stateDir. */
public final class TimersMain {
    private TimersMain() {
    }

    public static void main(String[] args) throws Exception {
        Properties props = new Properties();
        props.put("bootstrap.servers", args[0]);
        props.put("state.dir", args[4]);
        props.put("commit.interval.ms", "100");
        // a killed instance's tasks move after 6 s instead of the default 45 s
        props.put("consumer.session.timeout.ms", "6000");
        props.put("consumer.heartbeat.interval.ms", "1000");
        PipelineMain.runUntilStopped(FlowRuntime.create(TimersPipeline.spec(args[1], args[2], args[3]), props));
    }
}
