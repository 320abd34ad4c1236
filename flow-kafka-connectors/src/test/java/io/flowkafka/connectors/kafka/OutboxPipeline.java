package io.flowkafka.connectors.kafka;

import io.flowkafka.api.Message;
import io.flowkafka.api.OutputCollector;
import io.flowkafka.api.RowFunction;
import io.flowkafka.api.RuntimeContext;
import io.flowkafka.api.StateAccessor;
import io.flowkafka.spec.ColumnType;
import io.flowkafka.spec.ComputationKind;
import io.flowkafka.spec.PipelineSpec;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;

/**
 * The pipeline of the TKafkaSink tests: source {@code input} (JSON {"id", "user"}) -> {@code count}
 * (per-user running count) -> TKafkaSink {@code out} to {@code output}, keyed by id, so every input
 * id yields exactly one output record whose value carries the user's count at that input.
 */
final class OutboxPipeline {
    static final Schema EVENT = SchemaBuilder.record("Event").namespace("it").fields()
            .requiredString("id").requiredString("user").endRecord();
    static final Schema COUNTED = SchemaBuilder.record("Counted").namespace("it").fields()
            .requiredString("id").requiredString("user").requiredLong("count").endRecord();
    static final Schema TOTAL = SchemaBuilder.record("Total").namespace("it").fields().requiredLong("count").endRecord();

    private OutboxPipeline() {
    }

    static PipelineSpec spec(String name, String input, String output, Map<String, Object> sinkParameters) {
        return spec(name, input, output, "TKafkaSink", sinkParameters);
    }

    static PipelineSpec spec(String name, String input, String output, String sinkClass,
            Map<String, Object> sinkParameters) {
        Map<String, Object> params = new HashMap<>(Map.of("topic", output, "key_column", "id",
                "message_id_header", "flow-message-id", "timestamp", "system"));
        params.putAll(sinkParameters);
        return PipelineSpec.builder(name)
                .stream("raw", EVENT)
                .stream("events", EVENT)
                .stream("counted", COUNTED)
                .computation("read", c -> c.kind(ComputationKind.SOURCE)
                        .source("raw", "KafkaSource", Map.of("topics", input))
                        .outputStreamIds("events"))
                .computation("count", c -> c.inputStreamIds("events")
                        .groupBy("hash", ColumnType.UINT64, "farm_hash(user)").groupBy("user", ColumnType.STRING, null)
                        .state("total", TOTAL)
                        .processingFunction(Count::new)
                        .outputStreamIds("counted")
                        .sink("out", sinkClass, List.of("counted"), params)
                        .desiredPartitionCount(4))
                .build();
    }

    /** Counts per user; one output per input. */
    public static final class Count implements RowFunction {
        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
            StateAccessor<GenericRecord> total = context.getState("total");
            long n = total.get().map(t -> (Long) t.get("count")).orElse(0L) + 1;
            GenericRecord t = new GenericData.Record(TOTAL);
            t.put("count", n);
            total.set(t);
            output.addMessage(context.createMessageBuilder("counted")
                    .set("id", message.getPayload().get("id").toString())
                    .set("user", message.getPayload().get("user").toString()).set("count", n).build());
        }
    }
}
