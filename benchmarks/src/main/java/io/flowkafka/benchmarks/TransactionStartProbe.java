package io.flowkafka.benchmarks;

import io.flowkafka.testing.EmbeddedKafkaCluster;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The start of a Kafka transaction under load, without Kafka Streams: one transactional producer commits
 * {@code --transactions} transactions back to back on the in-JVM broker, each writing several batches to every
 * partition at once (as a stream thread's commit does), and the broker's retriable answers are counted
 * ({@link TransactionCounts}); then a {@code read_committed} consumer checks that every record is there once.
 *
 * <p>It shows the mechanism behind the broker's "Expected sequence 0 for transactions v2 idempotent producer with no
 * existing state" (KAFKA-18202): under transactions version 2 the partition is added to the transaction by the first
 * produce itself; when the previous transaction's markers are not written within
 * {@code add.partitions.to.txn.retry.backoff.max.ms} that produce gets {@code CONCURRENT_TRANSACTIONS}, and a next
 * request already in flight to the same partition (a batch with a sequence above 0) gets
 * {@code OUT_OF_ORDER_SEQUENCE_NUMBER}; the producer retries both. With one request in flight, or transactions
 * version 1 (the producer adds partitions itself before it sends), the second kind cannot happen.
 *
 * <pre>
 * java -cp "benchmarks/target/classes:benchmarks/target/lib/*" [-Dflow.embedded.transaction.version=1] \
 *     io.flowkafka.benchmarks.TransactionStartProbe --transactions 300 --in-flight 5
 * </pre>
 * {@code -Dprobe.broker.<key>=<value>} sets a broker setting (e.g. {@code add.partitions.to.txn.retry.backoff.max.ms}).
 * The in-JVM broker waits 1000 ms there by default; {@code -Dprobe.broker.add.partitions.to.txn.retry.backoff.max.ms=100}
 * (Kafka's default) reproduces the retries.
 */
public final class TransactionStartProbe {
    private TransactionStartProbe() {
    }

    public static void main(String[] args) throws Exception {
        if (System.getProperty("org.slf4j.simpleLogger.defaultLogLevel") == null) {
            System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
        }
        if (System.getProperty("org.slf4j.simpleLogger.log.org.apache.kafka") == null) {
            System.setProperty("org.slf4j.simpleLogger.log.org.apache.kafka", "error");
        }
        int transactions = 300;
        int inFlight = 5;
        int partitions = 4;
        int batchesPerPartition = 4;
        for (int i = 0; i + 1 < args.length; i += 2) {
            switch (args[i]) {
                case "--transactions" -> transactions = Integer.parseInt(args[i + 1]);
                case "--in-flight" -> inFlight = Integer.parseInt(args[i + 1]);
                case "--partitions" -> partitions = Integer.parseInt(args[i + 1]);
                case "--batches" -> batchesPerPartition = Integer.parseInt(args[i + 1]);
                default -> throw new IllegalArgumentException("unknown option " + args[i]
                        + "; use --transactions N --in-flight N --partitions N --batches N");
            }
        }
        // -Dprobe.broker.<key>=<value>: a broker setting, e.g. -Dprobe.broker.add.partitions.to.txn.retry.backoff.max.ms=1000
        Map<String, String> brokerConfig = new BenchVariant("probe.").brokerConfig();
        try (EmbeddedKafkaCluster cluster = EmbeddedKafkaCluster.start(1, brokerConfig)) {
            String topic = "probe-" + inFlight;
            cluster.createTopic(topic, partitions);
            int valueBytes = 1024;
            int perBatch = 15; // 15 KiB + overhead fills a 16 KiB batch
            int perPartition = perBatch * batchesPerPartition;
            Properties p = cluster.clientProperties();
            p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "probe-txn-" + inFlight);
            p.put(ProducerConfig.CLIENT_ID_CONFIG, "probe-producer-" + inFlight);
            p.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, String.valueOf(inFlight));
            p.put(ProducerConfig.BATCH_SIZE_CONFIG, "16384");
            p.put(ProducerConfig.LINGER_MS_CONFIG, "0");
            p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
            p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
            TransactionCounts before = TransactionCounts.snapshot("probe-producer-" + inFlight);
            long start = System.nanoTime();
            TransactionCounts counts;
            try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p)) {
                producer.initTransactions();
                for (int t = 0; t < transactions; t++) {
                    producer.beginTransaction();
                    for (int i = 0; i < perPartition; i++) {
                        for (int partition = 0; partition < partitions; partition++) {
                            byte[] value = new byte[valueBytes];
                            ByteBuffer.wrap(value).putInt(t).putInt(partition).putInt(i);
                            producer.send(new ProducerRecord<>(topic, partition, null, value));
                        }
                    }
                    producer.commitTransaction();
                }
                counts = TransactionCounts.snapshot("probe-producer-" + inFlight).since(before);
            }
            double seconds = (System.nanoTime() - start) / 1e9;
            long expected = (long) transactions * partitions * perPartition;
            String check = verify(cluster, topic, partitions, expected);
            System.out.printf(Locale.ROOT, "transaction.version %s, broker %s, max.in.flight %d: %d transactions of %d x %d "
                            + "KiB records over %d partitions in %.1f s (%.1f ms each); %s; read_committed: %s%n",
                    System.getProperty(EmbeddedKafkaCluster.TRANSACTION_VERSION_PROPERTY, "default (2)"),
                    brokerConfig.isEmpty() ? "defaults" : brokerConfig, inFlight,
                    transactions, perPartition * partitions, valueBytes / 1024, partitions, seconds,
                    seconds * 1000 / transactions, counts.describe(), check);
        }
    }

    /** Reads the topic {@code read_committed}: "exact" if every record is there once, else what is wrong. */
    private static String verify(EmbeddedKafkaCluster cluster, String topic, int partitions, long expected) {
        Properties c = cluster.clientProperties();
        c.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        c.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        c.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        c.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        Set<String> seen = new HashSet<>();
        long read = 0;
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(c)) {
            List<TopicPartition> tps = new ArrayList<>();
            for (int i = 0; i < partitions; i++) {
                tps.add(new TopicPartition(topic, i));
            }
            consumer.assign(tps);
            long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
            while (read < expected && System.nanoTime() < deadline) {
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(500))) {
                    ByteBuffer b = ByteBuffer.wrap(r.value());
                    seen.add(b.getInt() + "/" + b.getInt() + "/" + b.getInt());
                    read++;
                }
            }
        }
        if (read == expected && seen.size() == expected) {
            return "exact (" + read + " records, each once)";
        }
        return "read " + read + " records, " + seen.size() + " distinct, of " + expected;
    }
}
