package io.flowkafka.connectors.statictable;

import io.flowkafka.api.Message;
import io.flowkafka.api.OutputCollector;
import io.flowkafka.api.RowFunction;
import io.flowkafka.api.RuntimeContext;
import io.flowkafka.spec.ComputationKind;
import io.flowkafka.spec.PipelineSpec;
import java.util.List;
import java.util.Map;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;

/**
 * A directory of tables read by the static-table source in 2 tasks (ranges of 500 rows, at most 300 rows/s each,
 * so that a kill lands mid-read even when the second instance starts slowly), every row copied to a Kafka topic
 * with the reading task's partition.
 */
final class StaticTableSourcePipeline {
    static final Schema ROW = StaticTableSourceTest.ROW;
    static final Schema READ = SchemaBuilder.record("Read").namespace("stit").fields()
            .requiredLong("id").requiredString("table").requiredInt("partition").endRecord();
    static final int RANGE = 500;

    private StaticTableSourcePipeline() {
    }

    /** Copies each row with the task's partition. */
    public static final class Copier implements RowFunction {
        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
            output.addMessage(context.createMessageBuilder("read").set("id", message.getPayload().get("id"))
                    .set("table", message.getPayload().get("table").toString())
                    .set("partition", context.getPartition()).build());
        }
    }

    /**
     * @param readMode the source's {@code read_mode}: {@code sequence} or {@code newest}
     * @param rowsPerSecond the read limit of each task
     */
    static PipelineSpec spec(String name, String tablesPath, String output, String readMode, int rowsPerSecond) {
        return PipelineSpec.builder(name).stream("rows", ROW).stream("read", READ)
                .computation("reader", c -> c.kind(ComputationKind.SOURCE).desiredPartitionCount(2)
                        .source("rows", StaticTableSource.FLOW_NAME, Map.of("tables_path", tablesPath,
                                "range_row_count", RANGE, "max_rows_per_iteration", 200, "max_rows_per_second", rowsPerSecond,
                                "read_mode", readMode))
                        .processingFunction(Copier::new).outputStreamIds("read")
                        .sink("out", "KafkaSink", List.of("read"), Map.of("topic", output)))
                .build();
    }
}
