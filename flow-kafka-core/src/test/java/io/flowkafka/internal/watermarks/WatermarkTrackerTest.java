package io.flowkafka.internal.watermarks;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowkafka.avro.ControlRecord;
import java.util.Map;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.processor.api.MockProcessorContext;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The watermark rules of DESIGN.md: the input watermark of a stream is the minimum over the
 * producers the compiled spec expects; a producer never heard from holds the stream back;
 * watermarks never go back; idle producers are skipped up to the cap.
 */
class WatermarkTrackerTest {
    private KeyValueStore<Bytes, byte[]> store;

    @BeforeEach
    void openStore() {
        store = Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore("c.watermarks"), Serdes.Bytes(),
                Serdes.ByteArray()).withLoggingDisabled().build();
        MockProcessorContext<Object, Object> ctx = new MockProcessorContext<>();
        store.init(ctx.getStateStoreContext(), store);
    }

    private WatermarkTracker tracker(int producers) {
        return new WatermarkTracker(store, Map.of("s", new WatermarkTracker.ExpectedProducers("w", producers)));
    }

    private static ControlRecord control(int partition, long event, long system, boolean completed, boolean idle,
            int maxIdle) {
        return ControlRecord.newBuilder().setComputation("w").setPartition(partition).setEventWatermark(event)
                .setSystemWatermark(system).setCompleted(completed).setIdle(idle).setMaxIdleProducers(maxIdle).build();
    }

    @Test
    void shouldKeepTheAlignedWatermarkAcrossARestoreAndWriteOnlyChanges() {
        WatermarkTracker first = tracker(1);
        assertThat(first.alignedWatermark()).isEqualTo(Long.MIN_VALUE);
        first.recordAlignment(42L, false);
        byte[] written = store.get(Bytes.wrap(AlignmentReader.KEY.getBytes(java.nio.charset.StandardCharsets.UTF_8)));
        assertThat(java.nio.ByteBuffer.wrap(written).getLong()).as("what other instances' readers decode").isEqualTo(42L);
        store.delete(Bytes.wrap(AlignmentReader.KEY.getBytes(java.nio.charset.StandardCharsets.UTF_8)));
        first.recordAlignment(42L, false);
        assertThat(store.get(Bytes.wrap(AlignmentReader.KEY.getBytes(java.nio.charset.StandardCharsets.UTF_8))))
                .as("unchanged: not written again").isNull();
        first.recordAlignment(43L, true);

        assertThat(tracker(1).alignedWatermark()).as("a task restored from the store starts where it was")
                .isEqualTo(43L);
    }

    @Test
    void shouldHoldTheStreamBackUntilEveryExpectedProducerWasHeard() {
        WatermarkTracker t = tracker(3);
        t.onControl("s", control(0, 100, 10, false, false, 0));
        t.onControl("s", control(1, 50, 20, false, false, 0));
        assertThat(t.eventWatermark("s")).as("partition 2 never heard from").isEqualTo(Long.MIN_VALUE);
        t.onControl("s", control(2, 70, 30, false, false, 0));
        assertThat(t.eventWatermark("s")).as("the minimum over producers").isEqualTo(50);
        assertThat(t.systemWatermark("s")).isEqualTo(10);
    }

    @Test
    void shouldNeverMoveAProducerWatermarkBack() {
        WatermarkTracker t = tracker(1);
        t.onControl("s", control(0, 100, 10, false, false, 0));
        assertThat(t.onControl("s", control(0, 90, 5, false, false, 0))).as("an older record changes nothing").isFalse();
        assertThat(t.eventWatermark("s")).isEqualTo(100);
        assertThat(t.systemWatermark("s")).isEqualTo(10);
    }

    @Test
    void shouldCountCompletedProducersAsInfinityAndCompleteWhenAllDid() {
        WatermarkTracker t = tracker(2);
        t.onControl("s", control(0, Long.MAX_VALUE, Long.MAX_VALUE, true, false, 0));
        t.onControl("s", control(1, 40, 40, false, false, 0));
        assertThat(t.eventWatermark("s")).isEqualTo(40);
        assertThat(t.completed("s")).isFalse();
        t.onControl("s", control(1, Long.MAX_VALUE, Long.MAX_VALUE, true, false, 0));
        assertThat(t.completed("s")).isTrue();
        assertThat(t.eventWatermark("s")).isEqualTo(Long.MAX_VALUE);
    }

    @Test
    void shouldSkipIdleProducersOnlyUpToTheCap() {
        // 5 source partitions with max_ratio 0.4: at most ceil(0.4*5) = 2 may be skipped as idle
        WatermarkTracker t = tracker(5);
        t.onControl("s", control(0, 500, 0, false, false, 2));
        t.onControl("s", control(1, 400, 0, false, false, 2));
        t.onControl("s", control(2, 10, 0, false, true, 2));
        t.onControl("s", control(3, 20, 0, false, true, 2));
        t.onControl("s", control(4, 600, 0, false, false, 2));
        assertThat(t.eventWatermark("s")).as("two idle partitions skipped").isEqualTo(400);
        t.onControl("s", control(0, 500, 0, false, true, 2));
        assertThat(t.eventWatermark("s")).as("three idle: the two holding back most are skipped, the third counts")
                .isEqualTo(400);
        t.onControl("s", control(4, 600, 0, false, true, 2));
        t.onControl("s", control(1, 400, 0, false, true, 2));
        assertThat(t.eventWatermark("s")).as("all idle: only two skipped").isEqualTo(400);
    }

    @Test
    void shouldNotGoBackWhenASkippedIdleProducerTurnsActiveAgain() {
        // "Watermarks never go back, across restarts and rebalances too": an idle partition's task that restarts
        // elsewhere starts active and sends its old watermark; Flow raises an ignored idle partition's watermark
        WatermarkTracker t = tracker(2);
        t.onControl("s", control(0, 500, 50, false, false, 1));
        t.onControl("s", control(1, 10, 1, false, true, 1));
        assertThat(t.eventWatermark("s")).as("the idle one skipped").isEqualTo(500);
        t.onControl("s", control(1, 10, 1, false, false, 1));
        assertThat(t.eventWatermark("s")).as("it resumes at the watermark it was skipped at").isEqualTo(500);
        assertThat(t.systemWatermark("s")).isEqualTo(50);
        t.onControl("s", control(0, 700, 70, false, false, 1));
        assertThat(t.eventWatermark("s")).as("then it holds the stream back as any producer").isEqualTo(500);
        t.onControl("s", control(1, 600, 60, false, false, 1));
        assertThat(t.eventWatermark("s")).isEqualTo(600);
        assertThat(tracker(2).eventWatermark("s")).as("the raise is kept in the store").isEqualTo(600);
    }

    @Test
    void shouldNotRaiseAnIdleProducerThatCountedWhenItTurnsActive() {
        WatermarkTracker t = tracker(2);
        t.onControl("s", control(0, 500, 50, false, false, 0));
        t.onControl("s", control(1, 10, 1, false, true, 0));
        assertThat(t.eventWatermark("s")).as("no idle producer may be skipped").isEqualTo(10);
        t.onControl("s", control(1, 20, 2, false, false, 0));
        assertThat(t.eventWatermark("s")).isEqualTo(20);
    }

    @Test
    void shouldAlwaysCountOneProducerThatHasNotCompletedWhenTheRestAreIdle() {
        // 3 source partitions with max_ratio 0.4: ceil(0.4*3) = 2 may be skipped; one completed, the other two idle
        WatermarkTracker t = tracker(3);
        t.onControl("s", control(0, Long.MAX_VALUE, Long.MAX_VALUE, true, false, 2));
        t.onControl("s", control(1, 100, 10, false, true, 2));
        t.onControl("s", control(2, 300, 30, false, true, 2));
        assertThat(t.eventWatermark("s")).as("the smaller idle one skipped, the other counts, not +infinity")
                .isEqualTo(300);
        assertThat(t.systemWatermark("s")).isEqualTo(30);

        t.onControl("s", control(2, Long.MAX_VALUE, Long.MAX_VALUE, true, false, 2));
        assertThat(t.eventWatermark("s")).as("the last producer left, idle, holds the stream at its own watermark")
                .isEqualTo(100);
        assertThat(t.systemWatermark("s")).isEqualTo(10);
        assertThat(t.completed("s")).isFalse();
    }

    @Test
    void shouldIgnoreProducersTheSpecDoesNotExpect() {
        WatermarkTracker t = tracker(1);
        assertThat(t.onControl("s", control(1, 100, 1, false, false, 0))).isFalse();
        assertThat(t.onControl("other", control(0, 100, 1, false, false, 0))).isFalse();
        assertThat(t.eventWatermark("s")).isEqualTo(Long.MIN_VALUE);
    }

    @Test
    void shouldRestoreEverythingFromTheStoreAndKeepTheOutputMonotonic() {
        WatermarkTracker t = tracker(2);
        t.onControl("s", control(0, 100, 10, false, false, 0));
        t.onControl("s", control(1, 200, 20, true, false, 0));
        t.recordOutput(90, 9, false);
        WatermarkTracker restored = tracker(2);
        assertThat(restored.eventWatermark("s")).isEqualTo(100);
        assertThat(restored.completed("s")).isFalse();
        assertThat(restored.output()).isEqualTo(new WatermarkTracker.Output(90, 9, false));
        assertThat(restored.recordOutput(50, 5, false)).as("never back").isEqualTo(new WatermarkTracker.Output(90, 9, false));
        restored.putLong("bound", 42);
        assertThat(tracker(2).getLong("bound")).isEqualTo(42L);
    }
}
