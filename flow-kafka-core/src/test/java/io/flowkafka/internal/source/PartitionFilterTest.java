package io.flowkafka.internal.source;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

class PartitionFilterTest {
    @Test
    void shouldAcceptNumbersAndRangesFromAListOrAString() {
        PartitionFilter fromList = PartitionFilter.parse(List.of(0L, 1L, "4-7"));
        PartitionFilter fromString = PartitionFilter.parse("0, 1,4 - 7");

        for (PartitionFilter f : List.of(fromList, fromString)) {
            assertThat(f.accepts(0)).isTrue();
            assertThat(f.accepts(1)).isTrue();
            assertThat(f.accepts(2)).isFalse();
            assertThat(f.accepts(3)).isFalse();
            assertThat(f.accepts(4)).isTrue();
            assertThat(f.accepts(7)).isTrue();
            assertThat(f.accepts(8)).isFalse();
            assertThat(f.toString()).isEqualTo("0-1,4-7");
        }
    }

    @Test
    void shouldMergeOverlappingItems() {
        assertThat(PartitionFilter.parse(List.of("3-5", 4, "0-2", 9)).toString()).isEqualTo("0-5,9");
        assertThat(PartitionFilter.parse(2L).toString()).isEqualTo("2");
    }

    @Test
    void shouldRejectWhatIsNotAPartitionNumberOrRange() {
        assertThatThrownBy(() -> PartitionFilter.parse(List.of())).hasMessageContaining("partition_filter is empty");
        assertThatThrownBy(() -> PartitionFilter.parse(List.of(-1L)))
                .hasMessageContaining("partition_filter item -1 is not a partition number");
        assertThatThrownBy(() -> PartitionFilter.parse("7-4"))
                .hasMessageContaining("range \"7-4\" ends before it starts").hasMessageContaining("\"4-7\"");
        assertThatThrownBy(() -> PartitionFilter.parse("0,,2")).hasMessageContaining("item \"\" is neither");
        assertThatThrownBy(() -> PartitionFilter.parse(List.of("a-b")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("\"a-b\" is neither");
        assertThatThrownBy(() -> PartitionFilter.parse(1.5)).hasMessageContaining("1.5 is not a partition number");
        assertThatThrownBy(() -> PartitionFilter.parse(java.util.Map.of("a", 1)))
                .hasMessageContaining("must be a list of partition numbers and ranges");
    }
}
