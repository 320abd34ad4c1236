package io.flowkafka.examples.guarantees;

import io.flowkafka.api.BatchFunction;
import io.flowkafka.api.Message;
import io.flowkafka.api.MessageId;
import io.flowkafka.api.OutputCollector;
import io.flowkafka.api.RowFunction;
import io.flowkafka.api.RuntimeContext;
import io.flowkafka.spec.ColumnType;
import io.flowkafka.spec.ComputationKind;
import io.flowkafka.spec.PipelineSpec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;

/**
 * The pipeline of {@link BatchingCrashIT} (run by {@link CrashTestMain}): source -> SwiftMap with
 * {@code allow_batching_with_relaxed_guarantees} (a {@link BatchFunction} collapsing each batch into one output per
 * user, listing its parents' input ids) -> sink keyed by user (through a Transform: a SwiftMap has no sinks). Every
 * input id must appear in exactly one output.
 */
final class BatchingPipeline {
    static final Schema EVENT = SchemaBuilder.record("Event").namespace("it.batching").fields()
            .requiredString("id").requiredString("user").endRecord();
    static final Schema COLLAPSED = SchemaBuilder.record("Collapsed").namespace("it.batching").fields()
            .requiredString("user").requiredString("ids").endRecord();

    private BatchingPipeline() {
    }

    static PipelineSpec spec(String name, String input, String output) {
        return PipelineSpec.builder(name)
                .stream("raw", EVENT).stream("events", EVENT).stream("collapsed", COLLAPSED).stream("results", COLLAPSED)
                .computation("read", c -> c.kind(ComputationKind.SOURCE)
                        .source("raw", "KafkaSource", Map.of("topics", input))
                        .outputStreamIds("events"))
                .computation("collapse", c -> c.kind(ComputationKind.SWIFT_MAP).inputStreamIds("events")
                        .groupBy("hash", ColumnType.UINT64, "farm_hash(user)").groupBy("user", ColumnType.STRING, null)
                        .allowBatchingWithRelaxedGuarantees(true).maxBatchSize(200).maxBatchDelay(Duration.ofMillis(50))
                        .processingFunction(PerUser::new)
                        .outputStreamIds("collapsed"))
                .computation("write", c -> c.inputStreamIds("collapsed") // a SwiftMap has no sinks
                        .groupBy("hash", ColumnType.UINT64, "farm_hash(user)").groupBy("user", ColumnType.STRING, null)
                        .processingFunction(PassOn::new)
                        .outputStreamIds("results")
                        .sink("out", "KafkaSink", List.of("results"), Map.of("topic", output, "key_column", "user")))
                .build();
    }

    /** Passes each collapsed output on to the sink's stream. */
    public static final class PassOn implements RowFunction {
        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
            output.addMessage(context.createMessageBuilder("results").setPayload(message.getPayload()).build());
        }
    }

    /** One output per user of a batch: its ids, space-separated; its parents are that user's messages. */
    public static final class PerUser implements BatchFunction {
        @Override
        public void onMessages(List<Message> messages, OutputCollector output, RuntimeContext context) {
            Map<String, List<Message>> byUser = new LinkedHashMap<>();
            for (Message m : messages) {
                byUser.computeIfAbsent(m.getPayload().get("user").toString(), u -> new ArrayList<>()).add(m);
            }
            byUser.forEach((user, ms) -> {
                List<MessageId> parents = new ArrayList<>();
                StringBuilder ids = new StringBuilder();
                for (Message m : ms) {
                    parents.add(m.getMessageId());
                    ids.append(ids.isEmpty() ? "" : " ").append(m.getPayload().get("id"));
                }
                output.withParentIds(parents).addMessage(context.createMessageBuilder("collapsed")
                        .set("user", user).set("ids", ids.toString()).build());
            });
        }
    }
}
