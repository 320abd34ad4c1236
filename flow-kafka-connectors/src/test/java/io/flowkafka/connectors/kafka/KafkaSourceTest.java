package io.flowkafka.connectors.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowkafka.spec.ComputationKind;
import io.flowkafka.spec.PipelineSpec;
import io.flowkafka.testing.FlowTestDriver;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.junit.jupiter.api.Test;

/**
 * The Kafka source's partition_filter on the test driver, which runs every topic as partition 0:
 * a filter without 0 skips every record, one with 0 reads them. Several partitions (a filtered
 * task among read ones) are covered by {@code KafkaSourceIT}.
 */
class KafkaSourceTest {
    static final Schema EVENT = SchemaBuilder.record("Event").namespace("src").fields()
            .requiredString("id").requiredLong("ts").endRecord();

    static PipelineSpec spec(String name, Map<String, Object> sourceParameters) {
        Map<String, Object> params = new HashMap<>(Map.of("topics", "in", "event_timestamp_column", "ts"));
        params.putAll(sourceParameters);
        return PipelineSpec.builder(name)
                .stream("raw", EVENT).stream("events", EVENT)
                .computation("read", c -> c.kind(ComputationKind.SOURCE).source("raw", "KafkaSource", params)
                        .outputStreamIds("events")
                        .sink("out", "KafkaSink", List.of("events"), Map.of("topic", "out")))
                .build();
    }

    @Test
    void shouldSkipRecordsOfFilteredPartitionsWithoutOutputOrDeadLetters() {
        try (FlowTestDriver driver = FlowTestDriver.create(spec("skip", Map.of("partition_filter", List.of("1-3"))))) {
            driver.pipeSource("in", "k", "{\"id\":\"a\",\"ts\":1000}");
            driver.pipeSource("in", "k", "not even json");

            assertThat(driver.readSinkJson("out")).isEmpty();
            assertThat(driver.readDeadLetters()).as("a skipped record is not a failed one").isEmpty();
        }
    }

    @Test
    void shouldReadRecordsOfAcceptedPartitions() {
        try (FlowTestDriver driver = FlowTestDriver.create(spec("read", Map.of("partition_filter", "0,2")))) {
            driver.pipeSource("in", "k", "{\"id\":\"a\",\"ts\":1000}");
            driver.pipeSource("in", "k", "not json");

            assertThat(driver.readSinkJson("out")).containsExactly("{\"id\":\"a\",\"ts\":1000}");
            assertThat(driver.readDeadLetters()).singleElement()
                    .satisfies(d -> assertThat(d.stage()).startsWith("decode the record"));
        }
    }

    @Test
    void shouldCountAFilteredPartitionAsDoneSoItHoldsNothingBack() {
        // an infinite source whose only partition is filtered: it will never produce, so its task completes (its
        // watermarks go to +inf and stop holding back every reader of the stream)
        try (FlowTestDriver driver = FlowTestDriver.create(spec("done", Map.of("partition_filter", List.of(5L))))) {
            driver.advanceWallClockTime(Duration.ofSeconds(1));

            assertThat(driver.completedComputations()).containsExactly("read");
        }
        try (FlowTestDriver driver = FlowTestDriver.create(spec("open", Map.of("partition_filter", List.of(0L))))) {
            driver.pipeSource("in", "k", "{\"id\":\"a\",\"ts\":1000}");
            driver.advanceWallClockTime(Duration.ofSeconds(1));

            assertThat(driver.completedComputations()).as("a read partition of an infinite source never completes")
                    .isEmpty();
        }
    }

    @Test
    void shouldCompleteAFiniteSourceWhoseReadPartitionsAreDone() {
        try (FlowTestDriver driver = FlowTestDriver.create(spec("finite", Map.of("finite", true,
                "partition_filter", List.of(1L))))) {
            driver.advanceWallClockTime(Duration.ofSeconds(1));

            assertThat(driver.isCompleted()).as("no partition to read: done without completeSource").isTrue();
        }
    }
}
