package io.flowkafka.connectors.statictable;

import io.flowkafka.runtime.FlowRuntime;
import java.util.Properties;

/**
 * Runs one instance of {@link StaticTableSourcePipeline} in a child JVM until it is stopped or killed.
 * Args: bootstrap pipeline tablesPath output stateDir [readMode [maxRowsPerSecond]].
 */
public final class StaticTableSourceMain {
    private StaticTableSourceMain() {
    }

    public static void main(String[] args) throws Exception {
        Properties props = new Properties();
        props.put("bootstrap.servers", args[0]);
        props.put("state.dir", args[4]);
        props.put("commit.interval.ms", "100");
        props.put("consumer.session.timeout.ms", "6000");
        props.put("consumer.heartbeat.interval.ms", "1000");
        FlowRuntime runtime = FlowRuntime.create(StaticTableSourcePipeline.spec(args[1], args[2], args[3],
                args.length > 5 ? args[5] : "sequence", args.length > 6 ? Integer.parseInt(args[6]) : 300), props);
        io.flowkafka.testing.PipelineMain.runUntilStopped(runtime);
    }
}
