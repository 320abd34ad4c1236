package io.flowkafka.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flowkafka.api.Message;
import io.flowkafka.runtime.FlowRuntime;
import io.flowkafka.runtime.StatusError;
import io.flowkafka.spec.ComputationKind;
import io.flowkafka.spec.PipelineSpec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.stream.LongStream;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.junit.jupiter.api.Test;

/**
 * A {@link io.flowkafka.spi.PunctuatedSource} run by a Source computation on {@link FlowTestDriver}: the driver's
 * clock drives the punctuation, the progress survives a revived task, message ids are not repeated, a finite source
 * completes, and a dynamic parameter changes through the dynamic spec; the stream thread's poll waits briefly.
 */
class PunctuatedSourceTest {
    static final Schema N = SchemaBuilder.record("N").namespace("ps").fields().requiredLong("n").endRecord();

    private static PipelineSpec spec() {
        return spec(Map.of("count", 50, "per_step", 3));
    }

    private static PipelineSpec spec(Map<String, Object> parameters) {
        return PipelineSpec.builder("ps").stream("numbers", N)
                .computation("count", c -> c.kind(ComputationKind.SOURCE)
                        .source("numbers", "CountingSource", parameters)
                        .outputStreamIds("numbers"))
                .build();
    }

    /**
     * What a task's source reported belongs to that task: once it closes (here revived; on a broker also moved to
     * another instance), the instance's status no longer shows it. Before, it stayed until the instance stopped.
     */
    @Test
    void shouldClearWhatASourceReportedWhenItsTaskCloses() {
        try (FlowTestDriver d = FlowTestDriver.create(spec(Map.of("count", 50, "per_step", 3, "report_at_start", true)))) {
            d.advanceWallClockTime(Duration.ofMillis(500), Duration.ofMillis(100));
            assertThat(d.status()).extracting(StatusError::path).containsExactly("source_streams/numbers/start");
            d.reviveTask(); // the revived reader starts past zero: it reports nothing
            d.advanceWallClockTime(Duration.ofMillis(500), Duration.ofMillis(100));
            assertThat(d.readStream("numbers")).isNotEmpty();
            assertThat(d.status()).isEmpty();
        }
    }

    @Test
    void shouldEmitEachMessageOnceAcrossARevivedTaskAndComplete() {
        try (FlowTestDriver d = FlowTestDriver.create(spec())) {
            List<Message> out = new ArrayList<>();
            d.advanceWallClockTime(Duration.ofMillis(500), Duration.ofMillis(100));
            out.addAll(d.readStream("numbers"));
            assertThat(out).hasSizeBetween(3, 18);
            d.reviveTask();
            d.reconfigure(Map.of("computations", Map.of("count", Map.of("source_streams",
                    Map.of("numbers", Map.of("per_step", 10))))));
            d.advanceWallClockTime(Duration.ofSeconds(1), Duration.ofMillis(100));
            out.addAll(d.readStream("numbers"));
            assertThat(out).extracting(m -> (Long) m.getPayload().get("n"))
                    .containsExactlyElementsOf(LongStream.range(0, 50).boxed().toList());
            assertThat(out).extracting(Message::getMessageId).doesNotHaveDuplicates();
            assertThat(d.completedComputations()).contains("count");
        }
    }

    @Test
    void shouldPollBrieflyUnlessTheUserSetsPollMs() {
        Properties props = new Properties();
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "localhost:9");
        try (FlowRuntime runtime = FlowRuntime.create(spec(), props)) {
            assertThat(runtime.streamsProperties().get(StreamsConfig.POLL_MS_CONFIG)).as("no input to wait for")
                    .isEqualTo("10");
        }
        props.put(StreamsConfig.POLL_MS_CONFIG, "250");
        try (FlowRuntime runtime = FlowRuntime.create(spec(), props)) {
            assertThat(runtime.streamsProperties().get(StreamsConfig.POLL_MS_CONFIG)).isEqualTo("250");
        }
    }

    @Test
    void shouldRejectADynamicChangeOfAStaticParameter() {
        try (FlowTestDriver d = FlowTestDriver.create(spec())) {
            assertThatThrownBy(() -> d.reconfigure(Map.of("computations", Map.of("count", Map.of("source_streams",
                    Map.of("numbers", Map.of("count", 5)))))))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("dynamic_spec.computations.count.source_streams.numbers.count is not a "
                            + "dynamic parameter of CountingSource; the dynamic ones are [per_step]");
        }
    }
}
