package io.flowkafka.examples.docs;

import io.flowkafka.api.BatchFunction;
import io.flowkafka.api.Message;
import io.flowkafka.api.MessageId;
import io.flowkafka.api.OutputCollector;
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
 * The docs' example of SwiftMap batching: a {@link BatchFunction} that collapses a batch into one
 * sum per user, whose parents are that user's messages in the batch.
 */
public final class BatchedSums implements BatchFunction {
    static final Schema EVENT = SchemaBuilder.record("DocAmount").namespace("io.flowkafka.examples.docs")
            .fields().requiredString("user").requiredLong("amount").endRecord();
    static final Schema SUM = SchemaBuilder.record("DocSum").namespace("io.flowkafka.examples.docs")
            .fields().requiredString("user").requiredLong("count").requiredLong("total").endRecord();

    /** Source {@code read} of {@code topic}, then the SwiftMap {@code sums}, batches of {@code maxBatchSize}. */
    public static PipelineSpec spec(String name, String topic, int maxBatchSize) {
        return PipelineSpec.builder(name)
                .stream("raw", EVENT).stream("events", EVENT).stream("sums", SUM)
                .computation("read", c -> c.kind(ComputationKind.SOURCE)
                        .source("raw", "KafkaSource", Map.of("topics", topic))
                        .outputStreamIds("events"))
                // tag::spec[]
                .computation("sums", c -> c.kind(ComputationKind.SWIFT_MAP).inputStreamIds("events")
                        .groupBy("hash", ColumnType.UINT64, "farm_hash(user)")
                        .groupBy("user", ColumnType.STRING, null)
                        .allowBatchingWithRelaxedGuarantees(true)
                        .maxBatchSize(maxBatchSize)
                        .maxBatchDelay(Duration.ofMillis(100))
                        .processingFunction(BatchedSums::new)
                        .outputStreamIds("sums"))
                // end::spec[]
                .build();
    }

    // tag::function[]
    @Override
    public void onMessages(List<Message> messages, OutputCollector output, RuntimeContext context) {
        Map<String, List<Message>> byUser = new LinkedHashMap<>();
        for (Message m : messages) {
            byUser.computeIfAbsent(m.getPayload().get("user").toString(), u -> new ArrayList<>()).add(m);
        }
        byUser.forEach((user, mine) -> {
            List<MessageId> parents = mine.stream().map(Message::getMessageId).toList();
            long total = mine.stream().mapToLong(m -> (Long) m.getPayload().get("amount")).sum();
            output.withParentIds(parents).addMessage(context.createMessageBuilder("sums")
                    .set("user", user).set("count", (long) mine.size()).set("total", total).build());
        });
    }
    // end::function[]
}
