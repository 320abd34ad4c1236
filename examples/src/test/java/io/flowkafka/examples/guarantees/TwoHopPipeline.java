package io.flowkafka.examples.guarantees;

import io.flowkafka.api.Message;
import io.flowkafka.api.OutputCollector;
import io.flowkafka.api.RowFunction;
import io.flowkafka.api.RuntimeContext;
import io.flowkafka.spec.ColumnType;
import io.flowkafka.spec.ComputationKind;
import io.flowkafka.spec.PipelineSpec;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;

/**
 * The pipeline of the exactly-once ITs: source -> count (per-user state) -> tag (per-id key) -> sink;
 * or, with a keyed source, count reading the user-keyed input topic directly -> tag -> sink.
 * Every input {@code id} yields exactly one output keyed by that id, carrying the user's running
 * count; so the outputs of a user must hold each count 1..n exactly once.
 */
final class TwoHopPipeline {
    static final Schema EVENT = SchemaBuilder.record("Event").namespace("it").fields()
            .requiredString("id").requiredString("user").endRecord();
    static final Schema COUNTED = SchemaBuilder.record("Counted").namespace("it").fields()
            .requiredString("id").requiredString("user").requiredLong("count").endRecord();

    /** Users whose messages the count function rejects (thrown): they go to the dead-letter topic. */
    static final String BAD_USER = "bad-";
    /** Set in a child JVM to throw once from the count function at this input id. */
    static volatile String throwOnceAt;
    private static final AtomicBoolean THROWN = new AtomicBoolean();

    private TwoHopPipeline() {
    }

    static PipelineSpec spec(String name, String input, String output) {
        return spec(name, input, output, false);
    }

    /**
     * @param keyedSource the count computation reads the input topic (keyed by user) directly as a
     *     key-partitioned source, instead of through a Source computation and an internal stream
     */
    static PipelineSpec spec(String name, String input, String output, boolean keyedSource) {
        return spec(name, input, output, keyedSource, null);
    }

    /**
     * @param httpSink parameters of a second sink of the results, a {@code TAsyncHttpSink} named {@code hook}
     *     (keyed by id); null for none
     */
    static PipelineSpec spec(String name, String input, String output, boolean keyedSource,
            Map<String, Object> httpSink) {
        return spec(name, input, output, keyedSource, httpSink, Map.of());
    }

    /** @param outSink more parameters of the {@code out} KafkaSink (e.g. a {@code value_serde}) */
    static PipelineSpec spec(String name, String input, String output, boolean keyedSource,
            Map<String, Object> httpSink, Map<String, Object> outSink) {
        Map<String, Object> out = new HashMap<>(Map.of("topic", output, "key_column", "id",
                "message_id_header", "flow-message-id"));
        out.putAll(outSink);
        PipelineSpec.Builder b = PipelineSpec.builder(name)
                .stream("raw", EVENT)
                .stream("counted", COUNTED)
                .stream("results", COUNTED);
        if (keyedSource) {
            b.computation("count", c -> c.source("raw", "KafkaSource", Map.of("topics", input, "key_partitioned", true))
                    .groupBy("hash", ColumnType.UINT64, "farm_hash(user)").groupBy("user", ColumnType.STRING, null)
                    .state(RoundedCount.TOTAL, RoundedCount.STATE).state(RoundedCount.ROUNDS, RoundedCount.STATE)
                    .processingFunction(Count::new)
                    .outputStreamIds("counted"));
        } else {
            b.stream("events", EVENT)
                    .computation("read", c -> c.kind(ComputationKind.SOURCE)
                            .source("raw", "KafkaSource", Map.of("topics", input))
                            .outputStreamIds("events"))
                    .computation("count", c -> c.inputStreamIds("events")
                            .groupBy("hash", ColumnType.UINT64, "farm_hash(user)").groupBy("user", ColumnType.STRING, null)
                            .state(RoundedCount.TOTAL, RoundedCount.STATE).state(RoundedCount.ROUNDS, RoundedCount.STATE)
                            .processingFunction(Count::new)
                            .outputStreamIds("counted"));
        }
        return b
                .computation("tag", c -> {
                    c.inputStreamIds("counted")
                            .groupBy("hash", ColumnType.UINT64, "farm_hash(id)").groupBy("id", ColumnType.STRING, null)
                            .processingFunction(Tag::new)
                            .outputStreamIds("results")
                            .sink("out", "KafkaSink", List.of("results"), out);
                    if (httpSink != null) {
                        c.sink("hook", "TAsyncHttpSink", List.of("results"), httpSink);
                    }
                })
                .build();
    }

    /** Counts per user ({@link RoundedCount}: a state row deleted every few messages). */
    public static final class Count implements RowFunction {
        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
            String user = message.getPayload().get("user").toString();
            if (user.startsWith(BAD_USER)) { // poison for the dead-letter checks: no state touched
                throw new IllegalArgumentException("bad user " + user);
            }
            long n = RoundedCount.next(context);
            String id = message.getPayload().get("id").toString();
            output.addMessage(context.createMessageBuilder("counted")
                    .set("id", id).set("user", user).set("count", n).build());
            if (id.equals(throwOnceAt) && THROWN.compareAndSet(false, true)) {
                throw new IllegalStateException("injected failure at " + id);
            }
        }
    }

    /** Passes each counted record on, keyed by id. */
    public static final class Tag implements RowFunction {
        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
            output.addMessage(context.createMessageBuilder("results").setPayload(message.getPayload()).build());
        }
    }
}
