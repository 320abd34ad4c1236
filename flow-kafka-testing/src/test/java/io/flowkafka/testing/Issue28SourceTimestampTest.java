package io.flowkafka.testing;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowkafka.spec.ComputationKind;
import io.flowkafka.spec.PipelineSpec;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.junit.jupiter.api.Test;

/**
 * Issue 28.3: a source record whose event or record timestamp does not fit in a long of nanoseconds (after the
 * year 2262) was read with a wrapped timestamp, a moment centuries away (or before 1970), that moved the watermark
 * or fell behind it without a word. Found by FuzzedRecordsIT; both failed before the fix. Now such a record is a
 * dead letter naming the timestamp, and the records around it are read.
 */
class Issue28SourceTimestampTest {
    private static final Schema EVENT = SchemaBuilder.record("E").namespace("ts").fields()
            .requiredString("id").requiredLong("ts").endRecord();

    private static PipelineSpec spec(Map<String, Object> parameters) {
        return PipelineSpec.builder("ts").stream("raw", EVENT).stream("events", EVENT)
                .computation("read", c -> c.kind(ComputationKind.SOURCE).source("raw", "KafkaSource", parameters)
                        .outputStreamIds("events"))
                .build();
    }

    @Test
    void shouldDeadLetterAnEventTimestampColumnOutOfTheNanosecondRange() {
        try (FlowTestDriver driver = FlowTestDriver.create(spec(Map.of("topics", "in",
                "event_timestamp_column", "ts")))) {
            driver.pipeSource("in", "a", "{\"id\": \"a\", \"ts\": 1000}");
            driver.pipeSource("in", "b", "{\"id\": \"b\", \"ts\": 9300000000000000}");
            driver.pipeSource("in", "c", "{\"id\": \"c\", \"ts\": -9300000000000000}");
            driver.pipeSource("in", "d", "{\"id\": \"d\", \"ts\": 2000}");

            assertThat(driver.readPayloads("events")).extracting(r -> r.get("id").toString()).containsExactly("a", "d");
            assertThat(driver.readDeadLetters()).hasSize(2).allSatisfy(dead -> {
                assertThat(dead.computation()).isEqualTo("read");
                assertThat(dead.errorMessage()).contains("event_timestamp_column 'ts'")
                        .contains("does not fit in a long of nanoseconds");
            });
        }
    }

    @Test
    void shouldDeadLetterARecordTimestampOutOfTheNanosecondRange() {
        try (FlowTestDriver driver = FlowTestDriver.create(spec(Map.of("topics", "in")))) {
            byte[] a = "{\"id\": \"a\", \"ts\": 0}".getBytes(StandardCharsets.UTF_8);
            driver.pipeSource("in", null, a, Instant.ofEpochMilli(1000));
            driver.pipeSource("in", null, a, Instant.ofEpochMilli(9_300_000_000_000_000L));

            assertThat(driver.readPayloads("events")).hasSize(1);
            assertThat(driver.readDeadLetters()).singleElement().satisfies(dead ->
                    assertThat(dead.errorMessage()).contains("record timestamp 9300000000000000 ms")
                            .contains("does not fit in a long of nanoseconds"));
        }
    }
}
