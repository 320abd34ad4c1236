package io.flowkafka.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flowkafka.spec.ComputationKind;
import io.flowkafka.spec.PipelineSpec;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.junit.jupiter.api.Test;

/**
 * Issue 23 part 6: {@link FlowTestDriver} pipes into and reads streams directly, with no writer or reader
 * computation for them. The pipeline of {@link FlowTestDriverTest}: topic {@code clicks-in} -> source stream
 * {@code raw_clicks} -> read -> {@code clicks} -> count (state {@code total}) -> {@code counts} -> label ->
 * {@code labels}, which only a sink reads (topic {@code click-labels}).
 */
class DriverAnyStreamTest {
    private static final Instant T0 = FlowTestDriver.DEFAULT_WALL_CLOCK_START;

    @Test
    void shouldPipeIntoASourceStreamAndReadAStreamOnlyASinkReads() {
        try (FlowTestDriver driver = FlowTestDriver.create(FlowTestDriverTest.spec())) {
            driver.pipeStream("raw_clicks", Map.of("user", "alice", "page", "home", "ts", 1000L), T0);
            driver.pipeStream("raw_clicks", Map.of("user", "alice", "page", "cart", "ts", 1002L), T0);

            assertThat(driver.state("count", "total", Map.of("user", "alice")))
                    .hasValueSatisfying(t -> assertThat(t.get("count")).isEqualTo(2L));
            assertThat(driver.readPayloads("labels")).as("decoded from the sink topic, in write order")
                    .extracting(r -> r.get("label").toString()).containsExactly("alice#1", "alice#2");
            assertThat(driver.readSinkJson("click-labels")).as("the same records: consumed").isEmpty();
        }
    }

    @Test
    void shouldPipeIntoTheSourceStreamsOwnTopic() {
        // read_us (declared first) reads "orders", whose name is in read_eu's "orders-eu"; read_eu names it with
        // the documented "topic" (one topic)
        Schema ev = SchemaBuilder.record("Ev").fields().requiredString("id").endRecord();
        PipelineSpec spec = PipelineSpec.builder("two").stream("raw_us", ev).stream("raw_eu", ev)
                .stream("us", ev).stream("eu", ev)
                .computation("read_us", c -> c.kind(ComputationKind.SOURCE)
                        .source("raw_us", "KafkaSource", Map.of("topics", "orders")).outputStreamIds("us")
                        .sink("us_out", "KafkaSink", List.of("us"), Map.of("topic", "us-out")))
                .computation("read_eu", c -> c.kind(ComputationKind.SOURCE)
                        .source("raw_eu", "KafkaSource", Map.of("topic", "orders-eu")).outputStreamIds("eu")
                        .sink("eu_out", "KafkaSink", List.of("eu"), Map.of("topic", "eu-out")))
                .build();
        try (FlowTestDriver driver = FlowTestDriver.create(spec)) {
            driver.pipeStream("raw_eu", Map.of("id", "x"), T0);
            assertThat(driver.readSinkJson("eu-out")).hasSize(1);
            assertThat(driver.readSinkJson("us-out")).as("nothing went to the other source's topic").isEmpty();
        }
    }

    @Test
    void shouldPipeIntoAnInternalStreamAsPipeDoes() {
        try (FlowTestDriver driver = FlowTestDriver.create(FlowTestDriverTest.spec())) {
            driver.pipeStream("clicks", Map.of("user", "bob", "page", "home", "ts", 5L), T0.plusMillis(5));
            assertThat(driver.readPayloads("counts")).singleElement()
                    .satisfies(r -> assertThat(r.get("user").toString()).isEqualTo("bob"));
            assertThatThrownBy(() -> driver.pipeStream("nope", Map.of(), T0))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("no stream 'nope'");
            assertThatThrownBy(() -> driver.pipeStream("labels", Map.of("user", "a", "count", 1L, "label", "a#1"), T0))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("read by no computation");
        }
    }
}
