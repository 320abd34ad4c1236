package io.flowkafka.examples.guarantees;

import io.flowkafka.api.Message;
import io.flowkafka.api.OutputCollector;
import io.flowkafka.api.RowFunction;
import io.flowkafka.api.RuntimeContext;
import io.flowkafka.spec.ColumnType;
import io.flowkafka.spec.ComputationKind;
import io.flowkafka.spec.ExternalStateManagerSpec;
import io.flowkafka.spec.PipelineSpec;
import java.util.List;
import java.util.Map;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;

/**
 * A table the pipeline writes and reads back with the service-log source: {@code keeper} writes each key's value to
 * {@code /profiles} (2 partitions); {@code log} reads it cycle after cycle (2 tasks, at most 3000 rows/s each) and
 * writes every row to a Kafka topic with its cycle's start and the reading task's partition.
 */
final class ServiceLogPipeline {
    static final Schema EVENT = SchemaBuilder.record("Ev").namespace("slit").fields()
            .requiredString("key").requiredString("value").endRecord();
    static final Schema LOGGED = SchemaBuilder.record("Logged").namespace("slit").fields()
            .requiredString("key").requiredString("value").requiredLong("cycle_start").requiredInt("partition")
            .endRecord();

    private ServiceLogPipeline() {
    }

    /** Writes each key's value to the table. */
    public static final class Keeper implements RowFunction {
        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
            GenericRecord row = new GenericData.Record(EVENT);
            row.put("key", message.getPayload().get("key").toString());
            row.put("value", message.getPayload().get("value").toString());
            context.getExternalState("/profiles").set(row);
        }
    }

    /** Copies each row read from the table, with its cycle (event time) and the task's partition. */
    public static final class Copier implements RowFunction {
        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
            output.addMessage(context.createMessageBuilder("logged").set("key", message.getPayload().get("key"))
                    .set("value", message.getPayload().get("value")).set("cycle_start", message.getEventTimestamp())
                    .set("partition", context.getPartition()).build());
        }
    }

    static PipelineSpec spec(String name, String input, String output) {
        return PipelineSpec.builder(name)
                .stream("raw", EVENT).stream("events", EVENT).stream("rows", EVENT).stream("logged", LOGGED)
                .computation("read", c -> c.kind(ComputationKind.SOURCE).source("raw", "KafkaSource",
                        Map.of("topics", input)).outputStreamIds("events"))
                .computation("keeper", c -> c.inputStreamIds("events").desiredPartitionCount(2)
                        .groupBy("hash", ColumnType.UINT64, "farm_hash(key)").groupBy("key", ColumnType.STRING, null)
                        .processingFunction(Keeper::new)
                        .externalStateManager(ExternalStateManagerSpec.of("/profiles", EVENT)))
                .computation("log", c -> c.kind(ComputationKind.SOURCE).desiredPartitionCount(2)
                        .source("rows", "TServiceLogSource", Map.of("table", "/profiles", "max_rows_per_iteration",
                                200, "max_rows_per_second", 3000, "min_cycle_duration", "1s"))
                        .processingFunction(Copier::new).outputStreamIds("logged")
                        .sink("out", "KafkaSink", List.of("logged"), Map.of("topic", output, "key_column", "key")))
                .build();
    }
}
