package io.flowkafka.internal.outbox;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowkafka.spi.OutboxRecord;
import io.flowkafka.spi.SyncSinkWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.api.MockProcessorContext;
import org.junit.jupiter.api.Test;

/**
 * {@link EpochBarrierStore} closing a task: the synchronous sinks forget what the task sent and did not flush, since
 * the epoch that sent it did not commit and its replay sends it again (reference 002: "If the epoch does not commit
 * after a successful write, the same records are written again on restart").
 */
class EpochBarrierStoreTest {
    /** Records the calls a writer gets. */
    private static final class RecordingWriter implements SyncSinkWriter {
        final List<String> calls = new ArrayList<>();

        @Override
        public void write(int partition, OutboxRecord record) {
            calls.add("write " + partition);
        }

        @Override
        public void flush(int partition) {
            calls.add("flush " + partition);
        }

        @Override
        public void discard(int partition) {
            calls.add("discard " + partition);
        }

        @Override
        public void close() {
        }
    }

    @Test
    void shouldMakeEverySinkForgetTheTasksUnflushedRecordsWhenTheTaskCloses() {
        RecordingWriter a = new RecordingWriter();
        RecordingWriter b = new RecordingWriter();
        SyncSinkSlot slotA = new SyncSinkSlot("a");
        SyncSinkSlot slotB = new SyncSinkSlot("b");
        slotA.set(a);
        slotB.set(b);
        EpochBarrierStore store = EpochBarrierStore.builder("c", List.of(slotA, slotB)).build();
        MockProcessorContext<Object, Object> context = new MockProcessorContext<>(new Properties(),
                new TaskId(0, 3), null);
        store.init(context.getStateStoreContext(), store);

        store.close();
        store.close(); // closed once: nothing more to forget

        assertThat(a.calls).containsExactly("discard 3");
        assertThat(b.calls).containsExactly("discard 3");
    }

    @Test
    void shouldForgetNothingForAStoreThatNeverOpened() {
        RecordingWriter a = new RecordingWriter();
        SyncSinkSlot slot = new SyncSinkSlot("a");
        slot.set(a);
        EpochBarrierStore.builder("c", List.of(slot)).build().close();
        assertThat(a.calls).isEmpty();
    }
}
