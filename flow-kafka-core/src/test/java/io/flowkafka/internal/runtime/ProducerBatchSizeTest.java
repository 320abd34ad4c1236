package io.flowkafka.internal.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorSupplier;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.Stores;
import org.junit.jupiter.api.Test;

/**
 * How flow-kafka fits its default {@code producer.batch.size} to a topology: two batches (one open, one in flight) of
 * every partition a stream thread may write at once must fit in its producer's {@code buffer.memory}.
 */
class ProducerBatchSizeTest {
    private static final long MIB = 1024 * 1024;

    private static ProcessorSupplier<byte[], byte[], byte[], byte[]> passThrough() {
        return () -> new Processor<>() {
            private org.apache.kafka.streams.processor.api.ProcessorContext<byte[], byte[]> context;

            @Override
            public void init(org.apache.kafka.streams.processor.api.ProcessorContext<byte[], byte[]> c) {
                context = c;
            }

            @Override
            public void process(Record<byte[], byte[]> record) {
                context.forward(record);
            }
        };
    }

    private static void store(Topology t, String name, String processor) {
        t.addStateStore(Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore(name), Serdes.ByteArray(),
                Serdes.ByteArray()), processor);
    }

    /** in -> a (stores s1, s2) -> mid -> b (store s3) -> out and side: two sub-topologies. */
    private static Topology twoHops() {
        Topology t = new Topology();
        t.addSource("in-source", "in");
        t.addProcessor("a", passThrough(), "in-source");
        store(t, "s1", "a");
        store(t, "s2", "a");
        t.addSink("mid-sink", "mid", "a");
        t.addSource("mid-source", "mid");
        t.addProcessor("b", passThrough(), "mid-source");
        store(t, "s3", "b");
        t.addSink("out-sink", "out", "b");
        t.addSink("side-sink", "side", "b");
        return t;
    }

    @Test
    void shouldCountEveryChangelogPartitionOfItsTasksAndEveryPartitionOfWhatItWrites() {
        var partitions = Map.of("in", 8, "mid", 4, "out", 6, "side", 3);
        // changelogs: 8 tasks x 2 stores + 4 tasks x 1 store; written: mid 4 + out 6 + side 3
        assertThat(ProducerBatchSize.partitionsPerThread(twoHops().describe(), partitions, 1))
                .isEqualTo(8 * 2 + 4 + 4 + 6 + 3);
        // two threads share the tasks (rounded up), but each may write to every partition of the written topics
        assertThat(ProducerBatchSize.partitionsPerThread(twoHops().describe(), partitions, 2))
                .isEqualTo(10 + 4 + 6 + 3);
        assertThat(ProducerBatchSize.partitionsPerThread(twoHops().describe(), partitions, 3))
                .as("20 changelog partitions over 3 threads: at most 7 on one").isEqualTo(7 + 4 + 6 + 3);
    }

    @Test
    void shouldCountATopicOfUnknownPartitionsAsOne() {
        assertThat(ProducerBatchSize.partitionsPerThread(twoHops().describe(), Map.of(), 1))
                .isEqualTo(1 * 2 + 1 + 1 + 1 + 1);
    }

    @Test
    void shouldKeepThePreferredSizeWhileTwoBatchesOfEachPartitionFit() {
        // 64 partitions x 2 x 256 KiB = 32 MiB: fits exactly
        assertThat(ProducerBatchSize.fit(262144, 64, 32 * MIB)).isEqualTo(262144);
        assertThat(ProducerBatchSize.fit(262144, 1, 32 * MIB)).isEqualTo(262144);
    }

    @Test
    void shouldHalveUntilTheyFitButNotBelowKafkasDefault() {
        assertThat(ProducerBatchSize.fit(262144, 65, 32 * MIB)).isEqualTo(131072);
        assertThat(ProducerBatchSize.fit(262144, 300, 32 * MIB)).as("2 x 300 x 32 KiB = 18.75 MiB").isEqualTo(32768);
        assertThat(ProducerBatchSize.fit(262144, 513, 32 * MIB)).isEqualTo(16384);
        assertThat(ProducerBatchSize.fit(262144, 100_000, 32 * MIB))
                .as("beyond what fits even at 16 KiB: Kafka's own default, no smaller").isEqualTo(16384);
        assertThat(ProducerBatchSize.fit(262144, 4, 1 * MIB)).as("a smaller buffer.memory").isEqualTo(131072);
    }
}
