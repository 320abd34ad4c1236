package io.flowkafka.connectors.clickhouse;

import io.flowkafka.runtime.FlowRuntime;
import io.flowkafka.spec.ComputationKind;
import io.flowkafka.spec.PipelineSpec;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;

/**
 * Runs one instance of the ClickHouse sink pipeline in a child JVM until stopped or killed: source {@code input}
 * (JSON {"id", "user", "n"}, 4 partitions) -> {@code TClickHouseBatchingSink} {@code ch} (or the sharded one).
 * The sink is {@link HoldingClickHouseTestSink}'s wrapper of the real one: with {@code flow.test.ch.hold.after.rows}
 * set, the instance holds after an insert that many rows in, for the IT to kill it there.
 * Args: bootstrap pipeline input stateDir table url [shard_hosts as name=url,name=url].
 */
public final class ClickHouseSinkMain {
    static final Schema EVENT = SchemaBuilder.record("Event").namespace("it").fields()
            .requiredString("id").requiredString("user").requiredLong("n").endRecord();

    private ClickHouseSinkMain() {
    }

    static PipelineSpec spec(String pipeline, String input, String table, String url, String shardHosts) {
        Map<String, Object> params = new HashMap<>(Map.of("table", table, "max_batch_records", 200,
                "message_id_column", "message_id"));
        String sinkClass = ClickHouseSinkProvider.T_BATCHING;
        if (shardHosts != null) {
            Map<String, Object> hosts = new HashMap<>();
            for (String pair : shardHosts.split(",")) {
                String[] kv = pair.split("=", 2);
                hosts.put(kv[0], kv[1]);
            }
            params.put("shard_hosts", hosts);
            params.put("sharding_key", "user");
            sinkClass = ClickHouseSinkProvider.T_SHARDED;
        } else {
            params.put("url", url);
        }
        String cls = "TestHolding" + sinkClass; // the real sink; held after an insert when the IT asks
        return PipelineSpec.builder(pipeline)
                .stream("raw", EVENT)
                .stream("events", EVENT)
                .computation("read", c -> c.kind(ComputationKind.SOURCE)
                        .source("raw", "KafkaSource", Map.of("topics", input))
                        .outputStreamIds("events")
                        .sink("ch", cls, List.of("events"), params))
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
        props.put("flow.internal.topics.purge.interval.ms", "2000");
        PipelineSpec spec = spec(args[1], args[2], args[4], args[5], args.length > 6 ? args[6] : null);
        io.flowkafka.testing.PipelineMain.runUntilStopped(FlowRuntime.create(spec, props));
    }
}
