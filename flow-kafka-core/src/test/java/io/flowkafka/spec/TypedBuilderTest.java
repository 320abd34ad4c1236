package io.flowkafka.spec;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The typed builder methods make exactly the spec of their Map forms (issue 23). */
class TypedBuilderTest {
    @Test
    void shouldBuildTheSameTimerAsTheMapForm() {
        TimerStreamSpec typed = TimerStreamSpec.builder("flush").timeType(TimeType.SYSTEM_TIME).streams("a", "b")
                .streamWithDelay("c", Duration.ofSeconds(5)).deduplicateEqualTimestamps(false).build();
        TimerStreamSpec map = new TimerStreamSpec("flush", Map.of("time_type", "system_time", "streams",
                List.of("a", "b"), "streams_with_delays", Map.of("c", 5000L), "deduplicate_equal_timestamps", false));

        assertThat(typed).isEqualTo(map);
        assertThat(typed.timeType()).isEqualTo(TimeType.SYSTEM_TIME);
        assertThat(typed.deduplicateEqualTimestamps()).isFalse();
        assertThat(typed.watchedStreams()).containsExactly(Map.entry("a", Duration.ZERO),
                Map.entry("b", Duration.ZERO), Map.entry("c", Duration.ofSeconds(5)));
        assertThat(TimerStreamSpec.builder("t").build()).isEqualTo(new TimerStreamSpec("t", Map.of()));
    }

    @Test
    void shouldBuildTheSameComputationWithTypedTimerMethods() {
        ComputationSpec typed = base().timer("t", TimeType.REAL_TIME)
                .timer(TimerStreamSpec.builder("u").streams("in").build()).build();
        ComputationSpec map = base().timer("t", Map.of("time_type", "real_time"))
                .timer("u", Map.of("streams", List.of("in"))).build();

        assertThat(typed).isEqualTo(map);
    }

    @Test
    void shouldBuildTheSameKeyVisitorStreamAsTheMapForm() {
        KeyVisitorStreamSpec typed = KeyVisitorStreamSpec.builder("ttl").names("total", "seen").externalNames("ext")
                .upstreamStreams("in").bucketCount(8).period(Duration.ofHours(1)).maxScanRowsPerIteration(50)
                .bufferRowLimit(20).finite(false).fullFinalPass(false).backgroundFillPeriod(Duration.ofMillis(250))
                .build();
        Map<String, Object> parameters = new java.util.HashMap<>();
        parameters.put("names", List.of("total", "seen"));
        parameters.put("external_names", List.of("ext"));
        parameters.put("upstream_streams", List.of("in"));
        parameters.put("bucket_count", 8);
        parameters.put("period", 3_600_000L);
        parameters.put("max_scan_rows_per_iteration", 50);
        parameters.put("buffer_row_limit", 20);
        parameters.put("finite", false);
        parameters.put("full_final_pass", false);
        parameters.put("background_fill_period", 250L);

        assertThat(typed).isEqualTo(new KeyVisitorStreamSpec("ttl", parameters));
        assertThat(typed.settings()).isEqualTo(new KeyVisitorSettings(Duration.ofHours(1), 50, 20, false, false,
                Duration.ofMillis(250)));
        assertThat(typed.bucketCount()).isEqualTo(8);
        for (Object wrong : List.of(16.7, 4_294_967_304L)) { // not 16, and not 8 after wrapping past the int range
            Map<String, Object> p = new java.util.HashMap<>(parameters);
            p.put("bucket_count", wrong);
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> new KeyVisitorStreamSpec("ttl", p).bucketCount())
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("bucket_count must be an integer");
        }
        assertThat(base().keyVisitorStream(typed).build()).isEqualTo(base().keyVisitorStream("ttl", parameters).build());
    }

    @Test
    void shouldBuildTheSameComputationWithTypedSourceAndSink() {
        SourceSpec source = new SourceSpec("in", "TKafkaSource", Map.of("topic", "t"));
        SinkSpec sink = new SinkSpec("out", "TKafkaSink", List.of("in"), Map.of("topic", "u"));

        assertThat(ComputationSpec.builder("c").source(source).sink(sink).build())
                .isEqualTo(ComputationSpec.builder("c").source("in", "TKafkaSource", Map.of("topic", "t"))
                        .sink("out", "TKafkaSink", List.of("in"), Map.of("topic", "u")).build());
    }

    @Test
    void shouldValidateATypedTimerLikeItsMapForm() {
        PipelineSpec typed = PipelineSpec.builder("p").computation("c",
                c -> c.inputStreamIds("in").timer(TimerStreamSpec.builder("t").streams("nope").build())).build();
        PipelineSpec map = PipelineSpec.builder("p").computation("c",
                c -> c.inputStreamIds("in").timer("t", Map.of("streams", List.of("nope")))).build();

        assertThat(typed.validate()).isEqualTo(map.validate());
    }

    private static ComputationSpec.Builder base() {
        return ComputationSpec.builder("c").inputStreamIds("in").outputStreamIds("out");
    }
}
