package io.flowkafka.spec;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** {@link PipelineGraph}: the describe output of a three-computation spec, as text and as Mermaid. */
class PipelineGraphTest {
    private final PipelineGraph graph = PipelineGraph.of(PipelineSpecLoader.fromResource("specs/activity-pipeline.json"));

    @Test
    void shouldPrintEachComputationWithItsSourcesInputsStateTimersVisitorsOutputsAndSinks() {
        assertThat(graph.text()).isEqualTo("""
                pipeline activity: 3 computation(s), 3 stream(s)
                  computation read (source, exactly_once)
                    source  events <- KafkaSource [user-events, user-events-eu]
                    output  events -> count
                  computation count (transform, 8 partitions, at_least_once_consistent)
                    input   events <- read
                    key     [hash, user]
                    states  [total, blob]
                    timer   flush
                    visitor ttl (period 1h)
                    output  counts -> alert
                    sink    to_kafka (KafkaSink) <- counts -> topic user-counts
                  computation alert (swift_map, 4 partitions, exactly_once)
                    input   counts <- count
                    key     [hash]
                    output  alerts
                """);
    }

    @Test
    void shouldDrawTheSameGraphInMermaidWithEveryStreamAsALabelledEdge() {
        assertThat(graph.mermaid()).startsWith("flowchart LR\n").contains(
                "  s_read_events([\"KafkaSource<br/>user-events, user-events-eu\"])\n",
                "  s_read_events -->|events| c_read\n",
                "  c_count[\"count<br/>transform, 8 partitions<br/>states: total, blob<br/>timers: flush<br/>"
                        + "visitors: ttl\"]\n",
                "  c_count -->|counts| k_count_to_kafka\n",
                "  c_read -->|events| c_count\n",
                "  c_count -->|counts| c_alert\n");
        assertThat(graph.mermaid().lines().filter(l -> l.contains("-->"))).hasSize(4);
    }

    @Test
    void shouldWriteDurationsAsASpecDoes() {
        assertThat(PipelineGraph.duration(Duration.ofHours(1))).isEqualTo("1h");
        assertThat(PipelineGraph.duration(Duration.ofDays(2))).isEqualTo("2d");
        assertThat(PipelineGraph.duration(Duration.ofSeconds(90))).isEqualTo("90s");
        assertThat(PipelineGraph.duration(Duration.ofMinutes(5))).isEqualTo("5m");
        assertThat(PipelineGraph.duration(Duration.ofMillis(1500))).isEqualTo("1500ms");
    }
}
