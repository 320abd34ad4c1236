package io.flowkafka.connectors.kafka;

import io.flowkafka.runtime.FlowRuntime;
import java.util.Map;
import java.util.Properties;

/**
 * Runs one instance of {@link OutboxPipeline} in a child JVM until stopped or killed.
 * Args: bootstrap targetBootstrap pipeline input output stateDir (exactly_once | at_least_once | sync |
 * at_most_once).
 */
public final class OutboxSinkMain {
    private OutboxSinkMain() {
    }

    public static void main(String[] args) throws Exception {
        Properties props = new Properties();
        props.put("bootstrap.servers", args[0]);
        props.put("flow.sink.out.bootstrap.servers", args[1]);
        props.put("state.dir", args[5]);
        props.put("commit.interval.ms", "100");
        // a killed instance's tasks and outbox partitions move after 10 s instead of 45 s
        props.put("consumer.session.timeout.ms", "10000");
        props.put("consumer.heartbeat.interval.ms", "2000");
        props.put("flow.internal.topics.purge.interval.ms", "2000");
        // args[6]: exactly_once or at_least_once (TKafkaSink through the outbox), or sync (TAtLeastOnceKafkaSink)
        // or at_most_once (TKafkaSink's at_most_once_strategy: an in-memory queue filled after each commit)
        FlowRuntime runtime = FlowRuntime.create(switch (args[6]) {
            case "sync" -> OutboxPipeline.spec(args[2], args[3], args[4], "TAtLeastOnceKafkaSink", Map.of());
            case "at_most_once" -> OutboxPipeline.spec(args[2], args[3], args[4], Map.of("at_most_once_strategy",
                    Map.of("enabled", true, "total_queue_bytes_limit", 64 * 1024 * 1024)));
            default -> OutboxPipeline.spec(args[2], args[3], args[4], Map.of("delivery_guarantee", args[6],
                    "max_batch_records", 200));
        }, props);
        io.flowkafka.testing.PipelineMain.runUntilStopped(runtime);
    }
}
