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

    private static ComputationSpec.Builder fiveSources() {
        ComputationSpec.Builder b = ComputationSpec.builder("join");
        for (String s : List.of("a", "b", "c", "d", "e")) {
            b.source(s, "KafkaSource", Map.of("topics", "in-" + s, "key_partitioned", true));
        }
        return b.groupBy("hash", ColumnType.UINT64, "farm_hash(key)").groupBy("key", ColumnType.STRING, null)
                .processingFunction("x.F");
    }

    @Test
    void shouldMergeGroupsThroughAChainOfIntersections() {
        // reference 004 (README summary): "the relation is transitive ({a,b}, {b,c} and {c,d} make one group)"
        ComputationSpec c = fiveSources().timer("ab", Map.of("streams", List.of("a", "b")))
                .timer("bc", Map.of("streams", List.of("b", "c")))
                .timer("cd", Map.of("streams", List.of("c", "d")))
                .timer("e", Map.of("streams", List.of("e"))).build();
        TimerGroups g = new TimerGroups(c);
        assertThat(g.groupOf(0)).isEqualTo(g.groupOf(1)).isEqualTo(g.groupOf(2));
        assertThat(g.groupOf(3)).as("{e} meets none of them").isNotEqualTo(g.groupOf(0));
        assertThat(g.groups()).isEqualTo(2);
    }

    @Test
    void shouldPutEveryRealTimeStreamInOneGroupWhateverItsStreams() {
        // reference 004 (README summary): "All real_time timer streams form one group of their own, whatever their
        // streams and delays."
        ComputationSpec c = fiveSources()
                .timer("rt_a", Map.of("time_type", "real_time", "streams", List.of("a")))
                .timer("rt_e", Map.of("time_type", "real_time", "streams", List.of("e")))
                .timer("ev_a", Map.of("streams", List.of("a"))).build();
        TimerGroups g = new TimerGroups(c);
        assertThat(g.groupOf(0)).isEqualTo(g.groupOf(1));
        assertThat(g.groupOf(2)).as("an event_time stream is not in the real_time group").isNotEqualTo(g.groupOf(0));
    }
}
