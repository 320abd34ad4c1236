package io.flowkafka.benchmarks.waitclick;

import io.flowkafka.benchmarks.DriverBenchmarkJoins;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.ProducerConfig;
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
 * <epoch ms>} when done. With the system property {@value WaitClickVsFlink#WARM_UP_PROPERTY} it first runs the
 * same job over those topics, in this JVM, and prints {@code WARM <state> <epoch ms>}. Arguments: {@code bootstrap applicationId impressionsTopic clicksTopic
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
        WaitClickVsFlink.warmUpThenMeasure((impressions, clicks, results, suffix, measured) -> run(args[0],
                args[1] + suffix, impressions, clicks, results, args[5] + suffix, args[6], args[7], measured), args[2],
                args[3], args[4]);
    }

    /** Runs the join over the given topics until every task finished; with {@code measured}, prints T0 and FINISHED. */
    private static boolean run(String bootstrap, String applicationId, String impressions, String clicks, String results,
            String stateDir, String threads, String commitMs, boolean measured) throws Exception {
        Map<TopicPartition, Long> ends = endOffsets(bootstrap, List.of(impressions, clicks));
        int tasks = 0;
        for (TopicPartition tp : ends.keySet()) {
            tasks = Math.max(tasks, tp.partition() + 1);
        }
        Properties props = new Properties();
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, applicationId);
        props.put(StreamsConfig.STATE_DIR_CONFIG, stateDir);
        props.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, threads);
        props.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, commitMs);
        props.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
        props.put(StreamsConfig.consumerPrefix(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG), "earliest");
        // the producer batch size and compression flow-kafka sets by default (FlowRuntime), so this baseline writes
        // its changelogs as flow-kafka does and the comparison measures flow-kafka's own cost, not Kafka's
        // producer defaults (16 KiB batches, uncompressed)
        props.put(StreamsConfig.producerPrefix(ProducerConfig.BATCH_SIZE_CONFIG), "262144");
        props.put(StreamsConfig.producerPrefix(ProducerConfig.COMPRESSION_TYPE_CONFIG), "lz4");
        WaitClickVsFlink.addStreamsOverrides(props);
        int finishedBefore = DriverBenchmarkJoins.finishedTasks(); // the count is per JVM: a warm-up run counted too
        if (measured) {
            System.out.println("T0 " + System.currentTimeMillis());
            System.out.flush();
        }
        boolean ok;
        try (KafkaStreams streams = new KafkaStreams(
                DriverBenchmarkJoins.plainTopology(impressions, clicks, results, true, ends), props)) {
            streams.start();
            long deadline = System.currentTimeMillis() + Duration.ofMinutes(30).toMillis();
            while (DriverBenchmarkJoins.finishedTasks() - finishedBefore < tasks && System.currentTimeMillis() < deadline
                    && streams.state() != KafkaStreams.State.ERROR) {
                Thread.sleep(20); // a benchmark's main thread polling a counter, not a test waiting
            }
            ok = DriverBenchmarkJoins.finishedTasks() - finishedBefore >= tasks;
            streams.close(Duration.ofMinutes(1)); // its closing commit publishes the last results
            if (measured) {
                System.out.println("FINISHED " + (ok ? "COMPLETED" : streams.state()) + " " + System.currentTimeMillis());
                System.out.flush();
            }
        }
        return ok;
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
