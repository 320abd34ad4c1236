package io.flowkafka.internal.processor;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowkafka.api.MessageId;
import io.flowkafka.avro.BatchedInput;
import io.flowkafka.internal.message.FlowMessage;
import java.io.File;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Properties;
import java.util.function.Function;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.avro.generic.GenericData;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.api.MockProcessorContext;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The batch buffer is its store: a task restored from the changelog finds exactly the committed
 * buffer (same entries, same order, same watermark hold) and goes on numbering after it, so the
 * next size cut falls where it would have without the restart.
 */
class BatchBufferTest {
    private static final Schema EMPTY = SchemaBuilder.record("Empty").namespace("test").fields().endRecord();

    @TempDir
    File stateDir;
    private KeyValueStore<Bytes, byte[]> store;

    @BeforeEach
    void openStore() {
        Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, "batch-test");
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "unused:9092");
        MockProcessorContext<Object, Object> context = new MockProcessorContext<>(props, new TaskId(0, 0), stateDir);
        store = Stores.inMemoryKeyValueStore(BatchBuffer.storeName("swift")).get();
        store.init(context.getStateStoreContext(), store);
    }

    private static BatchedInput record(long offset) {
        return BatchedInput.newBuilder().setTopic("p.events").setPartition(0).setOffset(offset).setTimestamp(offset)
                .setKey(ByteBuffer.wrap(new byte[] {(byte) offset})).setValue(ByteBuffer.wrap(new byte[] {1}))
                .setMeta(null).build();
    }

    /** A message whose id and event time come from the record's offset. */
    private static FlowMessage message(BatchedInput r) {
        if (r.getOffset() < 0) {
            throw new IllegalArgumentException("undecodable");
        }
        return new FlowMessage(MessageId.of(ByteBuffer.allocate(8).putLong(r.getOffset()).array()), 1000 - r.getOffset(),
                0, "events", new GenericData.Record(EMPTY), new GenericData.Record(EMPTY), List.of());
    }

    private static final Function<BatchedInput, FlowMessage> DECODE = BatchBufferTest::message;

    @Test
    void shouldRestoreTheCommittedBufferAndNumberOnAfterIt() {
        BatchBuffer buffer = new BatchBuffer(store);
        buffer.restore(DECODE, 0);
        assertThat(buffer.isEmpty()).isTrue();
        for (long offset = 0; offset < 3; offset++) {
            buffer.add(message(record(offset)), record(offset), 10 + offset);
        }
        assertThat(buffer.drain()).extracting(e -> e.record().getOffset()).containsExactly(0L, 1L, 2L);
        assertThat(store.approximateNumEntries()).as("a cut deletes its rows").isZero();
        buffer.add(message(record(3)), record(3), 20);
        buffer.add(message(record(4)), record(4), 21);
        assertThat(buffer.firstBufferedWallMs()).isEqualTo(20);
        assertThat(buffer.minEventTimestamp()).isEqualTo(996);

        BatchBuffer restored = new BatchBuffer(store);
        restored.restore(DECODE, 500);
        assertThat(restored.size()).isEqualTo(2);
        assertThat(restored.minEventTimestamp()).isEqualTo(996);
        assertThat(restored.firstBufferedWallMs()).as("the delay restarts at the restore").isEqualTo(500);
        restored.add(message(record(5)), record(5), 501);
        List<BatchBuffer.Entry> batch = restored.drain();
        assertThat(batch).extracting(e -> e.record().getOffset()).containsExactly(3L, 4L, 5L);
        assertThat(batch).extracting(e -> e.message().messageId()).containsExactly(message(record(3)).messageId(),
                message(record(4)).messageId(), message(record(5)).messageId());
        assertThat(batch).extracting(e -> ByteBuffer.wrap(e.storeKey().get()).getLong())
                .as("numbered on after the restored rows").containsExactly(3L, 4L, 5L);
        assertThat(restored.isEmpty()).isTrue();
        assertThat(restored.minEventTimestamp()).isEqualTo(Long.MAX_VALUE);
        assertThat(store.approximateNumEntries()).isZero();
    }

    @Test
    void shouldKeepARecordThatNoLongerDecodesForTheDeadLetters() {
        BatchBuffer buffer = new BatchBuffer(store);
        buffer.restore(DECODE, 0);
        BatchedInput bad = record(-1);
        buffer.add(message(record(7)), bad, 0); // decoded when read; it no longer decodes after a restart
        BatchBuffer restored = new BatchBuffer(store);
        restored.restore(DECODE, 0);
        assertThat(restored.drain()).singleElement().satisfies(e -> {
            assertThat(e.message()).isNull();
            assertThat(e.decodeError()).hasMessage("undecodable");
            assertThat(e.record()).isEqualTo(bad);
        });
    }
}
