package io.flowkafka.connectors.http;

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
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;

/**
 * The pipeline of the HTTP sink's tests: source {@code input} (JSON {"id", "user"}) -> {@code tag} (one output per
 * input, keyed by user) -> {@code TAsyncHttpSink} {@code web}, so every input id yields exactly one message, posted as
 * the record's JSON with {@code key_column} user.
 */
final class HttpPipeline {
    static final Schema EVENT = SchemaBuilder.record("Event").namespace("it").fields()
            .requiredString("id").requiredString("user").endRecord();

    private HttpPipeline() {
    }

    static PipelineSpec spec(String name, String input, Map<String, Object> sinkParameters) {
        Map<String, Object> params = new HashMap<>(Map.of("key_column", "user"));
        params.putAll(sinkParameters);
        return PipelineSpec.builder(name)
                .stream("raw", EVENT)
                .stream("events", EVENT)
                .stream("posted", EVENT)
                .computation("read", c -> c.kind(ComputationKind.SOURCE)
                        .source("raw", "KafkaSource", Map.of("topics", input))
                        .outputStreamIds("events"))
                .computation("tag", c -> c.inputStreamIds("events")
                        .groupBy("hash", ColumnType.UINT64, "farm_hash(user)").groupBy("user", ColumnType.STRING, null)
                        .processingFunction(Forward::new)
                        .outputStreamIds("posted")
                        .sink("web", HttpSinkProvider.T_ASYNC_HTTP_SINK, List.of("posted"), params)
                        .desiredPartitionCount(4))
                .build();
    }

    /** One output per input, the same fields. */
    public static final class Forward implements RowFunction {
        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
            output.addMessage(context.createMessageBuilder("posted")
                    .set("id", message.getPayload().get("id").toString())
                    .set("user", message.getPayload().get("user").toString()).build());
        }
    }
}
