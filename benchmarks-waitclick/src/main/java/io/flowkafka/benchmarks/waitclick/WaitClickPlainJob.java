package io.flowkafka.benchmarks.waitclick;

import io.flowkafka.benchmarks.DriverBenchmarkJoins;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsConfig;

/**
 * The Kafka Streams baseline of the wait-click benchmark, run by {@link WaitClickVsFlink} in a JVM of
 * its own: the join as a hand-written Processor API processor ({@code DriverBenchmarkJoins.PlainJoin},
 * the processor of the test-driver benchmark) on RocksDB stores with changelogs (the state behind
 * the record cache, the timers without it, as flow-kafka compiles them), exactly_once_v2, reading
 * both input topics (keyed by impression id) in one sub-topology. What it leaves out that flow-kafka
 * does: message ids and headers, Avro, watermark records, idle-partition rules, a durable watermark.
 * The input is finite: the end offsets are read at start, and the job exits once every task read its
 * partitions to their ends and fired every timer, after Kafka Streams' closing commit.
 *
 * <p>Prints {@code T0 <epoch ms>} just before it starts Kafka Streams and {@code FINISHED <state>
 * <epoch ms>} when done. Arguments: {@code bootstrap applicationId impressionsTopic clicksTopic
 * resultsTopic stateDir streamThreads commitIntervalMs}.
 */
public final class WaitClickPlainJob {
    private WaitClickPlainJob() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 8) {
            System.err.println("usage: WaitClickPlainJob bootstrap applicationId impressionsTopic clicksTopic"
                    + " resultsTopic stateDir streamThreads commitIntervalMs");
            System.exit(2);
        }
        Map<TopicPartition, Long> ends = endOffsets(args[0], List.of(args[2], args[3]));
        int tasks = 0;
        for (TopicPartition tp : ends.keySet()) {
            tasks = Math.max(tasks, tp.partition() + 1);
        }
        Properties props = new Properties();
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, args[1]);
        props.put(StreamsConfig.STATE_DIR_CONFIG, args[5]);
        props.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, args[6]);
        props.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, args[7]);
        props.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
        props.put(StreamsConfig.consumerPrefix(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG), "earliest");
        System.out.println("T0 " + System.currentTimeMillis());
        System.out.flush();
        boolean ok;
        try (KafkaStreams streams = new KafkaStreams(
                DriverBenchmarkJoins.plainTopology(args[2], args[3], args[4], true, ends), props)) {
            streams.start();
            long deadline = System.currentTimeMillis() + Duration.ofMinutes(30).toMillis();
            while (DriverBenchmarkJoins.finishedTasks() < tasks && System.currentTimeMillis() < deadline
                    && streams.state() != KafkaStreams.State.ERROR) {
                Thread.sleep(20); // a benchmark's main thread polling a counter, not a test waiting
            }
            ok = DriverBenchmarkJoins.finishedTasks() >= tasks;
            streams.close(Duration.ofMinutes(1)); // its closing commit publishes the last results
            System.out.println("FINISHED " + (ok ? "COMPLETED" : streams.state()) + " " + System.currentTimeMillis());
            System.out.flush();
        }
        System.exit(ok ? 0 : 1);
    }

    private static Map<TopicPartition, Long> endOffsets(String bootstrap, List<String> topics) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(p, new ByteArrayDeserializer(),
                new ByteArrayDeserializer())) {
            Map<TopicPartition, Long> ends = new HashMap<>();
            for (String topic : topics) {
                List<TopicPartition> parts = c.partitionsFor(topic).stream()
                        .map(i -> new TopicPartition(i.topic(), i.partition())).toList();
                ends.putAll(c.endOffsets(parts));
            }
            return ends;
        }
    }
}
