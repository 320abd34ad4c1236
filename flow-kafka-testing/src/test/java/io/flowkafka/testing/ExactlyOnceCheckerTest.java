package io.flowkafka.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flowkafka.testing.ExactlyOnceChecker.Report;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;

class ExactlyOnceCheckerTest {
    private static final Set<String> EXPECTED =
            IntStream.range(0, 100).mapToObj(i -> "id-" + i).collect(Collectors.toSet());

    @Test
    void shouldFindAnExactSetExact() {
        Report report = ExactlyOnceChecker.compare(new ArrayList<>(EXPECTED), EXPECTED);

        assertThat(report.isExact()).isTrue();
        assertThat(report.total()).isEqualTo(100);
        assertThat(report.lost()).isEmpty();
        assertThat(report.duplicated()).isEmpty();
        assertThat(report.unexpected()).isEmpty();
    }

    @Test
    void shouldReportDuplicatedIds() {
        List<String> seen = new ArrayList<>(EXPECTED);
        seen.add("id-7");
        seen.add("id-7");

        Report report = ExactlyOnceChecker.compare(seen, EXPECTED);

        assertThat(report.isExact()).isFalse();
        assertThat(report.duplicated()).containsExactly(java.util.Map.entry("id-7", 3));
        assertThat(report.lost()).isEmpty();
        assertThat(report.total()).isEqualTo(102);
    }

    @Test
    void shouldReportLostIds() {
        List<String> seen = new ArrayList<>(EXPECTED);
        seen.remove("id-42");

        Report report = ExactlyOnceChecker.compare(seen, EXPECTED);

        assertThat(report.isExact()).isFalse();
        assertThat(report.lost()).containsExactly("id-42");
        assertThat(report.duplicated()).isEmpty();
    }

    @Test
    void shouldReportAnInjectedDuplicateAndAnInjectedLossTogether() {
        List<String> seen = new ArrayList<>(EXPECTED);
        seen.remove("id-3");
        seen.add("id-5");

        Report report = ExactlyOnceChecker.compare(seen, EXPECTED);

        assertThat(report.lost()).containsExactly("id-3");
        assertThat(report.duplicated()).containsExactly(java.util.Map.entry("id-5", 2));
        assertThat(report.total()).isEqualTo(EXPECTED.size());
        assertThat(report.isExact()).isFalse();
    }

    @Test
    void shouldReportUnexpectedIds() {
        List<String> seen = new ArrayList<>(EXPECTED);
        seen.add("stray");

        Report report = ExactlyOnceChecker.compare(seen, EXPECTED);

        assertThat(report.unexpected()).containsExactly("stray");
        assertThat(report.isExact()).isFalse();
    }

    @Test
    void shouldListOnlyTheFirstIdsOfEachKindInToString() {
        Report report = ExactlyOnceChecker.compare(List.of("b", "b", "x"), Set.of(
                "a00", "a01", "a02", "a03", "a04", "a05", "a06", "a07", "a08", "a09", "a10", "a11",
                "b"));

        assertThat(report.toString())
                .contains("total=3")
                .contains("lost=12 [a00, a01, a02, a03, a04, a05, a06, a07, a08, a09, ...]")
                .doesNotContain("a10")
                .contains("duplicated=1 [b=2]")
                .contains("unexpected=1 [x]");
    }

    @Test
    void shouldUseTheFlowIdHeaderAsHexElseTheKey() {
        ConsumerRecord<byte[], byte[]> withHeader =
                new ConsumerRecord<>("t", 0, 0, "key".getBytes(StandardCharsets.UTF_8), null);
        withHeader.headers().add(ExactlyOnceChecker.ID_HEADER, new byte[] {0x0a, (byte) 0xff});
        ConsumerRecord<byte[], byte[]> keyOnly =
                new ConsumerRecord<>("t", 0, 1, "key".getBytes(StandardCharsets.UTF_8), null);
        ConsumerRecord<byte[], byte[]> neither = new ConsumerRecord<>("t", 2, 9, null, null);

        assertThat(ExactlyOnceChecker.defaultId(withHeader)).isEqualTo("0aff");
        assertThat(ExactlyOnceChecker.defaultId(keyOnly)).isEqualTo("key");
        assertThat(ExactlyOnceChecker.defaultId(neither)).isEqualTo("<no id at t-2@9>");
    }

    @Test
    void shouldRejectANegativeTotal() {
        assertThatThrownBy(() -> new Report(new java.util.TreeSet<>(), new java.util.TreeMap<>(),
                new java.util.TreeSet<>(), -1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("total must be >= 0 but was -1");
    }
}
