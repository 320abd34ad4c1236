package io.flowkafka.examples.reconciliation;

import io.flowkafka.runtime.FlowRuntime;
import io.flowkafka.testing.PipelineMain;
import java.time.Duration;
import java.util.Properties;

/**
 * Runs one instance of {@link LedgerVisitPipeline} in a child JVM until it is stopped or killed.
 * Args: bootstrap pipeline accountsTopic visitsTopic tablesPath stateDir periodSeconds partitions instanceId.
 */
public final class LedgerVisitMain {
    private LedgerVisitMain() {
    }

    public static void main(String[] args) throws Exception {
        Properties props = new Properties();
        props.put("bootstrap.servers", args[0]);
        props.put("state.dir", args[5]);
        props.put("commit.interval.ms", "100");
        props.put("num.stream.threads", "2");
        props.put("consumer.session.timeout.ms", "6000");
        props.put("consumer.heartbeat.interval.ms", "1000");
        LedgerVisitPipeline.instance = args[8];
        PipelineMain.runUntilStopped(FlowRuntime.create(LedgerVisitPipeline.spec(args[1], args[2], args[3], args[4],
                Duration.ofSeconds(Long.parseLong(args[6])), Integer.parseInt(args[7])), props));
    }
}
