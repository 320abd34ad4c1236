package io.flowkafka.internal.outbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

class OutboxBatcherTest {
    private static OutboxBatcher<Long> batcher(int max) {
        return new OutboxBatcher<>(max, Long::longValue);
    }

    /** Cuts everything cuttable, removing each batch as a delivery would. */
    private static List<OutboxBatcher.Cut<Long>> drain(OutboxBatcher<Long> b, long position) {
        List<OutboxBatcher.Cut<Long>> cuts = new ArrayList<>();
        OutboxBatcher.Cut<Long> c;
        while ((c = b.peek(0, position)) != null) {
            cuts.add(c);
            b.remove(c);
        }
        return cuts;
    }

    @Test
    void shouldEndABatchWhereATransactionMarkerLeavesAGap() {
        OutboxBatcher<Long> b = batcher(100);
        // two epochs: records 0-2, marker at 3; records 4-5, marker at 6
        b.add(0, List.of(0L, 1L, 2L, 4L, 5L));
        List<OutboxBatcher.Cut<Long>> cuts = drain(b, 7);
        assertThat(cuts).extracting(OutboxBatcher.Cut::records).containsExactly(List.of(0L, 1L, 2L), List.of(4L, 5L));
        assertThat(cuts).extracting(OutboxBatcher.Cut::nextOffset).containsExactly(4L, 7L);
        assertThat(b.buffered(0)).isZero();
    }

    @Test
    void shouldWaitWhileTheLastRecordsTransactionMayGoOn() {
        OutboxBatcher<Long> b = batcher(100);
        b.add(0, List.of(0L, 1L));
        assertThat(b.peek(0, 2)).as("position right after the last record: more of its epoch may follow").isNull();
        b.add(0, List.of(2L));
        assertThat(b.peek(0, 4)).as("the marker at 3 was passed").satisfies(c -> {
            assertThat(c.records()).containsExactly(0L, 1L, 2L);
            assertThat(c.nextOffset()).isEqualTo(4L);
        });
    }

    @Test
    void shouldCapABatchAtMaxRecords() {
        OutboxBatcher<Long> b = batcher(2);
        b.add(0, List.of(0L, 1L, 2L, 3L, 4L));
        List<OutboxBatcher.Cut<Long>> cuts = drain(b, 5);
        assertThat(cuts).extracting(OutboxBatcher.Cut::records)
                .containsExactly(List.of(0L, 1L), List.of(2L, 3L));
        assertThat(cuts).extracting(OutboxBatcher.Cut::nextOffset).containsExactly(2L, 4L);
        assertThat(b.peek(0, 5)).as("record 4 waits: its epoch may go on").isNull();
    }

    @Test
    void shouldCutTheSameBatchesWhateverThePollsLookLike() {
        // the log: epochs [0..4] marker 5, [6..6] marker 7, aborted 8-9, marker 10, [11..13] marker 14
        List<Long> log = List.of(0L, 1L, 2L, 3L, 4L, 6L, 11L, 12L, 13L);
        Function<List<List<Long>>, List<List<Long>>> run = polls -> {
            OutboxBatcher<Long> b = batcher(3);
            List<List<Long>> out = new ArrayList<>();
            for (List<Long> poll : polls) {
                b.add(0, poll);
                long position = poll.get(poll.size() - 1) + 1; // the fetch ended at this record
                drain(b, position).forEach(c -> out.add(c.records()));
            }
            drain(b, 15).forEach(c -> out.add(c.records()));
            return out;
        };
        List<List<Long>> once = run.apply(List.of(log));
        List<List<Long>> oneByOne = run.apply(log.stream().map(List::of).toList());
        List<List<Long>> uneven = run.apply(List.of(List.of(0L, 1L), List.of(2L, 3L, 4L, 6L, 11L), List.of(12L, 13L)));
        assertThat(once).containsExactly(List.of(0L, 1L, 2L), List.of(3L, 4L), List.of(6L), List.of(11L, 12L, 13L));
        assertThat(oneByOne).isEqualTo(once);
        assertThat(uneven).isEqualTo(once);
    }

    @Test
    void shouldPeekSeveralBatchesAsTheyWouldBeCutOneAtATime() {
        // epochs [0..4] marker 5, [6..6] marker 7, [8..9] still open (position 10: its marker may follow)
        List<Long> log = List.of(0L, 1L, 2L, 3L, 4L, 6L, 8L, 9L);
        OutboxBatcher<Long> together = batcher(3);
        together.add(0, log);
        List<OutboxBatcher.Cut<Long>> cuts = together.peek(0, 10, 10);
        OutboxBatcher<Long> oneByOne = batcher(3);
        oneByOne.add(0, log);
        assertThat(cuts).isEqualTo(drain(oneByOne, 10));
        assertThat(cuts).extracting(OutboxBatcher.Cut::records)
                .containsExactly(List.of(0L, 1L, 2L), List.of(3L, 4L), List.of(6L));
        assertThat(together.buffered(0)).as("peeking removes nothing").isEqualTo(8);
        assertThat(together.peek(0, 10, 2)).as("at most maxCuts").isEqualTo(cuts.subList(0, 2));
        cuts.forEach(together::remove);
        assertThat(together.peek(0, 10, 10)).as("the open epoch waits").isEmpty();
        assertThat(together.buffered(0)).isEqualTo(2);
        assertThat(together.peek(1, 10, 10)).as("a partition with nothing buffered").isEmpty();
    }

    @Test
    void shouldKeepPartitionsApartAndForgetAClearedOne() {
        OutboxBatcher<Long> b = batcher(10);
        b.add(0, List.of(0L));
        b.add(1, List.of(5L));
        b.clear(0);
        assertThat(b.peek(0, 9)).isNull();
        assertThat(b.peek(1, 9).records()).containsExactly(5L);
    }

    @Test
    void shouldRejectANonPositiveCap() {
        assertThatThrownBy(() -> batcher(0)).hasMessageContaining("maxRecords must be >= 1");
    }
}
