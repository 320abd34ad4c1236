package io.flowkafka.internal.drain;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowkafka.internal.watermarks.PartitionCounts;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

/** {@link DrainingSources}: every partition of the source topics of the draining computations, computed once. */
class DrainingSourcesTest {
    @Test
    void shouldListEveryPartitionOfTheDrainingComputationsSourceTopicsOnly() {
        PartitionCounts counts = new PartitionCounts(false);
        counts.put("read", 2);
        counts.put("clicks", 3);
        DrainingSources sources = new DrainingSources(Map.of("read", List.of("a", "b"), "clicks", List.of("c")),
                counts);
        assertThat(sources.partitions(Set.of())).isEmpty();
        Set<TopicPartition> read = sources.partitions(Set.of("read"));
        assertThat(read).containsExactlyInAnyOrder(new TopicPartition("a", 0), new TopicPartition("a", 1),
                new TopicPartition("b", 0), new TopicPartition("b", 1));
        assertThat(sources.partitions(Set.of("read"))).as("cached while the draining set is the same").isSameAs(read);
        assertThat(sources.partitions(Set.of("read", "clicks", "no-sources"))).hasSize(7)
                .contains(new TopicPartition("c", 2));
    }
}
