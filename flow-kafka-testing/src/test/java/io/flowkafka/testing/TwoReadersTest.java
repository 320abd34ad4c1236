package io.flowkafka.testing;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowkafka.api.Message;
import io.flowkafka.api.OutputCollector;
import io.flowkafka.api.RowFunction;
import io.flowkafka.api.RuntimeContext;
import io.flowkafka.spec.ColumnType;
import io.flowkafka.spec.ComputationKind;
import io.flowkafka.spec.PipelineSpec;
import java.util.List;
import java.util.Map;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.junit.jupiter.api.Test;

/** A stream read by two computations with the same group-by key and partition count reaches both. */
class TwoReadersTest {
    static final Schema EVENT = SchemaBuilder.record("Ev").namespace("two").fields().requiredString("key").endRecord();

    /** Copies each message to its output, tagged with the computation. */
    public static final class Tag implements RowFunction {
        @Override
        public void onMessage(Message message, OutputCollector output, RuntimeContext context) {
            output.addMessage(context.createMessageBuilder("out_" + context.getComputationId())
                    .set("key", message.getPayload().get("key").toString()).build());
        }
    }

    @Test
    void shouldFeedEveryReaderOfAStream() {
        PipelineSpec spec = PipelineSpec.builder("two").stream("raw", EVENT).stream("events", EVENT)
                .stream("out_a", EVENT).stream("out_b", EVENT)
                .computation("read", c -> c.kind(ComputationKind.SOURCE).source("raw", "KafkaSource",
                        Map.of("topics", "in")).outputStreamIds("events"))
                .computation("a", c -> c.inputStreamIds("events").groupBy("hash", ColumnType.UINT64, "farm_hash(key)")
                        .groupBy("key", ColumnType.STRING, null).processingFunction(Tag::new).outputStreamIds("out_a"))
                .computation("b", c -> c.inputStreamIds("events").groupBy("hash", ColumnType.UINT64, "farm_hash(key)")
                        .groupBy("key", ColumnType.STRING, null).processingFunction(Tag::new).outputStreamIds("out_b"))
                .build();
        try (FlowTestDriver driver = FlowTestDriver.create(spec)) {
            for (String k : List.of("x", "y", "z")) {
                driver.pipeSource("in", k, "{\"key\":\"" + k + "\"}");
            }
            assertThat(driver.readPayloads("out_a")).extracting(r -> r.get("key").toString()).containsExactly("x", "y", "z");
            assertThat(driver.readPayloads("out_b")).extracting(r -> r.get("key").toString()).containsExactly("x", "y", "z");
        }
    }
}
