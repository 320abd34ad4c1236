package io.flowkafka.internal.timers;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowkafka.spec.ColumnType;
import io.flowkafka.spec.ComputationSpec;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Reference 004: "Timer streams belong to one group if they have the same time_type (event_time or system_time) and
 * the sets of streams whose watermark they wait for intersect."
 */
class TimerGroupsTest {
    private static ComputationSpec.Builder keyedSource() {
        return ComputationSpec.builder("join")
                .source("a", "KafkaSource", Map.of("topics", "in-a", "key_partitioned", true))
                .source("b", "KafkaSource", Map.of("topics", "in-b", "key_partitioned", true))
                .groupBy("hash", ColumnType.UINT64, "farm_hash(key)").groupBy("key", ColumnType.STRING, null)
                .processingFunction("x.F");
    }

    @Test
    void shouldGroupTheTimersOfAKeyedSourceByTheSourcesTheyWaitOn() {
        ComputationSpec c = keyedSource().timer("t1", Map.of()).timer("t2", Map.of())
                .timer("only_a", Map.of("streams", List.of("a"))).build();
        TimerGroups g = new TimerGroups(c);
        assertThat(g.groupOf(1)).as("both wait on every source").isEqualTo(g.groupOf(0));
        assertThat(g.groupOf(2)).as("a is one of every source").isEqualTo(g.groupOf(0));
    }

    @Test
    void shouldGroupByTheStreamsATimersDependencyLists() {
        ComputationSpec c = keyedSource().timer("on_a", Map.of()).timer("on_b", Map.of("streams", List.of("b")))
                .streamsDependency("on_a", List.of("a")).build();
        TimerGroups g = new TimerGroups(c);
        assertThat(g.groups()).as("{a} and {b} do not intersect").isEqualTo(2);
    }
}
