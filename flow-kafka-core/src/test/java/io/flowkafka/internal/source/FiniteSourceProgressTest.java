package io.flowkafka.internal.source;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowkafka.internal.watermarks.FiniteSources;
import io.flowkafka.internal.watermarks.WatermarkTracker;
import io.flowkafka.spec.SourceSpec;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.processor.api.MockProcessorContext;
import org.apache.kafka.streams.processor.api.RecordMetadata;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;
import org.junit.jupiter.api.Test;

/** A finite source partition's range across instances that saw different end offsets at start. */
class FiniteSourceProgressTest {
    private static final SourceSpec FINITE = new SourceSpec("raw", "KafkaSource", Map.of("topics", "t", "finite", true));
    private static final TopicPartition T0 = new TopicPartition("t", 0);

    private static WatermarkTracker store() {
        KeyValueStore<Bytes, byte[]> s = Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore("c.watermarks"),
                Serdes.Bytes(), Serdes.ByteArray()).withLoggingDisabled().build();
        s.init(new MockProcessorContext<>().getStateStoreContext(), s);
        return new WatermarkTracker(s, Map.of());
    }

    private static RecordMetadata at(long offset) {
        return new RecordMetadata() {
            @Override
            public String topic() {
                return "t";
            }

            @Override
            public int partition() {
                return 0;
            }

            @Override
            public long offset() {
                return offset;
            }
        };
    }

    @Test
    void shouldReadToTheTasksBoundWhenItMovesToAnInstanceThatStartedEarlier() {
        // the task first ran on an instance that started when the partition ended at 200, and committed up to 150;
        // this instance started earlier, at end offset 100, and saw the committed 150 pass its own bound
        WatermarkTracker store = store();
        store.putLong("bound|t|0", 200L);
        FiniteSources instance = new FiniteSources();
        instance.bound(T0, 100L);
        instance.markDone(T0);
        FiniteSourceProgress progress = new FiniteSourceProgress(List.of(FINITE), 0, store, instance, false, null);

        assertThat(progress.beyondFiniteRange(at(150))).as("offsets 150..199 are in the task's range").isFalse();
        assertThat(progress.readToEnd(T0)).isFalse();
        assertThat(progress.beyondFiniteRange(at(199))).as("the last record of the range").isFalse();
        assertThat(progress.readToEnd(T0)).isTrue();
        assertThat(progress.beyondFiniteRange(at(200))).isTrue();
    }

    @Test
    void shouldTakeTheRuntimesDoneWhenItsBoundCoversTheTasks() {
        WatermarkTracker store = store();
        store.putLong("bound|t|0", 100L);
        FiniteSources instance = new FiniteSources();
        instance.bound(T0, 200L);
        instance.markDone(T0); // committed reached 200, so the task's 100 too
        FiniteSourceProgress progress = new FiniteSourceProgress(List.of(FINITE), 0, store, instance, false, null);
        assertThat(progress.readToEnd(T0)).isTrue();
        assertThat(progress.beyondFiniteRange(at(50))).isTrue();
    }
}
