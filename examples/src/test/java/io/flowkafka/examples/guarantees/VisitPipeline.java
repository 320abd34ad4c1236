package io.flowkafka.examples.guarantees;

import io.flowkafka.api.Message;
import io.flowkafka.api.OutputCollector;
import io.flowkafka.api.RowFunction;
import io.flowkafka.api.RuntimeContext;
import io.flowkafka.api.Visit;
import io.flowkafka.spec.ColumnType;
import io.flowkafka.spec.ComputationKind;
import io.flowkafka.spec.PipelineSpec;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;

/**
 * The pipeline of the key-visitor IT: source {@code {"key", "cmd"}} ("put" or "del") -> computation
 * {@code keeper} (4 partitions, state {@code seen}) whose key visitor {@code v} reports every visit
 * {@code {"key", "pass", "partition"}} to a sink topic, in the visit's transaction.
 */
final class VisitPipeline {
    static final Schema COMMAND = SchemaBuilder.record("Command").namespace("it").fields()
            .requiredString("key").requiredString("cmd").endRecord();
    static final Schema VISITED = SchemaBuilder.record("Visited").namespace("it").fields()
            .requiredString("key").requiredLong("pass").requiredInt("partition").endRecord();
    static final Schema SEEN = SchemaBuilder.record("Seen").namespace("it").fields().requiredLong("n").endRecord();

    /** Set in a child JVM: halt the JVM (like SIGKILL: no shutdown hooks) inside this visit, counted from 1. */
    static volatile long haltAtVisit = -1;
    private static final AtomicLong VISITS = new AtomicLong();

    private VisitPipeline() {
    }

    static PipelineSpec spec(String name, String input, String output, String period) {
        return PipelineSpec.builder(name)
                .stream("raw", COMMAND).stream("commands", COMMAND).stream("visits", VISITED)
                .computation("read", c -> c.kind(ComputationKind.SOURCE)
                        .source("raw", "KafkaSource", Map.of("topics", input)).outputStreamIds("commands"))
                .computation("keeper", c -> c.inputStreamIds("commands").desiredPartitionCount(4)
                        .groupBy("hash", ColumnType.UINT64, "farm_hash(key)").groupBy("key", ColumnType.STRING, null)
                        .state("seen", SEEN).processingFunction(Keeper::new).outputStreamIds("visits")
                        .keyVisitorStream("v", Map.of("period", period, "bucket_count", 8,
                                "background_fill_period", "200ms", "finite", false))
                        .streamsDependency("visits", List.of("v"))
                        .sink("out", "KafkaSink", List.of("visits"), Map.of("topic", output, "key_column", "key")))
                .build();
    }

    /** Keeps a key while it is put, forgets it when deleted, and reports each visit. */
    public static final class Keeper implements RowFunction {
        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
            if (message.getPayload().get("cmd").toString().equals("del")) {
                context.getState("seen").clear();
                return;
            }
            GenericRecord s = new GenericData.Record(SEEN);
            s.put("n", context.getState("seen").get().map(r -> (Long) r.get("n")).orElse(0L) + 1);
            context.getState("seen").set(s);
        }

        @Override
        public void onVisit(Visit visit, OutputCollector output, RuntimeContext context) {
            if (VISITS.incrementAndGet() == haltAtVisit) {
                System.out.println("HALTING inside visit " + haltAtVisit);
                System.out.flush();
                Runtime.getRuntime().halt(137);
            }
            output.addMessage(context.createMessageBuilder("visits").set("key", visit.getKey().get("key").toString())
                    .set("pass", visit.getPass()).set("partition", context.getPartition()).build());
        }
    }
}
