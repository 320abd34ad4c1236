package io.flowkafka.internal.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flowkafka.internal.partition.RangePartitioner;
import java.util.List;
import org.junit.jupiter.api.Test;

class HashRangeTest {
    @Test
    void shouldSplitTheWholeHashSpaceIntoEveryPartitionsOwnRange() {
        List<HashRange.Part> parts = HashRange.parse("0", null).split(4);
        assertThat(parts).extracting(HashRange.Part::partition).containsExactly(0, 1, 2, 3);
        for (HashRange.Part p : parts) {
            assertThat(RangePartitioner.partition(p.range().from(), 4)).isEqualTo(p.partition());
            if (p.range().to() != null) {
                assertThat(RangePartitioner.partition(p.range().to() - 1, 4)).isEqualTo(p.partition());
                assertThat(RangePartitioner.partition(p.range().to(), 4)).isEqualTo(p.partition() + 1);
            }
        }
        assertThat(parts.get(3).range().to()).as("the last part runs to the end").isNull();
    }

    @Test
    void shouldKeepARangeInsideOnePartitionWhole() {
        HashRange r = HashRange.parse("0x10", "0x20");
        assertThat(r.split(4)).containsExactly(new HashRange.Part(0, r));
        assertThat(r.contains(0x10)).isTrue();
        assertThat(r.contains(0x20)).isFalse();
    }

    @Test
    void shouldSplitARangeAcrossTwoPartitionsAtTheirBoundary() {
        HashRange r = HashRange.parse("0x3000000000000000", "0x9000000000000000");
        List<HashRange.Part> parts = r.split(4);
        assertThat(parts).extracting(HashRange.Part::partition).containsExactly(0, 1, 2);
        assertThat(parts.get(0).range()).isEqualTo(new HashRange(0x3000000000000000L, 0x4000000000000000L));
        assertThat(parts.get(2).range()).isEqualTo(new HashRange(0x8000000000000000L, 0x9000000000000000L));
    }

    @Test
    void shouldRejectBadBoundsNamingTheParameter() {
        assertThatThrownBy(() -> HashRange.parse("x", null)).hasMessageContaining("hash_from 'x' is not an unsigned");
        assertThatThrownBy(() -> HashRange.parse("5", "5")).hasMessageContaining("hash_from 5 is not below hash_to 5");
        assertThat(HashRange.parse(null, "18446744073709551615").to()).isEqualTo(-1L);
    }
}
