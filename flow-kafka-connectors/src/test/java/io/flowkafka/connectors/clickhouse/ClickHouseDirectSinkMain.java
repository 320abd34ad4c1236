package io.flowkafka.connectors.clickhouse;

import io.flowkafka.runtime.FlowRuntime;
import io.flowkafka.spec.ComputationKind;
import io.flowkafka.spec.PipelineSpec;
import io.flowkafka.testing.PipelineMain;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;

/**
 * Runs one instance of a non-batching ClickHouse sink pipeline in a child JVM (or, through {@link #spec}, in the
 * test's JVM) until stopped or killed: source {@code input} (JSON {"id", "user", "n"}) -> sink {@code ch} of the given
 * class into {@code table}. Args: bootstrap pipeline input stateDir table url sinkClass.
 */
public final class ClickHouseDirectSinkMain {
    private ClickHouseDirectSinkMain() {
    }

    static PipelineSpec spec(String pipeline, String input, String sinkClass, String table, String url,
            Map<String, Object> more) {
        Map<String, Object> params = new HashMap<>(Map.of("url", url, "table", table,
                "message_id_column", "message_id"));
        params.putAll(more);
        return PipelineSpec.builder(pipeline)
                .stream("raw", ClickHouseSinkMain.EVENT)
                .stream("events", ClickHouseSinkMain.EVENT)
                .computation("read", c -> c.kind(ComputationKind.SOURCE)
                        .source("raw", "KafkaSource", Map.of("topics", input))
                        .outputStreamIds("events")
                        .sink("ch", sinkClass, List.of("events"), params))
                .build();
    }

    public static void main(String[] args) throws Exception {
        Properties props = new Properties();
        props.put("bootstrap.servers", args[0]);
        props.put("state.dir", args[3]);
        props.put("commit.interval.ms", "100");
        // a killed instance's tasks and outbox partitions move after 10 s instead of 45 s
        props.put("consumer.session.timeout.ms", "10000");
        props.put("consumer.heartbeat.interval.ms", "2000");
        PipelineSpec spec = spec(args[1], args[2], args[6], args[4], args[5], Map.of());
        PipelineMain.runUntilStopped(FlowRuntime.create(spec, props));
    }
}
