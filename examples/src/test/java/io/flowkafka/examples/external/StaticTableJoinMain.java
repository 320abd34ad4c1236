package io.flowkafka.examples.external;

import io.flowkafka.runtime.FlowRuntime;
import java.util.Properties;

/**
 * Runs one instance of {@link StaticTableJoin} in a child JVM until it is stopped or killed.
 * Args: bootstrap pipeline products orders loaded enriched stateDir.
 */
public final class StaticTableJoinMain {
    private StaticTableJoinMain() {
    }

    public static void main(String[] args) throws Exception {
        Properties props = new Properties();
        props.put("bootstrap.servers", args[0]);
        props.put("state.dir", args[6]);
        props.put("commit.interval.ms", "100");
        props.put("num.stream.threads", "2");
        // a killed instance's tasks move after 6 s instead of the default 45 s
        props.put("consumer.session.timeout.ms", "6000");
        props.put("consumer.heartbeat.interval.ms", "1000");
        FlowRuntime runtime = FlowRuntime.create(StaticTableJoin.spec(args[1], args[2], args[3], args[4], args[5], 4),
                props);
        io.flowkafka.testing.PipelineMain.runUntilStopped(runtime);
    }
}
