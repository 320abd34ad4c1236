package io.flowkafka.connectors.statictable;

import io.flowkafka.runtime.FlowRuntime;
import io.flowkafka.spec.ComputationKind;
import io.flowkafka.spec.PipelineSpec;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;

/**
 * Runs one instance of the arrival-order sink pipeline in a child JVM until stopped or killed: source {@code input}
 * (JSON {"id", "user"}, 4 partitions) -> TArrivalOrderTableSink {@code tables} (1 s slots, 2000 rows at most).
 * Args: bootstrap pipeline input outputDirectory stateDir [tablePeriod maxRowCount].
 */
public final class ArrivalOrderSinkMain {
    static final Schema EVENT = SchemaBuilder.record("Event").namespace("it").fields()
            .requiredString("id").requiredString("user").endRecord();

    private ArrivalOrderSinkMain() {
    }

    static PipelineSpec spec(String pipeline, String input, String outputDirectory) {
        return spec(pipeline, input, outputDirectory, "1s", 2000);
    }

    static PipelineSpec spec(String pipeline, String input, String outputDirectory, String tablePeriod,
            int maxRowCount) {
        return PipelineSpec.builder(pipeline)
                .stream("raw", EVENT)
                .stream("events", EVENT)
                .computation("read", c -> c.kind(ComputationKind.SOURCE)
                        .source("raw", "KafkaSource", Map.of("topics", input))
                        .outputStreamIds("events")
                        .sink("tables", "TArrivalOrderTableSink", List.of("events"), Map.of(
                                "output_directory", outputDirectory, "table_period", tablePeriod, "table_ttl", "1h",
                                "max_row_count", maxRowCount, "format", "avro")))
                .build();
    }

    public static void main(String[] args) throws Exception {
        Properties props = new Properties();
        props.put("bootstrap.servers", args[0]);
        props.put("state.dir", args[4]);
        props.put("commit.interval.ms", "100");
        // a killed instance's tasks move after 10 s instead of 45 s
        props.put("consumer.session.timeout.ms", "10000");
        props.put("consumer.heartbeat.interval.ms", "2000");
        props.put("flow.sink.tables.tick.ms", "100");
        props.put("flow.internal.topics.purge.interval.ms", "2000");
        PipelineSpec spec = args.length > 5 ? spec(args[1], args[2], args[3], args[5], Integer.parseInt(args[6]))
                : spec(args[1], args[2], args[3]);
        io.flowkafka.testing.PipelineMain.runUntilStopped(FlowRuntime.create(spec, props));
    }
}
